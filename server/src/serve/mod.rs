//! `sitefile serve`: a site's content over HTTP — its pages (a built-in HTML view, and page
//! JSON with `?asJson` / `?renderJson`) and the admin protocol — from the site directory alone,
//! with every decision the core's.

mod app;
mod page_view;

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
}

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
        let revision = opened.site.revision();
        // The first line of output names where to go: scripts and tests read it.
        crate::print(&format!(
            "sitefile serve: http://{address}/ (content {}, revision {})",
            args.site_dir.display(),
            &revision[..revision.len().min(12)]
        ));
        let router = app::router(Arc::new(opened.site));
        serve(
            listener,
            router,
            &ConnectionLimits::default(),
            shutdown_signal(),
        )
        .await;
        ExitCode::SUCCESS
    })
}
