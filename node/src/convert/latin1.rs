//! JSON text crossing into V8 as a one-byte (Latin-1) string: always one-byte, which V8 both
//! copies as is and parses faster than a two-byte string. Every character past U+00FF is
//! written as its JSON escape (`\u2192`), which `JSON.parse` reads back as the same character.
//! Only JSON may cross this way: outside JSON's strings there is no character past U+007F to
//! escape.

/// `utf8` (JSON text, UTF-8) as Latin-1 JSON text of the same value. One pass: runs of ASCII
/// are found eight bytes at a time and copied whole, each accented letter between them (a
/// two-byte sequence led by `0xC2` or `0xC3`) becomes its one byte, and any other character
/// becomes its `\uXXXX` escape (two for a character past U+FFFF; a malformed sequence, which a
/// serializer never writes, is U+FFFD).
pub(super) fn latin1_json(utf8: &[u8]) -> Vec<u8> {
    let mut latin1 = Vec::with_capacity(utf8.len() + ESCAPES_ROOM);
    let mut rest = utf8;
    loop {
        let (ascii, after) = rest.split_at(ascii_run(rest));
        latin1.extend_from_slice(ascii);
        rest = match after {
            [] => return latin1,
            [lead @ (0xC2 | 0xC3), next, tail @ ..] => {
                latin1.push(((lead & 0x1F) << 6) | (next & 0x3F));
                tail
            }
            _ => {
                let (c, len) = first_char(after);
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write_escape(&mut latin1, *unit);
                }
                &after[len..]
            }
        };
    }
}

/// Room reserved for escapes beyond the text's length: pages hold a few (arrows, quotes).
const ESCAPES_ROOM: usize = 64;

/// The character `bytes` (not empty, not ASCII) starts with and its length in bytes; U+FFFD and
/// one byte when the sequence is malformed.
fn first_char(bytes: &[u8]) -> (char, usize) {
    let width = match bytes.first() {
        Some(0xC0..=0xDF) => 2,
        Some(0xE0..=0xEF) => 3,
        Some(0xF0..=0xF7) => 4,
        _ => 1,
    };
    bytes
        .get(..width)
        .and_then(|seq| std::str::from_utf8(seq).ok())
        .and_then(|s| s.chars().next())
        .map_or((char::REPLACEMENT_CHARACTER, 1), |c| (c, width))
}

/// Writes the JSON escape `\uXXXX` of one UTF-16 code unit.
fn write_escape(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    out.extend(
        (0..4)
            .rev()
            .map(|nibble| HEX[usize::from((unit >> (nibble * 4)) & 0xF)]),
    );
}

/// The length of the ASCII run `bytes` starts with.
fn ascii_run(bytes: &[u8]) -> usize {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let high = u64::from_le_bytes(eight) & HIGH_BITS;
        if high != 0 {
            return at + (high.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let tail = words.remainder();
    at + tail
        .iter()
        .position(|b| !b.is_ascii())
        .unwrap_or(tail.len())
}
