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
pub struct RevisionReader {
    source: Source,
    /// Where the database is, for errors.
    location: Arc<str>,
}

/// How the revision is read.
#[derive(Clone)]
enum Source {
    /// SQLite: on the request's own thread ([`SqliteRevision`]), no round trip.
    Local(Arc<SqliteRevision>),
    /// A database server: one read at a time by a task ([`RevisionConnection`]), each
    /// answering all the requests queued before it began. So every answer comes from a read
    /// that started after its request asked, while concurrent requests share one round trip.
    Batched(mpsc::Sender<Reply>),
}

impl RevisionReader {
    /// A reader of `store`'s revision; on a database server its reading task is started
    /// (inside a tokio runtime), and ends with the last clone of the reader.
    pub fn start(store: &Store) -> Self {
        let source = match SqliteRevision::of(store) {
            Some(revision) => Source::Local(Arc::new(revision)),
            None => Source::Batched(batched(RevisionConnection::new(store.clone()))),
        };
        Self {
            source,
            location: store.location().into(),
        }
    }

    /// The revision, from a read that began after this call.
    pub async fn read(&self) -> Result<i64, ApiError> {
        let failed = |error: &dyn std::fmt::Display| {
            ApiError::Internal(format!("database {}: {error}", self.location))
        };
        match &self.source {
            Source::Local(revision) => revision.read().map_err(|error| failed(&error)),
            Source::Batched(tx) => {
                let stopped =
                    || ApiError::Internal("the authorization revision reader stopped".into());
                let (reply, answer) = oneshot::channel();
                tx.send(reply).await.map_err(|_| stopped())?;
                answer
                    .await
                    .map_err(|_| stopped())?
                    .map_err(|error| failed(&error))
            }
        }
    }
}

/// Starts the task reading through `connection` for every request queued on the returned
/// sender.
fn batched(mut connection: RevisionConnection) -> mpsc::Sender<Reply> {
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
    tx
}
