//! The edge cache's storage, behind one small trait ([`Store`]): copies in memory by the core's
//! cache key (the default: at most a number of body bytes, the least recently used evicted
//! first, each dropped once it is older than the storage lifetime the core gave it), or in Redis
//! so several servers share one cache. A Redis that fails is a miss, never an error.

use super::header_text;
use crate::redis_kv::{FailureLog, bounded};
use axum::body::Bytes;
use axum::http::{HeaderName, HeaderValue};
use redis::aio::ConnectionManager;
use sitefile_core::{CacheKey, PurgeScope, SharedHeaders};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

/// A storage call's future.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where the edge keeps its copies. Failures are the storage's own business: a copy that
/// cannot be read is a miss, one that cannot be written is not kept.
pub trait Store: Send + Sync {
    /// The copy under `key` at `now` (seconds of the edge's clock), if one is kept and its
    /// lifetime has not passed.
    fn get<'a>(&'a self, key: &'a str, now: f64) -> StoreFuture<'a, Option<Arc<Stored>>>;
    /// Keeps `copy` under `key` for `max_age` seconds (forever when `None`).
    fn put<'a>(
        &'a self,
        key: &'a CacheKey,
        copy: Stored,
        max_age: Option<u32>,
    ) -> StoreFuture<'a, ()>;
    /// Drops the copies under `keys`.
    fn delete<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, ()>;
    /// Drops every copy a purge's scopes reach that this storage knows of beyond the keys the
    /// server's own purge index named (copies other servers stored).
    fn purge<'a>(&'a self, scopes: &'a [PurgeScope]) -> StoreFuture<'a, ()>;
}

/// A stored response.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// The status.
    pub status: u16,
    /// The copy's headers (the core's `storeHeaders`), shared with the responses that serve it.
    pub headers: SharedHeaders,
    /// `headers` as HTTP headers, by position (`None` for a pair that is not a valid header):
    /// converted once, when the copy is made (stored, or read back from Redis), and cloned into
    /// every response that serves it.
    pub http_headers: Vec<Option<(HeaderName, HeaderValue)>>,
    /// The body.
    pub body: Bytes,
    /// When it was stored, in seconds of the edge's clock.
    pub stored_at: f64,
}

impl Stored {
    /// A copy of `status`, `headers` and `body` stored at `stored_at` (seconds of the edge's
    /// clock).
    pub fn new(
        status: u16,
        headers: impl Into<SharedHeaders>,
        body: Bytes,
        stored_at: f64,
    ) -> Self {
        let headers: SharedHeaders = headers.into();
        let http_headers = headers
            .iter()
            .map(|(name, value)| header_text::header(name, value))
            .collect();
        Stored {
            status,
            headers,
            http_headers,
            body,
            stored_at,
        }
    }
}

struct Entry {
    copy: Arc<Stored>,
    expires_at: f64,
    used: u64,
}

/// Copies by key, holding at most `max_bytes` of bodies.
pub struct MemoryStore {
    max_bytes: usize,
    bytes: usize,
    tick: u64,
    entries: HashMap<Arc<str>, Entry>,
    by_use: BTreeMap<u64, Arc<str>>,
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
    pub fn get(&mut self, key: &str, now: f64) -> Option<Arc<Stored>> {
        let expired = now >= self.entries.get(key)?.expires_at;
        if expired {
            self.delete(key);
            return None;
        }
        self.tick += 1;
        let tick = self.tick;
        let (shared_key, _) = self.entries.get_key_value(key)?;
        let shared_key = shared_key.clone();
        let entry = self.entries.get_mut(key)?;
        self.by_use.remove(&entry.used);
        entry.used = tick;
        self.by_use.insert(tick, shared_key);
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
        let key: Arc<str> = key.into();
        self.by_use.insert(self.tick, key.clone());
        self.entries.insert(
            key,
            Entry {
                copy: Arc::new(copy),
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

impl Store for Mutex<MemoryStore> {
    fn get<'a>(&'a self, key: &'a str, now: f64) -> StoreFuture<'a, Option<Arc<Stored>>> {
        let copy = lock(self).get(key, now);
        Box::pin(std::future::ready(copy))
    }

    fn put<'a>(
        &'a self,
        key: &'a CacheKey,
        copy: Stored,
        max_age: Option<u32>,
    ) -> StoreFuture<'a, ()> {
        lock(self).put(key.as_str(), copy, max_age);
        Box::pin(std::future::ready(()))
    }

    fn delete<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, ()> {
        let mut store = lock(self);
        for key in keys {
            store.delete(key);
        }
        Box::pin(std::future::ready(()))
    }

    /// Nothing to add: every copy in this memory was stored by this server, so its purge index
    /// named them all.
    fn purge<'a>(&'a self, _scopes: &'a [PurgeScope]) -> StoreFuture<'a, ()> {
        Box::pin(std::future::ready(()))
    }
}

fn lock(store: &Mutex<MemoryStore>) -> std::sync::MutexGuard<'_, MemoryStore> {
    store.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What happens while the Redis cache fails.
const TO_ORIGIN: &str = "requests go to the origin until it answers again";

/// Prefix of the stored copies in Redis (`<prefix><cache key>`).
const COPY_PREFIX: &str = "sitefile:edge:copy:";
/// Prefix of the purge index in Redis: a hash per URL path, from each stored key to its
/// normalised query.
const PATH_PREFIX: &str = "sitefile:edge:path:";

/// Copies in Redis, shared by every server using the same Redis. A copy expires by Redis's
/// clock after the core's stored-copy lifetime; a purge index per path (expiring no earlier
/// than its longest-lived copy) lets any server purge copies another stored. For a second after
/// a failed call Redis is left alone: reads are misses, writes and deletes are skipped.
pub struct RedisStore {
    connection: ConnectionManager,
    log: FailureLog,
}

impl RedisStore {
    /// Storage over `connection`.
    pub fn new(connection: ConnectionManager) -> RedisStore {
        RedisStore {
            connection,
            log: FailureLog::new("the Redis cache"),
        }
    }
}

impl Store for RedisStore {
    fn get<'a>(&'a self, key: &'a str, _now: f64) -> StoreFuture<'a, Option<Arc<Stored>>> {
        Box::pin(async move {
            if self.log.resting() {
                return None;
            }
            let mut connection = self.connection.clone();
            let read = bounded(
                redis::cmd("GET")
                    .arg(format!("{COPY_PREFIX}{key}"))
                    .query_async::<Option<Vec<u8>>>(&mut connection),
            )
            .await;
            self.log
                .settle("reading a copy", TO_ORIGIN, read)
                .flatten()
                .and_then(|bytes| decode(&bytes))
                .map(Arc::new)
        })
    }

    fn put<'a>(
        &'a self,
        key: &'a CacheKey,
        copy: Stored,
        max_age: Option<u32>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if self.log.resting() {
                return;
            }
            let mut connection = self.connection.clone();
            let index = format!("{PATH_PREFIX}{}", key.path());
            let mut pipe = redis::pipe();
            let set = pipe
                .cmd("SET")
                .arg(format!("{COPY_PREFIX}{}", key.as_str()))
                .arg(encode(&copy));
            if let Some(secs) = max_age {
                set.arg("EX").arg(secs.max(1));
            }
            pipe.cmd("HSET")
                .arg(&index)
                .arg(key.as_str())
                .arg(key.query())
                .ignore();
            match max_age {
                // The index lives as long as its longest-lived copy: set when it has no expiry,
                // extended when this copy outlives it.
                Some(secs) => {
                    for condition in ["NX", "GT"] {
                        pipe.cmd("EXPIRE")
                            .arg(&index)
                            .arg(secs.max(1))
                            .arg(condition)
                            .ignore();
                    }
                }
                None => {
                    pipe.cmd("PERSIST").arg(&index).ignore();
                }
            }
            let written = bounded(pipe.query_async::<()>(&mut connection)).await;
            self.log.settle("storing a copy", TO_ORIGIN, written);
        })
    }

    fn delete<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if keys.is_empty() || self.log.resting() {
                return;
            }
            let mut connection = self.connection.clone();
            let mut del = redis::cmd("DEL");
            for key in keys {
                del.arg(format!("{COPY_PREFIX}{key}"));
            }
            let deleted = bounded(del.query_async::<()>(&mut connection)).await;
            self.log.settle("deleting copies", TO_ORIGIN, deleted);
        })
    }

    fn purge<'a>(&'a self, scopes: &'a [PurgeScope]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if self.log.resting() {
                return;
            }
            for scope in scopes {
                let mut connection = self.connection.clone();
                let index = format!("{PATH_PREFIX}{}", scope.path);
                let read = bounded(
                    redis::cmd("HGETALL")
                        .arg(&index)
                        .query_async::<Vec<(String, String)>>(&mut connection),
                )
                .await;
                let Some(entries) = self.log.settle("reading the purge index", TO_ORIGIN, read)
                else {
                    return;
                };
                let keys: Vec<String> = entries
                    .into_iter()
                    .filter(|(_, query)| scope.reaches(query))
                    .map(|(key, _)| key)
                    .collect();
                if keys.is_empty() {
                    continue;
                }
                let mut pipe = redis::pipe();
                pipe.cmd("HDEL").arg(&index).arg(&keys).ignore();
                let del = pipe.cmd("DEL").ignore();
                for key in &keys {
                    del.arg(format!("{COPY_PREFIX}{key}"));
                }
                let purged = bounded(pipe.query_async::<()>(&mut connection)).await;
                self.log.settle("purging copies", TO_ORIGIN, purged);
            }
        })
    }
}

/// The metadata of a copy in Redis, before its body.
#[derive(serde::Serialize, serde::Deserialize)]
struct Meta {
    status: u16,
    headers: SharedHeaders,
    stored_at: f64,
}

/// A copy as Redis keeps it: its metadata as one line of JSON, then the body.
fn encode(copy: &Stored) -> Vec<u8> {
    let meta = Meta {
        status: copy.status,
        headers: copy.headers.clone(),
        stored_at: copy.stored_at,
    };
    let mut bytes = serde_json::to_vec(&meta).unwrap_or_default();
    bytes.push(b'\n');
    bytes.extend_from_slice(&copy.body);
    bytes
}

/// A copy read back; `None` for bytes this server did not write (read as a miss).
fn decode(bytes: &[u8]) -> Option<Stored> {
    let split = bytes.iter().position(|&b| b == b'\n')?;
    let meta: Meta = serde_json::from_slice(&bytes[..split]).ok()?;
    Some(Stored::new(
        meta.status,
        meta.headers,
        Bytes::copy_from_slice(&bytes[split + 1..]),
        meta.stored_at,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(body: &str, at: f64) -> Stored {
        Stored::new(200, Vec::new(), Bytes::from(body.to_string()), at)
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
    fn a_copy_reads_back_as_redis_keeps_it() {
        let headers = vec![("x-cache".into(), "MISS".into())];
        let stored = Stored::new(200, headers, Bytes::from("body\nwith a line"), 12.5);
        assert_eq!(decode(&encode(&stored)), Some(stored));
        assert_eq!(decode(b"not a copy"), None);
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
