//! Typed `createDecoWorkerEntry` options (the data ones; callbacks such as `buildSegment`,
//! `cacheStorage` and `proxyHandler` stay with the host, which passes their results in).

use super::assets::DEFAULT_FINGERPRINT_PATTERN;
use super::cdn::CdnCacheControl;
use super::geo_key::GeoCacheKey;
use super::profile::ProfileTable;
use super::security::{CspMode, SecurityHeaders};
use super::speculation::SpeculationRules;
use crate::config::ConfigError;
use crate::config::hosts::EDITOR_ORIGINS;
use regex::Regex;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::fmt;
use std::sync::LazyLock;

/// The variable holding the commit id on the hosting provider's CI builds.
pub const CI_COMMIT_SHA_VAR: &str = "WORKERS_CI_COMMIT_SHA";

/// The code's build id, fixed at compile time: `SITEFILE_BUILD_HASH` when the binary was built
/// with it set (CI sets the commit id), else `sitefile-<crate version>`.
pub fn compiled_build_id() -> String {
    match option_env!("SITEFILE_BUILD_HASH").map(str::trim) {
        Some(h) if !h.is_empty() => h.to_string(),
        _ => concat!("sitefile-", env!("CARGO_PKG_VERSION")).to_string(),
    }
}

/// The build-time hash that versions cache keys when neither `BUILD_HASH` (or the variable named
/// by `cacheVersionEnv`) nor `WORKERS_CI_COMMIT_SHA` is set: the compiled build id, plus the
/// first 12 characters of the content revision when one is given (`sitefile-0.1.0-1a2b3c4d5e6f`).
/// Content is loaded at run time rather than bundled, so a build is code *and* content: a new
/// binary or new content never reads pages rendered by the old ones.
pub fn build_time_hash(revision: Option<&str>) -> String {
    let code = compiled_build_id();
    match revision.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => format!("{code}-{}", r.get(..12).unwrap_or(r)),
        None => code,
    }
}

/// Paths never cached; `bypassPaths` and `extraBypassPaths` are added to these.
pub const DEFAULT_BYPASS_PATHS: [&str; 4] = ["/_build", "/platform/", "/live/", "/.sitefile"];

/// Cookies that do not prevent caching by default: commerce session cookies and `_platform_bucket`.
pub const DEFAULT_SAFE_COOKIES: [&str; 4] = [
    "vtex_is_session",
    "vtex_is_anonymous",
    "vtex_segment",
    "_platform_bucket",
];

/// CORS of page JSON (`pageJsonCors`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PageJsonCors {
    /// `*`: any origin, no credentials.
    #[default]
    Any,
    /// These origins, reflected with credentials.
    Origins(Vec<String>),
    /// No CORS headers (`false`).
    Off,
}

/// `outboundUserAgent`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OutboundUserAgent {
    /// `sitefile/<version> (+<site URL>)`.
    #[default]
    Default,
    /// This value.
    Custom(String),
    /// Add none (`false`).
    Off,
}

impl OutboundUserAgent {
    /// The User-Agent to add to outgoing fetches that have none.
    pub fn value(&self, site_url: Option<&str>) -> Option<String> {
        match self {
            OutboundUserAgent::Default => Some(match site_url {
                Some(u) => format!("sitefile/{} (+{u})", env!("CARGO_PKG_VERSION")),
                None => format!("sitefile/{}", env!("CARGO_PKG_VERSION")),
            }),
            OutboundUserAgent::Custom(s) => Some(s.clone()),
            OutboundUserAgent::Off => None,
        }
    }
}

/// The `createDecoWorkerEntry` options, with the spec's defaults.
#[derive(Clone)]
pub struct WorkerOptions {
    /// Admin handlers are mounted (`admin`).
    pub admin: bool,
    /// Split the cache by device class when there is no segment (`deviceSpecificKeys`).
    pub device_specific_keys: bool,
    /// Geography in the cache key (`geoCacheKey`).
    pub geo_cache_key: GeoCacheKey,
    /// Expose edge geolocation to matchers as cookies (`autoInjectGeoCookies`).
    pub auto_inject_geo_cookies: bool,
    /// Cookies that do not prevent caching (`safeCookies`).
    pub safe_cookies: Vec<String>,
    /// Remove tracking parameters from cache keys (`stripTrackingParams`).
    pub strip_tracking_params: bool,
    /// More tracking parameters to strip (`registerTrackingParam`).
    pub extra_tracking_params: Vec<String>,
    /// Never cached, added to [`DEFAULT_BYPASS_PATHS`] (`bypassPaths`).
    pub bypass_paths: Vec<String>,
    /// More paths never cached (`extraBypassPaths`).
    pub extra_bypass_paths: Vec<String>,
    /// Prefixes of non-fingerprinted files cached long and immutable (`staticPaths`).
    pub static_paths: Vec<String>,
    /// Assets cached for a year (`fingerprintedAssetPattern`); `None`: no path is a
    /// fingerprinted asset.
    pub fingerprinted_asset_pattern: Option<Regex>,
    /// Variable holding the deploy version (`cacheVersionEnv`; `None` = `false`).
    pub cache_version_env: Option<String>,
    /// Variable holding the purge token (`purgeTokenEnv`; `None` = `false`, purging disabled).
    pub purge_token_env: Option<String>,
    /// `CDN-Cache-Control` policy (`cdnCacheControl`).
    pub cdn_cache_control: CdnCacheControl,
    /// Serve `?renderJson` (`renderJson`).
    pub render_json: bool,
    /// Serve `?asJson` (`asJson`).
    pub as_json: bool,
    /// CORS for page JSON (`pageJsonCors`).
    pub page_json_cors: PageJsonCors,
    /// Security headers on HTML (`securityHeaders`).
    pub security_headers: SecurityHeaders,
    /// Origins allowed to frame pages (`frame-ancestors`): the editor by default.
    pub editor_origins: Vec<String>,
    /// Content Security Policy directives (`csp`; empty = `false`).
    pub csp: Vec<String>,
    /// `cspMode`.
    pub csp_mode: CspMode,
    /// `speculationRules` (`None` = off).
    pub speculation_rules: Option<SpeculationRules>,
    /// Telemetry on (`observability`).
    pub observability: bool,
    /// `outboundUserAgent`.
    pub outbound_user_agent: OutboundUserAgent,
    /// HTML of the empty preview frame (`previewShell`; `None` = built from the render shell).
    pub preview_shell: Option<String>,
    /// Profile timings with site overrides.
    pub profiles: ProfileTable,
    /// Take the request host from `X-Forwarded-Host` (`trustForwardedHost`, not in the spec;
    /// default off): only when the proxy in front sets it and drops any a client sent.
    pub trust_forwarded_host: bool,
    /// How long the edge waits for the origin, in milliseconds, when a stored copy could stand
    /// in for a failed answer (`staleIfErrorDeadlineMs`, not in the spec; default 3000): past
    /// it the copy is served as `STALE-ERROR` instead of waiting out the origin's own timeout.
    pub stale_if_error_deadline_ms: u32,
}

impl fmt::Debug for WorkerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerOptions")
            .field("geo_cache_key", &self.geo_cache_key)
            .field("device_specific_keys", &self.device_specific_keys)
            .field("safe_cookies", &self.safe_cookies)
            .field("bypass_paths", &self.bypass_paths)
            .field("extra_bypass_paths", &self.extra_bypass_paths)
            .field("cdn_cache_control", &self.cdn_cache_control)
            .finish_non_exhaustive()
    }
}

impl Default for WorkerOptions {
    fn default() -> WorkerOptions {
        WorkerOptions {
            admin: false,
            device_specific_keys: true,
            geo_cache_key: GeoCacheKey::Auto,
            auto_inject_geo_cookies: true,
            safe_cookies: DEFAULT_SAFE_COOKIES.iter().map(|s| s.to_string()).collect(),
            strip_tracking_params: true,
            extra_tracking_params: Vec::new(),
            bypass_paths: Vec::new(),
            extra_bypass_paths: Vec::new(),
            static_paths: vec!["/fonts/".into()],
            fingerprinted_asset_pattern: DEFAULT_FINGERPRINT.clone(),
            cache_version_env: Some("BUILD_HASH".into()),
            purge_token_env: Some("PURGE_TOKEN".into()),
            cdn_cache_control: CdnCacheControl::ServerFnSegment,
            render_json: true,
            as_json: true,
            page_json_cors: PageJsonCors::Any,
            security_headers: SecurityHeaders::Defaults,
            editor_origins: EDITOR_ORIGINS.iter().map(|s| s.to_string()).collect(),
            csp: Vec::new(),
            csp_mode: CspMode::ReportOnly,
            speculation_rules: None,
            observability: true,
            outbound_user_agent: OutboundUserAgent::Default,
            preview_shell: None,
            profiles: ProfileTable::default(),
            trust_forwarded_host: false,
            stale_if_error_deadline_ms: DEFAULT_STALE_IF_ERROR_DEADLINE_MS,
        }
    }
}

/// The default of [`WorkerOptions::stale_if_error_deadline_ms`].
pub const DEFAULT_STALE_IF_ERROR_DEADLINE_MS: u32 = 3000;

/// The default pattern, compiled once. A constant: `default_fingerprint_pattern_compiles`
/// proves it compiles; were it ever invalid, no asset would be cached for a year by default.
static DEFAULT_FINGERPRINT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(DEFAULT_FINGERPRINT_PATTERN).ok());

/// Whether `path` lies under a bypass entry: equal to it or below it at a segment boundary
/// (`/_build` covers `/_build` and `/_build/x`, not `/_buildings`; `/live/` covers `/live`).
pub fn path_under(path: &str, entry: &str) -> bool {
    if entry.is_empty() {
        return false;
    }
    let base = entry.trim_end_matches('/');
    path.strip_prefix(base)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl WorkerOptions {
    /// Whether a path is never cached (defaults, `bypassPaths` and `extraBypassPaths`).
    pub fn is_bypass_path(&self, path: &str) -> bool {
        DEFAULT_BYPASS_PATHS
            .iter()
            .copied()
            .chain(self.bypass_paths.iter().map(String::as_str))
            .chain(self.extra_bypass_paths.iter().map(String::as_str))
            .any(|entry| path_under(path, entry))
    }

    /// Whether a `Set-Cookie` of this name leaves a response cacheable.
    pub fn is_safe_cookie(&self, name: &str) -> bool {
        self.safe_cookies.iter().any(|c| c == name)
    }

    /// The deploy version for cache keys: the variable named by `cacheVersionEnv` in `vars`
    /// (default `BUILD_HASH`), else `WORKERS_CI_COMMIT_SHA` (the build hash of the hosting
    /// provider's CI builds), else `build_time_hash` (see [`build_time_hash`]); `None` only when
    /// `cacheVersionEnv` is `false`.
    pub fn cache_version(
        &self,
        vars: &HashMap<String, String>,
        build_time_hash: Option<&str>,
    ) -> Option<String> {
        let name = self.cache_version_env.as_deref()?;
        let var = |n: &str| vars.get(n).map(|v| v.trim()).filter(|v| !v.is_empty());
        var(name)
            .or_else(|| var(CI_COMMIT_SHA_VAR))
            .or(build_time_hash.map(str::trim).filter(|h| !h.is_empty()))
            .map(str::to_string)
    }

    /// The purge token: `Err(())` when purging is disabled (`purgeTokenEnv: false`), `Ok(None)`
    /// when the variable is unset (every purge is refused).
    #[allow(clippy::result_unit_err)]
    pub fn purge_token<'a>(
        &self,
        vars: &'a HashMap<String, String>,
    ) -> Result<Option<&'a str>, ()> {
        let name = self.purge_token_env.as_deref().ok_or(())?;
        Ok(vars.get(name).map(String::as_str).filter(|v| !v.is_empty()))
    }

    /// Reads options from their JSON form (the JavaScript option names; function-valued options
    /// are ignored). An invalid value is an error naming the option.
    pub fn from_json(json: &Json) -> Result<WorkerOptions, ConfigError> {
        let mut o = WorkerOptions::default();
        let Some(map) = json.as_object() else {
            return Err(ConfigError::new(
                "createDecoWorkerEntry options",
                &json.to_string(),
                "an object",
            ));
        };
        for (name, v) in map {
            let bad = |expected: &str| ConfigError::new(name, &v.to_string(), expected);
            let boolean = || v.as_bool().ok_or_else(|| bad("true or false"));
            let strings = || -> Result<Vec<String>, ConfigError> {
                v.as_array()
                    .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect())
                    .ok_or_else(|| bad("an array of strings"))
            };
            let string_or_false = || -> Result<Option<String>, ConfigError> {
                match v {
                    Json::Bool(false) => Ok(None),
                    Json::String(s) if !s.is_empty() => Ok(Some(s.clone())),
                    _ => Err(bad("a variable name or false")),
                }
            };
            match name.as_str() {
                "admin" => o.admin = !v.is_null() && v != &Json::Bool(false),
                "buildSegment" | "detectProfile" | "cacheStorage" | "proxyHandler" => {}
                "deviceSpecificKeys" => o.device_specific_keys = boolean()?,
                "geoCacheKey" => {
                    o.geo_cache_key = serde_json::from_value(v.clone())
                        .map_err(|_| bad("auto, off, country, region or city"))?
                }
                "autoInjectGeoCookies" => o.auto_inject_geo_cookies = boolean()?,
                "safeCookies" => o.safe_cookies = strings()?,
                "stripTrackingParams" => o.strip_tracking_params = boolean()?,
                "trackingParams" => o.extra_tracking_params = strings()?,
                "bypassPaths" => o.bypass_paths = strings()?,
                "extraBypassPaths" => o.extra_bypass_paths = strings()?,
                "staticPaths" => o.static_paths = strings()?,
                "fingerprintedAssetPattern" => {
                    let src = v
                        .as_str()
                        .ok_or_else(|| bad("a regular expression source"))?;
                    o.fingerprinted_asset_pattern = Some(
                        Regex::new(src)
                            .map_err(|e| bad(&format!("a valid regular expression ({e})")))?,
                    );
                }
                "cacheVersionEnv" => o.cache_version_env = string_or_false()?,
                "purgeTokenEnv" => o.purge_token_env = string_or_false()?,
                "cdnCacheControl" => {
                    let expected = "serverfn-segment, no-store, match-profile or an object of \
                                    profile names to a value or null";
                    o.cdn_cache_control = match v {
                        Json::String(s) if s == "serverfn-segment" => {
                            CdnCacheControl::ServerFnSegment
                        }
                        Json::String(s) if s == "no-store" => CdnCacheControl::NoStore,
                        Json::String(s) if s == "match-profile" => CdnCacheControl::MatchProfile,
                        Json::Object(map) => {
                            let mut values = Vec::new();
                            for (name, value) in map {
                                let profile = name.parse().map_err(|_| bad(expected))?;
                                match value {
                                    // A header value: no control characters (CR, LF, ...).
                                    Json::String(s) if s.chars().any(char::is_control) => {
                                        return Err(bad(expected));
                                    }
                                    Json::String(s) => values.push((profile, s.clone())),
                                    Json::Null => {}
                                    _ => return Err(bad(expected)),
                                }
                            }
                            CdnCacheControl::PerProfile(values)
                        }
                        _ => return Err(bad(expected)),
                    }
                }
                "renderJson" => o.render_json = boolean()?,
                "asJson" => o.as_json = boolean()?,
                "pageJsonCors" => {
                    o.page_json_cors = match v {
                        Json::Bool(false) => PageJsonCors::Off,
                        Json::String(s) if s == "*" => PageJsonCors::Any,
                        Json::Array(_) => PageJsonCors::Origins(strings()?),
                        _ => return Err(bad("an array of origins, \"*\" or false")),
                    }
                }
                "securityHeaders" => {
                    o.security_headers = match v {
                        Json::Bool(false) => SecurityHeaders::Off,
                        Json::Bool(true) => SecurityHeaders::Defaults,
                        Json::Object(m) => SecurityHeaders::Custom(
                            m.iter()
                                .map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                                .collect::<Option<Vec<_>>>()
                                .ok_or_else(|| bad("an object of header values or false"))?,
                        ),
                        _ => return Err(bad("an object of header values or false")),
                    }
                }
                "editorOrigins" => o.editor_origins = strings()?,
                "csp" => {
                    o.csp = match v {
                        Json::Bool(false) => Vec::new(),
                        _ => strings()?,
                    }
                }
                "cspMode" => {
                    o.csp_mode = serde_json::from_value(v.clone())
                        .map_err(|_| bad("report-only or enforce"))?
                }
                "speculationRules" => {
                    o.speculation_rules = match v {
                        Json::Bool(false) | Json::Null => None,
                        Json::Bool(true) => Some(SpeculationRules::default()),
                        _ => Some(
                            serde_json::from_value(v.clone())
                                .map_err(|e| bad(&format!("a speculation rules object ({e})")))?,
                        ),
                    }
                }
                "observability" => {
                    o.observability = match v {
                        Json::Bool(false) => false,
                        Json::Object(_) => true,
                        _ => return Err(bad("false or an observability options object")),
                    }
                }
                "trustForwardedHost" => o.trust_forwarded_host = boolean()?,
                "staleIfErrorDeadlineMs" => {
                    o.stale_if_error_deadline_ms = v
                        .as_u64()
                        .filter(|ms| (1..=600_000).contains(ms))
                        .ok_or_else(|| bad("a whole number of milliseconds from 1 to 600000"))?
                        as u32
                }
                "outboundUserAgent" => {
                    o.outbound_user_agent = match v {
                        Json::Bool(false) => OutboundUserAgent::Off,
                        Json::String(s) => OutboundUserAgent::Custom(s.clone()),
                        _ => return Err(bad("a string or false")),
                    }
                }
                "previewShell" => {
                    o.preview_shell =
                        Some(v.as_str().ok_or_else(|| bad("an HTML string"))?.to_string())
                }
                _ => {
                    return Err(ConfigError::new(
                        name,
                        &v.to_string(),
                        "a known createDecoWorkerEntry option",
                    ));
                }
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bypass_paths_are_additive_with_segment_boundaries() {
        let o = WorkerOptions {
            bypass_paths: vec!["/preview".into()],
            extra_bypass_paths: vec!["/internal/".into()],
            ..WorkerOptions::default()
        };
        for p in [
            "/_build",
            "/_build/x.js",
            "/platform/invoke",
            "/live/_meta",
            "/live",
            "/.sitefile",
            "/preview",
            "/preview/a",
            "/internal",
            "/internal/x",
        ] {
            assert!(o.is_bypass_path(p), "{p}");
        }
        for p in ["/_buildings", "/", "/lively", "/previews", "/camisetas"] {
            assert!(!o.is_bypass_path(p), "{p}");
        }
    }

    #[test]
    fn versions_and_tokens() {
        let vars: HashMap<String, String> =
            [("BUILD_HASH", "b1"), ("MY_VER", "m2"), ("PURGE_TOKEN", "t")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let mut o = WorkerOptions::default();
        assert_eq!(
            o.cache_version(&vars, Some("compiled")).as_deref(),
            Some("b1")
        );
        o.cache_version_env = Some("MY_VER".into());
        assert_eq!(o.cache_version(&vars, None).as_deref(), Some("m2"));
        o.cache_version_env = Some("MISSING".into());
        assert_eq!(
            o.cache_version(&vars, Some("compiled")).as_deref(),
            Some("compiled")
        );
        o.cache_version_env = None;
        assert_eq!(o.cache_version(&vars, Some("compiled")), None);
        o.cache_version_env = Some("BUILD_HASH".into());
        assert_eq!(o.purge_token(&vars), Ok(Some("t")));
        o.purge_token_env = Some("NOPE".into());
        assert_eq!(o.purge_token(&vars), Ok(None));
        o.purge_token_env = None;
        assert_eq!(o.purge_token(&vars), Err(()));
    }

    #[test]
    fn version_falls_back_to_ci_sha_then_build_time_hash() {
        let vars = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let o = WorkerOptions::default();
        let ci = vars(&[("WORKERS_CI_COMMIT_SHA", "ci-sha")]);
        assert_eq!(
            o.cache_version(&ci, Some("compiled")).as_deref(),
            Some("ci-sha")
        );
        let both = vars(&[("WORKERS_CI_COMMIT_SHA", "ci-sha"), ("BUILD_HASH", "b1")]);
        assert_eq!(o.cache_version(&both, None).as_deref(), Some("b1"));
        let blank = vars(&[("BUILD_HASH", " "), ("WORKERS_CI_COMMIT_SHA", "")]);
        let hash = build_time_hash(Some(&"ab".repeat(32)));
        assert_eq!(o.cache_version(&blank, Some(&hash)), Some(hash.clone()));
        assert_eq!(hash, format!("{}-abababababab", compiled_build_id()));
        assert_eq!(build_time_hash(None), compiled_build_id());
        assert!(!compiled_build_id().is_empty());
        let off = WorkerOptions {
            cache_version_env: None,
            ..WorkerOptions::default()
        };
        assert_eq!(
            off.cache_version(&both, Some(&hash)),
            None,
            "cacheVersionEnv: false"
        );
    }

    #[test]
    fn default_fingerprint_pattern_compiles() {
        let re = WorkerOptions::default().fingerprinted_asset_pattern;
        assert!(re.is_some_and(|re| re.is_match("/_build/assets/app-3f9a1b2c.js")));
    }

    #[test]
    fn from_json_reads_every_data_option() {
        let o = WorkerOptions::from_json(&json!({
            "admin": {}, "buildSegment": null, "deviceSpecificKeys": false, "geoCacheKey": "city",
            "autoInjectGeoCookies": false, "safeCookies": ["a"], "stripTrackingParams": false,
            "trackingParams": ["ref"], "bypassPaths": ["/x"], "extraBypassPaths": ["/y"], "staticPaths": [],
            "fingerprintedAssetPattern": "^/static/", "cacheVersionEnv": false, "purgeTokenEnv": "TOK",
            "cdnCacheControl": "match-profile", "renderJson": false, "asJson": false, "pageJsonCors": ["https://a.com"],
            "securityHeaders": {"X-A": "1"}, "csp": ["default-src 'self'"], "cspMode": "enforce",
            "speculationRules": {"mode": "prerender"}, "observability": false, "outboundUserAgent": false,
            "previewShell": "<html></html>", "editorOrigins": ["https://e.com"]
        }))
        .unwrap();
        assert!(
            o.admin
                && !o.device_specific_keys
                && !o.auto_inject_geo_cookies
                && !o.strip_tracking_params
        );
        assert_eq!(o.geo_cache_key, GeoCacheKey::City);
        assert_eq!(o.safe_cookies, vec!["a"]);
        assert!(
            o.fingerprinted_asset_pattern
                .is_some_and(|re| re.is_match("/static/x"))
        );
        assert_eq!(o.cache_version_env, None);
        assert_eq!(o.purge_token_env.as_deref(), Some("TOK"));
        assert!(matches!(o.cdn_cache_control, CdnCacheControl::MatchProfile));
        assert_eq!(
            o.page_json_cors,
            PageJsonCors::Origins(vec!["https://a.com".into()])
        );
        assert_eq!(
            o.security_headers,
            SecurityHeaders::Custom(vec![("X-A".into(), "1".into())])
        );
        assert_eq!(o.csp_mode, CspMode::Enforce);
        assert!(o.speculation_rules.is_some() && !o.observability);
        assert_eq!(o.outbound_user_agent.value(None), None);
        assert_eq!(o.editor_origins, vec!["https://e.com"]);
        let d = WorkerOptions::from_json(&json!({})).unwrap();
        assert!(d.device_specific_keys && d.strip_tracking_params && d.render_json);
        assert_eq!(d.static_paths, vec!["/fonts/"]);
        assert!(
            d.outbound_user_agent
                .value(Some("https://s.com"))
                .unwrap()
                .contains("(+https://s.com)")
        );
    }

    #[test]
    fn from_json_errors_name_the_option() {
        for (name, v) in [
            ("geoCacheKey", json!("planet")),
            ("deviceSpecificKeys", json!("yes")),
            ("safeCookies", json!("a")),
            ("fingerprintedAssetPattern", json!("(")),
            ("cdnCacheControl", json!("sometimes")),
            ("cdnCacheControl", json!({"planet": "max-age=1"})),
            ("cdnCacheControl", json!({"static": 60})),
            (
                "cdnCacheControl",
                json!({"static": "max-age=1\r\nX-Injected: 1"}),
            ),
            ("cspMode", json!("strict")),
            ("pageJsonCors", json!(1)),
            ("securityHeaders", json!({"X": 1})),
            ("cacheVersionEnv", json!(true)),
            ("speculationRules", json!({"mode": "x"})),
            ("observability", json!(true)),
            ("observability", json!("on")),
            ("observability", json!(null)),
            ("bogusOption", json!(1)),
        ] {
            let err = WorkerOptions::from_json(&json!({ name: v })).unwrap_err();
            assert_eq!(err.variable, name);
        }
        assert!(WorkerOptions::from_json(&json!([])).is_err());
    }

    #[test]
    fn cdn_cache_control_takes_the_hosts_answers_per_profile() {
        let o = WorkerOptions::from_json(
            &json!({"cdnCacheControl": {"static": "public, max-age=60", "cart": null}}),
        )
        .unwrap();
        assert_eq!(
            o.cdn_cache_control,
            CdnCacheControl::PerProfile(vec![(
                crate::edge::CacheProfile::Static,
                "public, max-age=60".into()
            )])
        );
    }
}
