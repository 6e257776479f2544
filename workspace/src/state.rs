//! The shared state behind every handler.

use std::sync::Arc;

use crate::config::Config;
use crate::crypto::Vault;
use crate::mcp::{ToolCache, Upstream};
use crate::pilot::Pilot;
use crate::storage::Store;
use crate::telemetry::{AuditSink, ProxyMetrics};

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The `PLATFORM_*` environment is incomplete or invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The database could not be opened, migrated or read.
    #[error(transparent)]
    Database(#[from] crate::storage::DatabaseError),
    /// Another dependency (CA file, Redis, HTTP client) could not be set up.
    #[error("{0}")]
    Setup(String),
}

/// Everything a request handler needs; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// Configuration.
    pub config: Arc<Config>,
    /// The database.
    pub store: Store,
    /// Credential encryption.
    pub vault: Vault,
    /// The upstream MCP client.
    pub upstream: Arc<Upstream>,
    /// Cached upstream tool listings.
    pub tool_cache: Arc<ToolCache>,
    /// Proxy metrics.
    pub metrics: ProxyMetrics,
    /// Audit log writer.
    pub audit: AuditSink,
    /// Agent runs and their streams.
    pub pilot: Arc<Pilot>,
    /// Downstream MCP sessions of the connection proxy.
    pub sessions: Arc<crate::mcp::Sessions>,
    /// API keys and connections as of the current authorization revision.
    pub auth: Arc<crate::auth::AuthCache>,
    /// The OAuth access-token validator, when an authorization server is configured.
    pub oauth: Option<Arc<crate::auth::OAuth>>,
}

impl AppState {
    /// Reads the `PLATFORM_*` environment and builds the state (what `sitefile serve`
    /// calls before mounting [`crate::router`]).
    pub async fn from_env() -> Result<Self, StartError> {
        Self::from_config(Config::from_env()?).await
    }

    /// Opens the database (migrating it), builds the clients, takes this server's run
    /// lease and fails the runs no live server owns (see [`crate::pilot::lease`]), then keeps
    /// doing so in the background. Must run inside a tokio runtime.
    pub async fn from_config(config: Config) -> Result<Self, StartError> {
        let store = Store::connect(&config.database_url).await?;
        let extra_roots = match &config.upstream_ca_file {
            Some(path) => Some(std::fs::read(path).map_err(|e| {
                StartError::Setup(format!("PLATFORM_UPSTREAM_CA_FILE {}: {e}", path.display()))
            })?),
            None => None,
        };
        let upstream = Upstream::new(extra_roots.as_deref()).map_err(StartError::Setup)?;
        let pilot = Pilot::new(&config).await.map_err(StartError::Setup)?;
        let oauth = match &config.oauth {
            Some(oauth) => Some(Arc::new(
                crate::auth::OAuth::new(oauth, &config.public_url, config.clock.clone())
                    .map_err(StartError::Setup)?,
            )),
            None => None,
        };
        let state = Self {
            vault: Vault::new(&config.encryption_key),
            audit: AuditSink::start(store.clone(), config.audit),
            auth: Arc::new(crate::auth::AuthCache::start(store.clone())),
            store,
            upstream: Arc::new(upstream),
            tool_cache: Arc::new(ToolCache::default()),
            metrics: ProxyMetrics::default(),
            pilot: Arc::new(pilot),
            sessions: Arc::default(),
            oauth,
            config: Arc::new(config),
        };
        crate::pilot::lease::recover(&state)
            .await
            .map_err(|e| state.store.error(e))?;
        crate::pilot::lease::maintain(state.clone());
        Ok(state)
    }
}
