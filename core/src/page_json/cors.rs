//! CORS of page JSON under `pageJsonCors`: `*` lets any origin read it without credentials; a
//! list reflects an allowed `Origin` with credentials (and always says `Vary: Origin`); `false`
//! adds nothing. Both kinds use it (the reference's `?asJson` ignored the option).

use crate::edge::PageJsonCors;
use crate::edge::headers::{HeaderList, add_vary};

/// Methods page JSON allows cross-origin.
pub const PAGE_JSON_ALLOW_METHODS: &str = "GET, OPTIONS";
/// Request headers page JSON allows cross-origin.
pub const PAGE_JSON_ALLOW_HEADERS: &str = "Content-Type, If-None-Match, Authorization";

/// Whether `origin` is one of `allowed` (ASCII case ignored, a configured trailing `/` ignored).
fn allowed(allowed: &[String], origin: &str) -> bool {
    allowed
        .iter()
        .any(|a| a.trim().trim_end_matches('/').eq_ignore_ascii_case(origin))
}

/// The CORS headers of a page JSON response to a request with `origin` (its `Origin` header).
pub(crate) fn cors_headers(setting: &PageJsonCors, origin: Option<&str>) -> HeaderList {
    let mut headers = HeaderList::new();
    let origin = origin.map(str::trim).filter(|o| !o.is_empty());
    let allow_origin = match setting {
        PageJsonCors::Off => return headers,
        PageJsonCors::Any => Some(("*", false)),
        PageJsonCors::Origins(list) => {
            add_vary(&mut headers, "Origin");
            origin.filter(|o| allowed(list, o)).map(|o| (o, true))
        }
    };
    if let Some((origin, credentials)) = allow_origin {
        let mut add = |n: &str, v: &str| headers.push((n.to_string(), v.to_string()));
        add("Access-Control-Allow-Origin", origin);
        if credentials {
            add("Access-Control-Allow-Credentials", "true");
        }
        add("Access-Control-Allow-Methods", PAGE_JSON_ALLOW_METHODS);
        add("Access-Control-Allow-Headers", PAGE_JSON_ALLOW_HEADERS);
        add("Access-Control-Expose-Headers", "ETag");
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::headers::find;

    #[test]
    fn any_list_and_off() {
        let any = cors_headers(&PageJsonCors::Any, Some("https://a.example"));
        assert_eq!(find(&any, "access-control-allow-origin"), Some("*"));
        assert_eq!(find(&any, "vary"), None);
        let list = PageJsonCors::Origins(vec!["https://App.example/".into()]);
        let ok = cors_headers(&list, Some("https://app.example"));
        assert_eq!(
            find(&ok, "access-control-allow-origin"),
            Some("https://app.example")
        );
        assert_eq!(find(&ok, "access-control-allow-credentials"), Some("true"));
        assert_eq!(find(&ok, "vary"), Some("Origin"));
        let other = cors_headers(&list, Some("https://evil.example"));
        assert_eq!(other, vec![("Vary".to_string(), "Origin".to_string())]);
        assert!(cors_headers(&PageJsonCors::Off, Some("https://a.example")).is_empty());
    }
}
