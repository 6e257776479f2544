//! The authorization revision as requests see it: read afresh for every request, so a write
//! committed on any server before the request arrived is seen by it.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::error::ApiError;
use crate::storage::{RevisionConnection, SqliteRevision, Store};

/// Most requests one read answers (and so how many may wait for the next one before the
/// queue pushes back).
const BATCH: usize = 4096;

/// Where a read's outcome goes.
type Reply = oneshot::Sender<Result<i64, Arc<sqlx::Error>>>;

/// Reads the authorization revision for requests, by the cheapest way the backend allows.
#[derive(Clone)]
pub enum RevisionReader {
    /// SQLite: read on the request's own thread ([`SqliteRevision`]), no round trip.
    Local {
        /// The reading connection.
        revision: Arc<SqliteRevision>,
        /// Where the database is, for errors.
        location: Arc<str>,
    },
    /// A database server: one read at a time by a task ([`RevisionConnection`]), each
    /// answering all the requests queued before it began. So every answer comes from a read
    /// that started after its request asked, while concurrent requests share one round trip.
    Batched {
        /// The queue of requests waiting for the next read.
        tx: mpsc::Sender<Reply>,
        /// Where the database is, for errors.
        location: Arc<str>,
    },
}

impl RevisionReader {
    /// A reader of `store`'s revision; on a database server its reading task is started
    /// (inside a tokio runtime), and ends with the last clone of the reader.
    pub fn start(store: &Store) -> Self {
        let location: Arc<str> = store.location().into();
        if let Some(revision) = SqliteRevision::of(store) {
            return Self::Local {
                revision: Arc::new(revision),
                location,
            };
        }
        let mut connection = RevisionConnection::new(store.clone());
        let (tx, mut rx) = mpsc::channel::<Reply>(BATCH);
        tokio::spawn(async move {
            let mut waiting = Vec::with_capacity(BATCH);
            while rx.recv_many(&mut waiting, BATCH).await > 0 {
                let read = connection.read().await.map_err(Arc::new);
                for reply in waiting.drain(..) {
                    let _ = reply.send(read.clone());
                }
            }
        });
        Self::Batched { tx, location }
    }

    /// The revision, from a read that began after this call.
    pub async fn read(&self) -> Result<i64, ApiError> {
        let failed = |location: &str, error: &dyn std::fmt::Display| {
            ApiError::Internal(format!("database {location}: {error}"))
        };
        match self {
            Self::Local { revision, location } => {
                revision.read().map_err(|error| failed(location, &error))
            }
            Self::Batched { tx, location } => {
                let stopped =
                    || ApiError::Internal("the authorization revision reader stopped".into());
                let (reply, answer) = oneshot::channel();
                tx.send(reply).await.map_err(|_| stopped())?;
                answer
                    .await
                    .map_err(|_| stopped())?
                    .map_err(|error| failed(location, &error))
            }
        }
    }
}
