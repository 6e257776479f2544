//! `sitefile check`: report every content problem of a site.

use crate::open_site;
use clap::Args;
use sitefile_core::{Severity, WorkerOptions};
use sitefile_site_dir as site_dir;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `sitefile check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A site root holding `.platform/blocks/`, or a blocks directory itself.
    pub site_dir: PathBuf,
    /// Print the problems as a JSON array instead of lines.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command: exit 1 when there is an error, 0 otherwise (warnings only).
pub fn run(args: CheckArgs) -> ExitCode {
    let opened = match open_site::open(&args.site_dir, WorkerOptions::default()) {
        Ok(opened) => opened,
        Err(e) => return crate::fail(&e),
    };
    let snapshot = opened.site.snapshot();
    let mut load_problems = opened.problems;
    // Blocks read lazily from a bundle are parsed (and reported) here.
    load_problems.extend(snapshot.parse_problems());
    let problems = opened.site.check(&load_problems);
    let errors = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    if args.json {
        match serde_json::to_string_pretty(&problems) {
            Ok(text) => crate::print(&text),
            Err(e) => return crate::fail(&e.to_string()),
        }
    } else {
        for p in &problems {
            let severity = match p.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            crate::print(&format!(
                "{severity}: {}: {} ({})",
                p.block, p.message, p.kind
            ));
        }
        let source = match &opened.source {
            site_dir::Source::Directory(p) | site_dir::Source::Bundle(p) => p.display(),
        };
        crate::print(&format!(
            "{source}: {} blocks, {} pages: {errors} error(s), {} warning(s)",
            snapshot.len(),
            snapshot.routes().routes().len(),
            problems.len() - errors
        ));
    }
    if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
