//! Which request hosts may render drafts.

use crate::config::PreviewHostsSetting;
use crate::config::hosts::PLATFORM_HOSTED_DOMAIN;
use crate::request::Request;
use crate::value::Value;

/// Lower-cases a host and drops a scheme, a path and a default port (`:80`, `:443`).
pub fn normalize_host(raw: &str) -> String {
    let mut h = raw.trim().to_ascii_lowercase();
    if let Some(i) = h.find("://") {
        h.drain(..i + 3);
    }
    if let Some(i) = h.find('/') {
        h.truncate(i);
    }
    for default_port in [":80", ":443"] {
        if let Some(stripped) = h.strip_suffix(default_port) {
            h = stripped.to_string();
        }
    }
    h
}

/// The request's host with port. With `trust_forwarded_host` (only when a proxy in front sets
/// `X-Forwarded-Host` and drops the client's), its first value wins; else `Host`, else the URL's.
pub fn request_host_behind_proxy(request: &Request, trust_forwarded_host: bool) -> String {
    let forwarded = trust_forwarded_host
        .then(|| request.header("x-forwarded-host"))
        .flatten()
        .and_then(|v| v.split(',').next())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let header = forwarded.or_else(|| request.header("host").filter(|v| !v.is_empty()));
    match header {
        Some(h) => normalize_host(h),
        None => {
            let url = request.url();
            let host = url.host_str().unwrap_or("");
            match url.port() {
                Some(p) => normalize_host(&format!("{host}:{p}")),
                None => normalize_host(host),
            }
        }
    }
}

/// The allow-list of preview hosts, built from the published content (never from a draft).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreviewHosts {
    off: bool,
    hosts: Vec<String>,
    site_name: Option<String>,
    trust_forwarded_host: bool,
}

impl PreviewHosts {
    /// `PLATFORM_ALLOWED_PREVIEW_HOSTS` replaces the Site block's `previewHosts` (array or
    /// comma-separated string); `none` turns draft preview off. With `PLATFORM_SITE_NAME` set,
    /// the platform-hosted hosts of that site (`<site>.platform.site`, `<env>--<site>.platform.site`)
    /// are allowed too.
    pub fn new(
        setting: &PreviewHostsSetting,
        site_block: Option<&Value>,
        site_name: Option<&str>,
    ) -> PreviewHosts {
        let hosts = match setting {
            PreviewHostsSetting::Off => {
                return PreviewHosts {
                    off: true,
                    ..PreviewHosts::default()
                };
            }
            PreviewHostsSetting::Hosts(h) => h.iter().map(|h| normalize_host(h)).collect(),
            PreviewHostsSetting::FromSite => match site_block.and_then(|s| s.get("previewHosts")) {
                Some(Value::Array(a)) => a
                    .items()
                    .iter()
                    .filter_map(Value::as_str)
                    .map(normalize_host)
                    .collect(),
                Some(Value::String(s)) => s.split(',').map(normalize_host).collect(),
                _ => Vec::new(),
            },
        };
        PreviewHosts {
            off: false,
            hosts: hosts
                .into_iter()
                .filter(|h: &String| !h.is_empty())
                .collect(),
            site_name: site_name
                .map(|s| s.trim().to_ascii_lowercase())
                .filter(|s| !s.is_empty()),
            trust_forwarded_host: false,
        }
    }

    /// Takes the request host from `X-Forwarded-Host` (`trustForwardedHost`): only when the
    /// proxy in front sets it and drops any the client sent. Off by default.
    pub fn trusting_forwarded_host(mut self, trust: bool) -> PreviewHosts {
        self.trust_forwarded_host = trust;
        self
    }

    /// Whether the request host comes from `X-Forwarded-Host`.
    pub fn trusts_forwarded_host(&self) -> bool {
        self.trust_forwarded_host
    }

    /// Whether any host can render drafts.
    pub fn is_enabled(&self) -> bool {
        !self.off && (!self.hosts.is_empty() || self.site_name.is_some())
    }

    /// Whether `host` (normalised, with port) may render drafts.
    pub fn allows(&self, host: &str) -> bool {
        if self.off {
            return false;
        }
        let host = normalize_host(host);
        if host.is_empty() {
            return false;
        }
        if self.hosts.contains(&host) {
            return true;
        }
        self.site_name.as_deref().is_some_and(|site| {
            let hosted = format!("{site}.{PLATFORM_HOSTED_DOMAIN}");
            host == hosted
                || host
                    .strip_suffix(&hosted)
                    .is_some_and(|env| env.ends_with("--") && env.len() > 2)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(json: &str) -> Value {
        Value::from_json_str(json).unwrap()
    }

    #[test]
    fn env_replaces_site_list_and_none_turns_off() {
        let s = site(r#"{"previewHosts": ["preview.shop.com", "Local.Shop:3000"]}"#);
        let from_site = PreviewHosts::new(&PreviewHostsSetting::FromSite, Some(&s), None);
        assert!(from_site.allows("preview.shop.com"));
        assert!(from_site.allows("local.shop:3000"));
        assert!(!from_site.allows("local.shop"), "port is part of the host");
        assert!(!from_site.allows("local.shop:3001"));
        let env = PreviewHosts::new(
            &PreviewHostsSetting::Hosts(vec!["env.shop.com".into()]),
            Some(&s),
            None,
        );
        assert!(env.allows("env.shop.com") && !env.allows("preview.shop.com"));
        let off = PreviewHosts::new(&PreviewHostsSetting::Off, Some(&s), Some("shop"));
        assert!(
            !off.is_enabled()
                && !off.allows("preview.shop.com")
                && !off.allows("shop.platform.site")
        );
        let none = PreviewHosts::new(&PreviewHostsSetting::FromSite, None, None);
        assert!(!none.is_enabled() && !none.allows("x"));
        let csv = PreviewHosts::new(
            &PreviewHostsSetting::FromSite,
            Some(&site(r#"{"previewHosts": "a.com, https://b.com:443/"}"#)),
            None,
        );
        assert!(csv.allows("a.com") && csv.allows("b.com"));
    }

    #[test]
    fn platform_hosted_hosts_are_inferred() {
        let h = PreviewHosts::new(&PreviewHostsSetting::FromSite, None, Some("Shop"));
        assert!(h.is_enabled());
        assert!(h.allows("shop.platform.site"));
        assert!(h.allows("staging--shop.platform.site"));
        assert!(!h.allows("--shop.platform.site"));
        assert!(!h.allows("evilshop.platform.site"));
        assert!(!h.allows("shop.platform.site.evil.com"));
    }

    #[test]
    fn forwarded_host_only_when_the_proxy_sets_it() {
        let r = Request::new("http://internal:8080/x").unwrap();
        assert_eq!(request_host_behind_proxy(&r, false), "internal:8080");
        let r = r.with_header("host", "Shop.com:443");
        assert_eq!(request_host_behind_proxy(&r, false), "shop.com");
        let r = r.with_header("x-forwarded-host", "preview.shop.com:8443, proxy");
        assert_eq!(
            request_host_behind_proxy(&r, false),
            "shop.com",
            "a client can send any X-Forwarded-Host"
        );
        assert_eq!(request_host_behind_proxy(&r, true), "preview.shop.com:8443");
        let hosts = PreviewHosts::new(
            &PreviewHostsSetting::Hosts(vec!["preview.shop.com:8443".into()]),
            None,
            None,
        );
        assert!(!hosts.trusts_forwarded_host());
        assert!(hosts.trusting_forwarded_host(true).trusts_forwarded_host());
    }
}
