//! Configuration read from `PLATFORM_*` environment variables.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;

use crate::clock::Clock;
use base64::engine::general_purpose::STANDARD;

/// Default database: a SQLite file under `./data/`.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/workspace.db";
/// Default `{base_url}` when `PLATFORM_PUBLIC_URL` is not set.
pub const DEFAULT_PUBLIC_URL: &str = "http://127.0.0.1:8787";

/// Why the configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The encryption key variable is not set.
    #[error("PLATFORM_WORKSPACE_ENCRYPTION_KEY is required (base64 of 32 random bytes)")]
    MissingKey,
    /// The encryption key is not base64 of exactly 32 bytes.
    #[error("PLATFORM_WORKSPACE_ENCRYPTION_KEY must be base64 of exactly 32 bytes")]
    MalformedKey,
    /// Another variable holds a value that cannot be used.
    #[error("{0} is invalid: {1}")]
    Invalid(&'static str, String),
}

/// The language model provider (an OpenAI-compatible chat-completions API).
#[derive(Clone, Default)]
pub struct LlmConfig {
    /// Base URL; `/chat/completions` is appended (`PLATFORM_LLM_BASE_URL`).
    pub base_url: Option<String>,
    /// Bearer key sent to the provider (`PLATFORM_LLM_API_KEY`); never logged.
    pub api_key: Option<String>,
    /// Default model (`PLATFORM_LLM_MODEL`).
    pub model: Option<String>,
    /// Model per tier (`PLATFORM_LLM_MODEL_FAST`, `_SMART`, `_THINKING`).
    pub tier_models: BTreeMap<String, String>,
}

/// The OAuth authorization server whose access tokens are accepted beside API keys.
#[derive(Clone, Debug)]
pub struct OAuthConfig {
    /// The issuer URL (`PLATFORM_OAUTH_ISSUER`): tokens' `iss`, and where its metadata and
    /// JWKS are discovered.
    pub issuer: String,
    /// The service-wide audience (`PLATFORM_OAUTH_AUDIENCE`; the public URL when `None`):
    /// a token for it is accepted on every endpoint, and the only one the non-MCP endpoints
    /// (`/tools`, `/pilot`) accept; an MCP resource also accepts a token for its own URL.
    pub audience: Option<String>,
    /// This service's client credentials at the authorization server
    /// (`PLATFORM_OAUTH_CLIENT_ID`, `PLATFORM_OAUTH_CLIENT_SECRET`): with them, tokens that
    /// are not JWTs are checked by its introspection endpoint (RFC 7662).
    pub client: Option<OAuthClient>,
    /// The scopes a client asks the authorization server for (`PLATFORM_OAUTH_SCOPES`,
    /// comma-separated; default [`DEFAULT_OAUTH_SCOPES`]): advertised as `scopes_supported`
    /// in the protected-resource metadata, so a client that names none asks for these.
    pub scopes: Vec<String>,
}

/// The non-empty items of a comma-separated setting, trimmed.
fn comma_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The scope advertised when `PLATFORM_OAUTH_SCOPES` is not set.
pub const DEFAULT_OAUTH_SCOPES: &[&str] = &["mcp"];

/// A confidential client's credentials (HTTP Basic at the introspection endpoint).
#[derive(Clone)]
pub struct OAuthClient {
    /// `client_id`.
    pub id: String,
    /// `client_secret`: never logged (see the `Debug` impl).
    pub secret: String,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("id", &self.id)
            .field("secret", &"***")
            .finish()
    }
}

/// Everything the workspace service needs to start.
#[derive(Clone)]
pub struct Config {
    /// `sqlite://<path>` or `postgres://...` (`PLATFORM_DATABASE_URL`).
    pub database_url: String,
    /// AES-256-GCM key for credentials at rest.
    pub encryption_key: [u8; 32],
    /// The `{base_url}` of this service (`PLATFORM_PUBLIC_URL`), without a trailing slash.
    pub public_url: String,
    /// Host names the MCP endpoints answer for besides the public URL's
    /// (`PLATFORM_ALLOWED_HOSTS`, comma-separated; `*` allows any): see
    /// [`crate::mcp::guard_host`].
    pub allowed_hosts: Vec<String>,
    /// The language model provider.
    pub llm: LlmConfig,
    /// Redis URL for the run-stream buffer (`PLATFORM_REDIS_URL`); in memory when absent.
    pub redis_url: Option<String>,
    /// Extra PEM root certificates trusted for upstream HTTPS (`PLATFORM_UPSTREAM_CA_FILE`).
    pub upstream_ca_file: Option<PathBuf>,
    /// How long run-stream chunks are kept (`PLATFORM_STREAM_RETENTION_SECS`, default 300).
    pub stream_retention: Duration,
    /// Interval of SSE keep-alive comments (`PLATFORM_STREAM_KEEPALIVE_MS`, default 15000).
    pub keepalive: Duration,
    /// How long a server's ownership of its runs lasts unrenewed; renewed every third of it
    /// (`PLATFORM_RUN_LEASE_MS`, default 30000).
    pub run_lease: Duration,
    /// The limits of the served socket (`PLATFORM_HEADER_TIMEOUT_MS`,
    /// `PLATFORM_BODY_TIMEOUT_MS`, `PLATFORM_MAX_CONNECTIONS`, `PLATFORM_SHUTDOWN_TIMEOUT_MS`).
    pub limits: crate::http::ConnectionLimits,
    /// The clock of key expiry, run leases and stream retention (the system clock).
    pub clock: Clock,
    /// Downstream MCP sessions of the connection proxy: idle expiry
    /// (`PLATFORM_MCP_SESSION_IDLE_MS`, default 1800000), per key
    /// (`PLATFORM_MCP_SESSIONS_PER_KEY`, default 16) and per server
    /// (`PLATFORM_MCP_SESSIONS_MAX`, default 4096).
    pub mcp_sessions: crate::mcp::SessionLimits,
    /// The OAuth authorization server, if any (API keys only when absent).
    pub oauth: Option<OAuthConfig>,
    /// The audit writer's queue (`PLATFORM_AUDIT_QUEUE_ROWS`, default 10000;
    /// `PLATFORM_AUDIT_QUEUE_WAIT_MS`, default 5000).
    pub audit: crate::telemetry::AuditLimits,
}

impl Config {
    /// A configuration with defaults, the given database and key.
    pub fn new(database_url: impl Into<String>, encryption_key: [u8; 32]) -> Self {
        Self {
            database_url: database_url.into(),
            encryption_key,
            public_url: DEFAULT_PUBLIC_URL.to_string(),
            allowed_hosts: Vec::new(),
            llm: LlmConfig::default(),
            redis_url: None,
            upstream_ca_file: None,
            stream_retention: Duration::from_secs(300),
            keepalive: Duration::from_secs(15),
            run_lease: Duration::from_secs(30),
            limits: crate::http::ConnectionLimits::default(),
            clock: Clock::system(),
            mcp_sessions: crate::mcp::SessionLimits {
                idle: Duration::from_secs(1800),
                per_key: 16,
                max: 4096,
                requests: crate::mcp::RequestBounds {
                    pending: 16,
                    timeout: Duration::from_secs(300),
                },
                journal: crate::mcp::JournalBounds {
                    events: 128,
                    bytes: 256 * 1024,
                },
            },
            oauth: None,
            audit: crate::telemetry::AuditLimits::default(),
        }
    }

    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(env_lookup)
    }

    /// Reads the configuration through `lookup` (a variable name to its value).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let key = lookup("PLATFORM_WORKSPACE_ENCRYPTION_KEY").ok_or(ConfigError::MissingKey)?;
        let encryption_key = parse_key(&key)?;
        let mut config = Self::new(
            lookup("PLATFORM_DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_string()),
            encryption_key,
        );
        if let Some(url) = lookup("PLATFORM_PUBLIC_URL") {
            url::Url::parse(&url)
                .map_err(|e| ConfigError::Invalid("PLATFORM_PUBLIC_URL", e.to_string()))?;
            config.public_url = url.trim_end_matches('/').to_string();
        }
        if let Some(list) = lookup("PLATFORM_ALLOWED_HOSTS") {
            config.allowed_hosts = comma_list(&list);
        }
        config.llm.base_url = lookup("PLATFORM_LLM_BASE_URL");
        config.llm.api_key = lookup("PLATFORM_LLM_API_KEY");
        config.llm.model = lookup("PLATFORM_LLM_MODEL");
        for tier in crate::pilot::TIERS {
            let var = format!("PLATFORM_LLM_MODEL_{}", tier.to_ascii_uppercase());
            if let Some(model) = lookup(&var) {
                config.llm.tier_models.insert((*tier).to_string(), model);
            }
        }
        config.redis_url = lookup("PLATFORM_REDIS_URL");
        config.upstream_ca_file = lookup("PLATFORM_UPSTREAM_CA_FILE").map(PathBuf::from);
        if let Some(secs) = lookup("PLATFORM_STREAM_RETENTION_SECS") {
            let secs = secs.parse().map_err(|_| {
                ConfigError::Invalid("PLATFORM_STREAM_RETENTION_SECS", "not a number".into())
            })?;
            config.stream_retention = Duration::from_secs(secs);
        }
        let millis = |name, min| read_millis(&lookup, name, min);
        let count = |name| read_count(&lookup, name);
        if let Some(keepalive) = millis("PLATFORM_STREAM_KEEPALIVE_MS", 10)? {
            config.keepalive = keepalive;
        }
        if let Some(lease) = millis("PLATFORM_RUN_LEASE_MS", 30)? {
            config.run_lease = lease;
        }
        config.limits = crate::http::ConnectionLimits::from_lookup(&lookup)?;
        if let Some(idle) = millis("PLATFORM_MCP_SESSION_IDLE_MS", 1000)? {
            config.mcp_sessions.idle = idle;
        }
        if let Some(n) = count("PLATFORM_MCP_SESSIONS_PER_KEY")? {
            config.mcp_sessions.per_key = n;
        }
        if let Some(n) = count("PLATFORM_MCP_SESSIONS_MAX")? {
            config.mcp_sessions.max = n;
        }
        if let Some(n) = count("PLATFORM_AUDIT_QUEUE_ROWS")? {
            config.audit.capacity = n;
        }
        if let Some(wait) = millis("PLATFORM_AUDIT_QUEUE_WAIT_MS", 0)? {
            config.audit.wait = wait;
        }
        if let Some(issuer) = lookup("PLATFORM_OAUTH_ISSUER") {
            let url = |name, value: String| {
                url::Url::parse(&value)
                    .map(|_| value)
                    .map_err(|e| ConfigError::Invalid(name, e.to_string()))
            };
            let client = match (
                lookup("PLATFORM_OAUTH_CLIENT_ID"),
                lookup("PLATFORM_OAUTH_CLIENT_SECRET"),
            ) {
                (Some(id), Some(secret)) => Some(OAuthClient { id, secret }),
                (None, None) => None,
                (Some(_), None) => {
                    return Err(ConfigError::Invalid(
                        "PLATFORM_OAUTH_CLIENT_SECRET",
                        "required with PLATFORM_OAUTH_CLIENT_ID".into(),
                    ));
                }
                (None, Some(_)) => {
                    return Err(ConfigError::Invalid(
                        "PLATFORM_OAUTH_CLIENT_ID",
                        "required with PLATFORM_OAUTH_CLIENT_SECRET".into(),
                    ));
                }
            };
            config.oauth = Some(OAuthConfig {
                issuer: url("PLATFORM_OAUTH_ISSUER", issuer)?,
                audience: lookup("PLATFORM_OAUTH_AUDIENCE")
                    .map(|aud| url("PLATFORM_OAUTH_AUDIENCE", aud))
                    .transpose()?,
                client,
                scopes: lookup("PLATFORM_OAUTH_SCOPES").map_or_else(
                    || DEFAULT_OAUTH_SCOPES.iter().map(|s| s.to_string()).collect(),
                    |list| comma_list(&list),
                ),
            });
        }
        Ok(config)
    }
}

/// The process environment as a lookup: a variable's value, empty values counted as unset.
pub fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The variable `name` as milliseconds (at least `min`); `None` when unset.
pub(crate) fn read_millis(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    min: u64,
) -> Result<Option<Duration>, ConfigError> {
    lookup(name)
        .map(|ms| match ms.parse::<u64>() {
            Ok(ms) => Ok(Duration::from_millis(ms.max(min))),
            Err(_) => Err(ConfigError::Invalid(name, "not a number".into())),
        })
        .transpose()
}

/// The variable `name` as a positive count; `None` when unset.
pub(crate) fn read_count(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<Option<usize>, ConfigError> {
    lookup(name)
        .map(|n| {
            n.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| ConfigError::Invalid(name, "not a positive number".into()))
        })
        .transpose()
}

/// Decodes a base64 key of exactly 32 bytes.
fn parse_key(text: &str) -> Result<[u8; 32], ConfigError> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|_| ConfigError::MalformedKey)?;
    bytes.try_into().map_err(|_| ConfigError::MalformedKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn missing_or_malformed_key_refuses() {
        assert!(matches!(
            Config::from_lookup(lookup(&[])),
            Err(ConfigError::MissingKey)
        ));
        assert!(matches!(
            Config::from_lookup(lookup(&[("PLATFORM_WORKSPACE_ENCRYPTION_KEY", "c2hvcnQ=")])),
            Err(ConfigError::MalformedKey)
        ));
    }

    #[test]
    fn defaults_and_tiers() {
        let config = Config::from_lookup(lookup(&[
            (
                "PLATFORM_WORKSPACE_ENCRYPTION_KEY",
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
            ),
            ("PLATFORM_LLM_MODEL_SMART", "big"),
        ]))
        .unwrap();
        assert_eq!(config.database_url, DEFAULT_DATABASE_URL);
        assert_eq!(config.llm.tier_models["smart"], "big");
        assert_eq!(config.mcp_sessions.idle, Duration::from_secs(1800));
        assert_eq!(
            (config.mcp_sessions.per_key, config.mcp_sessions.max),
            (16, 4096)
        );
    }

    #[test]
    fn mcp_session_limits() {
        const KEY: (&str, &str) = (
            "PLATFORM_WORKSPACE_ENCRYPTION_KEY",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        );
        let config = Config::from_lookup(lookup(&[
            KEY,
            ("PLATFORM_MCP_SESSION_IDLE_MS", "60000"),
            ("PLATFORM_MCP_SESSIONS_PER_KEY", "4"),
            ("PLATFORM_MCP_SESSIONS_MAX", "100"),
        ]))
        .unwrap();
        assert_eq!(config.mcp_sessions.idle, Duration::from_secs(60));
        assert_eq!(
            (config.mcp_sessions.per_key, config.mcp_sessions.max),
            (4, 100)
        );
        assert!(matches!(
            Config::from_lookup(lookup(&[KEY, ("PLATFORM_MCP_SESSIONS_MAX", "0")])),
            Err(ConfigError::Invalid("PLATFORM_MCP_SESSIONS_MAX", _))
        ));
    }

    #[test]
    fn audit_queue() {
        const KEY: (&str, &str) = (
            "PLATFORM_WORKSPACE_ENCRYPTION_KEY",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        );
        let defaults = Config::from_lookup(lookup(&[KEY])).unwrap().audit;
        assert_eq!(
            (defaults.capacity, defaults.wait),
            (10_000, Duration::from_secs(5))
        );
        let config = Config::from_lookup(lookup(&[
            KEY,
            ("PLATFORM_AUDIT_QUEUE_ROWS", "64"),
            ("PLATFORM_AUDIT_QUEUE_WAIT_MS", "0"),
        ]))
        .unwrap();
        assert_eq!(
            (config.audit.capacity, config.audit.wait),
            (64, Duration::ZERO)
        );
        assert!(matches!(
            Config::from_lookup(lookup(&[KEY, ("PLATFORM_AUDIT_QUEUE_ROWS", "0")])),
            Err(ConfigError::Invalid("PLATFORM_AUDIT_QUEUE_ROWS", _))
        ));
    }

    #[test]
    fn oauth_issuer_and_audience() {
        const KEY: (&str, &str) = (
            "PLATFORM_WORKSPACE_ENCRYPTION_KEY",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        );
        assert!(Config::from_lookup(lookup(&[KEY])).unwrap().oauth.is_none());
        let config = Config::from_lookup(lookup(&[
            KEY,
            ("PLATFORM_OAUTH_ISSUER", "https://as.example/"),
            ("PLATFORM_OAUTH_AUDIENCE", "https://api.example"),
        ]))
        .unwrap();
        let oauth = config.oauth.unwrap();
        assert_eq!(
            oauth.issuer, "https://as.example/",
            "kept as given: it is matched to iss"
        );
        assert_eq!(oauth.audience.as_deref(), Some("https://api.example"));
        assert!(matches!(
            Config::from_lookup(lookup(&[KEY, ("PLATFORM_OAUTH_ISSUER", "not a url")])),
            Err(ConfigError::Invalid("PLATFORM_OAUTH_ISSUER", _))
        ));
        assert!(
            oauth.client.is_none(),
            "no introspection without credentials"
        );
        const ISSUER: (&str, &str) = ("PLATFORM_OAUTH_ISSUER", "https://as.example/");
        let with_client = Config::from_lookup(lookup(&[
            KEY,
            ISSUER,
            ("PLATFORM_OAUTH_CLIENT_ID", "workspace"),
            ("PLATFORM_OAUTH_CLIENT_SECRET", "s3cret"),
        ]))
        .unwrap();
        let client = with_client.oauth.unwrap().client.unwrap();
        assert_eq!(
            (client.id.as_str(), client.secret.as_str()),
            ("workspace", "s3cret")
        );
        assert!(
            !format!("{client:?}").contains("s3cret"),
            "the secret is not logged"
        );
        let id_alone = lookup(&[KEY, ISSUER, ("PLATFORM_OAUTH_CLIENT_ID", "x")]);
        assert!(matches!(
            Config::from_lookup(id_alone),
            Err(ConfigError::Invalid("PLATFORM_OAUTH_CLIENT_SECRET", _))
        ));
        let secret_alone = lookup(&[KEY, ISSUER, ("PLATFORM_OAUTH_CLIENT_SECRET", "x")]);
        assert!(matches!(
            Config::from_lookup(secret_alone),
            Err(ConfigError::Invalid("PLATFORM_OAUTH_CLIENT_ID", _))
        ));
    }
}
