//! Reading a site's content from disk: `.platform/blocks/*.json`, or the bundle
//! `.platform/blocks.gen.json` when there is no directory. Shared by the `sitefile` command
//! line, the benchmarks and the bindings, so they all read a site the same way.

use sitefile_core::{FileBytes, LoadProblem, Snapshot, load_bundle, read_blocks};
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

impl sitefile_core::HasErrorCode for SiteError {
    fn code(&self) -> sitefile_core::ErrorCode {
        use sitefile_core::ErrorCode;
        match self {
            SiteError::NotFound(_) => ErrorCode::NotFound,
            SiteError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorCode::NotFound
            }
            SiteError::Io { .. } => ErrorCode::Io,
            SiteError::Bundle { .. } => ErrorCode::InvalidJson,
        }
    }
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

/// Loads every `.json` file of a blocks directory, reading one file at a time.
pub fn load_directory(blocks: &Path) -> Result<(Snapshot, Vec<LoadProblem>), SiteError> {
    let BlockFiles {
        files,
        skipped: mut problems,
    } = list_block_files(blocks)?;
    let (blocks, parse_problems) = read_blocks(files)?;
    problems.extend(parse_problems);
    Ok((Snapshot::from_blocks(blocks), problems))
}

/// A block file on disk, read when the load comes to it.
#[derive(Debug, Clone)]
pub struct OnDisk(pub PathBuf);

impl FileBytes for OnDisk {
    type Error = SiteError;
    fn read(self) -> Result<Vec<u8>, SiteError> {
        std::fs::read(&self.0).map_err(|source| SiteError::Io {
            path: self.0,
            source,
        })
    }
}

/// The block files of a directory: `F` is [`OnDisk`] when listed, `Vec<u8>` when read.
#[derive(Debug)]
pub struct BlockFiles<F = Vec<u8>> {
    /// `(file name, file)` of every regular `.json` file.
    pub files: Vec<(String, F)>,
    /// The `.json` entries skipped: symbolic links (content is the directory's own files) and
    /// names that are not UTF-8 (no block name can be decoded from them).
    pub skipped: Vec<LoadProblem>,
}

/// Reads the block files of a blocks directory (see [`list_block_files`]).
pub fn read_block_files(blocks: &Path) -> Result<BlockFiles, SiteError> {
    let BlockFiles { files, skipped } = list_block_files(blocks)?;
    let files = files
        .into_iter()
        .map(|(name, file)| Ok((name, file.read()?)))
        .collect::<Result<_, SiteError>>()?;
    Ok(BlockFiles { files, skipped })
}

/// Lists the block files of a blocks directory, unread. Entries whose names do not end in
/// `.json` are not block files and are passed over.
pub fn list_block_files(blocks: &Path) -> Result<BlockFiles<OnDisk>, SiteError> {
    let io = |source| SiteError::Io {
        path: blocks.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for entry in std::fs::read_dir(blocks).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let shown = name.to_string_lossy().into_owned();
        if !shown.ends_with(".json") {
            continue;
        }
        // `DirEntry::file_type` does not follow symbolic links.
        let file_type = entry.file_type().map_err(io)?;
        if file_type.is_symlink() {
            skipped.push(LoadProblem::Symlink { file: shown });
            continue;
        }
        if !file_type.is_file() {
            continue;
        }
        let Some(name) = name.to_str() else {
            skipped.push(LoadProblem::NonUtf8Name { file: shown });
            continue;
        };
        files.push((name.to_string(), OnDisk(entry.path())));
    }
    // Directory order is the file system's; report in a stable one.
    skipped.sort_by_key(|p| p.to_string());
    Ok(BlockFiles { files, skipped })
}
