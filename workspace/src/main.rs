//! `sitefile-workspace`: the workspace API on its own (the same commands as
//! `sitefile workspace`), used by the tests and for standalone deployments.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sitefile_workspace::Config;
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
    },
    /// Serve the workspace API.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = DEFAULT_LISTEN)]
        listen: SocketAddr,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> Result<(), cli::CliError> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = Config::from_env()?;
    match command {
        Command::Init { org } => {
            let key = cli::init(&config, &org).await?;
            println!("{key}");
            Ok(())
        }
        Command::Serve { listen } => {
            let _telemetry =
                sitefile_workspace::telemetry::init_otlp().map_err(cli::CliError::Serve)?;
            cli::serve(config, listen).await
        }
    }
}
