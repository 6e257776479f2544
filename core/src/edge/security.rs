//! Security headers and Content Security Policy for HTML responses.
//!
//! They are worked out with the edge plan (a nonce is per request, and the renderer is told it
//! before it renders) but only laid on the answer once the origin answered, and only when its
//! `Content-Type` is HTML ([`is_html`]): a JSON API answer, an image or a redirect the edge
//! answers itself gets none of them.

use base64::Engine;

/// The `securityHeaders` option.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SecurityHeaders {
    /// The defaults: nosniff, HSTS, referrer and permissions policies, `frame-ancestors` for the editor.
    #[default]
    Defaults,
    /// Headers merged over the defaults (names compared case-insensitively); a
    /// `Content-Security-Policy` here replaces the default `frame-ancestors` policy.
    Custom(Vec<(String, String)>),
    /// No security headers (`false`).
    Off,
}

/// The `cspMode` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CspMode {
    /// `Content-Security-Policy-Report-Only`.
    #[default]
    ReportOnly,
    /// `Content-Security-Policy`, with a per-request nonce on uncached HTML.
    Enforce,
}

/// A per-request CSP nonce (base64 of 16 random bytes the host supplies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CspNonce(String);

impl CspNonce {
    /// A nonce from random bytes (the host draws them from a cryptographic source).
    pub fn from_bytes(bytes: [u8; 16]) -> CspNonce {
        CspNonce(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// The nonce text, for `<script nonce="...">`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether a response with these headers is HTML: its `Content-Type` is `text/html`, with any
/// parameters, compared ignoring ASCII case (`text/html; charset=utf-8`, `Text/HTML`). A response
/// without a `Content-Type` is not.
pub fn is_html(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .is_some_and(|(_, v)| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("text/html")
        })
}

/// The default `frame-ancestors` policy: the site itself and the editor origins.
pub fn frame_ancestors(editor_origins: &[String]) -> String {
    let mut out = String::from("frame-ancestors 'self'");
    for o in editor_origins {
        out.push(' ');
        out.push_str(o);
    }
    out
}

/// The security headers of an HTML response (they replace the origin's own of the same names).
///
/// `csp` are the site's directives; in `enforce` mode they are merged with the default
/// `frame-ancestors` into one `Content-Security-Policy`, and `nonce` (given only for uncached
/// HTML) is added to `script-src` (or `default-src` when there is no `script-src`).
pub fn security_headers(
    setting: &SecurityHeaders,
    editor_origins: &[String],
    csp: &[String],
    mode: CspMode,
    nonce: Option<&CspNonce>,
) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = match setting {
        SecurityHeaders::Off => Vec::new(),
        SecurityHeaders::Defaults | SecurityHeaders::Custom(_) => vec![
            ("X-Content-Type-Options".into(), "nosniff".into()),
            (
                "Referrer-Policy".into(),
                "strict-origin-when-cross-origin".into(),
            ),
            (
                "Permissions-Policy".into(),
                "camera=(), microphone=(), geolocation=()".into(),
            ),
            (
                "Strict-Transport-Security".into(),
                "max-age=63072000; includeSubDomains; preload".into(),
            ),
            (
                "Content-Security-Policy".into(),
                frame_ancestors(editor_origins),
            ),
        ],
    };
    if let SecurityHeaders::Custom(custom) = setting {
        for (name, value) in custom {
            match headers
                .iter_mut()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                Some(slot) => slot.1 = value.clone(),
                None => headers.push((name.clone(), value.clone())),
            }
        }
    }
    if csp.is_empty() {
        return headers;
    }
    match mode {
        CspMode::ReportOnly => {
            headers.push(("Content-Security-Policy-Report-Only".into(), csp.join("; ")));
        }
        CspMode::Enforce => {
            let mut directives: Vec<String> = csp.iter().map(|d| d.trim().to_string()).collect();
            if let Some(n) = nonce {
                let target = directives
                    .iter()
                    .position(|d| directive_name(d) == "script-src")
                    .or_else(|| {
                        directives
                            .iter()
                            .position(|d| directive_name(d) == "default-src")
                    });
                if let Some(i) = target {
                    directives[i] = format!("{} 'nonce-{}'", directives[i], n.as_str());
                }
            }
            let existing = headers
                .iter()
                .position(|(n, _)| n.eq_ignore_ascii_case("content-security-policy"));
            if let Some(i) = existing {
                let (_, base) = headers.remove(i);
                for d in base.split(';').map(str::trim).filter(|d| !d.is_empty()) {
                    if !directives
                        .iter()
                        .any(|s| directive_name(s) == directive_name(d))
                    {
                        directives.push(d.to_string());
                    }
                }
            }
            headers.push(("Content-Security-Policy".into(), directives.join("; ")));
        }
    }
    headers
}

fn directive_name(d: &str) -> String {
    d.split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn editor() -> Vec<String> {
        vec!["https://studio.platformcms.com".into()]
    }

    fn get<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
        h.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn html_is_text_html_with_any_parameters_in_any_case() {
        let ct = |v: &str| vec![("Content-Type".to_string(), v.to_string())];
        assert!(is_html(&ct("text/html")));
        assert!(is_html(&ct("text/html; charset=utf-8")));
        assert!(is_html(&ct(" Text/HTML ;charset=UTF-8")));
        assert!(is_html(&[("content-type".into(), "text/html".into())]));
        assert!(!is_html(&ct("application/json")));
        assert!(!is_html(&ct("text/plain")));
        assert!(!is_html(&ct("text/htmlx")));
        assert!(!is_html(&ct("application/xhtml+xml")));
        assert!(!is_html(&[]), "no Content-Type: not HTML");
    }

    #[test]
    fn defaults() {
        let h = security_headers(
            &SecurityHeaders::Defaults,
            &editor(),
            &[],
            CspMode::ReportOnly,
            None,
        );
        assert_eq!(get(&h, "x-content-type-options"), Some("nosniff"));
        assert_eq!(
            get(&h, "content-security-policy"),
            Some("frame-ancestors 'self' https://studio.platformcms.com")
        );
        assert_eq!(
            get(&h, "x-frame-options"),
            None,
            "X-Frame-Options would stop the editor framing pages"
        );
        assert!(
            security_headers(
                &SecurityHeaders::Off,
                &editor(),
                &[],
                CspMode::ReportOnly,
                None
            )
            .is_empty()
        );
    }

    #[test]
    fn custom_merges_over_defaults() {
        let custom = SecurityHeaders::Custom(vec![
            (
                "content-security-policy".into(),
                "frame-ancestors 'none'".into(),
            ),
            ("X-Extra".into(), "1".into()),
        ]);
        let h = security_headers(&custom, &editor(), &[], CspMode::ReportOnly, None);
        assert_eq!(
            get(&h, "Content-Security-Policy"),
            Some("frame-ancestors 'none'")
        );
        assert_eq!(get(&h, "X-Extra"), Some("1"));
        assert_eq!(
            get(&h, "Referrer-Policy"),
            Some("strict-origin-when-cross-origin")
        );
    }

    #[test]
    fn csp_modes() {
        let csp = vec![
            "default-src 'self'".to_string(),
            "script-src 'self' https://cdn.x".to_string(),
        ];
        let h = security_headers(
            &SecurityHeaders::Defaults,
            &editor(),
            &csp,
            CspMode::ReportOnly,
            None,
        );
        assert_eq!(
            get(&h, "Content-Security-Policy-Report-Only"),
            Some("default-src 'self'; script-src 'self' https://cdn.x")
        );
        let nonce = CspNonce::from_bytes([7; 16]);
        let h = security_headers(
            &SecurityHeaders::Defaults,
            &editor(),
            &csp,
            CspMode::Enforce,
            Some(&nonce),
        );
        assert_eq!(
            get(&h, "Content-Security-Policy"),
            Some(format!("default-src 'self'; script-src 'self' https://cdn.x 'nonce-{}'; frame-ancestors 'self' https://studio.platformcms.com", nonce.as_str()).as_str())
        );
        assert_eq!(
            h.iter()
                .filter(|(n, _)| n == "Content-Security-Policy")
                .count(),
            1
        );
        let only_default = vec!["default-src 'self'".to_string()];
        let h = security_headers(
            &SecurityHeaders::Off,
            &[],
            &only_default,
            CspMode::Enforce,
            Some(&nonce),
        );
        assert_eq!(
            get(&h, "Content-Security-Policy"),
            Some(format!("default-src 'self' 'nonce-{}'", nonce.as_str()).as_str())
        );
        let h = security_headers(
            &SecurityHeaders::Off,
            &[],
            &only_default,
            CspMode::Enforce,
            None,
        );
        assert_eq!(
            get(&h, "Content-Security-Policy"),
            Some("default-src 'self'"),
            "cached HTML carries no nonce"
        );
    }
}
