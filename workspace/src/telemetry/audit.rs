//! Audit rows are written by a background task so tool calls do not wait on the disk; the
//! rows queued meanwhile, and those of the calls ending within [`LINGER`] of the first, are
//! written together, in one transaction.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::storage::{AuditEntry, Store};

/// Queue capacity; when full, rows are dropped with a warning rather than blocking calls.
const CAPACITY: usize = 10_000;
/// Most rows written in one transaction.
const BATCH: usize = 256;
/// How long a row waits for others to share its transaction: calls one after another then
/// cost the database one write per interval instead of one each, at the price of rows
/// reaching the log this much later.
const LINGER: Duration = Duration::from_millis(10);

/// Sends audit rows to the writer task.
#[derive(Clone)]
pub struct AuditSink {
    tx: mpsc::Sender<AuditEntry>,
}

impl AuditSink {
    /// Starts the writer task over `store`.
    pub fn start(store: Store) -> Self {
        let (tx, mut rx) = mpsc::channel::<AuditEntry>(CAPACITY);
        tokio::spawn(async move {
            let mut batch = Vec::with_capacity(BATCH);
            while rx.recv_many(&mut batch, BATCH).await > 0 {
                let _ = tokio::time::timeout(LINGER, async {
                    let mut room = BATCH - batch.len();
                    while room > 0 && rx.recv_many(&mut batch, room).await > 0 {
                        room = BATCH - batch.len();
                    }
                })
                .await;
                if let Err(error) = store.insert_audit(&batch).await {
                    let error = store.error(error);
                    tracing::warn!(%error, rows = batch.len(), "audit rows not written");
                }
                batch.clear();
            }
        });
        Self { tx }
    }

    /// Queues a row.
    pub fn record(&self, entry: AuditEntry) {
        if self.tx.try_send(entry).is_err() {
            tracing::warn!("audit queue full; row dropped");
        }
    }
}
