//! `productionOrigins`: absolute links to the site's own origins become relative.

use crate::value::Value;

/// Rewrites every string in `value` that starts with `origin + "/"` to the path after the origin,
/// and a string equal to an origin to `"/"`. Case- and scheme-sensitive. Untouched subtrees are
/// shared, not copied.
pub fn relativize(value: &Value, origins: &[String]) -> Value {
    if origins.is_empty() {
        return value.clone();
    }
    rewrite(value, origins).unwrap_or_else(|| value.clone())
}

fn rewrite(value: &Value, origins: &[String]) -> Option<Value> {
    match value {
        Value::String(s) => origins.iter().find_map(|o| {
            let rest = s.strip_prefix(o.as_str())?;
            if rest.is_empty() {
                Some(Value::string("/"))
            } else if rest.starts_with('/') {
                Some(Value::string(rest))
            } else {
                None
            }
        }),
        Value::Array(a) => {
            let items = a.items();
            let changed: Vec<Option<Value>> = items.iter().map(|v| rewrite(v, origins)).collect();
            changed.iter().any(Option::is_some).then(|| {
                Value::array(
                    changed
                        .into_iter()
                        .zip(items)
                        .map(|(c, v)| c.unwrap_or_else(|| v.clone()))
                        .collect(),
                )
            })
        }
        Value::Object(o) => {
            let entries = o.entries();
            let changed: Vec<Option<Value>> =
                entries.iter().map(|(_, v)| rewrite(v, origins)).collect();
            changed.iter().any(Option::is_some).then(|| {
                Value::object(
                    changed
                        .into_iter()
                        .zip(entries)
                        .map(|(c, (k, v))| (k.clone(), c.unwrap_or_else(|| v.clone())))
                        .collect(),
                )
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_own_origins_only() {
        let v = Value::from_json_str(
            r#"{"a":"https://shop.com/p/1","b":"https://shop.com","c":"https://shop.com?x",
                "d":["http://shop.com/x","https://other.com/y","https://SHOP.com/z"]}"#,
        )
        .unwrap();
        let out = relativize(&v, &["https://shop.com".to_string()]);
        assert_eq!(
            out.to_canonical_string(),
            r#"{"a":"/p/1","b":"/","c":"https://shop.com?x","d":["http://shop.com/x","https://other.com/y","https://SHOP.com/z"]}"#
        );
    }
}
