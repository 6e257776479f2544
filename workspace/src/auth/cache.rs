//! In-process copies of API keys and connections, trusted only at the authorization
//! revision they were read at: each request reads the revision once (see
//! [`RevisionReader`]) and uses a copy only when nothing was written since it was read.

use std::collections::HashMap;
use std::sync::Mutex;

use super::Principal;
use super::revision::RevisionReader;
use crate::error::ApiError;
use crate::storage::{ApiKeyRecord, Connection, Organization, Store, StoreResult};

/// Most copies kept; past it they are all dropped and read again as requests need them.
const MAX_ENTRIES: usize = 65_536;

/// The copies read at one revision. Only rows that exist are kept, so unknown keys
/// presented by anyone cannot fill it.
#[derive(Default)]
struct Entries {
    revision: Option<i64>,
    keys: HashMap<String, (ApiKeyRecord, Organization)>,
    connections: HashMap<(String, String), Connection>,
}

impl Entries {
    /// Makes `revision` the current one, dropping copies read at any other.
    fn at(&mut self, revision: i64) -> &mut Self {
        if self.revision != Some(revision) {
            self.keys.clear();
            self.connections.clear();
            self.revision = Some(revision);
        }
        self
    }

    /// Whether a copy read after `revision` was observed may be kept.
    fn keeps(&mut self, revision: i64) -> bool {
        if self.keys.len() + self.connections.len() >= MAX_ENTRIES {
            self.keys.clear();
            self.connections.clear();
        }
        self.revision == Some(revision)
    }
}

/// API keys by hash and connections by organization and id, as of the current
/// authorization revision.
///
/// A copy is made from a row read after its revision was observed, so it holds every write
/// up to that revision; a request uses it only when its own revision read (begun after the
/// request arrived) finds the same revision, so no write that could change the answer was
/// committed before the request, on any server sharing the database. Expiry is not part
/// of the copy's validity: it is checked against the clock on every request.
pub struct AuthCache {
    store: Store,
    reader: RevisionReader,
    entries: Mutex<Entries>,
}

impl AuthCache {
    /// A cache over `store`, with its revision reader started (inside a tokio runtime).
    pub fn start(store: Store) -> Self {
        Self {
            reader: RevisionReader::start(&store),
            store,
            entries: Mutex::default(),
        }
    }

    /// The authorization revision for a request that has just arrived.
    pub async fn revision(&self) -> Result<i64, ApiError> {
        self.reader.read().await
    }

    /// The key whose value hashes to `key_hash`, with its organization, as of `revision`.
    pub async fn key(
        &self,
        key_hash: &str,
        revision: i64,
    ) -> StoreResult<Option<(ApiKeyRecord, Organization)>> {
        let read = self.store.api_key_by_hash(key_hash);
        self.cached(revision, |e| &mut e.keys, key_hash.to_string(), read)
            .await
    }

    /// The connection `id` in the caller's organization: as of the revision its API key
    /// was validated at, or read now for a caller without one (an OAuth token).
    pub async fn connection(
        &self,
        caller: &Principal,
        id: &str,
    ) -> StoreResult<Option<Connection>> {
        let org_id = &caller.org.id;
        let read = self.store.connection(org_id, id);
        match caller.revision {
            Some(revision) => {
                let key = (org_id.clone(), id.to_string());
                self.cached(revision, |e| &mut e.connections, key, read)
                    .await
            }
            None => read.await,
        }
    }

    /// The copy under `key` in the map `map` selects, if it was read at `revision`;
    /// otherwise `read`'s row, kept when it exists and the revision is still current.
    async fn cached<K: Eq + std::hash::Hash, V: Clone>(
        &self,
        revision: i64,
        map: fn(&mut Entries) -> &mut HashMap<K, V>,
        key: K,
        read: impl Future<Output = StoreResult<Option<V>>>,
    ) -> StoreResult<Option<V>> {
        if let Some(found) = map(self.lock().at(revision)).get(&key) {
            return Ok(Some(found.clone()));
        }
        let found = read.await?;
        if let Some(found) = &found {
            let mut entries = self.lock();
            if entries.keeps(revision) {
                map(&mut entries).insert(key, found.clone());
            }
        }
        Ok(found)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
