//! The in-memory loader cache: byte-capped, least-recently-used eviction, stale-while-revalidate.
//! The core decides hit, stale or miss; the host runs the loader and reports back.

use super::freshness::Freshness;
use super::key::LoaderKey;
use crate::value::Value;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What the host's configuration asks of the loader cache (the platform configuration builds it:
/// `PlatformConfig::loader_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoaderCacheConfig {
    /// The cap, in bytes (`PLATFORM_LOADER_CACHE_MAX_BYTES`).
    pub max_bytes: u64,
    /// Caching is switched off (`PLATFORM_CACHE_DISABLE=true`).
    pub disabled: bool,
    /// The site runs in development, where nothing is cached.
    pub development: bool,
}

impl LoaderCacheConfig {
    /// Whether results are kept: neither disabled nor in development.
    pub fn is_enabled(&self) -> bool {
        !self.disabled && !self.development
    }
}

/// A refresh not reported within this time may be handed to another caller.
pub const REFRESH_TIMEOUT_MS: u64 = 10_000;

/// Permission to store a loader result; stale after [`LoaderCache::clear`], so a call that
/// started before a purge or content swap never repopulates the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    generation: u64,
}

/// The outcome of a lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// Fresh: use it.
    Hit(Value),
    /// Stale but servable: use it; when `refresh` is given, run the loader in the background
    /// and [`store`](LoaderCache::store) (or [`fail`](LoaderCache::fail)) with that ticket.
    Stale {
        /// The stale value.
        value: Value,
        /// Present for the one caller that should refresh.
        refresh: Option<Ticket>,
    },
    /// Not cached: run the loader, then store the result with the ticket.
    Miss(Ticket),
}

/// Size and occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Entries held.
    pub entries: usize,
    /// Bytes held (sum of entry sizes).
    pub bytes: u64,
    /// The cap.
    pub cap: u64,
}

#[derive(Debug)]
struct Entry {
    value: Value,
    size: u64,
    stored_at: u64,
    freshness: Freshness,
    tick: u64,
    refreshing_since: Option<u64>,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<Arc<str>, Entry>,
    lru: BTreeMap<u64, Arc<str>>,
    bytes: u64,
    tick: u64,
    generation: u64,
}

impl Inner {
    fn touch(&mut self, key: &Arc<str>) {
        self.tick += 1;
        let tick = self.tick;
        if let Some(e) = self.map.get_mut(key) {
            self.lru.remove(&e.tick);
            e.tick = tick;
            self.lru.insert(tick, key.clone());
        }
    }

    fn remove(&mut self, key: &str) -> Option<Entry> {
        let e = self.map.remove(key)?;
        self.lru.remove(&e.tick);
        self.bytes -= e.size;
        Some(e)
    }
}

/// Counts the bytes of a JSON serialisation without keeping them.
struct Counter(u64);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size an entry counts for: the key's bytes plus the UTF-8 bytes of the value's compact JSON.
pub fn entry_size(key: &LoaderKey, value: &Value) -> u64 {
    let mut c = Counter(0);
    // Writing to a counter cannot fail; a value serde rejects would count as its bytes so far.
    let _ = serde_json::to_writer(&mut c, value);
    key.as_str().len() as u64 + c.0
}

/// The loader cache. Shared across requests (`Send + Sync`).
#[derive(Debug)]
pub struct LoaderCache {
    cap: u64,
    enabled: bool,
    inner: Mutex<Inner>,
}

impl Default for LoaderCache {
    /// A disabled cache.
    fn default() -> LoaderCache {
        LoaderCache::disabled()
    }
}

impl LoaderCache {
    /// An enabled cache holding at most `cap_bytes`.
    pub fn new(cap_bytes: u64) -> LoaderCache {
        LoaderCache {
            cap: cap_bytes,
            enabled: true,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// A cache that keeps nothing (every lookup is a miss).
    pub fn disabled() -> LoaderCache {
        LoaderCache {
            cap: 0,
            enabled: false,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The cache the configuration asks for: capped at `max_bytes`, off when disabled and in
    /// development.
    pub fn from_config(config: &LoaderCacheConfig) -> LoaderCache {
        if config.is_enabled() {
            LoaderCache::new(config.max_bytes)
        } else {
            LoaderCache::disabled()
        }
    }

    /// Whether results are kept.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Looks a key up at `now_ms` (milliseconds of the host's clock).
    pub fn lookup(&self, key: &LoaderKey, now_ms: u64) -> Lookup {
        let mut inner = self.inner.lock();
        let ticket = Ticket {
            generation: inner.generation,
        };
        if !self.enabled {
            return Lookup::Miss(ticket);
        }
        let shared = key.shared();
        let Some(e) = inner.map.get_mut(&shared) else {
            return Lookup::Miss(ticket);
        };
        let age = now_ms.saturating_sub(e.stored_at);
        let result = if age <= e.freshness.max_age_ms {
            Lookup::Hit(e.value.clone())
        } else if age <= e.freshness.max_age_ms.saturating_add(e.freshness.stale_ms) {
            let free = e
                .refreshing_since
                .is_none_or(|since| now_ms.saturating_sub(since) > REFRESH_TIMEOUT_MS);
            if free {
                e.refreshing_since = Some(now_ms);
            }
            Lookup::Stale {
                value: e.value.clone(),
                refresh: free.then_some(ticket),
            }
        } else {
            inner.remove(&shared);
            return Lookup::Miss(ticket);
        };
        inner.touch(&shared);
        result
    }

    /// Stores a loader result fetched under `ticket`. Returns whether it was kept: not when the
    /// cache is disabled or was cleared since the ticket, when the freshness keeps nothing, or
    /// when the entry alone exceeds the cap (an older entry under the key is dropped then).
    /// Least recently used entries are evicted until the total fits the cap.
    pub fn store(
        &self,
        key: &LoaderKey,
        value: Value,
        freshness: Freshness,
        ticket: Ticket,
        now_ms: u64,
    ) -> bool {
        let mut inner = self.inner.lock();
        if !self.enabled || ticket.generation != inner.generation {
            return false;
        }
        let shared = key.shared();
        inner.remove(&shared);
        let size = entry_size(key, &value);
        if !freshness.is_cacheable() || size > self.cap {
            return false;
        }
        inner.tick += 1;
        let tick = inner.tick;
        inner.bytes += size;
        inner.lru.insert(tick, shared.clone());
        inner.map.insert(
            shared,
            Entry {
                value,
                size,
                stored_at: now_ms,
                freshness,
                tick,
                refreshing_since: None,
            },
        );
        while inner.bytes > self.cap {
            let Some((_, oldest)) = inner.lru.pop_first() else {
                break;
            };
            if let Some(e) = inner.map.remove(&oldest) {
                inner.bytes -= e.size;
            }
        }
        true
    }

    /// Reports that the loader failed. Returns the stale value to serve instead when one is
    /// still inside its stale window; otherwise drops the entry and returns `None`.
    pub fn fail(&self, key: &LoaderKey, ticket: Ticket, now_ms: u64) -> Option<Value> {
        let mut inner = self.inner.lock();
        if ticket.generation != inner.generation {
            return None;
        }
        let shared = key.shared();
        let e = inner.map.get_mut(&shared)?;
        e.refreshing_since = None;
        let age = now_ms.saturating_sub(e.stored_at);
        if age <= e.freshness.max_age_ms.saturating_add(e.freshness.stale_ms) {
            Some(e.value.clone())
        } else {
            inner.remove(&shared);
            None
        }
    }

    /// Empties the cache (content swap, `/_cache/purge-loaders`); outstanding tickets expire.
    pub fn clear(&self) {
        let mut inner = self.inner.lock();
        let generation = inner.generation + 1;
        *inner = Inner {
            generation,
            ..Inner::default()
        };
    }

    /// Entries, bytes and cap.
    pub fn stats(&self) -> CacheStats {
        let inner = self.inner.lock();
        CacheStats {
            entries: inner.map.len(),
            bytes: inner.bytes,
            cap: self.cap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const F: Freshness = Freshness {
        max_age_ms: 1000,
        stale_ms: 5000,
    };

    fn k(s: &str) -> LoaderKey {
        LoaderKey::new(s, &Value::Null)
    }

    fn v(s: &str) -> Value {
        Value::string(s)
    }

    fn miss(c: &LoaderCache, key: &LoaderKey, now: u64) -> Ticket {
        match c.lookup(key, now) {
            Lookup::Miss(t) => t,
            other => panic!("expected a miss, got {other:?}"),
        }
    }

    impl LoaderCache {
        fn check(&self) {
            let inner = self.inner.lock();
            let sum: u64 = inner.map.values().map(|e| e.size).sum();
            assert_eq!(inner.bytes, sum, "byte total equals the sum of entries");
            assert!(inner.bytes <= self.cap || !self.enabled);
            assert_eq!(inner.map.len(), inner.lru.len());
            for (key, e) in &inner.map {
                assert_eq!(inner.lru.get(&e.tick), Some(key));
                assert_eq!(
                    e.size,
                    key.len() as u64 + e.value.to_json_string().len() as u64
                );
            }
        }
    }

    #[test]
    fn hit_stale_miss() {
        const F: Freshness = Freshness {
            max_age_ms: 1000,
            stale_ms: 60_000,
        };
        let c = LoaderCache::new(1 << 20);
        let key = k("a");
        let t = miss(&c, &key, 0);
        assert!(c.store(&key, v("one"), F, t, 0));
        assert_eq!(c.lookup(&key, 1000), Lookup::Hit(v("one")));
        let Lookup::Stale {
            value,
            refresh: Some(t2),
        } = c.lookup(&key, 1001)
        else {
            panic!()
        };
        assert_eq!(value, v("one"));
        assert_eq!(
            c.lookup(&key, 1002),
            Lookup::Stale {
                value: v("one"),
                refresh: None
            },
            "one refresher at a time"
        );
        let Lookup::Stale {
            refresh: Some(_), ..
        } = c.lookup(&key, 1002 + REFRESH_TIMEOUT_MS)
        else {
            panic!("a lost refresh is handed out again")
        };
        assert!(c.store(&key, v("two"), F, t2, 2000));
        assert_eq!(c.lookup(&key, 2500), Lookup::Hit(v("two")));
        miss(&c, &key, 2000 + 61_001);
        assert_eq!(c.stats().entries, 0, "expired entries are dropped");
        c.check();
    }

    #[test]
    fn stale_if_error() {
        let c = LoaderCache::new(1 << 20);
        let key = k("a");
        let t = miss(&c, &key, 0);
        c.store(&key, v("one"), F, t, 0);
        let Lookup::Stale {
            refresh: Some(t), ..
        } = c.lookup(&key, 3000)
        else {
            panic!()
        };
        assert_eq!(c.fail(&key, t, 3000), Some(v("one")));
        assert!(
            matches!(
                c.lookup(&key, 3001),
                Lookup::Stale {
                    refresh: Some(_),
                    ..
                }
            ),
            "failure frees the refresh"
        );
        assert_eq!(c.fail(&key, t, 6001), None, "past the stale window");
        assert_eq!(c.stats().entries, 0);
        assert_eq!(c.fail(&k("missing"), t, 0), None);
    }

    #[test]
    fn clear_expires_tickets() {
        let c = LoaderCache::new(1 << 20);
        let key = k("a");
        let t = miss(&c, &key, 0);
        c.clear();
        assert!(
            !c.store(&key, v("late"), F, t, 0),
            "a call from before the purge does not repopulate"
        );
        assert_eq!(c.fail(&key, t, 0), None);
        let t = miss(&c, &key, 0);
        assert!(c.store(&key, v("new"), F, t, 0));
        c.clear();
        assert_eq!(
            c.stats(),
            CacheStats {
                entries: 0,
                bytes: 0,
                cap: 1 << 20
            }
        );
    }

    #[test]
    fn lru_eviction_and_cap() {
        let size = entry_size(&k("a"), &v("0123456789"));
        let c = LoaderCache::new(size * 3);
        for name in ["a", "b", "c"] {
            let t = miss(&c, &k(name), 0);
            assert!(c.store(&k(name), v("0123456789"), F, t, 0));
        }
        assert!(
            matches!(c.lookup(&k("a"), 1), Lookup::Hit(_)),
            "touch a: b is now least recently used"
        );
        let t = miss(&c, &k("d"), 1);
        assert!(c.store(&k("d"), v("0123456789"), F, t, 1));
        assert!(matches!(c.lookup(&k("b"), 2), Lookup::Miss(_)));
        assert!(matches!(c.lookup(&k("a"), 2), Lookup::Hit(_)));
        assert_eq!(c.stats().bytes, size * 3);
        let t = miss(&c, &k("huge"), 2);
        assert!(
            !c.store(&k("huge"), v(&"x".repeat(10 * size as usize)), F, t, 2),
            "larger than the cap"
        );
        assert!(!c.store(&k("a"), v(&"x".repeat(10 * size as usize)), F, t, 3));
        assert!(
            matches!(c.lookup(&k("a"), 3), Lookup::Miss(_)),
            "an oversized replacement drops the old entry"
        );
        c.check();
    }

    #[test]
    fn disabled_and_uncacheable() {
        let c = LoaderCache::disabled();
        let t = miss(&c, &k("a"), 0);
        assert!(!c.store(&k("a"), v("x"), F, t, 0));
        assert!(!c.is_enabled());
        let c = LoaderCache::new(1000);
        let t = miss(&c, &k("a"), 0);
        assert!(!c.store(
            &k("a"),
            v("x"),
            Freshness {
                max_age_ms: 0,
                stale_ms: 0
            },
            t,
            0
        ));
        let on = LoaderCacheConfig {
            max_bytes: 1024,
            disabled: false,
            development: false,
        };
        let cache = LoaderCache::from_config(&on);
        assert!(cache.is_enabled());
        assert_eq!(cache.stats().cap, 1024);
        let dev = LoaderCacheConfig {
            development: true,
            ..on
        };
        assert!(!LoaderCache::from_config(&dev).is_enabled());
        let off = LoaderCacheConfig {
            disabled: true,
            ..on
        };
        assert!(!LoaderCache::from_config(&off).is_enabled());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Store(u8, usize),
        Lookup(u8),
        Fail(u8),
        Advance(u64),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u8..12, 0usize..300).prop_map(|(k, n)| Op::Store(k, n)),
            4 => (0u8..12).prop_map(Op::Lookup),
            1 => (0u8..12).prop_map(Op::Fail),
            2 => (0u64..4000).prop_map(Op::Advance),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        #[test]
        fn byte_accounting_is_exact_under_churn(cap in 50u64..2000, ops in proptest::collection::vec(op(), 1..200)) {
            let c = LoaderCache::new(cap);
            let mut now = 0u64;
            for op in ops {
                match op {
                    Op::Store(key, n) => {
                        let key = k(&format!("loader-{key}"));
                        let value = Value::from(serde_json::json!({"s": "é".repeat(n % 40), "n": n}));
                        let ticket = match c.lookup(&key, now) {
                            Lookup::Miss(t) => t,
                            Lookup::Stale { refresh: Some(t), .. } => t,
                            _ => continue,
                        };
                        c.store(&key, value, F, ticket, now);
                    }
                    Op::Lookup(key) => { let _ = c.lookup(&k(&format!("loader-{key}")), now); }
                    Op::Fail(key) => {
                        if let Lookup::Miss(t) | Lookup::Stale { refresh: Some(t), .. } = c.lookup(&k(&format!("loader-{key}")), now) {
                            let _ = c.fail(&k(&format!("loader-{key}")), t, now);
                        }
                    }
                    Op::Advance(ms) => now += ms,
                    Op::Clear => c.clear(),
                }
                c.check();
            }
        }
    }
}
