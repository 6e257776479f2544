//! `sitefile serve`: a site's content over HTTP — its pages (a built-in HTML view, and page
//! JSON with `?asJson` / `?renderJson`) and the admin protocol — from the site directory alone,
//! or as the edge cache in front of an origin (`--origin`), with every decision the core's.

mod app;
mod draft;
mod edge;
mod error;
mod fast_deploy;
mod header_text;
mod origin;
mod page_view;
mod store;
mod telemetry;

use crate::open_site;
use clap::Args;
use fast_deploy::FastDeploy;
use sitefile_core::{PlatformConfig, WorkerOptions};
use sitefile_workspace::cli::Workspace;
use sitefile_workspace::http::{ConnectionLimits, shutdown_signal};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use store::{MemoryStore, RedisStore, Store};
pub use telemetry::stderr_logs;

/// Where `sitefile serve` listens unless `--listen` says otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8000";

/// Arguments of `sitefile serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A site root holding `.platform/blocks/`, or a blocks directory itself.
    pub site_dir: PathBuf,
    /// Address to listen on (port 0 picks a free one; the address is printed).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// The app that renders the site (`http://127.0.0.1:3000`): pages go to it through the edge
    /// cache, loaders run on it as one batch invoke per resolution round, previews and renders
    /// are forwarded to it. Without it this server shows pages itself and no loader runs.
    #[arg(long)]
    pub origin: Option<String>,
    /// The most bytes of response bodies the edge cache keeps in memory (with `--origin`); the
    /// least recently used copies go first. Not used when `PLATFORM_CACHE_REDIS_URL` keeps the
    /// copies in Redis.
    #[arg(long, default_value_t = DEFAULT_CACHE_MAX_BYTES)]
    pub cache_max_bytes: usize,
    /// Also serve the workspace API (`/api/...`, `/mcp/...`), configured as
    /// `sitefile workspace serve` is (`PLATFORM_WORKSPACE_ENCRYPTION_KEY`,
    /// `PLATFORM_DATABASE_URL`, ...), so one process serves both.
    #[arg(long)]
    pub workspace: bool,
    /// A JSON file of `createDecoWorkerEntry` options for the edge (`bypassPaths`, `csp`,
    /// `cspMode`, `stripTrackingParams`, `pageJsonCors`, ...; the spec's names and defaults).
    #[arg(long, value_name = "FILE")]
    pub options: Option<PathBuf>,
}

/// The workspace API of `--workspace`, from the `PLATFORM_*` environment.
async fn start_workspace() -> Result<Workspace, String> {
    let config = sitefile_workspace::Config::from_env().map_err(|e| e.to_string())?;
    Workspace::start(config).await.map_err(|e| e.to_string())
}

/// The edge cache's default size: 64 MiB of bodies.
pub const DEFAULT_CACHE_MAX_BYTES: usize = 64 * 1024 * 1024;

/// The variable naming the Redis (`redis://host:port/db`) that keeps the edge cache's copies,
/// shared by every server using it; in memory when unset.
pub const CACHE_REDIS_VAR: &str = "PLATFORM_CACHE_REDIS_URL";

/// The edge cache's storage: Redis when [`CACHE_REDIS_VAR`] is set, else memory.
fn cache_store(max_bytes: usize) -> Result<(Box<dyn Store>, &'static str), String> {
    match std::env::var(CACHE_REDIS_VAR)
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(url) => {
            let connection = crate::redis_kv::connect(&url, CACHE_REDIS_VAR)?;
            Ok((Box::new(RedisStore::new(connection)), "redis"))
        }
        None => Ok((Box::new(Mutex::new(MemoryStore::new(max_bytes))), "memory")),
    }
}

/// The content to serve and where it came from: Fast Deploy's snapshot of the deployment when
/// the store holds one, else the site directory — also, marked as a fallback, when the store
/// did not answer within its start timeout (it is waited for until then).
async fn open(
    args: &ServeArgs,
    options: &WorkerOptions,
    fast_deploy: Option<&FastDeploy>,
) -> Result<(sitefile_core::Site, String), String> {
    let mut fallback = String::new();
    if let Some(fast_deploy) = fast_deploy {
        match fast_deploy.read_at_start().await {
            fast_deploy::Start::Snapshot(snapshot) => {
                let site = open_site::with_snapshot(snapshot, options.clone())?;
                let from = format!("deployment {} from PLATFORM_KV", fast_deploy.id());
                return Ok((site, from));
            }
            fast_deploy::Start::Empty => {}
            fast_deploy::Start::Fallback(why) => {
                tracing::warn!(
                    "the snapshot of deployment {} could not be read ({why}); serving {} as a \
                     fallback (answers carry {}: {}, reloads are refused) until the key-value \
                     store answers",
                    fast_deploy.id(),
                    args.site_dir.display(),
                    fast_deploy::CONTENT_HEADER,
                    fast_deploy::DIRECTORY_FALLBACK,
                );
                fallback = " as a directory fallback: PLATFORM_KV did not answer".to_string();
            }
        }
    }
    let opened = open_site::open(&args.site_dir, options.clone())?;
    for problem in &opened.problems {
        tracing::warn!("{problem}");
    }
    Ok((
        opened.site,
        format!("{}{fallback}", args.site_dir.display()),
    ))
}

/// Runs the server until Ctrl-C or SIGTERM; exit 2 when the site cannot be read or the address
/// cannot be bound.
pub fn run(args: ServeArgs) -> ExitCode {
    let platform = match PlatformConfig::from_env(std::env::vars()) {
        Ok(platform) => platform,
        Err(e) => return crate::fail(&e.to_string()),
    };
    // Before the runtime: the exporters' blocking HTTP clients are made and stopped outside it.
    let telemetry = match telemetry::Telemetry::start(&platform) {
        Ok(telemetry) => telemetry,
        Err(e) => return crate::fail(&e),
    };
    let observe = telemetry.observes_requests();
    let limits = match ConnectionLimits::from_env() {
        Ok(limits) => limits,
        Err(e) => return crate::fail(&e.to_string()),
    };
    let options = match open_site::worker_options(args.options.as_ref()) {
        Ok(options) => options,
        Err(e) => return crate::fail(&e),
    };
    let origin = match args.origin.as_deref().map(origin::Origin::new).transpose() {
        Ok(origin) => origin.map(|o| o.logging_fetches(platform.observability.log_outgoing_fetch)),
        Err(e) => return crate::fail(&e),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::fail(&error.to_string()),
    };
    let code = runtime.block_on(async {
        let fast_deploy = match FastDeploy::configured(&platform) {
            Ok(fast_deploy) => fast_deploy.map(Arc::new),
            Err(e) => return crate::fail(&e),
        };
        let (site, content) = match open(&args, &options, fast_deploy.as_deref()).await {
            Ok(opened) => opened,
            Err(e) => return crate::fail(&e),
        };
        let (store, kind) = match cache_store(args.cache_max_bytes) {
            Ok(store) => store,
            Err(e) => return crate::fail(&e),
        };
        let workspace = match args.workspace.then(start_workspace) {
            Some(started) => match started.await {
                Ok(workspace) => Some(workspace),
                Err(e) => return crate::fail(&e),
            },
            None => None,
        };
        let listener = match tokio::net::TcpListener::bind(args.listen).await {
            Ok(listener) => listener,
            Err(e) => return crate::fail(&format!("cannot listen on {}: {e}", args.listen)),
        };
        let address = listener.local_addr().unwrap_or(args.listen);
        // The signal handlers are installed (the future polled once) before the address is
        // printed: a script that reads it and signals at once is heard, not killed outright.
        let mut shutdown = Box::pin(shutdown_signal());
        tokio::select! {
            biased;
            () = &mut shutdown => return ExitCode::SUCCESS,
            () = std::future::ready(()) => {}
        }
        let revision = site.revision();
        // The first line of output names where to go: scripts and tests read it.
        let front = origin.as_ref().map_or(String::new(), |o| {
            format!(", origin {}, cache in {kind}", o.url())
        });
        crate::print(&format!(
            "sitefile serve: http://{address}/ (content {content}, revision {}{front})",
            &revision[..revision.len().min(12)]
        ));
        let site = Arc::new(site);
        if let Some(fast_deploy) = &fast_deploy {
            fast_deploy.clone().watch(site.clone());
        }
        let edge = origin.map(|origin| Arc::new(edge::Edge::new(site.clone(), origin, store)));
        let marks = fast_deploy.clone();
        let mut router = app::router(site, edge, fast_deploy, workspace.as_ref());
        if let Some(fast_deploy) = marks {
            router = router.layer(axum::middleware::from_fn_with_state(
                fast_deploy,
                fast_deploy::mark_fallback,
            ));
        }
        if observe {
            router = router.layer(axum::middleware::from_fn(telemetry::observe));
        }
        let shutdown = async move {
            shutdown.await;
            if let Some(workspace) = &workspace {
                workspace.stop().await;
            }
        };
        sitefile_workspace::http::serve(listener, router, &limits, shutdown).await;
        ExitCode::SUCCESS
    });
    drop(runtime);
    telemetry.shutdown();
    code
}
