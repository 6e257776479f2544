//! Block names and the file names that hold them.

use crate::uri::decode_uri_component_or_keep;

/// Decodes a file stem into its block name exactly once, as `decodeURIComponent` does; a stem
/// that is not valid percent-encoding (`50% off`) is the name unchanged.
pub fn decode_block_name(stem: &str) -> String {
    decode_uri_component_or_keep(stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::encode_uri_component as encode_block_name;

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
