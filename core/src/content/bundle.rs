//! The generated bundle `.platform/blocks.gen.json`: one JSON object of every block, the format
//! (written canonical, one block per line; read whole or line by line). A snapshot is loaded
//! from it by [`load_bundle`](super::snapshot::load_bundle).

use crate::value::{Key, ParseError, Value, intern, write_json_string};

/// Parses a bundle into blocks (in the bundle's order).
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<(Key, Value)>, ParseError> {
    match Value::from_content_slice(bytes)? {
        Value::Object(o) => Ok(o.entries().to_vec()),
        _ => Err(ParseError("the bundle must be a JSON object".into())),
    }
}

/// The `(name, value byte range)` of every line of a one-block-per-line bundle, or `None` when
/// the text is not in that layout.
pub(super) fn split_lines(text: &[u8]) -> Option<Vec<(Key, std::ops::Range<usize>)>> {
    let body = text.strip_prefix(b"{\n")?.strip_suffix(b"\n}\n")?;
    let mut out = Vec::new();
    if body.is_empty() {
        return Some(out);
    }
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', body).chain(std::iter::once(body.len()));
    for end in ends {
        let line = &body[start..end];
        let line_start = start + 2;
        start = end + 1;
        let name_end = json_string_end(line)?;
        let name: String = serde_json::from_slice(&line[..name_end]).ok()?;
        if line.get(name_end) != Some(&b':') {
            return None;
        }
        let value_end = if line.last() == Some(&b',') {
            line.len() - 1
        } else {
            line.len()
        };
        if value_end <= name_end + 1 {
            return None;
        }
        if !balanced(line[name_end + 1], line[value_end - 1]) {
            return None;
        }
        out.push((
            intern(&name),
            line_start + name_end + 1..line_start + value_end,
        ));
    }
    Some(out)
}

/// Whether a value's first and last bytes can open and close one JSON value.
fn balanced(first: u8, last: u8) -> bool {
    matches!(
        (first, last),
        (b'{', b'}') | (b'[', b']') | (b'"', b'"') | (b't' | b'n', b'e' | b'l') | (b'f', b'e')
    ) || ((first == b'-' || first.is_ascii_digit()) && last.is_ascii_digit())
}

/// The index just past the JSON string literal that starts `line`.
fn json_string_end(line: &[u8]) -> Option<usize> {
    if line.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Writes blocks as a canonical bundle: block names sorted, keys inside blocks sorted, no
/// insignificant whitespace, one block per line so diffs stay readable. The same content always
/// gives the same bytes.
pub fn write_bundle<'a>(blocks: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Vec<u8> {
    let mut sorted: Vec<(&str, &Value)> = blocks.into_iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut out = Vec::new();
    out.push(b'{');
    for (i, (name, value)) in sorted.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        write_json_string(name, &mut out);
        out.push(b':');
        value.write_canonical(&mut out);
    }
    out.extend_from_slice(b"\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_is_canonical_and_round_trips() {
        let a = Value::from_json_str(r#"{"z":1,"a":{"y":2,"b":3}}"#).unwrap();
        let b = Value::from_json_str(r#"[1,"x"]"#).unwrap();
        let first = write_bundle([("b", &b), ("a", &a)]);
        let second = write_bundle([("a", &a), ("b", &b)]);
        assert_eq!(first, second);
        assert_eq!(
            String::from_utf8(first.clone()).unwrap(),
            "{\n\"a\":{\"a\":{\"b\":3,\"y\":2},\"z\":1},\n\"b\":[1,\"x\"]\n}\n"
        );
        let parsed = parse_bundle(&first).unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].1.to_canonical_string(), a.to_canonical_string());
    }

    #[test]
    fn a_bundle_must_be_an_object() {
        assert!(parse_bundle(b"[1]").is_err());
        assert!(parse_bundle(b"{").is_err());
        assert_eq!(parse_bundle(b"{}").unwrap().len(), 0);
    }
}
