//! Fast Deploy as a host follows its deployment in the key-value store. The host reads and
//! writes the store; [`Replica`] decides what to read and when, what a read changes, and
//! whether a reload may write. `sitefile serve` (Redis) and the edge-worker binding (a KV
//! namespace) follow the same rules; the layout of the keys is `content::fast_deploy`'s.

use super::Site;
use crate::content::Snapshot;
use crate::content::fast_deploy::{
    LoadedRevision, needs_load, read_snapshot, revision_key, snapshot_key, snapshot_writes,
};
use chrono::{DateTime, TimeDelta, Utc};
use parking_lot::Mutex;
use serde::Serialize;

/// How often an edge host reads its deployment's revision: at most every 10 seconds per
/// isolate, in the background of a request (the reference's poll; a read is billed).
pub const EDGE_POLL_EVERY: TimeDelta = TimeDelta::seconds(10);

/// How long a pass may stay unfinished before [`Replica::due`] hands out another (a host that
/// dropped one — its background work cut off — would otherwise never read again); the late
/// pass's answers then change nothing.
pub const PASS_LEASE: TimeDelta = TimeDelta::seconds(30);

/// One host's standing with its deployment's snapshot in the key-value store: what it loaded
/// last, and whether its last read of the store succeeded. A host whose last read failed (or
/// that has not read yet) refuses reloads: it does not write over a store it could not read.
#[derive(Debug)]
pub struct Replica {
    id: String,
    standing: Mutex<Standing>,
}

#[derive(Debug, Default)]
struct Standing {
    /// A pass is handed out and not finished.
    reading: bool,
    /// The number of the last pass handed out: only its answers count.
    pass: u64,
    /// The first pass finished.
    started: bool,
    /// The last pass read the store: this host has seen what it holds.
    in_step: bool,
    /// When the last pass was handed out.
    last_read: Option<DateTime<Utc>>,
    /// What this host loaded from the store last ([`needs_load`]).
    loaded: Option<LoadedRevision>,
}

/// One pass over the store: the reads it needs, one at a time ([`KvSync::step`]), each
/// answered by the host ([`KvSync::answer`]).
#[derive(Debug)]
pub struct KvSync {
    /// Its number ([`Standing::pass`]).
    pass: u64,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// The deployment's revision, to compare with the serving one.
    Revision,
    /// The deployment's snapshot; `stored` is the revision read before it (none at start).
    Snapshot {
        stored: Option<String>,
    },
    Done(Synced),
}

/// What a pass asks of the host next.
#[derive(Debug, PartialEq, Eq)]
pub enum KvStep<'a> {
    /// Read this key (`None` when it holds nothing).
    Get(String),
    /// The pass is over.
    Done(&'a Synced),
}

/// How a pass ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "synced", rename_all = "camelCase")]
pub enum Synced {
    /// The store holds what serves.
    Unchanged,
    /// The store's snapshot serves now.
    Loaded {
        /// Its revision.
        revision: String,
    },
    /// The store holds no snapshot of the deployment: the host's own content serves.
    Empty,
    /// The store could not be read, or held no readable snapshot: the content serving keeps
    /// serving, and reloads are refused until a pass reads the store.
    Failed {
        /// Why.
        message: String,
    },
}

impl Standing {
    /// Hands out the next pass.
    fn hand_out(&mut self, phase: Phase) -> KvSync {
        self.reading = true;
        self.pass += 1;
        KvSync {
            pass: self.pass,
            phase,
        }
    }
}

impl Replica {
    /// The standing of a host serving deployment `id`, before it read the store.
    pub fn new(id: impl Into<String>) -> Replica {
        Replica {
            id: id.into(),
            standing: Mutex::new(Standing::default()),
        }
    }

    /// The deployment id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The key of the deployment's snapshot.
    pub fn snapshot_key(&self) -> String {
        snapshot_key(&self.id)
    }

    /// The pass an edge host runs now, if any: the first reads the snapshot (the request
    /// waits for it, and concurrent first requests share it); later ones read the revision at
    /// most every [`EDGE_POLL_EVERY`], one at a time (a pass unfinished for [`PASS_LEASE`] is
    /// given up).
    pub fn due(&self, now: DateTime<Utc>) -> Option<KvSync> {
        let mut standing = self.standing.lock();
        let since = |every: TimeDelta| {
            standing
                .last_read
                .is_none_or(|last| now.signed_duration_since(last) >= every)
        };
        if standing.reading && !since(PASS_LEASE) {
            return None;
        }
        let phase = if !standing.started {
            Phase::Snapshot { stored: None }
        } else if since(EDGE_POLL_EVERY) {
            Phase::Revision
        } else {
            return None;
        };
        standing.last_read = Some(now);
        Some(standing.hand_out(phase))
    }

    /// A pass reading the revision now, for a host that keeps its own timer (`sitefile serve`
    /// reads every second).
    pub fn refresh(&self) -> KvSync {
        self.standing.lock().hand_out(Phase::Revision)
    }

    /// Notes how a host that read the store at start by itself (`sitefile serve`, which builds
    /// its site from the snapshot) fared: `read` is whether it read the store.
    pub fn started(&self, read: bool) {
        let mut standing = self.standing.lock();
        standing.started = true;
        standing.in_step = read;
    }

    /// The writes of a reload's new snapshot, in order (the snapshot, then its revision, the
    /// change detector) — refused while this host's last read of the store failed.
    pub fn writes(&self, snapshot: &Snapshot) -> Result<[(String, Vec<u8>); 2], String> {
        let standing = self.standing.lock();
        if !standing.in_step {
            let since = if standing.started {
                "its last read failed"
            } else {
                "it started"
            };
            return Err(format!(
                "the key-value store has not been read since {since}; reloads are refused until \
                 this host has loaded what the store holds for deployment {}",
                self.id
            ));
        }
        Ok(snapshot_writes(&self.id, snapshot))
    }

    /// The write that puts `serving` back as the deployment's snapshot: what a host writes when a
    /// reload's snapshot reached the store but its revision did not, so that the store keeps the
    /// content the reload was refused over.
    pub fn restore(&self, serving: &Snapshot) -> (String, Vec<u8>) {
        (self.snapshot_key(), serving.canonical_bytes().to_vec())
    }

    /// Ends pass `pass` (ignored when a later one was handed out).
    fn finish(&self, pass: u64, synced: &Synced, loaded: Option<LoadedRevision>) {
        let mut standing = self.standing.lock();
        if standing.pass != pass {
            return;
        }
        standing.reading = false;
        standing.started = true;
        standing.in_step = !matches!(synced, Synced::Failed { .. });
        if loaded.is_some() {
            standing.loaded = loaded;
        }
    }
}

impl KvSync {
    /// What the host does next.
    pub fn step(&self, replica: &Replica) -> KvStep<'_> {
        match &self.phase {
            Phase::Revision => KvStep::Get(revision_key(&replica.id)),
            Phase::Snapshot { .. } => KvStep::Get(replica.snapshot_key()),
            Phase::Done(synced) => KvStep::Done(synced),
        }
    }

    /// Answers the read [`KvSync::step`] asked for: the key's value (`None`: nothing stored),
    /// or why the store could not be read. A snapshot read is served on `site` at once when it
    /// differs from the content serving.
    pub fn answer(
        &mut self,
        replica: &Replica,
        site: &Site,
        read: Result<Option<Vec<u8>>, String>,
    ) {
        if replica.standing.lock().pass != self.pass {
            let message = "a later pass took this one's place".to_string();
            self.phase = Phase::Done(Synced::Failed { message });
            return;
        }
        let phase = std::mem::replace(&mut self.phase, Phase::Revision);
        let (synced, loaded) = match (phase, read) {
            (Phase::Done(synced), _) => {
                self.phase = Phase::Done(synced);
                return;
            }
            (_, Err(message)) => (Synced::Failed { message }, None),
            (Phase::Revision, Ok(value)) => {
                let stored = value.and_then(|bytes| String::from_utf8(bytes).ok());
                let loaded = replica.standing.lock().loaded.clone();
                if needs_load(&site.revision(), stored.as_deref(), loaded.as_ref()) {
                    self.phase = Phase::Snapshot { stored };
                    return;
                }
                (Synced::Unchanged, None)
            }
            (Phase::Snapshot { .. }, Ok(None)) => (Synced::Empty, None),
            (Phase::Snapshot { stored }, Ok(Some(bytes))) => load(replica, site, stored, bytes),
        };
        replica.finish(self.pass, &synced, loaded);
        self.phase = Phase::Done(synced);
    }
}

/// Serves a snapshot read from the store unless the content serving is the same.
fn load(
    replica: &Replica,
    site: &Site,
    stored: Option<String>,
    bytes: Vec<u8>,
) -> (Synced, Option<LoadedRevision>) {
    let snapshot = match read_snapshot(bytes) {
        Ok(snapshot) => snapshot,
        Err(e) => {
            let message = format!("{}: {e}", replica.snapshot_key());
            return (Synced::Failed { message }, None);
        }
    };
    let revision = snapshot.revision().to_string();
    let serving = site.revision();
    // What the snapshot read is noted as loaded only when it is the stored revision's (at start
    // no revision was read: it is). Otherwise it is a copy from before the revision changed — a
    // write under way, or a copy the store's edge cache kept — and the next pass reads again.
    let settled = stored.as_deref().is_none_or(|stored| stored == revision);
    let loaded = |serving: String| {
        settled.then(|| LoadedRevision {
            stored: stored.clone().unwrap_or_else(|| revision.clone()),
            serving,
        })
    };
    if serving == revision {
        return (Synced::Unchanged, loaded(serving));
    }
    if !site.replace_content_if(&serving, snapshot) {
        // Another change landed meanwhile; the next pass compares again.
        return (Synced::Unchanged, None);
    }
    let loaded = loaded(site.revision());
    (Synced::Loaded { revision }, loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SiteSetup;

    fn site(blocks: &str) -> Site {
        let snapshot = crate::load_bundle(blocks.as_bytes().to_vec()).unwrap();
        Site::new(snapshot, SiteSetup::default()).unwrap()
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    /// Runs a pass against `store` (key → value; `None`: the store fails).
    fn run(
        replica: &Replica,
        site: &Site,
        mut sync: KvSync,
        store: Option<&[(String, Vec<u8>)]>,
    ) -> (Synced, Vec<String>) {
        let mut read = Vec::new();
        loop {
            let key = match sync.step(replica) {
                KvStep::Done(synced) => return (synced.clone(), read),
                KvStep::Get(key) => key,
            };
            let value = match store {
                None => Err("connection refused".to_string()),
                Some(entries) => Ok(entries.iter().find(|(k, _)| *k == key).map(|e| e.1.clone())),
            };
            read.push(key);
            sync.answer(replica, site, value);
        }
    }

    #[test]
    fn the_first_pass_loads_the_snapshot_and_later_ones_poll_the_revision_every_ten_seconds() {
        let bundled = site(r#"{"a":{"v":1}}"#);
        let stored = site(r#"{"a":{"v":2}}"#).snapshot();
        let replica = Replica::new("d1");
        let store = snapshot_writes("d1", &stored);
        let first = replica.due(at(0)).expect("the start");
        assert!(replica.due(at(0)).is_none(), "one pass at a time");
        let (synced, read) = run(&replica, &bundled, first, Some(&store));
        assert_eq!(
            synced,
            Synced::Loaded {
                revision: stored.revision().to_string()
            }
        );
        assert_eq!(read, ["sitefile:d1"]);
        assert_eq!(bundled.revision(), stored.revision());
        assert!(replica.due(at(9)).is_none(), "within ten seconds");
        let poll = replica.due(at(10)).expect("ten seconds on");
        let (synced, read) = run(&replica, &bundled, poll, Some(&store));
        assert_eq!(synced, Synced::Unchanged);
        assert_eq!(read, ["index:revision:d1"], "the revision only");
    }

    #[test]
    fn a_poll_loads_what_another_host_wrote() {
        let served = site(r#"{"a":{"v":1}}"#);
        let replica = Replica::new("d1");
        let (synced, _) = run(&replica, &served, replica.due(at(0)).unwrap(), Some(&[]));
        assert_eq!(
            synced,
            Synced::Empty,
            "no snapshot: the bundled content serves"
        );
        let newer = site(r#"{"a":{"v":3}}"#).snapshot();
        let store = snapshot_writes("d1", &newer);
        let (synced, read) = run(
            &replica,
            &served,
            replica.due(at(10)).unwrap(),
            Some(&store),
        );
        assert!(matches!(synced, Synced::Loaded { .. }), "{synced:?}");
        assert_eq!(read, ["index:revision:d1", "sitefile:d1"]);
        assert_eq!(served.revision(), newer.revision());
    }

    #[test]
    fn a_failed_read_keeps_the_content_and_refuses_reloads_until_a_read_succeeds() {
        let served = site(r#"{"a":{"v":1}}"#);
        let before = served.revision();
        let replica = Replica::new("d1");
        let (synced, _) = run(&replica, &served, replica.due(at(0)).unwrap(), None);
        assert!(matches!(synced, Synced::Failed { .. }), "{synced:?}");
        assert_eq!(served.revision(), before);
        let refused = replica.writes(&served.snapshot()).unwrap_err();
        assert!(refused.contains("its last read failed"), "{refused}");
        run(&replica, &served, replica.due(at(10)).unwrap(), Some(&[]));
        let writes = replica.writes(&served.snapshot()).expect("in step again");
        assert_eq!(writes[0].0, "sitefile:d1");
        assert_eq!(
            writes[1],
            ("index:revision:d1".to_string(), before.into_bytes())
        );
    }

    #[test]
    fn a_pass_left_unfinished_is_given_up_after_its_lease_and_its_late_answers_change_nothing() {
        let served = site(r#"{"a":{"v":1}}"#);
        let replica = Replica::new("d1");
        run(&replica, &served, replica.due(at(0)).unwrap(), Some(&[]));
        let mut dropped = replica.due(at(10)).expect("a poll");
        assert!(replica.due(at(39)).is_none(), "within the lease");
        let fresh = replica.due(at(40)).expect("the lease is over");
        let newer = site(r#"{"a":{"v":2}}"#).snapshot();
        let store = snapshot_writes("d1", &newer);
        dropped.answer(&replica, &served, Ok(Some(store[1].1.clone())));
        assert!(
            matches!(dropped.step(&replica), KvStep::Done(Synced::Failed { .. })),
            "superseded"
        );
        assert_ne!(
            served.revision(),
            newer.revision(),
            "the late pass loaded nothing"
        );
        let (synced, _) = run(&replica, &served, fresh, Some(&store));
        assert!(matches!(synced, Synced::Loaded { .. }), "{synced:?}");
    }

    #[test]
    fn a_snapshot_older_than_the_revision_read_before_it_is_read_again_at_the_next_pass() {
        // The store's edge cache still hands out the snapshot this host serves, under a newer
        // revision: nothing is noted as loaded, so the next pass reads the snapshot again.
        let served = site(r#"{"a":{"v":1}}"#);
        let replica = Replica::new("d1");
        let old = snapshot_writes("d1", &served.snapshot());
        run(&replica, &served, replica.due(at(0)).unwrap(), Some(&old));
        let newer = site(r#"{"a":{"v":2}}"#).snapshot();
        let new = snapshot_writes("d1", &newer);
        let cached = [old[0].clone(), new[1].clone()];
        let (synced, read) = run(
            &replica,
            &served,
            replica.due(at(10)).unwrap(),
            Some(&cached),
        );
        assert_eq!(synced, Synced::Unchanged);
        assert_eq!(read.len(), 2, "the snapshot was read");
        let (synced, _) = run(&replica, &served, replica.due(at(20)).unwrap(), Some(&new));
        assert!(
            matches!(synced, Synced::Loaded { .. }),
            "read again: {synced:?}"
        );
        assert_eq!(served.revision(), newer.revision());
    }

    #[test]
    fn a_refused_reload_puts_the_serving_snapshot_back() {
        let served = site(r#"{"a":{"v":1}}"#);
        let replica = Replica::new("d1");
        let (key, bytes) = replica.restore(&served.snapshot());
        assert_eq!(key, "sitefile:d1");
        assert_eq!(read_snapshot(bytes).unwrap().revision(), served.revision());
    }

    #[test]
    fn an_unreadable_snapshot_is_a_failure_and_the_content_keeps_serving() {
        let served = site(r#"{"a":{"v":1}}"#);
        let before = served.revision();
        let replica = Replica::new("d1");
        let store = [("sitefile:d1".to_string(), b"[1, 2]".to_vec())];
        let (synced, _) = run(&replica, &served, replica.due(at(0)).unwrap(), Some(&store));
        let Synced::Failed { message } = synced else {
            panic!("{synced:?}")
        };
        assert!(message.starts_with("sitefile:d1: "), "{message}");
        assert_eq!(served.revision(), before);
    }
}
