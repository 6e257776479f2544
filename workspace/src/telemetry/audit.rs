//! Audit rows are written by a background task so tool calls do not wait on the disk.

use tokio::sync::mpsc;

use crate::storage::{AuditEntry, Store};

/// Queue capacity; when full, rows are dropped with a warning rather than blocking calls.
const CAPACITY: usize = 10_000;

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
            while let Some(entry) = rx.recv().await {
                if let Err(error) = store.insert_audit(&entry).await {
                    let error = store.error(error);
                    tracing::warn!(%error, tool = %entry.tool, "audit row not written");
                }
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
