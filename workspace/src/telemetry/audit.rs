//! Audit rows are written by a background task so tool calls do not wait on the disk; the
//! rows queued meanwhile, and those of the calls ending within [`LINGER`] of the first, are
//! written together, in one transaction.
//!
//! No row is dropped. A call takes its row's place in the queue before it runs
//! ([`AuditSink::reserve`]): when the queue is full (the writer falls behind, or the database
//! is locked or down) the call waits for room up to [`AuditLimits::wait`], and one that finds
//! none is refused before it runs ([`AuditUnavailable`], a 503). A batch the database refuses
//! is written again until it is taken, the queue filling meanwhile. Each incident is logged
//! once when it starts and once when it ends, never per row.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::{self, error::TrySendError};

use crate::storage::{AuditEntry, Store};

/// Most rows written in one transaction.
const BATCH: usize = 256;
/// How long a row waits for others to share its transaction: calls one after another then
/// cost the database one write per interval instead of one each, at the price of rows
/// reaching the log this much later.
const LINGER: Duration = Duration::from_millis(10);
/// The first pause before a batch the database refused is written again; it doubles up to
/// [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest pause between attempts at a refused batch.
const RETRY_MAX: Duration = Duration::from_secs(5);

/// The writer's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditLimits {
    /// Most rows waiting for the writer, counting the places taken by calls in progress
    /// (`PLATFORM_AUDIT_QUEUE_ROWS`).
    pub capacity: usize,
    /// How long a tool call waits for room in a full queue before it is refused
    /// (`PLATFORM_AUDIT_QUEUE_WAIT_MS`).
    pub wait: Duration,
}

impl Default for AuditLimits {
    /// 10,000 rows, and 5 s of waiting (SQLite's busy timeout: a lock the writer waits out,
    /// the calls wait out too).
    fn default() -> Self {
        Self {
            capacity: 10_000,
            wait: Duration::from_secs(5),
        }
    }
}

/// No room in the audit queue within the wait: the call was not run.
#[derive(Debug, thiserror::Error)]
#[error(
    "the audit log is not keeping up: no room in its queue within {} ms, so the call was not \
     run; try again",
    .0.as_millis()
)]
pub struct AuditUnavailable(Duration);

/// A row's place in the audit queue, taken before the call it records runs.
pub struct AuditSlot<'a>(mpsc::Permit<'a, AuditEntry>);

impl AuditSlot<'_> {
    /// Queues the call's row in its place: never waits, never fails. A NUL in the tool's name
    /// (a name an upstream listed, which a run may call) is replaced: PostgreSQL refuses NUL in
    /// text, and a row the database can never take would hold up the writer for good.
    pub fn record(self, mut entry: AuditEntry) {
        if entry.tool.contains('\0') {
            entry.tool = entry.tool.replace('\0', "\u{FFFD}");
        }
        self.0.send(entry);
    }
}

/// The current full-queue incident: from a call finding the queue full to the queue being
/// at most half full again.
#[derive(Default)]
struct Pressure {
    /// Whether an incident is in progress.
    full: AtomicBool,
    /// Calls that waited for room during it.
    waited: AtomicU64,
    /// Calls refused during it.
    refused: AtomicU64,
}

/// Sends audit rows to the writer task.
#[derive(Clone)]
pub struct AuditSink {
    tx: mpsc::Sender<AuditEntry>,
    limits: AuditLimits,
    pressure: Arc<Pressure>,
}

impl AuditSink {
    /// Starts the writer task over `store`.
    pub fn start(store: Store, limits: AuditLimits) -> Self {
        let (tx, rx) = mpsc::channel::<AuditEntry>(limits.capacity);
        let pressure = Arc::new(Pressure::default());
        tokio::spawn(write_rows(store, rx, limits, pressure.clone()));
        Self {
            tx,
            limits,
            pressure,
        }
    }

    /// A place in the queue for the row of a call about to run; when the queue is full, waits
    /// for one up to [`AuditLimits::wait`].
    pub async fn reserve(&self) -> Result<AuditSlot<'_>, AuditUnavailable> {
        let refused = || AuditUnavailable(self.limits.wait);
        match self.tx.try_reserve() {
            Ok(permit) => return Ok(AuditSlot(permit)),
            Err(TrySendError::Closed(())) => return Err(refused()),
            Err(TrySendError::Full(())) => {}
        }
        let pressure = &self.pressure;
        if !pressure.full.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                capacity = self.limits.capacity,
                wait_ms = self.limits.wait.as_millis() as u64,
                "audit queue full: tool calls wait for room, and are refused with 503 when \
                 none comes within the wait"
            );
        }
        pressure.waited.fetch_add(1, Ordering::Relaxed);
        match tokio::time::timeout(self.limits.wait, self.tx.reserve()).await {
            Ok(Ok(permit)) => Ok(AuditSlot(permit)),
            Ok(Err(_)) | Err(_) => {
                pressure.refused.fetch_add(1, Ordering::Relaxed);
                Err(refused())
            }
        }
    }
}

/// The writer task: batches of queued rows, each written in one transaction; after each, the
/// end of a full-queue incident is logged once the queue is at most half full. A batch takes
/// every row queued meanwhile (`recv_many`, up to [`BATCH`]) and, once it has one, the rows of
/// calls ending within [`LINGER`]. Writing a batch as one multi-row `INSERT` instead of a
/// transaction of single-row ones was tried on the `proxy_overhead` bench and dropped: 3 % more
/// calls/s, but a worse p50.
async fn write_rows(
    store: Store,
    mut rx: mpsc::Receiver<AuditEntry>,
    limits: AuditLimits,
    pressure: Arc<Pressure>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        let _ = tokio::time::timeout(LINGER, async {
            let mut room = BATCH - batch.len();
            while room > 0 && rx.recv_many(&mut batch, room).await > 0 {
                room = BATCH - batch.len();
            }
        })
        .await;
        write_batch(&store, &batch).await;
        batch.clear();
        // Room counts the places calls in progress hold, not only the rows queued.
        if rx.capacity() >= limits.capacity / 2 && pressure.full.swap(false, Ordering::Relaxed) {
            tracing::warn!(
                waited = pressure.waited.swap(0, Ordering::Relaxed),
                refused = pressure.refused.swap(0, Ordering::Relaxed),
                "audit queue has room again"
            );
        }
    }
}

/// Writes `batch`, again and again until the database takes it; the first refusal and the
/// recovery are logged.
async fn write_batch(store: &Store, batch: &[AuditEntry]) {
    let mut pause = RETRY_FIRST;
    let mut failures = 0u64;
    loop {
        match store.insert_audit(batch).await {
            Ok(()) if failures == 0 => return,
            Ok(()) => {
                tracing::warn!(
                    failures,
                    rows = batch.len(),
                    "audit rows written after the database refused them"
                );
                return;
            }
            Err(error) => {
                if failures == 0 {
                    let error = store.error(error);
                    tracing::error!(
                        %error,
                        rows = batch.len(),
                        "audit rows not written: trying again until the database takes them"
                    );
                }
                failures += 1;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(RETRY_MAX);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_nul_in_a_tool_name_never_reaches_the_database() {
        let (tx, mut rx) = mpsc::channel(1);
        let entry = AuditEntry {
            org_id: "o".into(),
            at: 0,
            actor: "a".into(),
            surface: "run".into(),
            connection_id: None,
            tool: "bad\0name".into(),
            outcome: "success".into(),
            duration_ms: 0,
            request_id: "r".into(),
        };
        AuditSlot(tx.reserve().await.unwrap()).record(entry);
        assert_eq!(rx.recv().await.unwrap().tool, "bad\u{FFFD}name");
    }
}
