//! An immutable snapshot of the content and everything derived from it.

use super::block::Block;
use super::bundle::{parse_bundle, split_lines, write_bundle};
use super::files::LoadProblem;
use super::revision::RevisionTree;
use crate::pages::RouteTable;
use crate::value::{Key, ParseError, Value};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// Content at one revision. Never changes; a reload builds a new one, from scratch or, for a
/// delta, from the snapshot before it ([`Snapshot::with_changes`]: what it derives is updated
/// for the changed blocks only).
#[derive(Debug)]
pub struct Snapshot {
    blocks: FxHashMap<Key, Arc<Block>>,
    routes: RouteTable,
    /// The routable pages saying `"notFound": true`, name to path; the first by name serves.
    not_found_pages: BTreeMap<Key, String>,
    /// How many blocks use the location matcher.
    location_blocks: usize,
    revision: OnceLock<RevisionTree>,
    canonical: OnceLock<Arc<[u8]>>,
}

impl Snapshot {
    /// Builds a snapshot from blocks; later entries replace earlier ones with the same name.
    pub fn from_blocks(blocks: impl IntoIterator<Item = (Key, Value)>) -> Snapshot {
        Snapshot::from_shared(
            blocks
                .into_iter()
                .map(|(k, v)| (k, Arc::new(Block::new(v))))
                .collect(),
        )
    }

    /// Builds a snapshot from blocks that may be shared with another snapshot: the changes
    /// that make these blocks out of no content, so a snapshot built whole and one derived by a
    /// delta are derived by the same code.
    pub fn from_shared(blocks: FxHashMap<Key, Arc<Block>>) -> Snapshot {
        let none = Snapshot {
            blocks: FxHashMap::default(),
            routes: RouteTable::default(),
            not_found_pages: BTreeMap::new(),
            location_blocks: 0,
            revision: OnceLock::new(),
            canonical: OnceLock::new(),
        };
        none.with_changes(blocks.into_iter().map(|(name, block)| (name, Some(block))))
    }

    /// This content with `changes` applied (`None` deletes the name; a name given twice takes
    /// its last change), at a cost in proportion to the changes (decision CONTENT-10). Unchanged
    /// blocks, their digests and their compiled routes are shared with this snapshot: only the
    /// changed pages' routes are compiled and merged into precedence order, and per-block facts
    /// (digest, location use, own `__resolveType`) live on the shared [`Block`]. What still
    /// grows with the site is copying the map of block handles and the route list (pointers, no
    /// compilation).
    pub(crate) fn with_changes(
        &self,
        changes: impl IntoIterator<Item = (Key, Option<Arc<Block>>)>,
    ) -> Snapshot {
        let changes: FxHashMap<Key, Option<Arc<Block>>> = changes.into_iter().collect();
        let mut blocks = self.blocks.clone();
        let mut not_found_pages = self.not_found_pages.clone();
        let mut location_blocks = self.location_blocks;
        let mut pages: Vec<(&str, String)> = Vec::new();
        for (name, change) in &changes {
            if let Some(old) = blocks.remove(name)
                && old.uses_location()
            {
                location_blocks -= 1;
            }
            not_found_pages.remove(name);
            let Some(block) = change else { continue };
            if block.uses_location() {
                location_blocks += 1;
            }
            if let Some(path) = block.page_path(name) {
                if block.is_not_found_page() {
                    not_found_pages.insert(name.clone(), path.clone());
                }
                pages.push((name, path));
            }
            blocks.insert(name.clone(), block.clone());
        }
        let changed: FxHashSet<&str> = changes.keys().map(|name| &**name).collect();
        let routes = self
            .routes
            .with_changes(&changed, pages.iter().map(|(n, p)| (*n, p.as_str())));
        // The revision is updated when the one before was taken (a serving snapshot's always
        // is); otherwise it is left for the first to ask, as for a snapshot built whole.
        let revision = OnceLock::new();
        if let Some(before) = self.revision.get() {
            let digests = changes
                .iter()
                .map(|(name, block)| (name, block.as_ref().map(|b| *b.digest())));
            let _ = revision.set(before.with_changes(digests));
        }
        Snapshot {
            blocks,
            routes,
            not_found_pages,
            location_blocks,
            revision,
            canonical: OnceLock::new(),
        }
    }

    /// This content with `draft` blocks laid over it (a `null` block deletes its name); this
    /// snapshot itself when there are none.
    pub fn overlaid(self: &Arc<Self>, draft: &[(Key, Value)]) -> Arc<Snapshot> {
        if draft.is_empty() {
            return self.clone();
        }
        Arc::new(self.with_changes(draft.iter().map(|(name, block)| {
            let block = (!block.is_null()).then(|| Arc::new(Block::new(block.clone())));
            (name.clone(), block)
        })))
    }

    /// An empty snapshot.
    pub fn empty() -> Snapshot {
        Snapshot::from_shared(FxHashMap::default())
    }

    /// The block named `name`.
    pub fn block(&self, name: &str) -> Option<&Value> {
        self.blocks.get(name).map(|b| b.value())
    }

    /// Every block, in no particular order.
    pub fn blocks(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.blocks.iter().map(|(k, b)| (&**k, b.value()))
    }

    /// The blocks whose own `__resolveType` is one of `types`, in no particular order; a
    /// lazily held block is parsed only if it is one.
    pub fn blocks_of_type<'a>(
        &'a self,
        types: &'a [&str],
    ) -> impl Iterator<Item = (&'a str, &'a Value)> {
        self.blocks
            .iter()
            .filter(|(_, b)| b.resolve_type().is_some_and(|t| types.contains(&t)))
            .map(|(k, b)| (&**k, b.value()))
    }

    /// The shared blocks, for building the next snapshot.
    pub fn shared_blocks(&self) -> &FxHashMap<Key, Arc<Block>> {
        &self.blocks
    }

    /// Blocks read lazily from a bundle whose bytes are not JSON (parses every block).
    pub fn parse_problems(&self) -> Vec<LoadProblem> {
        let mut problems: Vec<LoadProblem> = self
            .blocks
            .iter()
            .filter_map(|(name, b)| {
                Some(LoadProblem::InvalidJson {
                    file: "blocks.gen.json".into(),
                    block: name.to_string(),
                    error: b.parse_error()?.to_string(),
                })
            })
            .collect();
        problems.sort_by(|a, b| format!("{a}").cmp(&format!("{b}")));
        problems
    }

    /// How many blocks there are.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there is no block at all.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The page route table.
    pub fn routes(&self) -> &RouteTable {
        &self.routes
    }

    /// The site's not-found page, its name and path: the routable page block with
    /// `"notFound": true` (the first by name when several say so). It answers 404, and serves
    /// every path no other page serves.
    pub fn not_found_page(&self) -> Option<(&str, &str)> {
        self.not_found_pages
            .first_key_value()
            .map(|(name, path)| (&**name, path.as_str()))
    }

    /// Whether any block uses the location matcher (the edge then keys pages by region).
    pub fn uses_location(&self) -> bool {
        self.location_blocks > 0
    }

    /// The Site block: `site`, else `Site`.
    pub fn site_block(&self) -> Option<&Value> {
        self.block("site").or_else(|| self.block("Site"))
    }

    /// The revision: lowercase hex SHA-256 over the canonical content (see
    /// [`super::revision`]). Equal content gives the same revision whatever the key order,
    /// formatting or the reloads that led to it. Treat it as an opaque string.
    pub fn revision(&self) -> &str {
        self.revision
            .get_or_init(|| RevisionTree::build(self.blocks.iter().map(|(k, b)| (k, *b.digest()))))
            .hex()
    }

    /// The canonical bundle of this content (`write_bundle`: blocks sorted by name), written
    /// once per snapshot (`GET /.sitefile` serves it as it is).
    pub fn canonical_bytes(&self) -> Arc<[u8]> {
        self.canonical
            .get_or_init(|| write_bundle(self.blocks()).into())
            .clone()
    }

    /// Approximate bytes held by the content values (shared keys counted once per use).
    pub fn heap_size(&self) -> usize {
        self.blocks
            .iter()
            .map(|(k, b)| k.len() + 64 + b.value().heap_size())
            .sum()
    }
}

/// Loads a bundle into a snapshot. A bundle in the layout [`write_bundle`] produces (one block
/// per line) is split by lines and each block is parsed the first time it is read, so loading
/// costs a scan of the text; a block whose bytes are not JSON reads as `null` and is reported by
/// [`Snapshot::parse_problems`]. Any other layout is parsed (and validated) at once.
pub fn load_bundle(bytes: Vec<u8>) -> Result<Snapshot, ParseError> {
    let source = Arc::new(bytes);
    match split_lines(&source) {
        Some(lines) => {
            let mut blocks = FxHashMap::default();
            for (name, range) in lines {
                blocks.insert(name, Arc::new(Block::lazy(source.clone(), range)));
            }
            Ok(Snapshot::from_shared(blocks))
        }
        None => Ok(Snapshot::from_blocks(parse_bundle(&source)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::intern;

    fn snap(json: &str) -> Snapshot {
        let v = Value::from_json_str(json).unwrap();
        Snapshot::from_blocks(v.as_object().unwrap().entries().to_vec())
    }

    #[test]
    fn revision_ignores_order_and_whitespace() {
        let a = snap(r#"{"a":{"x":1,"y":[1,2]},"b":{"z":"q"}}"#);
        let b = snap(
            r#"{ "b": {"z": "q"},
            "a": {"y": [1, 2], "x": 1} }"#,
        );
        assert_eq!(a.revision(), b.revision());
        let c = snap(r#"{"a":{"x":1,"y":[2,1]},"b":{"z":"q"}}"#);
        assert_ne!(a.revision(), c.revision());
        assert_eq!(a.revision().len(), 64);
    }

    #[test]
    fn host_blocks_merge_over_the_directory() {
        let dir = vec![
            (intern("a"), Value::from("from dir")),
            (intern("b"), Value::from("kept")),
        ];
        let host = vec![(intern("a"), Value::from("from host"))];
        let s = Snapshot::from_blocks(dir.into_iter().chain(host));
        assert_eq!(s.block("a"), Some(&Value::from("from host")));
        assert_eq!(s.block("b"), Some(&Value::from("kept")));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn name_boundaries_change_the_revision() {
        let a = Snapshot::from_blocks([(intern("ab"), Value::Null), (intern("c"), Value::Null)]);
        let b = Snapshot::from_blocks([(intern("a"), Value::Null), (intern("bc"), Value::Null)]);
        assert_ne!(a.revision(), b.revision());
    }

    #[test]
    fn derives_routes_location_and_site() {
        let s = snap(
            r#"{"pages-home":{"path":"/","sections":[]},
                "Site":{"global":[]},
                "m":{"__resolveType":"website/flags/multivariate.ts","variants":[{"rule":{"__resolveType":"website/matchers/location.ts"},"value":1}]}}"#,
        );
        assert_eq!(s.routes().find("/").map(|m| m.name), Some("pages-home"));
        assert!(s.uses_location());
        assert!(s.site_block().is_some());
        assert!(!snap(r#"{"a":{"b":"website/matchers/location.ts"}}"#).uses_location());
    }

    #[test]
    fn lazy_load_matches_eager_load() {
        let a = Value::from_json_str(
            r#"{"path":"/x","sections":[{"__resolveType":"website/matchers/location.ts"}]}"#,
        )
        .unwrap();
        let b = Value::from_json_str(r#"{"t":"quote \" and \\ and \u00e9 and ,\n"}"#).unwrap();
        let bundle = write_bundle([("pages-x", &a), ("na\"me,", &b)]);
        let lazy = load_bundle(bundle.clone()).unwrap();
        let eager = Snapshot::from_blocks(parse_bundle(&bundle).unwrap());
        assert_eq!(lazy.revision(), eager.revision());
        assert_eq!(lazy.routes().find("/x").map(|m| m.name), Some("pages-x"));
        assert!(lazy.uses_location());
        assert_eq!(
            lazy.block("na\"me,").unwrap().to_canonical_string(),
            b.to_canonical_string()
        );
        // A line that is not canonical is digested from its value: same content, same revision.
        let unsorted = b"{\n\"a\":{\"z\":1,\"b\":[1.50,\"\\u00e9\"]}\n}\n".to_vec();
        let same = Value::from_json_str(r#"{"b":[1.5,"é"],"z":1}"#).unwrap();
        let changed = Value::from_json_str(r#"{"b":[1.5,"e"],"z":1}"#).unwrap();
        let unsorted = load_bundle(unsorted).unwrap();
        let read = unsorted.block("a").unwrap();
        assert_eq!(read.to_canonical_string(), same.to_canonical_string());
        let canonical = |v: &Value| load_bundle(write_bundle([("a", v)])).unwrap();
        assert_eq!(unsorted.revision(), canonical(&same).revision());
        assert_ne!(unsorted.revision(), canonical(&changed).revision());
        // Another layout falls back to parsing at once.
        let compact = br#"{"pages-x":{"path":"/x","sections":[]}}"#.to_vec();
        assert_eq!(load_bundle(compact).unwrap().routes().routes().len(), 1);
        assert!(load_bundle(b"{\n\"a\":{\n}\n".to_vec()).is_err());
        // A damaged line reads as null and is reported.
        let damaged = b"{\n\"a\":{\"x\":[1,}\n}\n".to_vec();
        let snapshot = load_bundle(damaged).unwrap();
        assert_eq!(snapshot.block("a"), Some(&Value::Null));
        assert_eq!(snapshot.parse_problems().len(), 1);
        assert_eq!(load_bundle(write_bundle([])).unwrap().len(), 0);
    }
}
