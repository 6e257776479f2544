//! Revisions: a SHA-256 over the content, built from per-block digests so that a reload
//! re-hashes only the blocks it changed.
//!
//! The revision is a function of the content only, whatever order blocks arrive in: blocks
//! fall into [`BUCKETS`] buckets by the first byte of the SHA-256 of their name; a bucket's
//! digest is the SHA-256 over its blocks sorted by name, each fed as (name length, name, block
//! digest); the revision is the SHA-256 over the non-empty buckets in order, each fed as (index,
//! digest). A delta reload re-hashes the buckets its blocks fall in and the top, and shares the
//! others with the snapshot before it ([`RevisionTree::with_changes`]).

use super::canonical::is_canonical;
use crate::value::{Key, Value};
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
use std::sync::{Arc, LazyLock};

/// How many buckets the blocks fall into.
const BUCKETS: usize = 256;

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

/// The bucket of block `name`.
fn bucket_of(name: &str) -> usize {
    usize::from(Sha256::digest(name.as_bytes())[0]) % BUCKETS
}

/// The blocks of one bucket, `(name, digest)` sorted by name, and their digest.
#[derive(Debug, Default)]
struct Bucket {
    entries: Vec<(Key, [u8; 32])>,
    digest: [u8; 32],
}

impl Bucket {
    /// The bucket of `entries`, sorted by name.
    fn new(entries: Vec<(Key, [u8; 32])>) -> Arc<Bucket> {
        if entries.is_empty() {
            return EMPTY.clone();
        }
        let mut hasher = Sha256::new();
        for (name, digest) in &entries {
            // Each name is length-prefixed so no two different maps feed the hash the same bytes.
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update(digest);
        }
        Arc::new(Bucket {
            entries,
            digest: hasher.finalize().into(),
        })
    }
}

/// The bucket without blocks, shared by every tree.
static EMPTY: LazyLock<Arc<Bucket>> = LazyLock::new(Arc::default);

/// A revision and the bucket digests it is made of, shared between the snapshots of a site.
#[derive(Debug)]
pub(crate) struct RevisionTree {
    buckets: Vec<Arc<Bucket>>,
    hex: String,
}

impl RevisionTree {
    /// The tree of blocks `(name, digest)`, in any order, names unique.
    pub(crate) fn build<'a>(blocks: impl Iterator<Item = (&'a Key, [u8; 32])>) -> RevisionTree {
        let mut groups: Vec<Vec<(Key, [u8; 32])>> = vec![Vec::new(); BUCKETS];
        for (name, digest) in blocks {
            groups[bucket_of(name)].push((name.clone(), digest));
        }
        let buckets = groups
            .into_iter()
            .map(|mut entries| {
                entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                Bucket::new(entries)
            })
            .collect();
        RevisionTree::of(buckets)
    }

    /// This tree with `changes` applied (`(name, Some(digest))` sets a block, `None` deletes
    /// it; names unique): the tree [`RevisionTree::build`] makes of the resulting blocks,
    /// re-hashing only the buckets the changes fall in.
    pub(crate) fn with_changes<'a>(
        &self,
        changes: impl Iterator<Item = (&'a Key, Option<[u8; 32]>)>,
    ) -> RevisionTree {
        let mut touched: FxHashMap<usize, Vec<(Key, [u8; 32])>> = FxHashMap::default();
        for (name, digest) in changes {
            let bucket = bucket_of(name);
            let entries = touched
                .entry(bucket)
                .or_insert_with(|| self.buckets[bucket].entries.clone());
            match (entries.binary_search_by(|e| e.0.cmp(name)), digest) {
                (Ok(at), Some(digest)) => entries[at].1 = digest,
                (Ok(at), None) => {
                    entries.remove(at);
                }
                (Err(at), Some(digest)) => entries.insert(at, (name.clone(), digest)),
                (Err(_), None) => {}
            }
        }
        let mut buckets = self.buckets.clone();
        for (bucket, entries) in touched {
            buckets[bucket] = Bucket::new(entries);
        }
        RevisionTree::of(buckets)
    }

    fn of(buckets: Vec<Arc<Bucket>>) -> RevisionTree {
        let mut hasher = Sha256::new();
        for (index, bucket) in buckets.iter().enumerate() {
            if !bucket.entries.is_empty() {
                hasher.update((index as u16).to_le_bytes());
                hasher.update(bucket.digest);
            }
        }
        RevisionTree {
            buckets,
            hex: hex::encode(hasher.finalize()),
        }
    }

    /// The revision: lowercase hex.
    pub(crate) fn hex(&self) -> &str {
        &self.hex
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::intern;

    fn digest(n: u8) -> [u8; 32] {
        [n; 32]
    }

    #[test]
    fn changes_give_the_tree_of_the_changed_blocks() {
        let names: Vec<Key> = (0..600).map(|i| intern(&format!("block-{i}"))).collect();
        let tree = RevisionTree::build(names.iter().map(|n| (n, digest(1))));
        let added = intern("added");
        let changed = tree.with_changes(
            [
                (&names[3], Some(digest(2))),
                (&names[7], None),
                (&added, Some(digest(3))),
                (&intern("never there"), None),
            ]
            .into_iter(),
        );
        let expected = RevisionTree::build(
            names
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != 7)
                .map(|(i, n)| (n, if i == 3 { digest(2) } else { digest(1) }))
                .chain([(&added, digest(3))]),
        );
        assert_eq!(changed.hex(), expected.hex());
        assert_ne!(changed.hex(), tree.hex());
        let shared = (0..BUCKETS)
            .filter(|b| Arc::ptr_eq(&tree.buckets[*b], &changed.buckets[*b]))
            .count();
        assert!(
            shared >= BUCKETS - 4,
            "only the buckets of the four names are re-hashed"
        );
    }

    #[test]
    fn no_blocks_and_one_block() {
        let empty = RevisionTree::build(std::iter::empty());
        assert_eq!(empty.hex().len(), 64);
        let one = intern("one");
        let single = RevisionTree::build([(&one, digest(1))].into_iter());
        assert_ne!(single.hex(), empty.hex());
        let back = single.with_changes([(&one, None)].into_iter());
        assert_eq!(back.hex(), empty.hex());
    }
}
