//! The typed configuration read from environment variables (passed in; the core never reads
//! the process environment).

use super::SecretKey;
use super::error::{ConfigError, REDACTED};
use super::hosts::{DEFAULT_PREVIEW_API_DOMAINS, valid_host};
use super::parse::{
    parse_bool, parse_byte_size, parse_http_url, parse_list, parse_pairs, parse_rate,
};
use crate::loader_cache::LoaderCacheConfig;
use std::collections::HashMap;
use std::fmt;
use url::Url;

/// Default loader cache cap: 32 MiB.
pub const DEFAULT_LOADER_CACHE_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// A secret value; `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: &str) -> Secret {
        Secret(value.to_string())
    }

    /// The secret text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// `PLATFORM_ALLOWED_PREVIEW_HOSTS`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PreviewHostsSetting {
    /// Unset: the Site block's `previewHosts` apply.
    #[default]
    FromSite,
    /// `none`: draft preview is off.
    Off,
    /// An explicit list of hosts (lower case, with port), replacing the Site block's list.
    Hosts(Vec<String>),
}

/// `PLATFORM_OTEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OtelMode {
    /// Unset or `auto`: on when deployed, off in development.
    #[default]
    Auto,
    /// `on`.
    On,
    /// `off`.
    Off,
}

/// `PLATFORM_OTEL_LOGS_MIN_LEVEL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LogLevel {
    /// `trace`.
    Trace,
    /// `debug`.
    Debug,
    /// `info` (default).
    #[default]
    Info,
    /// `warn`.
    Warn,
    /// `error`.
    Error,
}

/// Runtime variables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuntimeConfig {
    /// `NODE_ENV`.
    pub node_env: Option<String>,
    /// `PLATFORM_PREVIEW=true`: dev mode outside development.
    pub preview: bool,
    /// `PLATFORM_SITE_NAME`.
    pub site_name: Option<String>,
    /// `PLATFORM_SITE` (default `storefront`).
    pub site: String,
    /// `PLATFORM_CRYPTO_KEY`.
    pub crypto_key: Option<SecretKey>,
    /// `PLATFORM_RELEASE_RELOAD_TOKEN`.
    pub release_reload_token: Option<Secret>,
}

/// Draft preview variables.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftConfig {
    /// `PLATFORM_ALLOWED_PREVIEW_HOSTS`.
    pub allowed_preview_hosts: PreviewHostsSetting,
    /// `PLATFORM_PREVIEW_API_DOMAINS` (default: the editor's domains and localhost).
    pub preview_api_domains: Vec<String>,
}

/// The build plugin's `fastDeploy` option (spec "Build plugin option `fastDeploy`").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FastDeployBuild {
    /// `true`: production builds leave bundled content out.
    On,
    /// `false`: production builds keep it.
    Off,
    /// `auto` (the default): leave it out only when `PLATFORM_SEEDED_DEPLOY` is set.
    #[default]
    Auto,
}

impl std::str::FromStr for FastDeployBuild {
    type Err = ConfigError;

    /// `true`, `false` or `auto`; anything else is an error naming the option.
    fn from_str(value: &str) -> Result<Self, ConfigError> {
        match value {
            "true" => Ok(Self::On),
            "false" => Ok(Self::Off),
            "auto" => Ok(Self::Auto),
            other => Err(ConfigError::new(
                "fastDeploy",
                other,
                "true, false or \"auto\"",
            )),
        }
    }
}

/// Fast Deploy variables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FastDeployConfig {
    /// `PLATFORM_FAST_DEPLOY` (`1` or `true`).
    pub enabled: bool,
    /// `PLATFORM_KV`: the key-value binding (its name or address), required with `enabled`.
    pub kv: Option<String>,
    /// `PLATFORM_DEPLOYMENT_ID`, falling back to `BUILD_HASH` (see [`PlatformConfig::deployment_id`]).
    pub deployment_id: Option<String>,
    /// `PLATFORM_SEEDED_DEPLOY` is set.
    pub seeded_deploy: bool,
    /// `EDGE_ACCOUNT_ID`.
    pub edge_account_id: Option<String>,
    /// `EDGE_API_TOKEN`.
    pub edge_api_token: Option<Secret>,
    /// `EDGE_KV_NAMESPACE_ID`.
    pub edge_kv_namespace_id: Option<String>,
}

/// Caching variables.
#[derive(Debug, Clone, PartialEq)]
pub struct CachingConfig {
    /// `BUILD_HASH` (or `WORKERS_CI_COMMIT_SHA`).
    pub build_hash: Option<String>,
    /// `PURGE_TOKEN`.
    pub purge_token: Option<Secret>,
    /// `PLATFORM_LOADER_CACHE_MAX_BYTES` (default 32 MiB).
    pub loader_cache_max_bytes: u64,
    /// `PLATFORM_CACHE_DISABLE=true`.
    pub cache_disable: bool,
}

/// Observability variables.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservabilityConfig {
    /// `PLATFORM_OTEL`.
    pub otel: OtelMode,
    /// `PLATFORM_OTEL_TRACES_ENDPOINT`.
    pub traces_endpoint: Option<Url>,
    /// `PLATFORM_OTEL_METRICS_ENDPOINT`.
    pub metrics_endpoint: Option<Url>,
    /// `PLATFORM_OTEL_LOGS_ENDPOINT`.
    pub logs_endpoint: Option<Url>,
    /// `PLATFORM_OTEL_HEADERS` (`k=v,k2=v2`).
    pub headers: Vec<(String, String)>,
    /// `PLATFORM_OTEL_AUTH_TOKEN`.
    pub auth_token: Option<Secret>,
    /// `PLATFORM_OTEL_TRACES_SAMPLING_RATE` (default 0.01).
    pub traces_sampling_rate: f64,
    /// `PLATFORM_OTEL_LOGS_MIN_LEVEL` (default `info`).
    pub logs_min_level: LogLevel,
    /// `PLATFORM_OTEL_ERROR_PROMOTION` (default off).
    pub error_promotion: bool,
    /// `PLATFORM_OTEL_ERROR_PROMOTION_RATE` (default 0.1).
    pub error_promotion_rate: f64,
    /// `PLATFORM_ENV_NAME` (default `production`).
    pub env_name: String,
    /// `PLATFORM_METRICS` binding.
    pub metrics: Option<String>,
    /// `EDGE_VERSION_METADATA` binding.
    pub version_metadata: Option<String>,
    /// `OTEL_LOG_OUTGOING_FETCH=true`.
    pub log_outgoing_fetch: bool,
}

/// Analytics variables.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyticsConfig {
    /// `PLATFORM_ANALYTICS_ENABLED` is exactly `true`.
    pub enabled: bool,
    /// `PLATFORM_ANALYTICS_ORIGIN` (`None`: same origin).
    pub origin: Option<Url>,
    /// `PLATFORM_ANALYTICS_SITE_KEY`.
    pub site_key: Option<String>,
    /// `ANALYTICS2_ENABLED` (default enabled; `false` disables).
    pub analytics2_enabled: bool,
    /// `ANALYTICS2_COLLECTOR`.
    pub analytics2_collector: Option<Url>,
    /// `ANALYTICS2_STATIC_SCRIPT`.
    pub analytics2_static_script: Option<Url>,
}

/// Fallback app credentials.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AppsConfig {
    /// `COMMERCE1_APP_KEY`.
    pub commerce1_app_key: Option<String>,
    /// `COMMERCE1_APP_TOKEN`.
    pub commerce1_app_token: Option<Secret>,
    /// `COMMERCE1_RESILIENCE_DISABLED=true`.
    pub commerce1_resilience_disabled: bool,
    /// `COMMERCE2_STOREFRONT_TOKEN`.
    pub commerce2_storefront_token: Option<Secret>,
    /// `COMMERCE3_TOKEN` (required by that app; see [`AppsConfig::require_commerce3_token`]).
    pub commerce3_token: Option<Secret>,
    /// `EMAIL_PROVIDER_API_KEY`.
    pub email_provider_api_key: Option<Secret>,
}

impl AppsConfig {
    /// The third commerce app's token, or an error naming `COMMERCE3_TOKEN`.
    pub fn require_commerce3_token(&self) -> Result<&Secret, ConfigError> {
        self.commerce3_token.as_ref().ok_or_else(|| {
            ConfigError::new("COMMERCE3_TOKEN", "", "a storefront API token (required)")
        })
    }
}

/// Development variables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DevelopmentConfig {
    /// `PLATFORM_HOST=false`: use the older tunnel relay.
    pub legacy_tunnel_relay: bool,
    /// `PLATFORM_ENV_NAME` was set explicitly (with `PLATFORM_SITE_NAME` it starts the dev tunnel).
    pub env_name_set: bool,
    /// `WORKERS_CI_COMMIT_SHA`.
    pub workers_ci_commit_sha: Option<String>,
}

/// Every variable of the spec's tables, typed, with its default.
#[derive(Debug, Clone, PartialEq)]
pub struct PlatformConfig {
    /// Runtime.
    pub runtime: RuntimeConfig,
    /// Draft preview.
    pub draft: DraftConfig,
    /// Fast Deploy.
    pub fast_deploy: FastDeployConfig,
    /// Caching.
    pub caching: CachingConfig,
    /// Observability.
    pub observability: ObservabilityConfig,
    /// Analytics.
    pub analytics: AnalyticsConfig,
    /// Apps.
    pub apps: AppsConfig,
    /// Development.
    pub development: DevelopmentConfig,
}

impl Default for PlatformConfig {
    /// The configuration of an empty environment: every spec default.
    fn default() -> PlatformConfig {
        PlatformConfig {
            runtime: RuntimeConfig {
                site: "storefront".into(),
                ..RuntimeConfig::default()
            },
            draft: DraftConfig {
                allowed_preview_hosts: PreviewHostsSetting::FromSite,
                preview_api_domains: DEFAULT_PREVIEW_API_DOMAINS
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            },
            fast_deploy: FastDeployConfig::default(),
            caching: CachingConfig {
                build_hash: None,
                purge_token: None,
                loader_cache_max_bytes: DEFAULT_LOADER_CACHE_MAX_BYTES,
                cache_disable: false,
            },
            observability: ObservabilityConfig {
                otel: OtelMode::Auto,
                traces_endpoint: None,
                metrics_endpoint: None,
                logs_endpoint: None,
                headers: Vec::new(),
                auth_token: None,
                traces_sampling_rate: 0.01,
                logs_min_level: LogLevel::Info,
                error_promotion: false,
                error_promotion_rate: 0.1,
                env_name: "production".into(),
                metrics: None,
                version_metadata: None,
                log_outgoing_fetch: false,
            },
            analytics: AnalyticsConfig {
                enabled: false,
                origin: None,
                site_key: None,
                analytics2_enabled: true,
                analytics2_collector: None,
                analytics2_static_script: None,
            },
            apps: AppsConfig::default(),
            development: DevelopmentConfig::default(),
        }
    }
}

struct Vars(HashMap<String, String>);

impl Vars {
    /// The value, `None` when unset or empty (an empty variable counts as unset).
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    fn string(&self, name: &str) -> Option<String> {
        self.get(name).map(|v| v.trim().to_string())
    }

    fn secret(&self, name: &str) -> Option<Secret> {
        self.get(name).map(Secret::new)
    }

    fn bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        self.get(name).map_or(Ok(default), |v| parse_bool(name, v))
    }

    fn url(&self, name: &str) -> Result<Option<Url>, ConfigError> {
        self.get(name).map(|v| parse_http_url(name, v)).transpose()
    }

    fn rate(&self, name: &str, default: f64) -> Result<f64, ConfigError> {
        self.get(name).map_or(Ok(default), |v| parse_rate(name, v))
    }
}

impl PlatformConfig {
    /// Reads the configuration from environment pairs (`std::env::vars()`, a `HashMap`, ...).
    /// Unset and empty variables take the spec's defaults; the first invalid value is an error
    /// naming its variable.
    pub fn from_env<I, K, V>(vars: I) -> Result<PlatformConfig, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let vars = Vars(
            vars.into_iter()
                .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
                .collect(),
        );
        let mut config = PlatformConfig::default();

        let rt = &mut config.runtime;
        rt.node_env = vars.string("NODE_ENV");
        rt.preview = vars.bool("PLATFORM_PREVIEW", false)?;
        rt.site_name = vars.string("PLATFORM_SITE_NAME");
        if let Some(site) = vars.string("PLATFORM_SITE") {
            rt.site = site;
        }
        rt.crypto_key = match vars.secret("PLATFORM_CRYPTO_KEY") {
            // The parser's message may quote the decoded value: only say what is expected.
            Some(key) => Some(SecretKey::from_env_value(key.expose()).map_err(|_| {
                ConfigError::new(
                    "PLATFORM_CRYPTO_KEY",
                    REDACTED,
                    "base64 of JSON {\"key\": [16, 24 or 32 bytes], \"iv\": [16 bytes]}",
                )
            })?),
            None => None,
        };
        rt.release_reload_token = vars.secret("PLATFORM_RELEASE_RELOAD_TOKEN");

        if let Some(raw) = vars.get("PLATFORM_ALLOWED_PREVIEW_HOSTS") {
            config.draft.allowed_preview_hosts = parse_preview_hosts(raw)?;
        }
        if let Some(raw) = vars.get("PLATFORM_PREVIEW_API_DOMAINS") {
            let domains: Vec<String> = parse_list(raw)
                .iter()
                .map(|d| d.to_ascii_lowercase())
                .collect();
            if domains
                .iter()
                .any(|d| !valid_host(d.strip_prefix('.').unwrap_or(d)))
            {
                return Err(ConfigError::new(
                    "PLATFORM_PREVIEW_API_DOMAINS",
                    raw,
                    "comma-separated domains (a leading `.` matches subdomains), without scheme, port or path",
                ));
            }
            config.draft.preview_api_domains = domains;
        }

        let fd = &mut config.fast_deploy;
        fd.enabled = vars.bool("PLATFORM_FAST_DEPLOY", false)?;
        fd.kv = vars.string("PLATFORM_KV");
        fd.deployment_id = vars.string("PLATFORM_DEPLOYMENT_ID");
        // A build variable that is either set (any value) or not: `false` is set, too.
        fd.seeded_deploy = vars.get("PLATFORM_SEEDED_DEPLOY").is_some();
        fd.edge_account_id = vars.string("EDGE_ACCOUNT_ID");
        fd.edge_api_token = vars.secret("EDGE_API_TOKEN");
        fd.edge_kv_namespace_id = vars.string("EDGE_KV_NAMESPACE_ID");

        let dev = &mut config.development;
        dev.workers_ci_commit_sha = vars.string("WORKERS_CI_COMMIT_SHA");
        dev.env_name_set = vars.get("PLATFORM_ENV_NAME").is_some();
        dev.legacy_tunnel_relay = !vars.bool("PLATFORM_HOST", true)?;

        let c = &mut config.caching;
        c.build_hash = vars
            .string("BUILD_HASH")
            .or_else(|| config.development.workers_ci_commit_sha.clone());
        c.purge_token = vars.secret("PURGE_TOKEN");
        if let Some(raw) = vars.get("PLATFORM_LOADER_CACHE_MAX_BYTES") {
            c.loader_cache_max_bytes = parse_byte_size("PLATFORM_LOADER_CACHE_MAX_BYTES", raw)?;
        }
        c.cache_disable = vars.bool("PLATFORM_CACHE_DISABLE", false)?;

        let o = &mut config.observability;
        o.otel = match vars
            .get("PLATFORM_OTEL")
            .map(|v| v.trim().to_ascii_lowercase())
        {
            None => OtelMode::Auto,
            Some(v) => match v.as_str() {
                "auto" => OtelMode::Auto,
                "on" | "true" | "1" => OtelMode::On,
                "off" | "false" | "0" => OtelMode::Off,
                _ => return Err(bad(&vars, "PLATFORM_OTEL", "on, off or auto")),
            },
        };
        o.traces_endpoint = vars.url("PLATFORM_OTEL_TRACES_ENDPOINT")?;
        o.metrics_endpoint = vars.url("PLATFORM_OTEL_METRICS_ENDPOINT")?;
        o.logs_endpoint = vars.url("PLATFORM_OTEL_LOGS_ENDPOINT")?;
        if let Some(raw) = vars.get("PLATFORM_OTEL_HEADERS") {
            o.headers = parse_pairs("PLATFORM_OTEL_HEADERS", raw)?;
        }
        o.auth_token = vars.secret("PLATFORM_OTEL_AUTH_TOKEN");
        o.traces_sampling_rate = vars.rate("PLATFORM_OTEL_TRACES_SAMPLING_RATE", 0.01)?;
        if let Some(raw) = vars.get("PLATFORM_OTEL_LOGS_MIN_LEVEL") {
            o.logs_min_level = match raw.trim().to_ascii_lowercase().as_str() {
                "trace" => LogLevel::Trace,
                "debug" => LogLevel::Debug,
                "info" => LogLevel::Info,
                "warn" | "warning" => LogLevel::Warn,
                "error" => LogLevel::Error,
                _ => {
                    return Err(ConfigError::new(
                        "PLATFORM_OTEL_LOGS_MIN_LEVEL",
                        raw,
                        "trace, debug, info, warn or error",
                    ));
                }
            };
        }
        o.error_promotion = vars.bool("PLATFORM_OTEL_ERROR_PROMOTION", false)?;
        o.error_promotion_rate = vars.rate("PLATFORM_OTEL_ERROR_PROMOTION_RATE", 0.1)?;
        if let Some(env) = vars.string("PLATFORM_ENV_NAME") {
            o.env_name = env;
        }
        o.metrics = vars.string("PLATFORM_METRICS");
        o.version_metadata = vars.string("EDGE_VERSION_METADATA");
        o.log_outgoing_fetch = vars.bool("OTEL_LOG_OUTGOING_FETCH", false)?;

        let a = &mut config.analytics;
        a.enabled = vars.get("PLATFORM_ANALYTICS_ENABLED") == Some("true");
        a.origin = vars.url("PLATFORM_ANALYTICS_ORIGIN")?;
        a.site_key = vars.string("PLATFORM_ANALYTICS_SITE_KEY");
        a.analytics2_enabled = vars.bool("ANALYTICS2_ENABLED", true)?;
        a.analytics2_collector = vars.url("ANALYTICS2_COLLECTOR")?;
        a.analytics2_static_script = vars.url("ANALYTICS2_STATIC_SCRIPT")?;

        let apps = &mut config.apps;
        apps.commerce1_app_key = vars.string("COMMERCE1_APP_KEY");
        apps.commerce1_app_token = vars.secret("COMMERCE1_APP_TOKEN");
        apps.commerce1_resilience_disabled = vars.bool("COMMERCE1_RESILIENCE_DISABLED", false)?;
        apps.commerce2_storefront_token = vars.secret("COMMERCE2_STOREFRONT_TOKEN");
        apps.commerce3_token = vars.secret("COMMERCE3_TOKEN");
        apps.email_provider_api_key = vars.secret("EMAIL_PROVIDER_API_KEY");

        Ok(config)
    }

    /// `NODE_ENV=development`.
    pub fn is_development(&self) -> bool {
        self.runtime.node_env.as_deref() == Some("development")
    }

    /// `isDevMode()`: development, or `PLATFORM_PREVIEW=true`. The edge cache is off in dev mode.
    pub fn is_dev_mode(&self) -> bool {
        self.is_development() || self.runtime.preview
    }

    /// Whether client route caches are shortened (`PLATFORM_CACHE_DISABLE` or development).
    pub fn shortens_route_cache(&self) -> bool {
        self.caching.cache_disable || self.is_development()
    }

    /// The loader cache's configuration: capped by `PLATFORM_LOADER_CACHE_MAX_BYTES`, off with
    /// `PLATFORM_CACHE_DISABLE` and in development.
    pub fn loader_cache(&self) -> LoaderCacheConfig {
        LoaderCacheConfig {
            max_bytes: self.caching.loader_cache_max_bytes,
            disabled: self.caching.cache_disable,
            development: self.is_development(),
        }
    }

    /// Whether telemetry is exported (`PLATFORM_OTEL`, `auto` = on unless in development).
    pub fn otel_enabled(&self) -> bool {
        match self.observability.otel {
            OtelMode::On => true,
            OtelMode::Off => false,
            OtelMode::Auto => !self.is_development(),
        }
    }

    /// Fast Deploy is on: `PLATFORM_FAST_DEPLOY` and a `PLATFORM_KV` binding.
    pub fn fast_deploy_enabled(&self) -> bool {
        self.fast_deploy.enabled && self.fast_deploy.kv.is_some()
    }

    /// The deployment a host follows in its key-value store, when Fast Deploy is on for it:
    /// `PLATFORM_FAST_DEPLOY` is set, `store_bound` (the host has its `PLATFORM_KV` store: a
    /// Redis URL for the server, a KV namespace binding for an edge worker) and a deployment id
    /// resolves ([`PlatformConfig::deployment_id`], without a build-time hash).
    pub fn fast_deploy_id(&self, store_bound: bool) -> Option<&str> {
        (self.fast_deploy.enabled && store_bound)
            .then(|| self.deployment_id(None))
            .flatten()
    }

    /// Whether a production build with the build plugin option `option` leaves bundled content
    /// out of the server bundle: `On`, or `Auto` when `PLATFORM_SEEDED_DEPLOY` is set.
    pub fn build_strips_content(&self, option: FastDeployBuild) -> bool {
        match option {
            FastDeployBuild::On => true,
            FastDeployBuild::Off => false,
            FastDeployBuild::Auto => self.fast_deploy.seeded_deploy,
        }
    }

    /// The deployment id: `PLATFORM_DEPLOYMENT_ID`, then `BUILD_HASH`, then `build_time_hash`.
    pub fn deployment_id<'a>(&'a self, build_time_hash: Option<&'a str>) -> Option<&'a str> {
        self.fast_deploy
            .deployment_id
            .as_deref()
            .or(self.caching.build_hash.as_deref())
            .or(build_time_hash.filter(|h| !h.is_empty()))
    }

    /// The legacy development tunnel starts when both `PLATFORM_SITE_NAME` and `PLATFORM_ENV_NAME` are set.
    pub fn dev_tunnel_requested(&self) -> bool {
        self.runtime.site_name.is_some() && self.development.env_name_set
    }
}

fn bad(vars: &Vars, name: &str, expected: &str) -> ConfigError {
    ConfigError::new(name, vars.get(name).unwrap_or(""), expected)
}

/// A request host as `Host` carries it: a DNS name, an IPv4 address or a bracketed IPv6 address,
/// with an optional port (1–65535).
fn valid_host_port(entry: &str) -> bool {
    // The last `:` starts a port unless it lies inside the brackets of an IPv6 address.
    let (host, port) = match entry.rfind(':') {
        Some(i) if entry.starts_with('[') == entry[..i].ends_with(']') => {
            (&entry[..i], Some(&entry[i + 1..]))
        }
        _ => (entry, None),
    };
    let port_ok = port.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
    });
    let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => valid_host(host),
    };
    port_ok && host_ok
}

fn parse_preview_hosts(raw: &str) -> Result<PreviewHostsSetting, ConfigError> {
    let hosts: Vec<String> = parse_list(raw)
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    if hosts.len() == 1 && hosts[0] == "none" {
        Ok(PreviewHostsSetting::Off)
    } else if hosts.is_empty() {
        Ok(PreviewHostsSetting::FromSite)
    } else if let Some(bad) = hosts.iter().find(|h| !valid_host_port(h)) {
        Err(ConfigError::new(
            "PLATFORM_ALLOWED_PREVIEW_HOSTS",
            raw,
            format!(
                "comma-separated request hosts with optional port (e.g. preview.shop.com:8443), or none; {bad:?} is not one"
            ),
        ))
    } else {
        Ok(PreviewHostsSetting::Hosts(hosts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Result<PlatformConfig, ConfigError> {
        PlatformConfig::from_env(pairs.iter().copied())
    }

    fn crypto_key() -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .encode(serde_json::json!({"key": vec![7u8; 16], "iv": vec![0u8; 16]}).to_string())
    }

    #[test]
    fn fast_deploy_build_strips_content_when_on_or_auto_and_seeded() {
        let plain = cfg(&[]).unwrap();
        let seeded = cfg(&[("PLATFORM_SEEDED_DEPLOY", "1")]).unwrap();
        let option = |v: &str| v.parse::<FastDeployBuild>().unwrap();
        assert!(plain.build_strips_content(option("true")));
        assert!(!seeded.build_strips_content(option("false")));
        assert!(!plain.build_strips_content(option("auto")));
        assert!(seeded.build_strips_content(option("auto")));
        assert!(seeded.build_strips_content(FastDeployBuild::default()));
        let bad = "yes".parse::<FastDeployBuild>().unwrap_err();
        assert_eq!(
            bad.to_string(),
            r#"invalid fastDeploy="yes": expected true, false or "auto""#
        );
    }

    #[test]
    fn seeded_deploy_means_set() {
        for v in ["1", "true", "false", "x"] {
            assert!(
                cfg(&[("PLATFORM_SEEDED_DEPLOY", v)])
                    .unwrap()
                    .fast_deploy
                    .seeded_deploy,
                "{v}"
            );
        }
        assert!(
            !cfg(&[("PLATFORM_SEEDED_DEPLOY", " ")])
                .unwrap()
                .fast_deploy
                .seeded_deploy
        );
        assert!(!cfg(&[]).unwrap().fast_deploy.seeded_deploy);
    }

    #[test]
    fn secrets_are_validated_but_never_echoed() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        for bad in [
            "hunter2-not-base64!".to_string(),
            b64(r#"{"key":"hunter2","iv":[]}"#),
            b64(r#"{"key":[1,2,3],"iv":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}"#),
        ] {
            let err = cfg(&[("PLATFORM_CRYPTO_KEY", &bad)]).unwrap_err();
            assert_eq!(err.variable, "PLATFORM_CRYPTO_KEY");
            let text = format!("{err} {err:?}");
            assert!(!text.contains(&bad) && !text.contains("hunter2"), "{text}");
        }
        let err = cfg(&[(
            "PLATFORM_OTEL_HEADERS",
            "authorization=Bearer hunter2,broken",
        )])
        .unwrap_err();
        assert_eq!(err.variable, "PLATFORM_OTEL_HEADERS");
        assert!(!format!("{err} {err:?}").contains("hunter2"), "{err}");
    }

    #[test]
    fn preview_hosts_and_api_domains_are_checked() {
        let c = cfg(&[(
            "PLATFORM_ALLOWED_PREVIEW_HOSTS",
            "a.com, b.shop.com:8443, 127.0.0.1:3000, [::1]:3000, localhost",
        )])
        .unwrap();
        assert!(
            matches!(c.draft.allowed_preview_hosts, PreviewHostsSetting::Hosts(ref h) if h.len() == 5)
        );
        for bad in [
            "https://a.com",
            "a.com/path",
            "a.com:0",
            "a.com:99999",
            "a.com:",
            "a..com",
            "-a.com",
            "a.com, b com",
            "[::1",
        ] {
            let err = cfg(&[("PLATFORM_ALLOWED_PREVIEW_HOSTS", bad)]).unwrap_err();
            assert_eq!(err.variable, "PLATFORM_ALLOWED_PREVIEW_HOSTS", "{bad}");
        }
        assert!(cfg(&[("PLATFORM_PREVIEW_API_DOMAINS", ".a.com, b.com, localhost")]).is_ok());
        for bad in [
            "a.com:443",
            "https://a.com",
            "a.com/x",
            ".",
            "a b.com",
            ".:80",
        ] {
            let err = cfg(&[("PLATFORM_PREVIEW_API_DOMAINS", bad)]).unwrap_err();
            assert_eq!(err.variable, "PLATFORM_PREVIEW_API_DOMAINS", "{bad}");
        }
    }

    #[test]
    fn defaults_match_the_spec() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c, PlatformConfig::default());
        assert_eq!(c.runtime.site, "storefront");
        assert_eq!(c.caching.loader_cache_max_bytes, 33_554_432);
        assert_eq!(c.observability.otel, OtelMode::Auto);
        assert_eq!(c.observability.traces_sampling_rate, 0.01);
        assert_eq!(c.observability.logs_min_level, LogLevel::Info);
        assert!(!c.observability.error_promotion);
        assert_eq!(c.observability.error_promotion_rate, 0.1);
        assert_eq!(c.observability.env_name, "production");
        assert!(!c.analytics.enabled);
        assert!(c.analytics.analytics2_enabled);
        assert_eq!(c.draft.allowed_preview_hosts, PreviewHostsSetting::FromSite);
        assert_eq!(c.draft.preview_api_domains.len(), 5);
        assert!(!c.is_dev_mode());
        assert!(c.loader_cache().is_enabled());
        assert!(c.otel_enabled());
        assert!(!c.fast_deploy_enabled());
        assert_eq!(c.deployment_id(None), None);
        assert_eq!(c.deployment_id(Some("abc")), Some("abc"));
    }

    #[test]
    fn reads_every_group() {
        let c = cfg(&[
            ("NODE_ENV", "development"),
            ("PLATFORM_SITE_NAME", "shop"),
            ("PLATFORM_SITE", "other"),
            ("PLATFORM_CRYPTO_KEY", &crypto_key()),
            (
                "PLATFORM_ALLOWED_PREVIEW_HOSTS",
                "Preview.Shop.com:8443, x.com",
            ),
            ("PLATFORM_PREVIEW_API_DOMAINS", ".api.com,localhost"),
            ("PLATFORM_FAST_DEPLOY", "1"),
            ("PLATFORM_KV", "SNAPSHOTS"),
            ("BUILD_HASH", "b1"),
            ("PURGE_TOKEN", "p"),
            ("PLATFORM_LOADER_CACHE_MAX_BYTES", "8MB"),
            ("PLATFORM_OTEL", "on"),
            ("PLATFORM_OTEL_HEADERS", "x-a=1,x-b=2"),
            (
                "PLATFORM_OTEL_TRACES_ENDPOINT",
                "https://otel.example/v1/traces",
            ),
            ("PLATFORM_OTEL_TRACES_SAMPLING_RATE", "0.5"),
            ("PLATFORM_OTEL_LOGS_MIN_LEVEL", "warn"),
            ("PLATFORM_OTEL_ERROR_PROMOTION", "on"),
            ("PLATFORM_ENV_NAME", "staging"),
            ("OTEL_LOG_OUTGOING_FETCH", "true"),
            ("PLATFORM_ANALYTICS_ENABLED", "true"),
            ("ANALYTICS2_ENABLED", "false"),
            ("COMMERCE1_RESILIENCE_DISABLED", "true"),
            ("COMMERCE3_TOKEN", "t3"),
            ("PLATFORM_HOST", "false"),
        ])
        .unwrap();
        assert!(c.is_development() && c.is_dev_mode());
        assert_eq!(
            c.loader_cache(),
            LoaderCacheConfig {
                max_bytes: 8 << 20,
                disabled: false,
                development: true
            }
        );
        assert!(c.otel_enabled());
        assert_eq!(c.runtime.site, "other");
        assert_eq!(
            c.runtime.crypto_key.as_ref().map(|k| format!("{k:?}")),
            Some("SecretKey(..)".to_string()),
            "the key is parsed once, here, and never shown"
        );
        assert_eq!(
            c.draft.allowed_preview_hosts,
            PreviewHostsSetting::Hosts(vec!["preview.shop.com:8443".into(), "x.com".into()])
        );
        assert_eq!(c.draft.preview_api_domains, vec![".api.com", "localhost"]);
        assert!(c.fast_deploy_enabled());
        assert_eq!(c.deployment_id(Some("x")), Some("b1"));
        assert_eq!(c.caching.loader_cache_max_bytes, 8 << 20);
        assert_eq!(c.observability.headers.len(), 2);
        assert_eq!(c.observability.traces_sampling_rate, 0.5);
        assert_eq!(c.observability.logs_min_level, LogLevel::Warn);
        assert!(c.observability.error_promotion);
        assert!(c.observability.log_outgoing_fetch);
        assert!(c.analytics.enabled && !c.analytics.analytics2_enabled);
        assert!(c.apps.commerce1_resilience_disabled);
        assert!(c.apps.require_commerce3_token().is_ok());
        assert!(c.development.legacy_tunnel_relay);
        assert!(c.dev_tunnel_requested());
        assert!(
            !format!("{c:?}").contains("\"k\""),
            "secrets are redacted in Debug"
        );
    }

    #[test]
    fn special_values() {
        let c = cfg(&[
            ("PLATFORM_ALLOWED_PREVIEW_HOSTS", "none"),
            ("PLATFORM_PREVIEW", "true"),
        ])
        .unwrap();
        assert_eq!(c.draft.allowed_preview_hosts, PreviewHostsSetting::Off);
        assert!(c.is_dev_mode() && c.loader_cache().is_enabled());
        let c = cfg(&[
            ("PLATFORM_ANALYTICS_ENABLED", "TRUE"),
            ("PLATFORM_DEPLOYMENT_ID", "d"),
        ])
        .unwrap();
        assert!(
            !c.analytics.enabled,
            "only exactly `true` enables analytics"
        );
        assert_eq!(c.deployment_id(None), Some("d"));
        let c = cfg(&[
            ("PLATFORM_CACHE_DISABLE", "true"),
            ("PLATFORM_LOADER_CACHE_MAX_BYTES", ""),
        ])
        .unwrap();
        assert!(c.loader_cache().disabled && !c.loader_cache().is_enabled());
        assert_eq!(
            c.caching.loader_cache_max_bytes, DEFAULT_LOADER_CACHE_MAX_BYTES,
            "empty = unset"
        );
        let c = cfg(&[("WORKERS_CI_COMMIT_SHA", "sha")]).unwrap();
        assert_eq!(c.caching.build_hash.as_deref(), Some("sha"));
        let c = cfg(&[("PLATFORM_FAST_DEPLOY", "true")]).unwrap();
        assert!(!c.fast_deploy_enabled(), "needs the KV binding too");
        let c = cfg(&[("NODE_ENV", "production"), ("PLATFORM_OTEL", "off")]).unwrap();
        assert!(!c.otel_enabled());
        assert!(
            cfg(&[])
                .unwrap()
                .apps
                .require_commerce3_token()
                .unwrap_err()
                .to_string()
                .contains("COMMERCE3_TOKEN")
        );
    }

    #[test]
    fn invalid_values_name_their_variable() {
        for (name, value) in [
            ("PLATFORM_LOADER_CACHE_MAX_BYTES", "64 parsecs"),
            ("PLATFORM_LOADER_CACHE_MAX_BYTES", "0"),
            ("PLATFORM_CACHE_DISABLE", "perhaps"),
            ("PLATFORM_PREVIEW", "2"),
            ("PLATFORM_FAST_DEPLOY", "yes please"),
            ("PLATFORM_OTEL", "sometimes"),
            ("PLATFORM_OTEL_TRACES_ENDPOINT", "not a url"),
            ("PLATFORM_OTEL_METRICS_ENDPOINT", "ftp://x"),
            ("PLATFORM_OTEL_HEADERS", "novalue"),
            ("PLATFORM_OTEL_TRACES_SAMPLING_RATE", "2"),
            ("PLATFORM_OTEL_LOGS_MIN_LEVEL", "loud"),
            ("PLATFORM_OTEL_ERROR_PROMOTION_RATE", "-0.1"),
            ("PLATFORM_ANALYTICS_ORIGIN", "nope"),
            ("ANALYTICS2_ENABLED", "nah"),
            ("ANALYTICS2_COLLECTOR", "::"),
            ("PLATFORM_PREVIEW_API_DOMAINS", "https://x.com/"),
            ("OTEL_LOG_OUTGOING_FETCH", "verbose"),
            ("COMMERCE1_RESILIENCE_DISABLED", "x"),
            ("PLATFORM_HOST", "maybe"),
            ("PLATFORM_CRYPTO_KEY", "k"),
            (
                "PLATFORM_ALLOWED_PREVIEW_HOSTS",
                "https://preview.shop.com/",
            ),
        ] {
            let err = cfg(&[(name, value)]).unwrap_err();
            assert_eq!(err.variable, name);
            assert!(err.to_string().contains(name), "{err}");
        }
    }
}
