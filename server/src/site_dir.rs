//! Reading a site's content from disk: `.platform/blocks/*.json`, or the bundle
//! `.platform/blocks.gen.json` when there is no directory.

use sitefile_core::content::{LoadProblem, Snapshot, blocks_from_files, load_bundle};
use std::path::{Path, PathBuf};

/// Where the content came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A directory of block files.
    Directory(PathBuf),
    /// A generated bundle.
    Bundle(PathBuf),
}

/// A site read from disk.
#[derive(Debug)]
pub struct LoadedSite {
    /// The content.
    pub snapshot: Snapshot,
    /// Files skipped or overridden while loading.
    pub problems: Vec<LoadProblem>,
    /// Where it came from.
    pub source: Source,
}

/// Why a site could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// Neither a blocks directory nor a bundle was found.
    #[error(
        "{0}: no content found (expected .platform/blocks/, .platform/blocks.gen.json, blocks/, or a directory of block files)"
    )]
    NotFound(PathBuf),
    /// Reading failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The bundle is not a JSON object of blocks.
    #[error("{path}: {message}")]
    Bundle {
        /// The bundle path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The blocks directory of a site: `<dir>/.platform/blocks`, `<dir>/blocks`, or `<dir>` itself
/// when it holds `.json` files.
pub fn blocks_dir(dir: &Path) -> Option<PathBuf> {
    [dir.join(".platform/blocks"), dir.join("blocks")]
        .into_iter()
        .find(|d| d.is_dir())
        .or_else(|| holds_json(dir).then(|| dir.to_path_buf()))
}

fn holds_json(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json"))
    })
}

/// Loads a site: the blocks directory when there is one (it is what editors write), else the
/// bundle.
pub fn load(dir: &Path) -> Result<LoadedSite, SiteError> {
    if let Some(blocks) = blocks_dir(dir) {
        let (snapshot, problems) = load_directory(&blocks)?;
        return Ok(LoadedSite {
            snapshot,
            problems,
            source: Source::Directory(blocks),
        });
    }
    let bundle = dir.join(".platform/blocks.gen.json");
    if bundle.is_file() {
        let bytes = std::fs::read(&bundle).map_err(|source| SiteError::Io {
            path: bundle.clone(),
            source,
        })?;
        let snapshot = load_bundle(bytes).map_err(|e| SiteError::Bundle {
            path: bundle.clone(),
            message: e.to_string(),
        })?;
        return Ok(LoadedSite {
            snapshot,
            problems: Vec::new(),
            source: Source::Bundle(bundle),
        });
    }
    Err(SiteError::NotFound(dir.to_path_buf()))
}

/// Loads every `.json` file of a blocks directory.
pub fn load_directory(blocks: &Path) -> Result<(Snapshot, Vec<LoadProblem>), SiteError> {
    let io = |source| SiteError::Io {
        path: blocks.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(blocks).map_err(io)? {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        if !entry.file_type().map_err(io)?.is_file() {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|source| SiteError::Io {
            path: path.clone(),
            source,
        })?;
        files.push((name.to_string(), bytes));
    }
    let (blocks, problems) = blocks_from_files(files);
    Ok((Snapshot::from_blocks(blocks), problems))
}
