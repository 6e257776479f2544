//! Revisions: a SHA-256 over the canonical content, built from per-block digests so a delta
//! reload re-hashes only the blocks it changed.

use super::canonical::is_canonical;
use crate::value::Value;
use sha2::{Digest, Sha256};

/// The SHA-256 of a block's canonical JSON (keys sorted recursively, no whitespace).
pub fn block_digest(value: &Value) -> [u8; 32] {
    let mut canonical = Vec::new();
    value.write_canonical(&mut canonical);
    Sha256::digest(&canonical).into()
}

/// The same digest taken straight from a block's JSON text when that text is already canonical
/// (no tree is built); `None` when it is not, and the caller falls back to [`block_digest`].
pub(crate) fn source_digest(text: &[u8]) -> Option<[u8; 32]> {
    is_canonical(text).then(|| Sha256::digest(text).into())
}

/// The revision of a whole map from `(name, digest)` pairs sorted by name: each name is
/// length-prefixed so no two different maps feed the hash the same bytes.
pub(crate) fn revision_of<'a>(sorted: impl Iterator<Item = (&'a str, &'a [u8; 32])>) -> String {
    let mut hasher = Sha256::new();
    for (name, digest) in sorted {
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update(digest);
    }
    hex::encode(hasher.finalize())
}
