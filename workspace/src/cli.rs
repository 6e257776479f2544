//! The `workspace init` and `workspace serve` commands.

use std::net::SocketAddr;

use crate::auth::Permissions;
use crate::clock::now_ms;
use crate::config::Config;
use crate::crypto::{generate_api_key, hash_api_key};
use crate::state::{AppState, StartError};
use crate::storage::{ApiKeyRecord, Store};

/// Default listen address of `workspace serve`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// A command failure, printed to the operator.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Configuration problem.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Start-up problem.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The organization already exists.
    #[error("organization {0:?} already exists")]
    OrgExists(String),
    /// The slug is not acceptable.
    #[error("the organization slug must be 1 to 64 of a-z, 0-9 and '-'")]
    BadSlug,
    /// The server failed.
    #[error("server: {0}")]
    Serve(String),
}

/// Creates an organization with an owner member and returns the owner API key value
/// (holding every permission), to be printed once.
pub async fn init(config: &Config, slug: &str) -> Result<String, CliError> {
    init_owner(config, slug, None).await
}

/// [`init`], the owner also signing in with OAuth access tokens whose `sub` is
/// `oauth_subject`.
pub async fn init_owner(
    config: &Config,
    slug: &str,
    oauth_subject: Option<&str>,
) -> Result<String, CliError> {
    let valid = (1..=64).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !valid {
        return Err(CliError::BadSlug);
    }
    let store = Store::connect(&config.database_url)
        .await
        .map_err(StartError::from)?;
    let failed = |e| StartError::from(store.error(e));
    if store.org_by_slug(slug).await.map_err(failed)?.is_some() {
        return Err(CliError::OrgExists(slug.to_string()));
    }
    let (org, owner) = store
        .create_org_with_owner(slug, oauth_subject)
        .await
        .map_err(failed)?;
    let value = generate_api_key();
    let key = ApiKeyRecord {
        id: uuid::Uuid::new_v4().to_string(),
        org_id: org.id,
        member_id: owner.id,
        name: "owner".into(),
        key_hash: hash_api_key(&value),
        permissions: Permissions::all(),
        expires_at: None,
        created_at: now_ms(),
    };
    store.insert_api_key(&key).await.map_err(failed)?;
    Ok(value)
}

/// The workspace API ready to be served: its router and what a stopping server does first.
/// `workspace serve` serves it alone; `sitefile serve --workspace` beside a site.
#[derive(Clone)]
pub struct Workspace {
    state: AppState,
}

impl Workspace {
    /// Connects the storage and starts the background work of `config`'s workspace.
    pub async fn start(config: Config) -> Result<Workspace, CliError> {
        let state = AppState::from_config(config).await?;
        tracing::info!(database = %state.store.location(), "workspace API started");
        Ok(Workspace { state })
    }

    /// The API's routes (every path [`owns_path`] names).
    pub fn router(&self) -> axum::Router {
        crate::router(self.state.clone())
    }

    /// The connection limits its configuration sets.
    pub fn limits(&self) -> crate::http::ConnectionLimits {
        self.state.config.limits
    }

    /// Before the server stops: this server's runs are marked failed and every run stream
    /// ends. The database writes get at most the shutdown timeout
    /// (`PLATFORM_SHUTDOWN_TIMEOUT_MS`), so a hung database cannot hold the exit; the
    /// streams end either way.
    pub async fn stop(&self) {
        let timeout = self.state.config.limits.shutdown_timeout;
        match tokio::time::timeout(timeout, crate::pilot::lease::stop(&self.state)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                let error = self.state.store.error(error);
                tracing::error!(%error, "runs not stopped cleanly");
            }
            Err(_) => tracing::error!(
                database = %self.state.store.location(),
                ?timeout,
                "runs not stopped: the database did not answer within the shutdown timeout; \
                 other servers fail them when this server's lease lapses"
            ),
        }
        self.state.pilot.shutdown.cancel();
    }
}

/// Whether `path` is the workspace API's: `/api/...`, the legacy `/mcp/...` and the
/// protected-resource documents under `/.well-known/oauth-protected-resource`.
pub fn owns_path(path: &str) -> bool {
    ["/api/", "/mcp/", "/.well-known/oauth-protected-resource"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// Serves the workspace API alone on `listen` until Ctrl-C or SIGTERM; then this server's
/// runs are marked failed, every run stream ends, and open requests get a bounded time to
/// finish.
pub async fn serve(config: Config, listen: SocketAddr) -> Result<(), CliError> {
    let workspace = Workspace::start(config).await?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| CliError::Serve(format!("bind {listen}: {e}")))?;
    // The address bound, not the one asked for: with port 0 the OS picks the port.
    let listen = listener
        .local_addr()
        .map_err(|e| CliError::Serve(format!("bind {listen}: {e}")))?;
    tracing::info!(%listen, "workspace API listening");
    let stopping = workspace.clone();
    let shutdown = async move {
        crate::http::shutdown_signal().await;
        tracing::info!("shutting down");
        stopping.stop().await;
    };
    let limits = workspace.limits();
    crate::http::serve(listener, workspace.router(), &limits, shutdown).await;
    Ok(())
}

/// `workspace init --org <slug> [--oauth-subject <sub>]`: reads the `PLATFORM_*`
/// environment, creates the organization and prints the owner key on stdout.
pub async fn init_command(org: &str, oauth_subject: Option<&str>) -> Result<(), CliError> {
    init_logging();
    let key = init_owner(&Config::from_env()?, org, oauth_subject).await?;
    println!("{key}");
    Ok(())
}

/// `workspace serve [--listen ADDR]`: reads the `PLATFORM_*` environment, installs OTLP
/// export when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and serves until stopped.
pub async fn serve_command(listen: SocketAddr) -> Result<(), CliError> {
    init_logging();
    let config = Config::from_env()?;
    let _telemetry = crate::telemetry::init_otlp().map_err(CliError::Serve)?;
    serve(config, listen).await
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`), unless the host already did; in
/// colour only when stderr is a terminal (a file or a log collector gets plain text).
fn init_logging() {
    use std::io::IsTerminal as _;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
