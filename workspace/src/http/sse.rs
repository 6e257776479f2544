//! An incremental Server-Sent Events parser (for upstream MCP and model streams).

/// Collects bytes and yields the `data` of each complete event.
#[derive(Default)]
pub struct SseParser {
    buffer: String,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of every event completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.push_str(&String::from_utf8_lossy(bytes));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.find('\n') {
            let line: String = self.buffer.drain(..=end).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                }
            } else if let Some(value) = line.strip_prefix("data:") {
                self.data
                    .push(value.strip_prefix(' ').unwrap_or(value).to_string());
            }
        }
        events
    }

    /// The data of an event left unterminated at the end of the stream.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buffer);
        let mut tail = self.push(format!("{rest}\n\n").as_bytes());
        tail.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_events_across_chunks() {
        let mut p = SseParser::default();
        assert!(p.push(b"event: message\r\ndata: {\"a\"").is_empty());
        assert_eq!(
            p.push(b":1}\r\n\r\n: comment\n\ndata: x\n"),
            vec!["{\"a\":1}"]
        );
        assert_eq!(p.finish().as_deref(), Some("x"));
    }
}
