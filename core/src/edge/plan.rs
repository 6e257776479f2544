//! The edge's whole decision for one request: redirect, asset, or page; the cache key; whether
//! it may be cached and why not; the headers the response gets.

use super::assets::{AssetKind, IMMUTABLE_CACHE_CONTROL, classify_asset};
use super::cacheability::{Bypass, RequestFacts, request_bypass};
use super::cdn::{CdnContext, SEGMENT_TOKEN_PARAM, segment_token};
use super::headers::{add_draft_headers, add_vary, set};
use super::key::{CacheKey, KeyContext, build_cache_key, is_fetch, url_key};
use super::options::WorkerOptions;
use super::profile::{CacheProfile, PRIVATE_CACHE_CONTROL, detect_profile};
use super::redirects::{Redirect, RedirectTable};
use super::security::{CspMode, CspNonce, security_headers};
use super::segment_key::SegmentKey;
use super::speculation::speculation_rules_header;
use crate::config::PlatformConfig;
use crate::draft::{DraftDecision, PreviewHosts, decide_draft};
use crate::request::Request;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use std::collections::HashMap;

/// Header names the edge sets.
pub mod names {
    /// Hit, miss, stale or bypass.
    pub const X_CACHE: &str = "X-Cache";
    /// Why the cache was bypassed.
    pub const X_CACHE_REASON: &str = "X-Cache-Reason";
    /// The profile.
    pub const X_CACHE_PROFILE: &str = "X-Cache-Profile";
    /// The deploy version in the key.
    pub const X_CACHE_VERSION: &str = "X-Cache-Version";
    /// The segment hash in the key.
    pub const X_CACHE_SEGMENT: &str = "X-Cache-Segment";
    /// Internal: the origin's page is degraded; stripped before the client.
    pub const X_PLATFORM_DEGRADED: &str = "X-Platform-Degraded";
}

/// What the edge knows about the current content snapshot.
#[derive(Debug, Clone, Copy)]
pub struct SiteFacts<'a> {
    /// The content uses the location matcher.
    pub uses_location: bool,
    /// The snapshot's redirects.
    pub redirects: &'a RedirectTable,
    /// The published allow-list of preview hosts.
    pub preview_hosts: &'a PreviewHosts,
}

/// Per-request inputs decided outside the edge policy.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestInputs<'a> {
    /// The A/B cohort token of the `platform_segment` cookie.
    pub cohort: Option<&'a str>,
    /// The request carries a parsed matcher override.
    pub has_override: bool,
    /// The site's `buildSegment` result.
    pub segment: Option<&'a SegmentKey>,
    /// A fresh CSP nonce (used only for uncached HTML in `enforce` mode).
    pub nonce: Option<&'a CspNonce>,
    /// What the site's `detectProfile(url)` answered, if it has one.
    pub profile: Option<CacheProfile>,
    /// Trust a forwarded `x-platform-draft` header (only behind a front that strips client copies).
    pub trust_draft_header: bool,
}

/// What the edge does with the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EdgeAction {
    /// Answer a redirect from content.
    Redirect(Redirect),
    /// Serve a static or fingerprinted asset (kept by URL only).
    Asset(AssetKind),
    /// Go to the origin without touching the cache.
    Bypass,
    /// Look up / store under the plan's key.
    Cache,
}

/// The edge's decision for one request.
#[derive(Debug, Clone)]
pub struct EdgePlan {
    /// What to do.
    pub action: EdgeAction,
    /// The cache key (`None` when the cache is not used).
    pub key: Option<CacheKey>,
    /// The profile.
    pub profile: CacheProfile,
    /// Whether the response may be cached.
    pub cacheable: bool,
    /// Why not, when it may not (`X-Cache-Reason`).
    pub reason: Option<String>,
    /// The headers the response gets (before origin-dependent ones such as `X-Cache: HIT`).
    pub headers: Vec<(String, String)>,
    /// The headers the response gets only when the origin answers HTML (`Content-Type:
    /// text/html`): the security headers and the Content Security Policy (with the nonce of an
    /// uncached HTML response under `cspMode: "enforce"`). Worked out with the plan, laid on the
    /// answer (and its stored copy) by [`EdgePolicy::after_origin`]; a JSON or other answer gets
    /// none of them. Not in the plan's serde form: no host applies them itself.
    pub html_headers: Vec<(String, String)>,
    /// The draft decision.
    pub draft: DraftDecision,
    /// Headers to set on the request before it goes to the origin (replacing the request's
    /// own): the `Cookie` header with the visitor's location added as `__cf_geo_*` cookies
    /// (`autoInjectGeoCookies`), so code behind the edge that sees cookies but not the edge's
    /// headers still knows where the visitor is.
    pub origin_headers: Vec<(String, String)>,
}

/// The edge cache policy: options, deploy version and mode, built once at start-up.
#[derive(Debug, Clone)]
pub struct EdgePolicy {
    options: WorkerOptions,
    version: Option<String>,
    dev_mode: bool,
}

impl EdgePolicy {
    /// A policy from options, the deploy version and whether the edge cache is off (dev mode).
    pub fn new(options: WorkerOptions, version: Option<String>, dev_mode: bool) -> EdgePolicy {
        EdgePolicy {
            options,
            version: version.filter(|v| !v.is_empty()),
            dev_mode,
        }
    }

    /// A policy from options and the configuration: the version is the variable named by
    /// `cacheVersionEnv` (else `build_time_hash`), dev mode is `isDevMode()`.
    pub fn from_config(
        options: WorkerOptions,
        config: &PlatformConfig,
        vars: &HashMap<String, String>,
        build_time_hash: Option<&str>,
    ) -> EdgePolicy {
        let version = options.cache_version(vars, build_time_hash);
        EdgePolicy::new(options, version, config.is_dev_mode())
    }

    /// The options.
    pub fn options(&self) -> &WorkerOptions {
        &self.options
    }

    /// The deploy version in cache keys.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The profile of a request, given what the site's `detectProfile` answered for it.
    pub fn profile(&self, request: &Request, detected: Option<CacheProfile>) -> CacheProfile {
        detect_profile(request.url(), detected)
    }

    /// The cache key of a request.
    pub fn cache_key(
        &self,
        request: &Request,
        site: &SiteFacts<'_>,
        inputs: &RequestInputs<'_>,
    ) -> CacheKey {
        let ctx = KeyContext {
            version: self.version.as_deref(),
            uses_location: site.uses_location,
            cohort: inputs.cohort,
            segment: inputs.segment,
        };
        build_cache_key(request, &self.options, &ctx)
    }

    /// Decides everything the edge does with a request.
    pub fn plan(
        &self,
        request: &Request,
        site: &SiteFacts<'_>,
        inputs: &RequestInputs<'_>,
    ) -> EdgePlan {
        let profile = self.profile(request, inputs.profile);
        let draft = decide_draft(request, site.preview_hosts, inputs.trust_draft_header);
        let mut plan = EdgePlan {
            action: EdgeAction::Bypass,
            key: None,
            profile,
            cacheable: false,
            reason: None,
            headers: Vec::new(),
            html_headers: Vec::new(),
            draft,
            origin_headers: Vec::new(),
        };

        if let Some(redirect) = site.redirects.lookup(request.url()) {
            plan.reason = Some(format!("redirect:{}", redirect.status));
            set(&mut plan.headers, "Location", redirect.location.clone());
            plan.action = EdgeAction::Redirect(redirect);
            return plan;
        }

        let o = &self.options;
        let readable = matches!(request.method(), "GET" | "HEAD");
        if let Some(kind) = classify_asset(
            request.path(),
            o.fingerprinted_asset_pattern.as_ref(),
            &o.static_paths,
        )
        .filter(|_| readable)
        {
            plan.action = EdgeAction::Asset(kind);
            plan.profile = CacheProfile::Static;
            // Dev mode has no edge cache at all; the asset still gets its headers.
            if self.dev_mode {
                plan.reason = Some("dev-mode".into());
            } else {
                plan.key = Some(url_key(request, o));
                plan.cacheable = true;
            }
            set(&mut plan.headers, "Cache-Control", IMMUTABLE_CACHE_CONTROL);
            add_vary(&mut plan.headers, "Accept-Encoding");
            return plan;
        }

        if o.auto_inject_geo_cookies
            && let Some(cookie) = cookie_with_geo(request)
        {
            plan.origin_headers.push(("Cookie".into(), cookie));
        }

        let facts = RequestFacts {
            has_override: inputs.has_override,
            draft: plan.draft.bypasses_cache(),
            logged_in: inputs.segment.is_some_and(|s| s.logged_in),
            dev_mode: self.dev_mode,
        };
        let timings = o.profiles.get(profile);
        let bypass = request_bypass(request, o, profile, facts)
            .or_else(|| (!timings.edge_cacheable()).then_some(Bypass::Profile(profile)));

        match &bypass {
            Some(b) => {
                // Nothing the edge did not store may be kept by a shared cache: every bypass
                // (method, bypass path, dev mode included) is private and has no
                // `CDN-Cache-Control`; the profile is still reported for debugging.
                let reason = match b {
                    Bypass::Profile(p) if !p.is_private() => format!("profile:{p}"),
                    other => other.to_string(),
                };
                set(&mut plan.headers, "Cache-Control", PRIVATE_CACHE_CONTROL);
                if matches!(b, Bypass::Method(_) | Bypass::Path | Bypass::DevMode)
                    && !profile.is_private()
                {
                    set(&mut plan.headers, names::X_CACHE_PROFILE, profile.as_str());
                }
                set(&mut plan.headers, names::X_CACHE, "BYPASS");
                set(&mut plan.headers, names::X_CACHE_REASON, reason.clone());
                plan.reason = Some(reason);
            }
            None => {
                let key = self.cache_key(request, site, inputs);
                let device = inputs
                    .segment
                    .and_then(|s| s.device.clone())
                    .unwrap_or_else(|| request.device().as_str().to_string());
                let token_ok = request.query(SEGMENT_TOKEN_PARAM).is_some_and(|t| {
                    segment_token(&device, self.version.as_deref())
                        .is_some_and(|expected| t == expected)
                }) && inputs.cohort.is_none_or(str::is_empty)
                    && !request.is_bot()
                    && inputs.segment.is_none_or(SegmentKey::is_device_only);
                let cdn = o.cdn_cache_control.value(
                    profile,
                    timings,
                    CdnContext {
                        is_document: !is_fetch(request),
                        segment_token_ok: token_ok,
                    },
                );
                set(&mut plan.headers, "Cache-Control", timings.cache_control());
                add_vary(&mut plan.headers, "Accept-Encoding");
                set(&mut plan.headers, "CDN-Cache-Control", cdn);
                set(&mut plan.headers, names::X_CACHE_PROFILE, profile.as_str());
                if let Some(v) = &self.version {
                    set(&mut plan.headers, names::X_CACHE_VERSION, v.clone());
                }
                if let Some(seg) = inputs.segment {
                    set(&mut plan.headers, names::X_CACHE_SEGMENT, seg.hash());
                }
                plan.action = EdgeAction::Cache;
                plan.cacheable = true;
                plan.key = Some(key);
            }
        }

        add_draft_headers(&mut plan.headers, &plan.draft);
        if !is_fetch(request) {
            if o.speculation_rules.is_some() && readable {
                set(
                    &mut plan.headers,
                    "Speculation-Rules",
                    speculation_rules_header(),
                );
            }
            // Decided now (the nonce is this request's, and the renderer must be told it before
            // it renders), applied once the origin answered HTML.
            let nonce = if plan.cacheable { None } else { inputs.nonce };
            plan.html_headers = security_headers(
                &o.security_headers,
                &o.editor_origins,
                &o.csp,
                o.csp_mode,
                nonce,
            )
            .into_iter()
            .filter(|(name, _)| {
                !plan
                    .headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(name))
            })
            .collect();
            if let (Some(nonce), CspMode::Enforce) = (nonce, o.csp_mode) {
                tell_origin_the_nonce(&mut plan, nonce);
            }
        }
        plan
    }
}

/// The renderer must stamp the nonce on its scripts: the origin gets it as `X-Nonce` and in
/// the request's `Content-Security-Policy` (Next.js reads the nonce from that header and puts
/// it on the scripts it writes), when the policy an HTML answer would get carries it. The
/// origin is told before anyone knows what it answers; only an HTML answer gets the policy.
fn tell_origin_the_nonce(plan: &mut EdgePlan, nonce: &CspNonce) {
    let policy = plan
        .html_headers
        .iter()
        .find(|(n, v)| n.eq_ignore_ascii_case("Content-Security-Policy") && v.contains("'nonce-"))
        .map(|(_, v)| v.clone());
    if let Some(policy) = policy {
        plan.origin_headers
            .push(("Content-Security-Policy".into(), policy));
        plan.origin_headers
            .push(("X-Nonce".into(), nonce.as_str().to_string()));
    }
}

/// Characters a cookie value may not hold as they are: all but ASCII letters, digits and
/// `-._~`, percent-encoded (the request side decodes them, as the reference does).
const COOKIE_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The request's `Cookie` header with every known field of the visitor's location added as a
/// `__cf_geo_*` cookie it does not already carry with that value; `None` when there is nothing
/// to add.
fn cookie_with_geo(request: &Request) -> Option<String> {
    let added: Vec<String> = request
        .geo()
        .cookies()
        .into_iter()
        .filter(|(name, value)| request.cookie(name) != Some(value.as_str()))
        .map(|(name, value)| format!("{name}={}", utf8_percent_encode(&value, COOKIE_VALUE)))
        .collect();
    if added.is_empty() {
        return None;
    }
    let sent = request
        .headers()
        .iter()
        .filter(|(n, v)| n == "cookie" && !v.is_empty())
        .map(|(_, v)| v.as_str());
    Some(
        sent.chain(added.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("; "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PreviewHostsSetting;
    use crate::value::Value;

    struct Site {
        redirects: RedirectTable,
        hosts: PreviewHosts,
    }

    fn site() -> Site {
        let block = Value::from_json_str(
            r#"{"__resolveType":"website/loaders/redirect.ts","redirect":{"from":"/old","to":"/new","type":"permanent"}}"#,
        )
        .unwrap();
        Site {
            redirects: RedirectTable::build("r", [("redirect-1", &block)]),
            hosts: PreviewHosts::new(
                &PreviewHostsSetting::Hosts(vec!["preview.shop.com".into()]),
                None,
                None,
            ),
        }
    }

    fn facts(s: &Site) -> SiteFacts<'_> {
        SiteFacts {
            uses_location: false,
            redirects: &s.redirects,
            preview_hosts: &s.hosts,
        }
    }

    fn policy() -> EdgePolicy {
        EdgePolicy::new(WorkerOptions::default(), Some("b1".into()), false)
    }

    fn header<'a>(p: &'a EdgePlan, name: &str) -> Option<&'a str> {
        p.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn html_header<'a>(p: &'a EdgePlan, name: &str) -> Option<&'a str> {
        p.html_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn req(u: &str) -> Request {
        Request::new(u).unwrap()
    }

    #[test]
    fn cacheable_page() {
        let s = site();
        let p = policy().plan(
            &req("https://shop.com/camisetas?utm_source=x"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(p.action, EdgeAction::Cache);
        assert!(p.cacheable && p.reason.is_none());
        assert_eq!(
            p.key.as_ref().unwrap().as_str(),
            "https://shop.com/camisetas#v=b1&device=desktop"
        );
        assert_eq!(
            header(&p, "cache-control"),
            Some(
                "public, max-age=30, s-maxage=120, stale-while-revalidate=300, stale-if-error=1800"
            )
        );
        assert_eq!(header(&p, "vary"), Some("Accept-Encoding"));
        assert_eq!(
            header(&p, "cdn-cache-control"),
            Some("no-store"),
            "documents are never kept by the CDN"
        );
        assert_eq!(header(&p, "x-cache-profile"), Some("listing"));
        assert_eq!(header(&p, "x-cache-version"), Some("b1"));
        assert!(
            html_header(&p, "content-security-policy")
                .unwrap()
                .starts_with("frame-ancestors 'self'")
        );
        assert_eq!(
            header(&p, "content-security-policy"),
            None,
            "security headers wait for the origin's answer: HTML only"
        );
        assert_eq!(html_header(&p, "x-content-type-options"), Some("nosniff"));
        assert_eq!(
            header(&p, "x-cache"),
            None,
            "hit or miss is only known at run time"
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["profile"], "listing");
        assert_eq!(json["cacheable"], true);
        assert!(json["reason"].is_null());
    }

    #[test]
    fn segment_token_relaxes_cdn_for_fetches() {
        let s = site();
        let fetch = req("https://shop.com/camisetas?__cseg=desktop.b1")
            .with_header("sec-fetch-dest", "empty");
        let p = policy().plan(&fetch, &facts(&s), &RequestInputs::default());
        assert_eq!(header(&p, "cdn-cache-control"), Some("public, max-age=120"));
        assert!(
            p.html_headers.is_empty(),
            "security headers are for documents"
        );
        let wrong = req("https://shop.com/camisetas?__cseg=mobile.b1")
            .with_header("sec-fetch-dest", "empty");
        assert_eq!(
            header(
                &policy().plan(&wrong, &facts(&s), &RequestInputs::default()),
                "cdn-cache-control"
            ),
            Some("no-store")
        );
        let cohort = RequestInputs {
            cohort: Some("A:1:50"),
            ..Default::default()
        };
        assert_eq!(
            header(
                &policy().plan(&fetch, &facts(&s), &cohort),
                "cdn-cache-control"
            ),
            Some("no-store")
        );
    }

    #[test]
    fn bypasses_and_their_headers() {
        let s = site();
        let pol = policy();
        let plan = |r: Request, i: RequestInputs<'_>| pol.plan(&r, &facts(&s), &i);
        let p = plan(req("https://shop.com/checkout"), RequestInputs::default());
        assert_eq!(p.reason.as_deref(), Some("non-cacheable:cart"));
        assert_eq!(p.profile, CacheProfile::Cart);
        assert_eq!(header(&p, "cache-control"), Some(PRIVATE_CACHE_CONTROL));
        assert_eq!(header(&p, "x-cache"), Some("BYPASS"));
        assert!(p.key.is_none() && !p.cacheable);
        let p = plan(
            req("https://shop.com/x").with_method("POST"),
            RequestInputs::default(),
        );
        assert_eq!(p.reason.as_deref(), Some("method:POST"));
        assert_eq!(header(&p, "x-cache-profile"), Some("listing"));
        assert_eq!(
            header(&p, "cache-control"),
            Some(PRIVATE_CACHE_CONTROL),
            "a response the edge did not store is not shared downstream either"
        );
        assert_eq!(header(&p, "cdn-cache-control"), None);
        let p = plan(req("https://shop.com/live/x"), RequestInputs::default());
        assert_eq!(p.reason.as_deref(), Some("bypass-path"));
        assert_eq!(header(&p, "cache-control"), Some(PRIVATE_CACHE_CONTROL));
        let p = plan(
            req("https://shop.com/x").with_header("x-platform-matchers-override", "A=1"),
            RequestInputs::default(),
        );
        assert_eq!(p.reason.as_deref(), Some("matcher-override"));
        assert_eq!(
            header(&p, "cache-control"),
            Some(PRIVATE_CACHE_CONTROL),
            "forced variants are never shared"
        );
        let seg = SegmentKey {
            logged_in: true,
            ..Default::default()
        };
        let p = plan(
            req("https://shop.com/x"),
            RequestInputs {
                segment: Some(&seg),
                ..Default::default()
            },
        );
        assert_eq!(p.reason.as_deref(), Some("logged-in"));
        let dev = EdgePolicy::new(WorkerOptions::default(), None, true);
        let p = dev.plan(
            &req("https://shop.com/"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(p.reason.as_deref(), Some("dev-mode"));
        assert_eq!(header(&p, "cache-control"), Some(PRIVATE_CACHE_CONTROL));
        assert_eq!(header(&p, "cdn-cache-control"), None);
        let mut opts = WorkerOptions::default();
        let mut listing = *opts.profiles.get(CacheProfile::Listing);
        listing.edge.fresh = 0;
        opts.profiles.set(CacheProfile::Listing, listing).unwrap();
        let p = EdgePolicy::new(opts, None, false).plan(
            &req("https://shop.com/x"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(p.reason.as_deref(), Some("profile:listing"));
    }

    #[test]
    fn draft_preview_is_never_cached_and_noindexed() {
        let s = site();
        let nonce = CspNonce::from_bytes([1; 16]);
        let opts = WorkerOptions {
            csp: vec!["script-src 'self'".into()],
            csp_mode: CspMode::Enforce,
            ..WorkerOptions::default()
        };
        let pol = EdgePolicy::new(opts, None, false);
        let r = req("https://preview.shop.com/?__draft=api.platformcms.com/d@v1");
        let p = pol.plan(
            &r,
            &facts(&s),
            &RequestInputs {
                nonce: Some(&nonce),
                ..Default::default()
            },
        );
        assert_eq!(p.reason.as_deref(), Some("draft"));
        assert_eq!(header(&p, "cache-control"), Some("no-store, private"));
        assert_eq!(header(&p, "vary"), Some("Cookie"));
        assert_eq!(header(&p, "x-robots-tag"), Some("noindex, nofollow"));
        assert!(
            header(&p, "set-cookie")
                .unwrap()
                .starts_with("__platform_draft=")
        );
        assert!(
            html_header(&p, "content-security-policy")
                .unwrap()
                .contains(&format!("'nonce-{}'", nonce.as_str()))
        );
        let public = pol.plan(
            &req("https://www.shop.com/?__draft=api.platformcms.com/d@v1"),
            &facts(&s),
            &RequestInputs {
                nonce: Some(&nonce),
                ..Default::default()
            },
        );
        assert!(public.cacheable, "drafts are inert on other hosts");
        assert!(
            !html_header(&public, "content-security-policy")
                .unwrap()
                .contains("nonce"),
            "cached HTML has no nonce"
        );
        // The renderer is told the nonce of uncached HTML, and only of it.
        let told = |plan: &EdgePlan, name: &str| {
            plan.origin_headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        assert_eq!(told(&p, "x-nonce").as_deref(), Some(nonce.as_str()));
        assert_eq!(
            told(&p, "content-security-policy").as_deref(),
            html_header(&p, "content-security-policy")
        );
        assert_eq!(told(&public, "x-nonce"), None);
        assert_eq!(told(&public, "content-security-policy"), None);
    }

    #[test]
    fn redirects_and_assets_come_first() {
        let s = site();
        let p = policy().plan(
            &req("https://shop.com/old?a=1"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(
            p.action,
            EdgeAction::Redirect(Redirect {
                status: 301,
                location: "/new?a=1".into()
            })
        );
        assert_eq!(p.reason.as_deref(), Some("redirect:301"));
        assert_eq!(header(&p, "location"), Some("/new?a=1"));
        assert!(
            p.html_headers.is_empty() && header(&p, "strict-transport-security").is_none(),
            "a redirect the edge answers has no HTML body: no security headers (decision EDGE-27)"
        );
        let p = policy().plan(
            &req("https://shop.com/_build/assets/app-3f9a1b2c.js?utm_source=x"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(p.action, EdgeAction::Asset(AssetKind::Fingerprinted));
        assert_eq!(
            p.key.as_ref().unwrap().as_str(),
            "https://shop.com/_build/assets/app-3f9a1b2c.js"
        );
        assert_eq!(header(&p, "cache-control"), Some(IMMUTABLE_CACHE_CONTROL));
        assert_eq!(p.profile, CacheProfile::Static);
        let p = policy().plan(
            &req("https://shop.com/fonts/a.woff2").with_method("POST"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(p.reason.as_deref(), Some("method:POST"));
        let dev = EdgePolicy::new(WorkerOptions::default(), None, true);
        let p = dev.plan(
            &req("https://shop.com/_build/assets/app-3f9a1b2c.js"),
            &facts(&s),
            &RequestInputs::default(),
        );
        assert_eq!(p.action, EdgeAction::Asset(AssetKind::Fingerprinted));
        assert!(!p.cacheable && p.key.is_none(), "dev mode stores nothing");
        assert_eq!(p.reason.as_deref(), Some("dev-mode"));
        assert_eq!(header(&p, "cache-control"), Some(IMMUTABLE_CACHE_CONTROL));
    }

    #[test]
    fn from_config_reads_the_version() {
        let vars: HashMap<String, String> = [("BUILD_HASH".to_string(), "abc".to_string())].into();
        let config = PlatformConfig::from_env(&vars).unwrap();
        let pol = EdgePolicy::from_config(WorkerOptions::default(), &config, &vars, None);
        assert_eq!(pol.version(), Some("abc"));
        assert!(pol.options().device_specific_keys);
        let preview = PlatformConfig::from_env([("PLATFORM_PREVIEW", "true")]).unwrap();
        let s = site();
        let pol = EdgePolicy::from_config(
            WorkerOptions::default(),
            &preview,
            &HashMap::new(),
            Some("compiled"),
        );
        assert_eq!(pol.version(), Some("compiled"));
        assert_eq!(
            pol.plan(
                &req("https://s.com/"),
                &facts(&s),
                &RequestInputs::default()
            )
            .reason
            .as_deref(),
            Some("dev-mode")
        );
    }
}
