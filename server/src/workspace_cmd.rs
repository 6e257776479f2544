//! `sitefile workspace`: the workspace API's commands (`init`, `serve`).

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use sitefile_workspace::cli::{self, DEFAULT_LISTEN};

/// Arguments of `sitefile workspace`.
#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    #[command(subcommand)]
    command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
enum WorkspaceCommand {
    /// Create an organization and print its owner API key once.
    Init {
        /// Organization slug (immutable).
        #[arg(long)]
        org: String,
        /// The OAuth subject (access token `sub`) the owner signs in as.
        #[arg(long)]
        oauth_subject: Option<String>,
    },
    /// Serve the workspace API alone.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = DEFAULT_LISTEN)]
        listen: SocketAddr,
    },
}

/// Runs a workspace command; configuration comes from the `PLATFORM_*` environment.
pub fn run(args: WorkspaceArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::fail(&error.to_string()),
    };
    let result = runtime.block_on(async {
        match args.command {
            WorkspaceCommand::Init { org, oauth_subject } => {
                cli::init_command(&org, oauth_subject.as_deref()).await
            }
            WorkspaceCommand::Serve { listen } => cli::serve_command(listen).await,
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
