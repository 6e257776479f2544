//! The current content: one snapshot swapped atomically, with observers told of every swap.

use super::reload::{ReloadError, ReloadOutcome, ReloadResponse, plan_reload};
use super::snapshot::Snapshot;
use crate::value::release_long_strings;
use chrono::{DateTime, Utc};
use parking_lot::{Mutex, RwLock};
use std::sync::Arc;

/// Called with every snapshot that becomes current (the `initPlatform` hook).
pub type Observer = Box<dyn Fn(&Arc<Snapshot>) + Send + Sync>;

/// A reload that did not happen; the current snapshot keeps serving.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReloadRefused {
    /// The body was refused.
    #[error(transparent)]
    Body(#[from] ReloadError),
    /// The host's hook failed before the swap (Fast Deploy could not write the snapshot).
    #[error("the reload hook failed: {0}")]
    Hook(String),
}

impl crate::errors::HasErrorCode for ReloadRefused {
    fn code(&self) -> crate::errors::ErrorCode {
        match self {
            ReloadRefused::Body(e) => e.code(),
            ReloadRefused::Hook(_) => crate::errors::ErrorCode::HookFailed,
        }
    }
}

/// Holds the current snapshot. Readers take an `Arc` and keep a consistent view for as long as
/// they hold it; a swap never mixes two revisions.
pub struct ContentStore {
    current: RwLock<Arc<Snapshot>>,
    observers: RwLock<Vec<Observer>>,
    writer: Mutex<()>,
}

impl ContentStore {
    /// A store serving `snapshot`.
    pub fn new(snapshot: Snapshot) -> ContentStore {
        ContentStore {
            current: RwLock::new(Arc::new(snapshot)),
            observers: RwLock::new(Vec::new()),
            writer: Mutex::new(()),
        }
    }

    /// The snapshot serving now.
    pub fn current(&self) -> Arc<Snapshot> {
        self.current.read().clone()
    }

    /// Adds an observer and calls it at once with the current snapshot.
    pub fn observe(&self, observer: Observer) {
        observer(&self.current());
        self.observers.write().push(observer);
    }

    /// Makes `snapshot` current and tells the observers.
    pub fn swap(&self, snapshot: Arc<Snapshot>) {
        *self.current.write() = snapshot.clone();
        for observer in self.observers.read().iter() {
            observer(&snapshot);
        }
    }

    /// Makes `snapshot` current under the single-writer lock if the content serving is still
    /// revision `expected`, so content read from elsewhere (Fast Deploy's store) never undoes a
    /// reload that happened meanwhile; whether it did.
    pub fn replace_if(&self, expected: &str, snapshot: Snapshot) -> bool {
        let _one_writer = self.writer.lock();
        if self.current().revision() != expected {
            return false;
        }
        self.swap(Arc::new(snapshot));
        true
    }

    /// Plans a reload of `body` against the current snapshot without applying it: a host that
    /// writes the new snapshot to the key-value store asynchronously (an edge worker's KV
    /// binding) serves it afterwards with [`ContentStore::swap_in`].
    pub fn plan(&self, body: &[u8], now: DateTime<Utc>) -> Result<ReloadOutcome, ReloadError> {
        plan_reload(&self.current(), body, now).inspect_err(|_| release_long_strings())
    }

    /// Makes `snapshot` current under the single-writer lock.
    pub fn swap_in(&self, snapshot: Arc<Snapshot>) {
        let _one_writer = self.writer.lock();
        self.swap(snapshot);
    }

    /// Applies a reload body. A refused body leaves the current snapshot serving.
    pub fn reload(&self, body: &[u8], now: DateTime<Utc>) -> Result<ReloadResponse, ReloadError> {
        let _one_writer = self.writer.lock();
        let ReloadOutcome { snapshot, response } =
            plan_reload(&self.current(), body, now).inspect_err(|_| release_long_strings())?;
        self.swap(snapshot);
        Ok(response)
    }

    /// Applies a reload body, running `before_swap` with the new snapshot under the
    /// single-writer lock before it becomes current (Fast Deploy writes it to the key-value
    /// store there and answers whether it did: the response's `kvWritten`). A refused body or a
    /// failing hook leaves the current snapshot serving.
    pub fn reload_with(
        &self,
        body: &[u8],
        now: DateTime<Utc>,
        before_swap: &mut dyn FnMut(&Arc<Snapshot>) -> Result<bool, String>,
    ) -> Result<ReloadResponse, ReloadRefused> {
        let _one_writer = self.writer.lock();
        let ReloadOutcome {
            snapshot,
            mut response,
        } = plan_reload(&self.current(), body, now)
            .inspect_err(|_| release_long_strings())
            .map_err(ReloadRefused::Body)?;
        match before_swap(&snapshot) {
            Ok(kv_written) => response.kv_written = kv_written,
            Err(why) => {
                drop(snapshot);
                release_long_strings();
                return Err(ReloadRefused::Hook(why));
            }
        }
        self.swap(snapshot);
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn reload_swaps_and_notifies_and_rejects_safely() {
        let store = ContentStore::new(Snapshot::empty());
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        store.observe(Box::new(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        let now: DateTime<Utc> = "2026-06-01T12:00:00Z".parse().unwrap();
        let before = store.current();
        store.reload(br#"{"blocks":{"a":{"x":1}}}"#, now).unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        assert_eq!(store.current().len(), 1);
        assert!(before.is_empty(), "an old reader keeps its snapshot");
        let revision = store.current().revision().to_string();
        assert!(store.reload(b"not json", now).is_err());
        assert_eq!(store.current().revision(), revision);
        assert_eq!(seen.load(Ordering::SeqCst), 2);
        let other = Snapshot::empty();
        assert!(!store.replace_if("not serving", Snapshot::empty()));
        assert!(store.replace_if(&revision, other));
        assert!(store.current().is_empty());
        assert_eq!(
            seen.load(Ordering::SeqCst),
            3,
            "observers hear of a replacement"
        );
    }
}
