//! Opening a site directory as a [`Site`]: the content read from disk, set up by convention with
//! the process environment, the way every command sees a site.

use sitefile_core::{LoadProblem, ResolveConfig, Site, SiteSetup, Snapshot, WorkerOptions};
use sitefile_site_dir::{self as site_dir, Source};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A site opened from a directory, with what reading it reported.
pub struct OpenedSite {
    /// The site.
    pub site: Site,
    /// Files skipped or overridden while reading the content.
    pub problems: Vec<LoadProblem>,
    /// Where the content came from.
    pub source: Source,
}

/// Reads the content under `dir` and sets the site up with `worker` and the process
/// environment; the message names what is wrong.
pub fn open(dir: &Path, worker: WorkerOptions) -> Result<OpenedSite, String> {
    let loaded = site_dir::load(dir).map_err(|e| e.to_string())?;
    Ok(OpenedSite {
        site: with_snapshot(loaded.snapshot, worker)?,
        problems: loaded.problems,
        source: loaded.source,
    })
}

/// The site of content read elsewhere (Fast Deploy's store), set up as [`open`] sets it up.
pub fn with_snapshot(snapshot: Snapshot, worker: WorkerOptions) -> Result<Site, String> {
    let vars: HashMap<String, String> = std::env::vars().collect();
    let setup = SiteSetup::new(ResolveConfig::by_convention(), worker, vars);
    Site::new(snapshot, setup).map_err(|e| e.to_string())
}

/// The `createDecoWorkerEntry` options in the JSON file at `path` (the spec's defaults without
/// one); the message names the file and what is wrong.
pub fn worker_options(path: Option<&PathBuf>) -> Result<WorkerOptions, String> {
    let Some(path) = path else {
        return Ok(WorkerOptions::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    WorkerOptions::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
}
