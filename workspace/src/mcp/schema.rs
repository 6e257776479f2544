//! Validation of tool arguments against a tool's JSON Schema `inputSchema`.
//!
//! Covers the keywords tool schemas use in practice: `type`, `properties`, `required`,
//! `additionalProperties`, `items`, `enum`, `const`, numeric and length bounds, `anyOf`,
//! `oneOf`, `allOf`. Unknown keywords are ignored.

use serde_json::Value;

/// Deepest schema/value nesting followed (bodies are already depth-limited).
const MAX_DEPTH: usize = 64;

/// Checks `value` against `schema`; the error names the failing location.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    check(schema, value, "arguments", 0)
}

fn check(schema: &Value, value: &Value, at: &str, depth: usize) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return match schema {
            Value::Bool(false) => Err(format!("{at} is not allowed")),
            _ => Ok(()),
        };
    };
    if depth > MAX_DEPTH {
        return Ok(());
    }
    if let Some(expected) = schema.get("type") {
        let names: Vec<&str> = match expected {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.is_empty() && !names.iter().any(|t| has_type(value, t)) {
            return Err(format!("{at} must be of type {}", names.join(" or ")));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        return Err(format!(
            "{at} must be one of {}",
            Value::Array(options.clone())
        ));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        return Err(format!("{at} must be {constant}"));
    }
    check_bounds(schema, value, at)?;
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    return Err(format!("{at}.{name} is required"));
                }
            }
        }
        for (name, item) in object {
            let here = format!("{at}.{name}");
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => check(sub, item, &here, depth + 1)?,
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(format!("{here} is not allowed")),
                    Some(sub @ Value::Object(_)) => check(sub, item, &here, depth + 1)?,
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            check(items, item, &format!("{at}[{i}]"), depth + 1)?;
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for sub in all {
            check(sub, value, at, depth + 1)?;
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array)
        && !any
            .iter()
            .any(|sub| check(sub, value, at, depth + 1).is_ok())
    {
        return Err(format!("{at} matches none of the allowed schemas"));
    }
    if let Some(one) = schema.get("oneOf").and_then(Value::as_array)
        && one
            .iter()
            .filter(|sub| check(sub, value, at, depth + 1).is_ok())
            .count()
            != 1
    {
        return Err(format!("{at} must match exactly one allowed schema"));
    }
    Ok(())
}

fn check_bounds(
    schema: &serde_json::Map<String, Value>,
    value: &Value,
    at: &str,
) -> Result<(), String> {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(n) = value.as_f64() {
        if bound("minimum").is_some_and(|m| n < m)
            || bound("exclusiveMinimum").is_some_and(|m| n <= m)
        {
            return Err(format!("{at} is below the minimum"));
        }
        if bound("maximum").is_some_and(|m| n > m)
            || bound("exclusiveMaximum").is_some_and(|m| n >= m)
        {
            return Err(format!("{at} is above the maximum"));
        }
    }
    let length = match value {
        Value::String(s) => Some(s.chars().count() as f64),
        Value::Array(a) => Some(a.len() as f64),
        _ => None,
    };
    if let Some(len) = length {
        let (min, max) = if value.is_string() {
            (bound("minLength"), bound("maxLength"))
        } else {
            (bound("minItems"), bound("maxItems"))
        };
        if min.is_some_and(|m| len < m) {
            return Err(format!("{at} is too short"));
        }
        if max.is_some_and(|m| len > m) {
            return Err(format!("{at} is too long"));
        }
    }
    Ok(())
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validates_common_keywords() {
        let schema = json!({
            "type": "object",
            "properties": {
                "text": { "type": "string", "minLength": 1 },
                "n": { "type": "integer", "minimum": 0 },
                "mode": { "enum": ["a", "b"] },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["text"],
            "additionalProperties": false
        });
        assert!(validate(&schema, &json!({"text": "hi", "n": 2, "tags": ["x"]})).is_ok());
        assert!(
            validate(&schema, &json!({}))
                .unwrap_err()
                .contains("text is required")
        );
        assert!(validate(&schema, &json!({"text": 5})).is_err());
        assert!(validate(&schema, &json!({"text": "a", "n": -1})).is_err());
        assert!(validate(&schema, &json!({"text": "a", "n": 1.5})).is_err());
        assert!(validate(&schema, &json!({"text": "a", "mode": "c"})).is_err());
        assert!(validate(&schema, &json!({"text": "a", "tags": [1]})).is_err());
        assert!(validate(&schema, &json!({"text": "a", "extra": 1})).is_err());
        assert!(
            validate(
                &json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                &json!(null)
            )
            .is_ok()
        );
    }
}
