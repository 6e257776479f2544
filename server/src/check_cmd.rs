//! `sitefile check`: report every content problem of a site.

use clap::Args;
use sitefile_core::check::{Severity, check};
use sitefile_core::resolve::ResolveConfig;
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
    let site = match site_dir::load(&args.site_dir) {
        Ok(s) => s,
        Err(e) => return crate::fail(&e.to_string()),
    };
    let mut load_problems = site.problems.clone();
    // Blocks read lazily from a bundle are parsed (and reported) here.
    load_problems.extend(site.snapshot.parse_problems());
    let problems = check(
        &site.snapshot,
        &ResolveConfig::by_convention(),
        &load_problems,
    );
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
        let source = match &site.source {
            site_dir::Source::Directory(p) | site_dir::Source::Bundle(p) => p.display(),
        };
        crate::print(&format!(
            "{source}: {} blocks, {} pages: {errors} error(s), {} warning(s)",
            site.snapshot.len(),
            site.snapshot.routes().routes().len(),
            problems.len() - errors
        ));
    }
    if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
