//! Downstream MCP sessions of the connection proxy: each `initialize` gets its own upstream
//! session, named downstream by a random `Mcp-Session-Id`, bound to the key and the
//! connection (revision) that created it, ended by DELETE, idle expiry or eviction.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::upstream::Session;

/// How many sessions live at once, and for how long unused.
#[derive(Clone, Copy, Debug)]
pub struct SessionLimits {
    /// A session unused this long is ended.
    pub idle: Duration,
    /// Most sessions of one key; its least recently used one is ended for a new one.
    pub per_key: usize,
    /// Most sessions of this server; beyond it `initialize` is refused (503).
    pub max: usize,
    /// The upstream's requests awaiting a session's client.
    pub requests: super::server_requests::RequestBounds,
    /// What a session's GET stream keeps for replay.
    pub journal: super::journal::JournalBounds,
}

/// Who may use a session.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Owner {
    /// The organization id.
    pub org_id: String,
    /// The connection id.
    pub connection_id: String,
    /// The API key id.
    pub key_id: String,
}

struct Entry {
    owner: Owner,
    revision: i64,
    upstream: Arc<Session>,
    last_used_ms: i64,
}

/// A session to end upstream: its owner (to rebuild the target) and its upstream session.
pub struct Ended {
    /// Whose it was.
    pub owner: Owner,
    /// The upstream session.
    pub upstream: Arc<Session>,
}

/// The live downstream sessions of this server.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Entry>>,
}

/// Why a session could not be created.
pub struct Full;

impl Sessions {
    /// Registers a new session; returns its id and the sessions ended to make room (or
    /// expired), which the caller ends upstream.
    pub fn insert(
        &self,
        limits: &SessionLimits,
        now_ms: i64,
        owner: Owner,
        revision: i64,
        upstream: Arc<Session>,
    ) -> Result<(String, Vec<Ended>), (Full, Vec<Ended>)> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let mut ended = sweep(&mut map, limits, now_ms);
        let mine: Vec<(String, i64)> = map
            .iter()
            .filter(|(_, e)| e.owner.key_id == owner.key_id)
            .map(|(id, e)| (id.clone(), e.last_used_ms))
            .collect();
        if mine.len() >= limits.per_key.max(1)
            && let Some((oldest, _)) = mine.iter().min_by_key(|(_, used)| *used)
            && let Some(entry) = map.remove(oldest)
        {
            ended.push(Ended {
                owner: entry.owner,
                upstream: entry.upstream,
            });
        }
        if map.len() >= limits.max.max(1) {
            ended.push(Ended { owner, upstream });
            return Err((Full, ended));
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        map.insert(
            id.clone(),
            Entry {
                owner,
                revision,
                upstream,
                last_used_ms: now_ms,
            },
        );
        Ok((id, ended))
    }

    /// The upstream session of `id` when `owner` may use it and the connection is
    /// unchanged; marks it used. An expired or stale session is removed and returned for
    /// ending.
    pub fn get(
        &self,
        limits: &SessionLimits,
        now_ms: i64,
        id: &str,
        owner: &Owner,
        revision: i64,
    ) -> (Option<Arc<Session>>, Vec<Ended>) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let mut ended = sweep(&mut map, limits, now_ms);
        let Some(entry) = map.get_mut(id) else {
            return (None, ended);
        };
        if entry.owner != *owner {
            return (None, ended);
        }
        if entry.revision != revision {
            // The connection changed (URL, credentials): its old session is not reused.
            if let Some(entry) = map.remove(id) {
                ended.push(Ended {
                    owner: entry.owner,
                    upstream: entry.upstream,
                });
            }
            return (None, ended);
        }
        entry.last_used_ms = now_ms;
        (Some(entry.upstream.clone()), ended)
    }

    /// Removes `id` when `owner` may use it.
    pub fn remove(&self, id: &str, owner: &Owner) -> Option<Ended> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(id).is_some_and(|e| e.owner == *owner) {
            return map.remove(id).map(|entry| Ended {
                owner: entry.owner,
                upstream: entry.upstream,
            });
        }
        None
    }
}

/// Removes the sessions unused for `limits.idle`.
fn sweep(map: &mut HashMap<String, Entry>, limits: &SessionLimits, now_ms: i64) -> Vec<Ended> {
    let idle = i64::try_from(limits.idle.as_millis()).unwrap_or(i64::MAX);
    let expired: Vec<String> = map
        .iter()
        .filter(|(_, e)| now_ms.saturating_sub(e.last_used_ms) >= idle)
        .map(|(id, _)| id.clone())
        .collect();
    expired
        .into_iter()
        .filter_map(|id| map.remove(&id))
        .map(|entry| Ended {
            owner: entry.owner,
            upstream: entry.upstream,
        })
        .collect()
}
