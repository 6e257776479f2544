//! Header values as text and back, without losing a byte. The core reads headers as strings;
//! HTTP allows bytes above ASCII in a value (obs-text). A value is read as Latin-1 (one char
//! per byte, as `fetch`'s `Headers` reads it) and written back one byte per char, so what a
//! visitor or an origin sent is forwarded exactly, not dropped.

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use std::borrow::Cow;

/// A header value as text: visible ASCII as is, any other byte read as Latin-1.
pub fn read(value: &HeaderValue) -> Cow<'_, str> {
    match value.to_str() {
        Ok(text) => text.into(),
        Err(_) => value.as_bytes().iter().map(|&b| char::from(b)).collect(),
    }
}

/// The header value for `text`: one byte per char when every char is Latin-1 (the inverse of
/// [`read`]), else its UTF-8 bytes (a value the core wrote from content); `None` when the bytes
/// are not a valid value (a control character).
pub fn write(text: &str) -> Option<HeaderValue> {
    if text.is_ascii() {
        return HeaderValue::from_str(text).ok();
    }
    let latin1: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(c).ok()).collect();
    match latin1 {
        Some(bytes) => HeaderValue::from_bytes(&bytes).ok(),
        None => HeaderValue::from_bytes(text.as_bytes()).ok(),
    }
}

/// The HTTP header for a pair of text (see [`write()`]); `None` when the name or the value is not
/// a valid one.
pub fn header(name: &str, value: &str) -> Option<(HeaderName, HeaderValue)> {
    Some((HeaderName::from_bytes(name.as_bytes()).ok()?, write(value)?))
}

/// The headers as text pairs, in order (see [`read`]).
pub fn pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| (name.as_str().to_string(), read(value).into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_value_bytes_survive_reading_and_writing() {
        for bytes in [
            &b"plain"[..],
            "caf\u{e9}".as_bytes(),
            b"\xe9t\xe9",
            b"\x80\xff\ttab",
        ] {
            let value = HeaderValue::from_bytes(bytes).unwrap();
            assert_eq!(write(&read(&value)).unwrap().as_bytes(), bytes);
        }
    }

    #[test]
    fn text_beyond_latin1_is_written_as_utf8_and_control_characters_are_refused() {
        assert_eq!(
            write("\u{2713} ok").unwrap().as_bytes(),
            "\u{2713} ok".as_bytes()
        );
        assert!(write("a\nb").is_none());
        assert!(write("a\u{0}b").is_none());
    }
}
