//! The draft pointer: `<host[:port]><path[?query]>@<version>`.

use super::api_domains::ApiDomains;
use crate::config::hosts::valid_host;
use std::fmt;

/// Where a draft lives and which version of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftPointer {
    authority: String,
    path: String,
    version: String,
}

impl DraftPointer {
    /// Parses a pointer; `None` when malformed. Split at the last `@`; the version is 1–64 of
    /// `A-Za-z0-9._-`; the authority is lower-cased, a DNS host with an optional 1–5 digit port;
    /// the path starts with `/` and holds only `A-Za-z0-9/_.%~=&?-`.
    pub fn parse(raw: &str) -> Option<DraftPointer> {
        let (location, version) = raw.trim().rsplit_once('@')?;
        if version.is_empty()
            || version.len() > 64
            || !version
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        {
            return None;
        }
        let slash = location.find('/')?;
        let (authority, path) = location.split_at(slash);
        let authority = authority.to_ascii_lowercase();
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority.as_str(), None),
        };
        if !valid_host(host)
            || port.is_some_and(|p| {
                p.is_empty() || p.len() > 5 || !p.bytes().all(|c| c.is_ascii_digit())
            })
        {
            return None;
        }
        if !path
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"/_.%~=&?-".contains(&c))
        {
            return None;
        }
        Some(DraftPointer {
            authority,
            path: path.to_string(),
            version: version.to_string(),
        })
    }

    /// `host[:port]` the draft is fetched from.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The path (and query) of the draft document.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The draft version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The URL to fetch the draft from (`<origin><path>` plus `v=<version>`), or `None` when no
    /// entry of the API domains admits the authority.
    pub fn fetch_url(&self, domains: &ApiDomains) -> Option<String> {
        let origin = domains.origin_for(&self.authority)?;
        let sep = if self.path.contains('?') { '&' } else { '?' };
        Some(format!("{origin}{}{sep}v={}", self.path, self.version))
    }
}

impl fmt::Display for DraftPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}@{}", self.authority, self.path, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_valid_pointers() {
        let p = DraftPointer::parse("Api.Platformcms.com/drafts/site?x=1@v1.2_3-a").unwrap();
        assert_eq!(p.authority(), "api.platformcms.com");
        assert_eq!(p.path(), "/drafts/site?x=1");
        assert_eq!(p.version(), "v1.2_3-a");
        assert_eq!(
            p.to_string(),
            "api.platformcms.com/drafts/site?x=1@v1.2_3-a"
        );
        let p = DraftPointer::parse("localhost:8000/d@me@v2").is_none();
        assert!(p, "the `@` before the version must not be in the path");
        assert!(DraftPointer::parse("localhost:8000/d@v2").is_some());
    }

    #[test]
    fn rejects_malformed_pointers() {
        for bad in [
            "",
            "off",
            "host/path",
            "host@v",
            "/path@v",
            "ho_st/p@v",
            "-h.com/p@v",
            "h.com:123456/p@v",
            "h.com:/p@v",
            "h.com/p<script>@v",
            "h.com/p@",
            "h.com/p@v!",
            &format!("h.com/p@{}", "a".repeat(65)),
        ] {
            assert_eq!(DraftPointer::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn fetch_urls() {
        let d = ApiDomains::new(&[".platformcms.com".into(), "localhost".into()]);
        let p = DraftPointer::parse("api.platformcms.com/d?s=1@v1").unwrap();
        assert_eq!(
            p.fetch_url(&d).as_deref(),
            Some("https://api.platformcms.com/d?s=1&v=v1")
        );
        let p = DraftPointer::parse("localhost:3000/d@v1").unwrap();
        assert_eq!(
            p.fetch_url(&d).as_deref(),
            Some("http://localhost:3000/d?v=v1")
        );
        assert_eq!(
            DraftPointer::parse("evil.com/d@v1").unwrap().fetch_url(&d),
            None
        );
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_round_trips(s in ".{0,80}") {
            if let Some(p) = DraftPointer::parse(&s) {
                prop_assert_eq!(DraftPointer::parse(&p.to_string()), Some(p));
            }
        }
    }
}
