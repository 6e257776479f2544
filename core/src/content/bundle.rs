//! The generated bundle `.platform/blocks.gen.json`: one JSON object of every block.

use super::block::Block;
use super::snapshot::Snapshot;
use crate::value::{Key, ParseError, Value, intern, write_json_string};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Parses a bundle into blocks (in the bundle's order).
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<(Key, Value)>, ParseError> {
    match Value::from_content_slice(bytes)? {
        Value::Object(o) => Ok(o.entries().to_vec()),
        _ => Err(ParseError("the bundle must be a JSON object".into())),
    }
}

/// Loads a bundle into a snapshot. A bundle in the layout [`write_bundle`] produces (one block
/// per line) is split by lines and each block is parsed the first time it is read, so loading
/// costs a scan of the text; a block whose bytes are not JSON reads as `null` and is reported by
/// [`Snapshot::parse_problems`]. Any other layout is parsed (and validated) at once.
pub fn load_bundle(bytes: Vec<u8>) -> Result<Snapshot, ParseError> {
    let source = Arc::new(bytes);
    match split_lines(&source) {
        Some(lines) => {
            let mut blocks = FxHashMap::default();
            for (name, range) in lines {
                blocks.insert(name, Arc::new(Block::lazy(source.clone(), range)));
            }
            Ok(Snapshot::from_shared(blocks))
        }
        None => Ok(Snapshot::from_blocks(parse_bundle(&source)?)),
    }
}

/// The `(name, value byte range)` of every line of a one-block-per-line bundle, or `None` when
/// the text is not in that layout.
fn split_lines(text: &[u8]) -> Option<Vec<(Key, std::ops::Range<usize>)>> {
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
    fn lazy_load_matches_eager_load() {
        let a = Value::from_json_str(
            r#"{"path":"/x","sections":[{"__resolveType":"website/matchers/location.ts"}]}"#,
        )
        .unwrap();
        let b = Value::from_json_str(r#"{"t":"quote \" and \\ and \u00e9 and ,\n"}"#).unwrap();
        let bundle = write_bundle([("pages-x", &a), ("na\"me,", &b)]);
        let lazy = load_bundle(bundle.clone()).unwrap();
        let eager = Snapshot::from_blocks(parse_bundle(&bundle).unwrap());
        assert_eq!(lazy.revision(), eager.revision());
        assert_eq!(lazy.routes().find("/x").map(|m| m.name), Some("pages-x"));
        assert!(lazy.uses_location());
        assert_eq!(
            lazy.block("na\"me,").unwrap().to_canonical_string(),
            b.to_canonical_string()
        );
        // A line that is not canonical is digested from its value: same content, same revision.
        let unsorted = b"{\n\"a\":{\"z\":1,\"b\":[1.50,\"\\u00e9\"]}\n}\n".to_vec();
        let same = Value::from_json_str(r#"{"b":[1.5,"é"],"z":1}"#).unwrap();
        let changed = Value::from_json_str(r#"{"b":[1.5,"e"],"z":1}"#).unwrap();
        let unsorted = load_bundle(unsorted).unwrap();
        let read = unsorted.block("a").unwrap();
        assert_eq!(read.to_canonical_string(), same.to_canonical_string());
        let canonical = |v: &Value| load_bundle(write_bundle([("a", v)])).unwrap();
        assert_eq!(unsorted.revision(), canonical(&same).revision());
        assert_ne!(unsorted.revision(), canonical(&changed).revision());
        // Another layout falls back to parsing at once.
        let compact = br#"{"pages-x":{"path":"/x","sections":[]}}"#.to_vec();
        assert_eq!(load_bundle(compact).unwrap().routes().routes().len(), 1);
        assert!(load_bundle(b"{\n\"a\":{\n}\n".to_vec()).is_err());
        // A damaged line reads as null and is reported.
        let damaged = b"{\n\"a\":{\"x\":[1,}\n}\n".to_vec();
        let snapshot = load_bundle(damaged).unwrap();
        assert_eq!(snapshot.block("a"), Some(&Value::Null));
        assert_eq!(snapshot.parse_problems().len(), 1);
        assert_eq!(load_bundle(write_bundle([])).unwrap().len(), 0);
    }

    #[test]
    fn a_bundle_must_be_an_object() {
        assert!(parse_bundle(b"[1]").is_err());
        assert!(parse_bundle(b"{").is_err());
        assert_eq!(parse_bundle(b"{}").unwrap().len(), 0);
    }
}
