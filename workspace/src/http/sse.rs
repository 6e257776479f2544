//! Server-Sent Events: an incremental parser (for upstream MCP and model streams) and the
//! check that a client accepts them.

use axum::http::HeaderMap;
use axum::http::header::ACCEPT;

/// Collects bytes and yields the `data` of each complete event. Bytes are buffered and
/// only complete lines are decoded, so a character split across chunks stays whole; each
/// byte is searched for a line end once.
#[derive(Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end.
    scanned: usize,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of every event completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(offset) = self.buffer[from..].iter().position(|&b| b == b'\n') {
            let end = from + offset;
            line(&self.buffer[start..end], &mut self.data, &mut events);
            start = end + 1;
            from = start;
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        events
    }

    /// The data of an event left unterminated at the end of the stream.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buffer);
        self.scanned = 0;
        let mut events = Vec::new();
        if !rest.is_empty() {
            line(&rest, &mut self.data, &mut events);
        }
        line(b"", &mut self.data, &mut events);
        events.pop()
    }
}

/// Handles one line (without its `\n`): a blank line ends the event.
fn line(bytes: &[u8], data: &mut Vec<String>, events: &mut Vec<String>) {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.is_empty() {
        if !data.is_empty() {
            events.push(data.join("\n"));
            data.clear();
        }
    } else if let Some(value) = bytes.strip_prefix(b"data:") {
        let value = value.strip_prefix(b" ").unwrap_or(value);
        data.push(String::from_utf8_lossy(value).into_owned());
    }
}

/// Whether a request names `text/event-stream` in `Accept`.
pub fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|media| {
            media
                .split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
        })
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

    #[test]
    fn keeps_a_character_split_across_chunks() {
        let text = "data: {\"t\":\"caf\u{e9} \u{1f600}\"}\n\n".as_bytes();
        // Every split point, including inside the two- and four-byte characters.
        for cut in 0..text.len() {
            let mut p = SseParser::default();
            let mut events = p.push(&text[..cut]);
            events.extend(p.push(&text[cut..]));
            assert_eq!(
                events,
                vec!["{\"t\":\"caf\u{e9} \u{1f600}\"}"],
                "cut at {cut}"
            );
        }
        let mut p = SseParser::default();
        let mut events = Vec::new();
        for byte in text {
            events.extend(p.push(std::slice::from_ref(byte)));
        }
        assert_eq!(events, vec!["{\"t\":\"caf\u{e9} \u{1f600}\"}"]);
    }

    #[test]
    fn long_lines_in_small_chunks_are_scanned_once() {
        let mut p = SseParser::default();
        let payload = "x".repeat(200_000);
        let body = format!("data: {payload}\n\n");
        let mut events = Vec::new();
        for chunk in body.as_bytes().chunks(7) {
            events.extend(p.push(chunk));
        }
        assert_eq!(events, vec![payload]);
        assert_eq!(p.scanned, 0);
    }
}
