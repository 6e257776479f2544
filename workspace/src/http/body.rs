//! Request bodies: a size limit and a JSON nesting limit, checked before parsing.

use serde_json::Value;

use crate::error::ApiError;

/// Largest accepted request body.
pub const BODY_LIMIT_BYTES: usize = 1024 * 1024;
/// Deepest accepted JSON nesting (objects and arrays).
pub const MAX_JSON_DEPTH: usize = 64;

/// Parses a JSON body, rejecting absurd nesting without recursing into it.
pub fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::InvalidJson("request body must be JSON".into()));
    }
    check_depth(bytes)?;
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::InvalidJson(format!("request body must be valid JSON: {e}")))
}

/// 400 when any string or key in `value` holds a NUL character (`\u0000`): no text with
/// NUL reaches storage (PostgreSQL text cannot hold it).
pub fn reject_nul(value: &Value) -> Result<(), ApiError> {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        let nul = match v {
            Value::String(s) => s.contains('\0'),
            Value::Array(items) => {
                stack.extend(items);
                false
            }
            Value::Object(map) => {
                stack.extend(map.values());
                map.keys().any(|k| k.contains('\0'))
            }
            _ => false,
        };
        if nul {
            return Err(ApiError::BadRequest(
                "text must not contain NUL characters (\\u0000)".into(),
            ));
        }
    }
    Ok(())
}

/// Scans the bytes once, counting open brackets outside strings.
fn check_depth(bytes: &[u8]) -> Result<(), ApiError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(ApiError::InvalidJson(format!(
                        "JSON nesting deeper than {MAX_JSON_DEPTH} levels"
                    )));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_deep_nesting_and_garbage() {
        let deep = "[".repeat(MAX_JSON_DEPTH + 1) + &"]".repeat(MAX_JSON_DEPTH + 1);
        assert!(parse_json(deep.as_bytes()).is_err());
        assert!(parse_json(b"{\"a\":\"[[[[\"}").is_ok());
        assert!(parse_json(b"{").is_err());
        assert!(parse_json(b"").is_err());
    }

    #[test]
    fn finds_nul_anywhere() {
        let ok = serde_json::json!({ "a": ["b", { "c": 1 }] });
        assert!(reject_nul(&ok).is_ok());
        for bad in [
            r#"{"a":"x\u0000"}"#,
            r#"{"a":[{"b":["\u0000"]}]}"#,
            r#"{"\u0000":1}"#,
        ] {
            let value: Value = serde_json::from_str(bad).unwrap();
            assert!(reject_nul(&value).is_err(), "{bad}");
        }
    }
}
