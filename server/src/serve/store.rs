//! The edge cache's storage: copies in memory by the core's cache key, at most a number of
//! body bytes, the least recently used evicted first, each dropped once it is older than the
//! storage lifetime the core gave it.

use axum::body::Bytes;
use std::collections::{BTreeMap, HashMap};

/// A stored response.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The status.
    pub status: u16,
    /// The copy's headers (the core's `storeHeaders`).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
    /// When it was stored, in seconds of the edge's clock.
    pub stored_at: f64,
}

struct Entry {
    copy: Stored,
    expires_at: f64,
    used: u64,
}

/// Copies by key, holding at most `max_bytes` of bodies.
pub struct MemoryStore {
    max_bytes: usize,
    bytes: usize,
    tick: u64,
    entries: HashMap<String, Entry>,
    by_use: BTreeMap<u64, String>,
}

impl MemoryStore {
    /// An empty store holding at most `max_bytes` of bodies.
    pub fn new(max_bytes: usize) -> MemoryStore {
        MemoryStore {
            max_bytes,
            bytes: 0,
            tick: 0,
            entries: HashMap::new(),
            by_use: BTreeMap::new(),
        }
    }

    /// The copy under `key` at `now`, if one is kept and its lifetime has not passed; it
    /// becomes the most recently used.
    pub fn get(&mut self, key: &str, now: f64) -> Option<Stored> {
        let expired = now >= self.entries.get(key)?.expires_at;
        if expired {
            self.delete(key);
            return None;
        }
        self.tick += 1;
        let tick = self.tick;
        let entry = self.entries.get_mut(key)?;
        self.by_use.remove(&entry.used);
        entry.used = tick;
        self.by_use.insert(tick, key.to_string());
        Some(entry.copy.clone())
    }

    /// Keeps `copy` under `key` for `max_age` seconds (forever when `None`), replacing what was
    /// there; a body larger than the whole store is not kept. The least recently used copies go
    /// until the bodies fit.
    pub fn put(&mut self, key: &str, copy: Stored, max_age: Option<u32>) {
        self.delete(key);
        if copy.body.len() > self.max_bytes {
            return;
        }
        self.tick += 1;
        let expires_at = max_age.map_or(f64::INFINITY, |s| copy.stored_at + f64::from(s));
        self.bytes += copy.body.len();
        self.by_use.insert(self.tick, key.to_string());
        self.entries.insert(
            key.to_string(),
            Entry {
                copy,
                expires_at,
                used: self.tick,
            },
        );
        while self.bytes > self.max_bytes {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            if let Some(entry) = self.entries.remove(&oldest) {
                self.bytes -= entry.copy.body.len();
            }
        }
    }

    /// Drops the copy under `key`; whether there was one.
    pub fn delete(&mut self, key: &str) -> bool {
        match self.entries.remove(key) {
            Some(entry) => {
                self.bytes -= entry.copy.body.len();
                self.by_use.remove(&entry.used);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(body: &str, at: f64) -> Stored {
        Stored {
            status: 200,
            headers: Vec::new(),
            body: Bytes::from(body.to_string()),
            stored_at: at,
        }
    }

    #[test]
    fn the_least_recently_used_copy_goes_when_the_bodies_do_not_fit() {
        let mut store = MemoryStore::new(10);
        store.put("a", copy("aaaa", 0.0), None);
        store.put("b", copy("bbbb", 0.0), None);
        assert!(store.get("a", 0.0).is_some(), "a is now the most recent");
        store.put("c", copy("cccc", 0.0), None);
        assert!(
            store.get("b", 0.0).is_none(),
            "b was the least recently used"
        );
        assert!(store.get("a", 0.0).is_some() && store.get("c", 0.0).is_some());
        store.put("huge", copy("01234567890", 0.0), None);
        assert!(
            store.get("huge", 0.0).is_none(),
            "larger than the whole store"
        );
        assert!(
            store.get("a", 0.0).is_some(),
            "and nothing was evicted for it"
        );
    }

    #[test]
    fn a_copy_past_its_lifetime_is_gone_and_a_deleted_one_too() {
        let mut store = MemoryStore::new(100);
        store.put("a", copy("x", 10.0), Some(5));
        assert!(store.get("a", 14.9).is_some());
        assert!(store.get("a", 15.0).is_none());
        store.put("b", copy("y", 0.0), None);
        assert!(store.delete("b"));
        assert!(!store.delete("b"));
        assert_eq!(store.bytes, 0);
    }
}
