//! The `sitefile` command line: resolve pages, check content, write bundles.

mod bundle_cmd;
mod cache_cmd;
mod check_cmd;
mod kv_cmd;
mod kv_store;
mod memory;
mod open_site;
mod redis_kv;
mod resolve_cmd;
mod serve;
mod workspace_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// sitefile: a site content runtime.
#[derive(Debug, Parser)]
#[command(name = "sitefile", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Resolve a URL of a site and print the page as JSON.
    Resolve(resolve_cmd::ResolveArgs),
    /// Report every content problem of a site; exit 1 when there are errors.
    Check(check_cmd::CheckArgs),
    /// Write the canonical bundle `blocks.gen.json` of a site.
    Bundle(bundle_cmd::BundleArgs),
    /// Print what the edge would do with a request: cache key, profile, cacheability, headers.
    Cache(cache_cmd::CacheArgs),
    /// Serve a site over HTTP: its pages, page JSON and the admin protocol.
    Serve(serve::ServeArgs),
    /// Fast Deploy's key-value store: `sync <site-dir>` pushes a site's content for a deployment;
    /// `migrate` copies a deployment's content to another.
    Kv(kv_cmd::KvArgs),
    /// The workspace API: `init --org <slug>` prints an owner key; `serve` runs the API.
    Workspace(workspace_cmd::WorkspaceArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Resolve(args) => resolve_cmd::run(args),
        Command::Check(args) => check_cmd::run(args),
        Command::Bundle(args) => bundle_cmd::run(args),
        Command::Cache(args) => cache_cmd::run(args),
        Command::Serve(args) => {
            memory::give_back_at_once();
            serve::run(args)
        }
        Command::Kv(args) => {
            // The key-value store's connection reports what it meets through `tracing`.
            use tracing_subscriber::layer::SubscriberExt as _;
            use tracing_subscriber::util::SubscriberInitExt as _;
            tracing_subscriber::registry()
                .with(serve::stderr_logs())
                .init();
            kv_cmd::run(args)
        }
        Command::Workspace(args) => workspace_cmd::run(args),
    }
}

/// Prints a line to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn print(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// Prints an error and returns the bad-input exit code.
pub(crate) fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}
