//! What the admin protocol needs from a site. The `Site` facade implements it; tests implement it
//! on the core's own pieces.

use super::schema::Schema;
use crate::content::{ReloadError, ReloadOutcome, ReloadRefused, ReloadResponse, Snapshot};
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// A site the admin protocol reads and changes.
pub trait AdminSite {
    /// The snapshot serving now (content map and revision).
    fn snapshot(&self) -> Arc<Snapshot>;

    /// The schema document, `None` until the host sets one (`/live/_meta` answers 503).
    fn schema(&self) -> Option<Arc<Schema>>;

    /// Applies a reload body (delta or full) at `now`: runs `before_swap` with the new snapshot
    /// under the single-writer lock (its answer is `kvWritten`), then swaps the content and
    /// clears every content-derived cache. A refused body or a failing hook leaves the content
    /// unchanged.
    fn reload(
        &self,
        body: &[u8],
        now: DateTime<Utc>,
        before_swap: &mut dyn FnMut(&Arc<Snapshot>) -> Result<bool, String>,
    ) -> Result<ReloadResponse, ReloadRefused>;

    /// Plans a reload body (delta or full) at `now` without applying it: the new snapshot and
    /// the response describing it, for a host that writes the snapshot to the key-value store
    /// asynchronously before it serves. A refused body is the error.
    fn plan_reload(&self, body: &[u8], now: DateTime<Utc>) -> Result<ReloadOutcome, ReloadError>;

    /// Serves a planned reload's snapshot, as [`AdminSite::reload`] does once its hook answered.
    fn serve_reloaded(&self, snapshot: Arc<Snapshot>);

    /// Removes a purge target (`/path` or `/path?query`) from the edge purge index and returns
    /// the cache keys the host must delete from its storage.
    fn purge_edge(&self, target: &str) -> Vec<String>;

    /// Clears the loader cache.
    fn purge_loaders(&self);
}
