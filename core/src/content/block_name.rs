//! Block names and the file names that hold them.

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

/// Decodes a file stem into its block name exactly once, as `decodeURIComponent` does; a stem
/// that is not valid percent-encoding (`50% off`) is the name unchanged.
pub fn decode_block_name(stem: &str) -> String {
    if !stem.contains('%') {
        return stem.to_string();
    }
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 3;
                }
                None => return stem.to_string(),
            }
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| stem.to_string())
}

/// Encodes a block name into a file stem as `encodeURIComponent` does.
pub fn encode_block_name(name: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'!')
        .remove(b'~')
        .remove(b'*')
        .remove(b'\'')
        .remove(b'(')
        .remove(b')');
    utf8_percent_encode(name, KEEP).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_once() {
        assert_eq!(decode_block_name("Header%20-%2001"), "Header - 01");
        assert_eq!(decode_block_name("pages-Home%2520v3"), "pages-Home%20v3");
    }

    #[test]
    fn invalid_encoding_keeps_the_stem() {
        assert_eq!(decode_block_name("50% off"), "50% off");
        assert_eq!(decode_block_name("bad%zz"), "bad%zz");
        assert_eq!(decode_block_name("trunc%2"), "trunc%2");
        assert_eq!(decode_block_name("notutf8%ff"), "notutf8%ff");
    }

    #[test]
    fn encoding_round_trips() {
        for name in ["Header - 01", "pages-Home (x)", "Relógio/ñ", "a%b"] {
            assert_eq!(decode_block_name(&encode_block_name(name)), name);
        }
        assert_eq!(encode_block_name("Header - 01"), "Header%20-%2001");
    }
}
