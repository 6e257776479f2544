//! The purge index: every stored key, by normalised path, so a purge reaches every variant
//! (devices, regions, cohorts, segments, bots, versions) of a path.

use super::key::CacheKey;
use super::normalize::normalize_target;
use crate::config::WorkerOptions;
use parking_lot::Mutex;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Default)]
struct Index {
    by_path: HashMap<String, HashMap<String, BTreeSet<String>>>,
    by_key: HashMap<String, (String, String)>,
}

/// Stored keys by path and normalised query. Shared by the edge's request tasks.
#[derive(Debug, Default)]
pub struct PurgeIndex {
    inner: Mutex<Index>,
}

impl PurgeIndex {
    /// An empty index.
    pub fn new() -> PurgeIndex {
        PurgeIndex::default()
    }

    /// Records a key the edge stored.
    pub fn record(&self, key: &CacheKey) {
        let mut idx = self.inner.lock();
        let (path, query) = (key.path().to_string(), key.query().to_string());
        idx.by_path
            .entry(path.clone())
            .or_default()
            .entry(query.clone())
            .or_default()
            .insert(key.as_str().to_string());
        idx.by_key.insert(key.as_str().to_string(), (path, query));
    }

    /// Forgets a key the edge evicted or expired.
    pub fn forget(&self, key: &str) {
        let mut idx = self.inner.lock();
        let Some((path, query)) = idx.by_key.remove(key) else {
            return;
        };
        if let Some(queries) = idx.by_path.get_mut(&path) {
            if let Some(keys) = queries.get_mut(&query) {
                keys.remove(key);
                if keys.is_empty() {
                    queries.remove(&query);
                }
            }
            if queries.is_empty() {
                idx.by_path.remove(&path);
            }
        }
    }

    /// Removes and returns (sorted) every key of a purge target. A target without a query
    /// (`/p`) reaches every query of that path; with a query (`/s?q=a`) only that query,
    /// normalised like cache keys (order-insensitive, tracking parameters ignored). The host
    /// deletes the returned keys from its storage. A target that is not a path purges nothing.
    pub fn purge(&self, target: &str, options: &WorkerOptions) -> Vec<String> {
        let Some((path, query)) = normalize_target(
            target,
            options.strip_tracking_params,
            &options.extra_tracking_params,
        ) else {
            return Vec::new();
        };
        let whole_path = !target.contains('?');
        let mut idx = self.inner.lock();
        let mut removed: Vec<String> = Vec::new();
        if let Some(queries) = idx.by_path.get_mut(&path) {
            if whole_path {
                removed.extend(queries.drain().flat_map(|(_, keys)| keys));
            } else if let Some(keys) = queries.remove(&query) {
                removed.extend(keys);
            }
            if queries.is_empty() {
                idx.by_path.remove(&path);
            }
        }
        for k in &removed {
            idx.by_key.remove(k);
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
