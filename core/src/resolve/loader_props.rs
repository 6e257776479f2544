//! What a loader receives: its resolved props plus the page's path, URL and query parameters.

use crate::request::Request;
use crate::value::{Key, Value, intern};

/// Props keys the runtime injects; content should not use them for anything else.
pub const PAGE_PATH: &str = "__pagePath";
/// See [`PAGE_PATH`].
pub const PAGE_URL: &str = "__pageUrl";

/// Sets `__pagePath` and `__pageUrl` (whatever the content says) and adds every query parameter
/// the props do not already set (first occurrence wins; `page` is never injected; `count` and
/// `pageOffset` become numbers when they parse as finite numbers).
pub fn inject(props: Value, request: &Request) -> Value {
    let mut entries: Vec<(Key, Value)> = match &props {
        Value::Object(o) => o.entries().to_vec(),
        _ => return props,
    };
    entries.retain(|(k, _)| &**k != PAGE_PATH && &**k != PAGE_URL);
    entries.push((intern(PAGE_PATH), Value::string(request.path())));
    entries.push((intern(PAGE_URL), Value::string(request.url().as_str())));
    let has = |entries: &[(Key, Value)], k: &str| entries.iter().any(|(e, _)| &**e == k);
    for (k, v) in request.url().query_pairs() {
        if k == "page" || has(&entries, &k) {
            continue;
        }
        let value = match &*k {
            "count" | "pageOffset" => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && !v.trim().is_empty())
                .map_or_else(|| Value::string(&v), number),
            _ => Value::string(&v),
        };
        entries.push((intern(&k), value));
    }
    Value::object(entries)
}

/// A JSON number the way JavaScript prints it: integral values without a fraction.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injects_page_and_query_without_overriding_content() {
        let req = Request::new("https://s.com/c?q=shoe&page=2&count=12&q=boot&sort=a&pageOffset=x")
            .unwrap();
        let props =
            Value::from_json_str(r#"{"sort":"content","__pagePath":"/other","__pageUrl":1}"#)
                .unwrap();
        let out = inject(props, &req);
        assert_eq!(
            out.to_canonical_string(),
            r#"{"__pagePath":"/c","__pageUrl":"https://s.com/c?q=shoe&page=2&count=12&q=boot&sort=a&pageOffset=x","count":12,"pageOffset":"x","q":"shoe","sort":"content"}"#
        );
    }
}
