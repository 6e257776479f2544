//! The purge index: every stored key, by normalised path, so a purge reaches every variant
//! (devices, regions, cohorts, segments, bots, versions) of a path.

use super::key::CacheKey;
use super::normalize::normalize_target;
use super::options::WorkerOptions;
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Keys an index holds by default before it drops the oldest.
pub const DEFAULT_PURGE_INDEX_CAPACITY: usize = 100_000;

#[derive(Debug, Default)]
struct Index {
    by_path: HashMap<String, HashMap<String, BTreeSet<String>>>,
    /// Each key's path, query and recording order.
    by_key: HashMap<String, (String, String, u64)>,
    /// Keys by recording order, oldest first.
    order: BTreeMap<u64, String>,
    next: u64,
}

impl Index {
    fn remove(&mut self, key: &str) {
        let Some((path, query, seq)) = self.by_key.remove(key) else {
            return;
        };
        self.order.remove(&seq);
        if let Some(queries) = self.by_path.get_mut(&path) {
            if let Some(keys) = queries.get_mut(&query) {
                keys.remove(key);
                if keys.is_empty() {
                    queries.remove(&query);
                }
            }
            if queries.is_empty() {
                self.by_path.remove(&path);
            }
        }
    }
}

/// What a purge target reaches: every stored key of a path (a target without a query, `/p`),
/// or of one query of it (`/s?q=a`, normalised like cache keys: order-insensitive, tracking
/// parameters ignored). A shared storage that indexes keys by [`CacheKey::path`] and
/// [`CacheKey::query`] purges across servers with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeScope {
    /// The URL path.
    pub path: String,
    /// The normalised query, `None` for every query of the path.
    pub query: Option<String>,
}

impl PurgeScope {
    /// The scope of a purge target (a path, `p` read as `/p`, or a full URL: its path and query
    /// count); `None` for an empty or unparsable one, which purges nothing.
    pub fn of(target: &str, options: &WorkerOptions) -> Option<PurgeScope> {
        let (path, query) = normalize_target(
            target,
            options.strip_tracking_params,
            &options.extra_tracking_params,
        )?;
        Some(PurgeScope {
            path,
            query: target.contains('?').then_some(query),
        })
    }

    /// Whether the scope reaches a key of its path with the normalised `query`.
    pub fn reaches(&self, query: &str) -> bool {
        self.query.as_deref().is_none_or(|q| q == query)
    }
}

/// Stored keys by path and normalised query, at most `capacity` of them. Shared by the edge's
/// request tasks.
#[derive(Debug)]
pub struct PurgeIndex {
    capacity: usize,
    inner: Mutex<Index>,
}

impl Default for PurgeIndex {
    fn default() -> PurgeIndex {
        PurgeIndex::with_capacity(DEFAULT_PURGE_INDEX_CAPACITY)
    }
}

impl PurgeIndex {
    /// An empty index holding [`DEFAULT_PURGE_INDEX_CAPACITY`] keys.
    pub fn new() -> PurgeIndex {
        PurgeIndex::default()
    }

    /// An empty index holding at most `capacity` keys (at least one).
    pub fn with_capacity(capacity: usize) -> PurgeIndex {
        PurgeIndex {
            capacity: capacity.max(1),
            inner: Mutex::new(Index::default()),
        }
    }

    /// Records a key the edge stored. When the index is full the oldest keys are dropped and
    /// returned: a purge could no longer reach them, so the host deletes them from storage too.
    pub fn record(&self, key: &CacheKey) -> Vec<String> {
        let mut idx = self.inner.lock();
        if idx.by_key.contains_key(key.as_str()) {
            return Vec::new();
        }
        let (path, query) = (key.path().to_string(), key.query().to_string());
        idx.by_path
            .entry(path.clone())
            .or_default()
            .entry(query.clone())
            .or_default()
            .insert(key.as_str().to_string());
        let seq = idx.next;
        idx.next += 1;
        idx.order.insert(seq, key.as_str().to_string());
        idx.by_key
            .insert(key.as_str().to_string(), (path, query, seq));
        let mut dropped = Vec::new();
        while idx.by_key.len() > self.capacity {
            let Some((_, oldest)) = idx.order.pop_first() else {
                break;
            };
            idx.remove(&oldest);
            dropped.push(oldest);
        }
        dropped
    }

    /// Forgets a key the edge evicted or expired.
    pub fn forget(&self, key: &str) {
        self.inner.lock().remove(key);
    }

    /// Removes and returns (sorted) every key of a purge target. A target without a query
    /// (`/p`) reaches every query of that path; with a query (`/s?q=a`) only that query,
    /// normalised like cache keys (order-insensitive, tracking parameters ignored). The host
    /// deletes the returned keys from its storage. A target is a path (`p` is read as `/p`) or a
    /// full URL (its path and query count); an empty or unparsable one purges nothing.
    pub fn purge(&self, target: &str, options: &WorkerOptions) -> Vec<String> {
        let Some(scope) = PurgeScope::of(target, options) else {
            return Vec::new();
        };
        let mut idx = self.inner.lock();
        let mut removed: Vec<String> = Vec::new();
        if let Some(queries) = idx.by_path.get_mut(&scope.path) {
            match &scope.query {
                None => removed.extend(queries.drain().flat_map(|(_, keys)| keys)),
                Some(query) => removed.extend(queries.remove(query).into_iter().flatten()),
            }
            if queries.is_empty() {
                idx.by_path.remove(&scope.path);
            }
        }
        for k in &removed {
            if let Some((_, _, seq)) = idx.by_key.remove(k) {
                idx.order.remove(&seq);
            }
        }
        removed.sort();
        removed
    }

    /// Number of keys recorded.
    pub fn len(&self) -> usize {
        self.inner.lock().by_key.len()
    }

    /// Whether no key is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::key::{KeyContext, build_cache_key};
    use crate::edge::segment_key::SegmentKey;
    use crate::request::Request;
    use proptest::prelude::*;

    const UAS: [&str; 4] = [
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) Mobile",
        "Mozilla/5.0 (iPad; CPU OS 17_0)",
        "Mozilla/5.0 (Macintosh)",
        "Googlebot/2.1",
    ];

    #[derive(Debug, Clone)]
    struct Variant {
        path: usize,
        query: Option<(u8, u8)>,
        ua: usize,
        country: Option<&'static str>,
        cohort: Option<&'static str>,
        fetch: bool,
        version: Option<&'static str>,
        segment: Option<&'static str>,
    }

    fn variant() -> impl Strategy<Value = Variant> {
        (
            0usize..3,
            proptest::option::of((0u8..3, 0u8..3)),
            0usize..4,
            proptest::option::of(proptest::sample::select(vec!["BR", "US", "PT"])),
            proptest::option::of(proptest::sample::select(vec!["A:1:50", "A:0:50", "B:1:10"])),
            any::<bool>(),
            proptest::option::of(proptest::sample::select(vec!["v1", "v2"])),
            proptest::option::of(proptest::sample::select(vec!["1", "2"])),
        )
            .prop_map(
                |(path, query, ua, country, cohort, fetch, version, segment)| Variant {
                    path,
                    query,
                    ua,
                    country,
                    cohort,
                    fetch,
                    version,
                    segment,
                },
            )
    }

    const PATHS: [&str; 3] = ["/", "/camisetas", "/camiseta/p"];

    fn key_of(v: &Variant) -> CacheKey {
        let mut url = format!("https://shop.com{}", PATHS[v.path]);
        if let Some((a, b)) = v.query {
            url.push_str(&format!("?b={b}&utm_source=x&a={a}"));
        }
        let mut req = Request::new(&url)
            .unwrap()
            .with_header("user-agent", UAS[v.ua]);
        if let Some(c) = v.country {
            req = req
                .with_header("cf-ipcountry", c)
                .with_header("cf-region-code", "SP");
        }
        if v.fetch {
            req = req.with_header("sec-fetch-dest", "empty");
        }
        let seg = v.segment.map(|sc| SegmentKey {
            sales_channel: Some(sc.into()),
            ..Default::default()
        });
        let ctx = KeyContext {
            version: v.version,
            uses_location: true,
            cohort: v.cohort,
            segment: seg.as_ref(),
        };
        build_cache_key(&req, &WorkerOptions::default(), &ctx)
    }

    #[test]
    fn purge_with_and_without_query() {
        let idx = PurgeIndex::new();
        let o = WorkerOptions::default();
        let k = |u: &str| build_cache_key(&Request::new(u).unwrap(), &o, &KeyContext::default());
        for u in [
            "https://s.com/s?q=a&page=2",
            "https://s.com/s?q=b",
            "https://s.com/s",
            "https://s.com/x",
        ] {
            idx.record(&k(u));
        }
        assert_eq!(
            idx.purge("/s?page=2&q=a&utm_medium=x", &o),
            vec!["https://s.com/s?page=2&q=a#device=desktop"]
        );
        assert_eq!(idx.purge("/s", &o).len(), 2);
        assert_eq!(idx.len(), 1);
        assert!(idx.purge("/nothing", &o).is_empty());
        assert!(idx.purge("", &o).is_empty());
        idx.forget("https://s.com/x#device=desktop");
        idx.forget("unknown");
        assert!(idx.is_empty());
    }

    #[test]
    fn a_scope_reaches_the_keys_a_purge_of_its_target_reaches() {
        let o = WorkerOptions::default();
        let key = build_cache_key(
            &Request::new("https://s.com/s?q=a&page=2&utm_source=x").unwrap(),
            &o,
            &KeyContext::default(),
        );
        let whole = PurgeScope::of("/s", &o).unwrap();
        assert_eq!(whole.path, key.path());
        assert!(whole.query.is_none() && whole.reaches(key.query()));
        let one = PurgeScope::of("https://shop.test/s?page=2&q=a&fbclid=1", &o).unwrap();
        assert_eq!(one.query.as_deref(), Some(key.query()));
        assert!(one.reaches(key.query()) && !one.reaches("q=b"));
        assert!(PurgeScope::of("/s?", &o).unwrap().reaches(""));
        assert_eq!(PurgeScope::of("", &o), None);
    }

    #[test]
    fn a_full_index_drops_its_oldest_keys_and_says_which() {
        let idx = PurgeIndex::with_capacity(3);
        let o = WorkerOptions::default();
        let k = |u: &str| build_cache_key(&Request::new(u).unwrap(), &o, &KeyContext::default());
        let mut dropped = Vec::new();
        for u in [
            "https://s.com/a",
            "https://s.com/b",
            "https://s.com/a",
            "https://s.com/c",
            "https://s.com/d",
            "https://s.com/e?x=1",
        ] {
            dropped.extend(idx.record(&k(u)));
        }
        assert_eq!(
            dropped,
            vec![
                "https://s.com/a#device=desktop",
                "https://s.com/b#device=desktop"
            ],
            "recording a key twice does not renew or duplicate it"
        );
        assert_eq!(idx.len(), 3);
        assert!(idx.purge("/a", &o).is_empty());
        assert_eq!(
            idx.purge("/e", &o),
            vec!["https://s.com/e?x=1#device=desktop"]
        );
        idx.forget("https://s.com/c#device=desktop");
        dropped = idx.record(&k("https://s.com/f"));
        assert!(
            dropped.is_empty(),
            "purged and forgotten keys free their room"
        );
        assert_eq!(idx.len(), 2);
    }

    proptest! {
        #[test]
        fn purge_reaches_every_variant(variants in proptest::collection::vec(variant(), 1..40), target in 0usize..3) {
            let idx = PurgeIndex::new();
            let o = WorkerOptions::default();
            let keys: Vec<CacheKey> = variants.iter().map(key_of).collect();
            for k in &keys { idx.record(k); }
            let expected: BTreeSet<String> = keys.iter().filter(|k| k.path() == PATHS[target]).map(|k| k.as_str().to_string()).collect();
            let others: BTreeSet<String> = keys.iter().filter(|k| k.path() != PATHS[target]).map(|k| k.as_str().to_string()).collect();
            let purged: BTreeSet<String> = idx.purge(PATHS[target], &o).into_iter().collect();
            prop_assert_eq!(&purged, &expected);
            prop_assert_eq!(idx.len(), others.len());
            prop_assert!(idx.purge(PATHS[target], &o).is_empty());
        }
    }
}
