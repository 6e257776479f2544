//! The authorization revision as requests see it: one database read answers every request
//! that was waiting when the read started.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::error::ApiError;
use crate::storage::RevisionConnection;

/// Most requests one read answers (and so how many may wait for the next one before the
/// queue pushes back).
const BATCH: usize = 4096;

/// Where a read's outcome goes.
type Reply = oneshot::Sender<Result<i64, Arc<sqlx::Error>>>;

/// Reads the authorization revision ([`RevisionConnection`]) for requests, one read at a time, each answering all
/// the requests queued before it began. So every answer comes from a read that started
/// after its request asked: a write committed on any server before a request arrived is
/// seen by it, while concurrent requests share one round trip to the database.
#[derive(Clone)]
pub struct RevisionReader {
    tx: mpsc::Sender<Reply>,
    location: Arc<str>,
}

impl RevisionReader {
    /// Starts the reading task over `connection` (inside a tokio runtime); it ends with
    /// the last clone of the reader.
    pub fn start(mut connection: RevisionConnection) -> Self {
        let (tx, mut rx) = mpsc::channel::<Reply>(BATCH);
        let location = connection.location().into();
        tokio::spawn(async move {
            let mut waiting = Vec::with_capacity(BATCH);
            while rx.recv_many(&mut waiting, BATCH).await > 0 {
                let read = connection.read().await.map_err(Arc::new);
                for reply in waiting.drain(..) {
                    let _ = reply.send(read.clone());
                }
            }
        });
        Self { tx, location }
    }

    /// The revision, from a read that began after this call.
    pub async fn read(&self) -> Result<i64, ApiError> {
        let stopped = || ApiError::Internal("the authorization revision reader stopped".into());
        let (reply, answer) = oneshot::channel();
        self.tx.send(reply).await.map_err(|_| stopped())?;
        match answer.await.map_err(|_| stopped())? {
            Ok(revision) => Ok(revision),
            Err(error) => Err(ApiError::Internal(format!(
                "database {}: {error}",
                self.location
            ))),
        }
    }
}
