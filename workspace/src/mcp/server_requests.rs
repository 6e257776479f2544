//! Requests an upstream sends to the downstream client of a session (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`, `ping`), awaiting the client's answer. Each is relayed
//! under an id of the proxy's own, unique in this process, so ids of different upstream
//! sessions never meet; the client's answer names that id and is forwarded, under the
//! upstream's id, to the upstream session it came from, or handed to the proxy itself when the
//! request is one of a stateless upstream's multi round-trip requests translated for a session
//! client (see [`super::mrtr`]). A session holds a bounded number of them, each for a bounded
//! time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio_util::task::AbortOnDropHandle;

/// The next id the proxy gives a relayed request (process-wide).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// How many requests of one session may await the client, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct RequestBounds {
    /// Most requests awaiting the client's answer at once; beyond it the upstream's request
    /// is answered with an error and not relayed.
    pub pending: usize,
    /// How long the client has to answer; then the upstream gets an error answer.
    pub timeout: Duration,
}

/// Who awaits the client's answer to a relayed request.
pub enum Asker {
    /// The upstream session, which sent the request under this id.
    Upstream(Value),
    /// The proxy, translating a multi round-trip request.
    Proxy(tokio::sync::oneshot::Sender<Value>),
}

struct Pending {
    asker: Asker,
    /// The timer answering the upstream when the client does not; dropping it stops it.
    timer: Option<AbortOnDropHandle<()>>,
}

/// The requests of one session that await the client's answer.
pub struct ServerRequests {
    bounds: RequestBounds,
    pending: Mutex<HashMap<u64, Pending>>,
}

/// Too many requests already await the client.
#[derive(Debug)]
pub struct TooMany;

impl ServerRequests {
    /// An empty table with these bounds.
    pub fn new(bounds: RequestBounds) -> Self {
        Self {
            bounds,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// The bounds of this table.
    pub fn bounds(&self) -> RequestBounds {
        self.bounds
    }

    /// Records a request `asker` awaits the answer to; returns the id to relay it under, or
    /// [`TooMany`] when the session already holds its bound.
    pub fn register(&self, asker: Asker) -> Result<u64, TooMany> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.len() >= self.bounds.pending.max(1) {
            return Err(TooMany);
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        pending.insert(id, Pending { asker, timer: None });
        Ok(id)
    }

    /// Ties the timeout timer to the request `id` (stopped when the request is answered or
    /// the session dropped).
    pub fn set_timer(&self, id: u64, timer: AbortOnDropHandle<()>) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = pending.get_mut(&id) {
            entry.timer = Some(timer);
        }
    }

    /// Removes the request the client answers under `id` (its answer's `id`) and stops its
    /// timer; who awaits the answer, or `None` when no such request awaits one here.
    pub fn take(&self, id: &Value) -> Option<Asker> {
        let id = id.as_u64()?;
        let entry = self.remove(id)?;
        Some(entry.asker)
    }

    /// Removes the request `id` whose time is up (called by its own timer, which is left to
    /// finish, or by the proxy that stopped waiting); who awaited it, unless it was answered
    /// meanwhile.
    pub fn expire(&self, id: u64) -> Option<Asker> {
        let entry = self.remove(id)?;
        if let Some(timer) = entry.timer {
            timer.detach();
        }
        Some(entry.asker)
    }

    /// Removes the request the upstream sent under `upstream_id` (it cancelled it); the id
    /// the client knows it by.
    pub fn cancel(&self, upstream_id: &Value) -> Option<u64> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let id = *pending
            .iter()
            .find(|(_, entry)| matches!(&entry.asker, Asker::Upstream(id) if id == upstream_id))?
            .0;
        pending.remove(&id);
        Some(id)
    }

    fn remove(&self, id: u64) -> Option<Pending> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.remove(&id)
    }
}
