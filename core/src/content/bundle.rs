//! The generated bundle `.platform/blocks.gen.json`: one JSON object of every block.

use crate::value::{Key, ParseError, Value, write_json_string};

/// Parses a bundle into blocks (in the bundle's order).
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<(Key, Value)>, ParseError> {
    match Value::from_slice(bytes)? {
        Value::Object(o) => Ok(o.entries().to_vec()),
        _ => Err(ParseError("the bundle must be a JSON object".into())),
    }
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
