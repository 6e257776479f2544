//! `sitefile serve`: a site's content over HTTP — its pages (a built-in HTML view, and page
//! JSON with `?asJson` / `?renderJson`) and the admin protocol — from the site directory alone,
//! or as the edge cache in front of an origin (`--origin`), with every decision the core's.

mod app;
mod edge;
mod origin;
mod page_view;
mod store;

use crate::open_site;
use clap::Args;
use sitefile_core::edge::WorkerOptions;
use sitefile_workspace::http::{ConnectionLimits, serve, shutdown_signal};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
    /// least recently used copies go first.
    #[arg(long, default_value_t = DEFAULT_CACHE_MAX_BYTES)]
    pub cache_max_bytes: usize,
}

/// The edge cache's default size: 64 MiB of bodies.
pub const DEFAULT_CACHE_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Runs the server until Ctrl-C or SIGTERM; exit 2 when the site cannot be read or the address
/// cannot be bound.
pub fn run(args: ServeArgs) -> ExitCode {
    let opened = match open_site::open(&args.site_dir, WorkerOptions::default()) {
        Ok(opened) => opened,
        Err(e) => return crate::fail(&e),
    };
    for problem in &opened.problems {
        eprintln!("warning: {problem}");
    }
    let origin = match args.origin.as_deref().map(origin::Origin::new).transpose() {
        Ok(origin) => origin,
        Err(e) => return crate::fail(&e),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::fail(&error.to_string()),
    };
    runtime.block_on(async {
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
        let revision = opened.site.revision();
        // The first line of output names where to go: scripts and tests read it.
        let front = origin
            .as_ref()
            .map_or(String::new(), |o| format!(", origin {}", o.url()));
        crate::print(&format!(
            "sitefile serve: http://{address}/ (content {}, revision {}{front})",
            args.site_dir.display(),
            &revision[..revision.len().min(12)]
        ));
        let site = Arc::new(opened.site);
        let edge = origin
            .map(|origin| Arc::new(edge::Edge::new(site.clone(), origin, args.cache_max_bytes)));
        let router = app::router(site, edge);
        serve(listener, router, &ConnectionLimits::default(), shutdown).await;
        ExitCode::SUCCESS
    })
}
