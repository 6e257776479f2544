//! Turning the files of a blocks directory into blocks.

use super::block_name::decode_block_name;
use crate::value::{Key, Value, intern};
use serde::Serialize;
use std::collections::HashMap;
use std::convert::Infallible;

/// A problem met while loading content; the load goes on without the offending file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum LoadProblem {
    /// A file is not valid JSON (an empty file included); it was skipped.
    InvalidJson {
        /// The file name.
        file: String,
        /// The block name the file would have held.
        block: String,
        /// The parser's message, with its position.
        error: String,
    },
    /// Two files decode to the same block name; the later one in sorted order won.
    Collision {
        /// The block name.
        block: String,
        /// The file whose content was kept.
        kept: String,
        /// The file that was ignored.
        ignored: String,
    },
    /// A `.json` file's name is not UTF-8, so no block name can be decoded from it; it was
    /// skipped.
    NonUtf8Name {
        /// The file name, invalid sequences replaced by U+FFFD.
        file: String,
    },
    /// A `.json` entry is a symbolic link; it was skipped (content is self-contained: the
    /// directory's own regular files, nothing it points elsewhere to).
    Symlink {
        /// The file name.
        file: String,
    },
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadProblem::InvalidJson { file, block, error } => {
                write!(f, "block {block:?}: file {file} skipped: {error}")
            }
            LoadProblem::Collision {
                block,
                kept,
                ignored,
            } => write!(
                f,
                "block {block:?}: files {ignored} and {kept} hold the same block; {kept} wins"
            ),
            LoadProblem::NonUtf8Name { file } => {
                write!(f, "file {file} skipped: its name is not UTF-8")
            }
            LoadProblem::Symlink { file } => write!(
                f,
                "file {file} skipped: a symbolic link (block files must be regular files)"
            ),
        }
    }
}

/// The bytes of one block file, read when its turn comes, so a load holds one file's text at a
/// time rather than the whole directory's.
pub trait FileBytes {
    /// Why the file could not be read; reading stops there.
    type Error;
    /// Reads the file.
    fn read(self) -> Result<Vec<u8>, Self::Error>;
}

impl FileBytes for Vec<u8> {
    type Error = Infallible;
    fn read(self) -> Result<Vec<u8>, Infallible> {
        Ok(self)
    }
}

/// The blocks of a directory in file-name order, and what was skipped or overridden.
pub type LoadedBlocks = (Vec<(Key, Value)>, Vec<LoadProblem>);

/// Builds blocks from `(file name, bytes)` pairs of a blocks directory (see [`read_blocks`]).
/// For the tests and the benchmarks; a host reads its files through [`read_blocks`].
#[cfg(any(test, feature = "internals"))]
pub fn blocks_from_files(files: Vec<(String, Vec<u8>)>) -> LoadedBlocks {
    read_blocks(files).unwrap_or_else(|never| match never {})
}

/// Builds blocks from the files of a blocks directory, reading each in turn. Only names ending
/// in `.json` count; names are sorted (by UTF-16 code units, as the reference sorts), each stem
/// decoded once; on a collision the last file in that order wins. Invalid files are skipped and
/// reported, never fatal; a file that cannot be read stops the load with its error. Equal
/// values share one copy across the files (see [`crate::value::sharing`]).
pub fn read_blocks<F: FileBytes>(files: Vec<(String, F)>) -> Result<LoadedBlocks, F::Error> {
    crate::value::sharing(|| parse_files(files))
}

fn parse_files<F: FileBytes>(files: Vec<(String, F)>) -> Result<LoadedBlocks, F::Error> {
    let mut files: Vec<(String, F)> = files
        .into_iter()
        .filter(|(name, _)| name.ends_with(".json"))
        .collect();
    files.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    let mut problems = Vec::new();
    let mut blocks: Vec<(Key, Value)> = Vec::with_capacity(files.len());
    let mut by_name: HashMap<Key, (usize, String)> = HashMap::with_capacity(files.len());
    for (file, bytes) in files {
        let block = decode_block_name(&file[..file.len() - ".json".len()]);
        let value = match Value::from_content_slice(&bytes.read()?) {
            Ok(v) => v,
            Err(e) => {
                problems.push(LoadProblem::InvalidJson {
                    file,
                    block,
                    error: e.0,
                });
                continue;
            }
        };
        let key = intern(&block);
        match by_name.get_mut(&key) {
            Some((at, previous)) => {
                problems.push(LoadProblem::Collision {
                    block,
                    kept: file.clone(),
                    ignored: std::mem::replace(previous, file),
                });
                blocks[*at].1 = value;
            }
            None => {
                by_name.insert(key.clone(), (blocks.len(), file));
                blocks.push((key, value));
            }
        }
    }
    Ok((blocks, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, body: &str) -> (String, Vec<u8>) {
        (name.to_string(), body.as_bytes().to_vec())
    }

    #[test]
    fn loads_decodes_and_reports() {
        let (blocks, problems) = blocks_from_files(vec![
            file("b.json", r#"{"x":1}"#),
            file("Header%20-%2001.json", r#"{"y":2}"#),
            file("empty.json", ""),
            file("notes.txt", "ignored"),
        ]);
        let names: Vec<&str> = blocks.iter().map(|(k, _)| &**k).collect();
        assert_eq!(names, vec!["Header - 01", "b"]);
        assert_eq!(problems.len(), 1);
        assert!(matches!(&problems[0], LoadProblem::InvalidJson { block, .. } if block == "empty"));
    }

    #[test]
    fn collisions_keep_the_last_sorted_file() {
        let (blocks, problems) = blocks_from_files(vec![
            file("a%20b.json", r#"{"v":"encoded"}"#),
            file("a b.json", r#"{"v":"plain"}"#),
        ]);
        assert_eq!(blocks.len(), 1);
        // "a b" < "a%20b" in code-unit order, so the encoded file comes last and wins.
        assert_eq!(
            blocks[0].1.get("v").and_then(Value::as_str),
            Some("encoded")
        );
        assert!(
            matches!(&problems[0], LoadProblem::Collision { kept, .. } if kept == "a%20b.json")
        );
    }
}
