//! Recognising canonical JSON text without building a tree, so a block read from a canonical
//! bundle is digested from its bytes instead of being parsed and written again.
//!
//! Canonical means exactly what [`Value::write_canonical`] writes for the value the text parses
//! to: no insignificant whitespace, object keys strictly increasing by code point (so none
//! repeats), strings escaped as serde_json escapes them, numbers as serde_json formats them.
//! The check is conservative: text it refuses may still be canonical (a key holding an escape,
//! say), and the caller then digests the written form instead, which gives the same digest.
//! No crate recognises this exact form, and a tokenising parser would cost as much as the tree
//! this avoids, hence the small scanner.

use crate::value::{MAX_PARSE_DEPTH, Value};

/// Whether `bytes` are the canonical JSON of the value they parse to (see the module docs).
pub(crate) fn is_canonical(bytes: &[u8]) -> bool {
    // Canonical text holds no byte below 0x20: whitespace is absent and controls are escaped.
    let no_controls = bytes
        .chunks(64)
        .all(|chunk| chunk.iter().fold(true, |ok, &b| ok & (b >= 0x20)));
    no_controls && simdutf8::basic::from_utf8(bytes).is_ok() && Scanner::new(bytes).accepts()
}

/// A container the scanner is inside; an object remembers its last key.
enum Frame<'a> {
    Array,
    Object(&'a [u8]),
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    stack: Vec<Frame<'a>>,
}

impl<'a> Scanner<'a> {
    fn new(bytes: &'a [u8]) -> Scanner<'a> {
        Scanner {
            bytes,
            at: 0,
            stack: Vec::new(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Walks the text once: values, then the commas and closers that follow them.
    fn accepts(mut self) -> bool {
        let mut want_value = true;
        loop {
            if want_value {
                want_value = match self.peek() {
                    Some(open @ (b'{' | b'[')) => {
                        // The parser counts every container, empty ones too.
                        if self.stack.len() >= MAX_PARSE_DEPTH {
                            return false;
                        }
                        self.at += 1;
                        let close = if open == b'{' { b'}' } else { b']' };
                        if self.peek() == Some(close) {
                            self.at += 1;
                            false
                        } else if open == b'{' {
                            self.stack.push(Frame::Object(&[]));
                            if !self.key(true) {
                                return false;
                            }
                            true
                        } else {
                            self.stack.push(Frame::Array);
                            true
                        }
                    }
                    Some(b'"') => match self.string() {
                        Some(_) => false,
                        None => return false,
                    },
                    Some(b't') if self.literal(b"true") => false,
                    Some(b'f') if self.literal(b"false") => false,
                    Some(b'n') if self.literal(b"null") => false,
                    Some(b'-' | b'0'..=b'9') if self.number() => false,
                    _ => return false,
                };
                continue;
            }
            let closer = match self.stack.last() {
                None => return self.at == self.bytes.len(),
                Some(Frame::Array) => b']',
                Some(Frame::Object(_)) => b'}',
            };
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    if closer == b'}' && !self.key(false) {
                        return false;
                    }
                    want_value = true;
                }
                Some(b) if b == closer => {
                    self.at += 1;
                    self.stack.pop();
                }
                _ => return false,
            }
        }
    }

    /// Consumes `word` if it comes next.
    fn literal(&mut self, word: &[u8]) -> bool {
        let found = self.bytes[self.at..].starts_with(word);
        if found {
            self.at += word.len();
        }
        found
    }

    /// An object key and its colon; keys must increase strictly. A key holding an escape is
    /// refused rather than decoded for the comparison.
    fn key(&mut self, first: bool) -> bool {
        let Some(key) = self.string() else {
            return false;
        };
        if key.contains(&b'\\') || self.peek() != Some(b':') {
            return false;
        }
        self.at += 1;
        match self.stack.last_mut() {
            Some(Frame::Object(last)) if first || increases(last, key) => {
                *last = key;
                true
            }
            _ => false,
        }
    }

    /// A string at `self.at`, escaped as serde_json escapes; returns its raw contents.
    fn string(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        let start = self.at + 1;
        let mut i = start;
        loop {
            i = next_quote_or_backslash(bytes, i)?;
            if bytes[i] == b'"' {
                self.at = i + 1;
                return Some(&bytes[start..i]);
            }
            i += match bytes.get(i + 1)? {
                b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                b'u' => {
                    let hex = bytes.get(i + 2..i + 6)?;
                    let code = match hex {
                        [b'0', b'0', hi @ (b'0' | b'1'), lo] => {
                            (hi - b'0') * 16 + lower_hex_digit(*lo)?
                        }
                        _ => return None,
                    };
                    // Only controls without a short escape are written as `\u00xx`.
                    if matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                        return None;
                    }
                    6
                }
                _ => return None,
            };
        }
    }

    /// A number written as serde_json writes what it parses to.
    fn number(&mut self) -> bool {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        let token = &rest[..len];
        self.at += len;
        let digits = token.strip_prefix(b"-").unwrap_or(token);
        // Short integers without a leading zero are written as they are read...
        let plain_integer = !digits.is_empty()
            && digits.len() <= 18
            && digits.iter().all(u8::is_ascii_digit)
            && (digits[0] != b'0' || token == b"0");
        // ...anything else is checked against the writer itself.
        plain_integer
            || Value::from_slice(token).is_ok_and(|v| v.to_canonical_string().as_bytes() == token)
    }
}

/// The first `"` or `\\` at or after `from`. Most strings are short keys, so the first bytes
/// are looked at eight at a time in a word before handing a long string to memchr.
fn next_quote_or_backslash(bytes: &[u8], mut from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let has = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    for _ in 0..4 {
        let Some(Ok(word)) = bytes.get(from..from + 8).map(<[u8; 8]>::try_from) else {
            break;
        };
        let word = u64::from_le_bytes(word);
        // A borrow can only mark bytes above a real match, so the lowest mark is exact.
        let found = has(word, b'"') | has(word, b'\\');
        if found != 0 {
            return Some(from + (found.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    memchr::memchr2(b'"', b'\\', bytes.get(from..)?).map(|at| from + at)
}

/// Whether `key` sorts after `last`; most keys differ in their first byte, so that is compared
/// before calling out to a full comparison.
fn increases(last: &[u8], key: &[u8]) -> bool {
    match key.first().cmp(&last.first()) {
        std::cmp::Ordering::Equal => key > last,
        order => order.is_gt(),
    }
}

/// The value of a lowercase hexadecimal digit.
fn lower_hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(json: &str) -> String {
        Value::from_json_str(json).unwrap().to_canonical_string()
    }

    #[test]
    fn accepts_what_the_canonical_writer_writes() {
        for json in [
            r#"{"b":1,"a":{"d":true,"c":[1.5,"x",null,false,-3,0,[],{}]}}"#,
            r#"{"t":"quote \" back \\ nl \n tab \t bell \u0007 del  é 😀 \/"}"#,
            r#"[1e21,1.0e-7,-0.5,123456789012345678901234,18446744073709551615]"#,
            r#""just a string""#,
            "12",
            "[[[[[]]]]]",
        ] {
            let text = canonical(json);
            assert!(is_canonical(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn refuses_text_the_writer_would_write_otherwise() {
        for json in [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a": 1}"#,
            "[1,2] ",
            "[1,\n2]",
            r#"["\/"]"#,
            r#"["\u00e9"]"#,
            r#"["\u000a"]"#,
            r#"["\u001F"]"#,
            "[\"tab\there\"]",
            "[1.50]",
            "[1E5]",
            "[01]",
            "[-0]",
            "[1,]",
            "[1",
            "{\"a\"}",
            "tru",
            "nul",
            "[true false]",
            "",
            "[1][2]",
            r#"{"a\u0000":1}"#,
        ] {
            assert!(!is_canonical(json.as_bytes()), "{json}");
        }
        assert!(!is_canonical(b"[\"\xff\"]"));
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_PARSE_DEPTH + 1),
            "]".repeat(MAX_PARSE_DEPTH + 1)
        );
        assert!(!is_canonical(deep.as_bytes()));
        let fits = format!(
            "{}{}",
            "[".repeat(MAX_PARSE_DEPTH),
            "]".repeat(MAX_PARSE_DEPTH)
        );
        assert!(is_canonical(fits.as_bytes()));
    }
}
