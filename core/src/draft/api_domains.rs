//! `PLATFORM_PREVIEW_API_DOMAINS`: where drafts may be fetched from.

/// Entries that are the local machine: they may carry a port and use `http`.
fn is_local(host: &str) -> bool {
    host == "localhost" || host == "127.0.0.1" || host.ends_with(".localhost")
}

/// The domains drafts may be fetched from. A bare entry matches that host exactly; a leading
/// `.` matches strict subdomains only (`.x.com` admits `a.x.com`, not `x.com`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiDomains(Vec<String>);

impl ApiDomains {
    /// The domains, as configured (lower-cased).
    pub fn new(domains: &[String]) -> ApiDomains {
        ApiDomains(
            domains
                .iter()
                .map(|d| d.trim().to_ascii_lowercase())
                .filter(|d| !d.is_empty())
                .collect(),
        )
    }

    /// The origin to fetch from for `host[:port]`: `http://` for local hosts, else `https://`;
    /// a port is accepted only for local hosts. `None` when no entry admits the host.
    pub fn origin_for(&self, authority: &str) -> Option<String> {
        let authority = authority.to_ascii_lowercase();
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority.as_str(), None),
        };
        let admitted = self.0.iter().any(|entry| match entry.strip_prefix('.') {
            Some(_) => host.len() > entry.len() && host.ends_with(entry.as_str()),
            None => host == entry,
        });
        if !admitted || (port.is_some() && !is_local(host)) {
            return None;
        }
        let scheme = if is_local(host) { "http" } else { "https" };
        Some(format!("{scheme}://{authority}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::hosts::DEFAULT_PREVIEW_API_DOMAINS;

    #[test]
    fn matching_rules() {
        let d = ApiDomains::new(&DEFAULT_PREVIEW_API_DOMAINS.map(String::from));
        assert_eq!(
            d.origin_for("api.platformcms.com").as_deref(),
            Some("https://api.platformcms.com")
        );
        assert_eq!(
            d.origin_for("platformcms.com"),
            None,
            "leading dot = strict subdomains"
        );
        assert_eq!(d.origin_for("evilplatformcms.com"), None, "label boundary");
        assert_eq!(
            d.origin_for("local.studio.platformcms.com").as_deref(),
            Some("https://local.studio.platformcms.com")
        );
        assert_eq!(
            d.origin_for("localhost:8000").as_deref(),
            Some("http://localhost:8000")
        );
        assert_eq!(
            d.origin_for("site.localhost:8000").as_deref(),
            Some("http://site.localhost:8000")
        );
        assert_eq!(
            d.origin_for("127.0.0.1:1").as_deref(),
            Some("http://127.0.0.1:1")
        );
        assert_eq!(
            d.origin_for("api.platformcms.com:8443"),
            None,
            "ports only for local hosts"
        );
        assert_eq!(d.origin_for("example.com"), None);
    }
}
