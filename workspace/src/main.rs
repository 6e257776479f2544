//! `sitefile-workspace`: the workspace API on its own (the same commands as
//! `sitefile workspace`), used by the tests and for standalone deployments.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sitefile_workspace::cli::{self, DEFAULT_LISTEN};

#[derive(Parser)]
#[command(name = "sitefile-workspace", about = "The sitefile workspace API")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create an organization and print its owner API key once.
    Init {
        /// Organization slug (immutable).
        #[arg(long)]
        org: String,
        /// The OAuth subject (access token `sub`) the owner signs in as.
        #[arg(long)]
        oauth_subject: Option<String>,
    },
    /// Serve the workspace API.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = DEFAULT_LISTEN)]
        listen: SocketAddr,
    },
}

fn main() -> ExitCode {
    let command = Args::parse().command;
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Init { org, oauth_subject } => {
                cli::init_command(&org, oauth_subject.as_deref()).await
            }
            Command::Serve { listen } => cli::serve_command(listen).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
