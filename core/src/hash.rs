//! djb2, the reference framework's string hash, where its output must match byte for byte
//! (experiment fingerprints, page JSON entity tags).

/// djb2 over the UTF-16 code units of `text` (what JavaScript's `charCodeAt` walks), with
/// 32-bit wrapping arithmetic, read unsigned.
pub(crate) fn djb2(text: &str) -> u32 {
    text.encode_utf16().fold(5381u32, |h, c| {
        h.wrapping_shl(5).wrapping_add(h).wrapping_add(u32::from(c))
    })
}

/// `n.toString(36)` for an unsigned number: lower-case base-36 digits.
pub(crate) fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn djb2_and_base36_are_javascripts() {
        assert_eq!(djb2(""), 5381);
        // ((5381 << 5) + 5381 + 97) for "a".
        assert_eq!(djb2("a"), 177_670);
        // A character outside the BMP counts as its two UTF-16 code units.
        assert_eq!(djb2("😀"), (5381 * 33 + 0xD83D) * 33 + 0xDE00);
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        assert_eq!(base36(u32::MAX), "1z141z3");
    }
}
