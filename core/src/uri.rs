//! JavaScript's `encodeURIComponent` / `decodeURIComponent`, which content and cookies written by
//! the reference framework rely on.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Characters `encodeURIComponent` escapes: all but `A-Z a-z 0-9 - _ . ! ~ * ' ( )`.
pub const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// `encodeURIComponent(s)`.
pub fn encode_uri_component(s: &str) -> String {
    utf8_percent_encode(s, URI_COMPONENT).to_string()
}

/// `s` percent-decoded once, as `decodeURIComponent` does; `s` unchanged where JavaScript
/// would throw (`50% off`).
pub fn decode_uri_component_or_keep(s: &str) -> String {
    decode_uri_component(s).unwrap_or_else(|| s.to_string())
}

/// `decodeURIComponent(s)`: `None` where JavaScript throws (a `%` not followed by two hex
/// digits, or bytes that are not UTF-8).
pub fn decode_uri_component(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_string());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_javascript() {
        assert_eq!(encode_uri_component("a b/é(x)"), "a%20b%2F%C3%A9(x)");
        assert_eq!(
            decode_uri_component("a%20b%2F%C3%A9").as_deref(),
            Some("a b/é")
        );
        assert_eq!(decode_uri_component("50% off"), None);
        assert_eq!(decode_uri_component("%ff"), None);
        assert_eq!(decode_uri_component("%2"), None);
    }
}
