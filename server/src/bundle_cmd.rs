//! `sitefile bundle`: write the canonical bundle `blocks.gen.json` beside the blocks directory.

use clap::Args;
use sitefile_site_dir as site_dir;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `sitefile bundle`.
#[derive(Debug, Args)]
pub struct BundleArgs {
    /// A site root holding `.platform/blocks/`, or a blocks directory itself.
    pub site_dir: PathBuf,
    /// Where to write (default: `blocks.gen.json` next to the blocks directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Fail instead of skipping invalid files.
    #[arg(long)]
    pub strict: bool,
}

/// Runs the command.
pub fn run(args: BundleArgs) -> ExitCode {
    let Some(blocks) = site_dir::blocks_dir(&args.site_dir) else {
        return crate::fail(&format!("{}: no blocks directory", args.site_dir.display()));
    };
    let (snapshot, problems) = match site_dir::load_directory(&blocks) {
        Ok(loaded) => loaded,
        Err(e) => return crate::fail(&e.to_string()),
    };
    for problem in &problems {
        eprintln!("warning: {problem}");
    }
    if args.strict && !problems.is_empty() {
        return crate::fail(&format!(
            "{} problem(s); nothing written (--strict)",
            problems.len()
        ));
    }
    let out = args
        .out
        .unwrap_or_else(|| blocks.parent().unwrap_or(&blocks).join("blocks.gen.json"));
    if let Err(e) = std::fs::write(&out, snapshot.canonical_bytes()) {
        return crate::fail(&format!("{}: {e}", out.display()));
    }
    println!(
        "wrote {} ({} blocks, revision {}, {} skipped)",
        out.display(),
        snapshot.len(),
        snapshot.revision(),
        problems.len()
    );
    ExitCode::SUCCESS
}
