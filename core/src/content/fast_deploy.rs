//! Fast Deploy's layout in the key-value store and its rules, without the store itself (the
//! host does the I/O). Per deployment id (normally the code's commit):
//! - `sitefile:<id>`, the content as the canonical bundle (what `GET /.sitefile` serves);
//! - `index:revision:<id>`, its revision, the change detector: written after the snapshot (on
//!   Redis in one transaction; on Workers KV, whose edge caches lag, a reader may still get the
//!   older snapshot for a while, which `site::fast_deploy` reads again);
//! - `index:live`, the deployment serving now (set by the deploy step);
//! - `index:deployments`, the deployments written, `[{"id", "ts"}]`, newest last: the sync tool
//!   keeps the last [`RETAINED_DEPLOYMENTS`] and deletes the older ones' keys, never the live
//!   one's.

use super::snapshot::Snapshot;
use super::snapshot::load_bundle;
use crate::value::ParseError;
use serde::{Deserialize, Serialize};

/// The deployment pointer key.
pub const LIVE_KEY: &str = "index:live";
/// The deployment bookkeeping key.
pub const DEPLOYMENTS_KEY: &str = "index:deployments";
/// How many deployments the bookkeeping keeps (with their snapshots).
pub const RETAINED_DEPLOYMENTS: usize = 10;

/// The key of deployment `id`'s snapshot.
pub fn snapshot_key(id: &str) -> String {
    format!("sitefile:{id}")
}

/// The key of deployment `id`'s revision.
pub fn revision_key(id: &str) -> String {
    format!("index:revision:{id}")
}

/// The writes that publish `snapshot` for deployment `id`, in the order they must be made:
/// the snapshot, then its revision.
pub fn snapshot_writes(id: &str, snapshot: &Snapshot) -> [(String, Vec<u8>); 2] {
    [
        (snapshot_key(id), snapshot.canonical_bytes().to_vec()),
        (revision_key(id), snapshot.revision().as_bytes().to_vec()),
    ]
}

/// A stored snapshot read back; anything but a JSON object of blocks is an error (the host keeps
/// the content it has).
pub fn read_snapshot(bytes: Vec<u8>) -> Result<Snapshot, ParseError> {
    load_bundle(bytes)
}

/// What a host last loaded from the store: the stored revision it read, and the revision the
/// loaded content computes to (the same, unless a version of sitefile that computed revisions
/// differently wrote the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedRevision {
    /// The stored revision read before the load.
    pub stored: String,
    /// The revision serving right after it.
    pub serving: String,
}

/// Whether the store holds other content than the one serving (revision `serving`): a stored
/// revision that differs. Revisions are hashes, not versions, so any difference counts — the
/// store is the truth for its deployment — and no stored revision means nothing to load.
/// `loaded` is what this host loaded last: while the store still holds that revision and the
/// host still serves what it loaded, loading it again would change nothing (and clear every
/// cache each time the host looks), so it is not loaded again. Anything else that changed —
/// another server's write, this host's own reload, a revert to what it loaded before — loads.
pub fn needs_load(serving: &str, stored: Option<&str>, loaded: Option<&LoadedRevision>) -> bool {
    let Some(stored) = stored.filter(|s| !s.is_empty()) else {
        return false;
    };
    let same_load = loaded.is_some_and(|l| l.stored == stored && l.serving == serving);
    stored != serving && !same_load
}

/// One entry of the deployment bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeploymentEntry {
    /// The deployment id.
    pub id: String,
    /// When its snapshot was written, in milliseconds since the epoch.
    pub ts: i64,
}

/// The bookkeeping after a deployment's snapshot was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentRecord {
    /// The new value of [`DEPLOYMENTS_KEY`].
    pub list: Vec<u8>,
    /// Deployments dropped from it, whose snapshot and revision keys the host deletes.
    pub pruned: Vec<String>,
}

/// Records deployment `id` written at `ts` (milliseconds) in the bookkeeping `stored` (the value
/// of [`DEPLOYMENTS_KEY`], if any; unreadable bookkeeping starts afresh): it moves to the end,
/// and past [`RETAINED_DEPLOYMENTS`] the oldest go, except the `live` one.
pub fn record_deployment(
    stored: Option<&[u8]>,
    id: &str,
    ts: i64,
    live: Option<&str>,
) -> DeploymentRecord {
    let mut list: Vec<DeploymentEntry> = stored
        .and_then(|bytes| serde_json::from_slice(bytes).ok())
        .unwrap_or_default();
    list.retain(|entry| entry.id != id);
    list.push(DeploymentEntry {
        id: id.to_string(),
        ts,
    });
    let mut pruned = Vec::new();
    let excess = list.len().saturating_sub(RETAINED_DEPLOYMENTS);
    let mut index = 0;
    list.retain(|entry| {
        let old = index < excess;
        index += 1;
        if old && Some(entry.id.as_str()) != live {
            pruned.push(entry.id.clone());
            return false;
        }
        true
    });
    DeploymentRecord {
        list: serde_json::to_vec(&list).unwrap_or_default(),
        pruned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn a_snapshot_is_written_then_its_revision_and_reads_back_the_same() {
        let snapshot = Snapshot::from_blocks([(
            "pages-home".into(),
            Value::from_json_str(r#"{"name":"Home"}"#).unwrap(),
        )]);
        let [(first, bytes), (second, revision)] = snapshot_writes("abc", &snapshot);
        assert_eq!(
            (first.as_str(), second.as_str()),
            ("sitefile:abc", "index:revision:abc")
        );
        assert_eq!(revision, snapshot.revision().as_bytes());
        let read = read_snapshot(bytes).unwrap();
        assert_eq!(read.revision(), snapshot.revision());
        assert!(read_snapshot(b"[1]".to_vec()).is_err());
    }

    #[test]
    fn only_a_different_stored_revision_is_loaded() {
        assert!(needs_load("r1", Some("r2"), None));
        assert!(!needs_load("r1", Some("r1"), None));
        assert!(!needs_load("r1", None, None));
        assert!(!needs_load("r1", Some(""), None));
        // Another version's revision of the content serving: loaded once, not again.
        let loaded = LoadedRevision {
            stored: "old r1".into(),
            serving: "r1".into(),
        };
        assert!(!needs_load("r1", Some("old r1"), Some(&loaded)));
        assert!(needs_load("r1", Some("r2"), Some(&loaded)), "another write");
        // This host reloaded since (serving r2): the store reverted to what it loaded before.
        assert!(needs_load("r2", Some("old r1"), Some(&loaded)), "a revert");
    }

    #[test]
    fn the_bookkeeping_keeps_the_last_ten_and_the_live_one() {
        let mut stored: Option<Vec<u8>> = Some(b"not json".to_vec());
        let mut pruned = Vec::new();
        for n in 0..12 {
            let record = record_deployment(stored.as_deref(), &format!("d{n}"), n, Some("d0"));
            pruned.extend(record.pruned);
            stored = Some(record.list);
        }
        assert_eq!(pruned, ["d1"], "d0 is live, so it stays beyond the ten");
        let again = record_deployment(stored.as_deref(), "d5", 99, None);
        let list: Vec<DeploymentEntry> = serde_json::from_slice(&again.list).unwrap();
        assert_eq!(list.len(), RETAINED_DEPLOYMENTS);
        assert_eq!(
            list.last().unwrap().id,
            "d5",
            "a rewritten deployment is the newest"
        );
        assert_eq!(again.pruned, ["d0"], "no longer live: the oldest goes");
    }
}
