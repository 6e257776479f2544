//! The connection slots of [`super::serve`] and its fairness rule: which connections wait for
//! a request head, and which one is closed to make room when every slot is taken.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The shortest pause of the accept loop between two looks for a reclaimable slot.
const RECHECK_FLOOR: Duration = Duration::from_millis(20);

/// What the accept loop knows of one open connection.
pub(super) struct Tracked {
    /// Its number, in the order connections were accepted.
    pub(super) id: u64,
    /// Since when it has been waiting for a request head; `None` while inside a request.
    waiting_since: Mutex<Option<Instant>>,
    /// Whether bytes of a head came in while waiting (a head in progress, maybe a slowloris).
    pub(super) head_begun: AtomicBool,
    /// Whether it was chosen to make room (it is not chosen twice).
    pub(super) evicted: AtomicBool,
    /// Tells the connection's task to close it. A silent or idle connection is closed through
    /// hyper's graceful shutdown, so an answer still being written is finished first; one with
    /// head bytes in (`head_begun`) is dropped, because graceful shutdown would not close it.
    pub(super) evict: Notify,
}

impl Tracked {
    fn new(id: u64) -> Tracked {
        Tracked {
            id,
            waiting_since: Mutex::new(Some(Instant::now())),
            head_begun: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            evict: Notify::new(),
        }
    }

    /// A request head was read: the connection is working, never closed for room.
    pub(super) fn busy(&self) {
        *self.waiting_since.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.head_begun.store(false, Ordering::Release);
    }

    /// The answer was sent: the connection waits for its next head from now.
    pub(super) fn waiting(&self) {
        self.head_begun.store(false, Ordering::Release);
        *self.waiting_since.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    /// Since when it has been waiting for a head; `None` while inside a request.
    pub(super) fn since(&self) -> Option<Instant> {
        *self.waiting_since.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes arrived; while waiting, they are a head in progress.
    pub(super) fn read_some(&self) {
        if self.since().is_some() {
            self.head_begun.store(true, Ordering::Release);
        }
    }
}

/// A connection's slot and its tracking, both given back when this is dropped: when the
/// connection ended, or when it was dropped before it was served (a worker gone, a runtime
/// stopped).
pub(super) struct Occupied {
    slots: Arc<Slots>,
    id: u64,
    _slot: OwnedSemaphorePermit,
}

impl Drop for Occupied {
    fn drop(&mut self) {
        self.slots.open().remove(&self.id);
    }
}

/// The open connections and their slots.
pub(super) struct Slots {
    permits: Arc<Semaphore>,
    open: Mutex<HashMap<u64, Arc<Tracked>>>,
    next_id: AtomicU64,
    pressure_header_timeout: Duration,
}

impl Slots {
    /// `max` slots; under pressure a connection may wait `pressure_header_timeout` for a head.
    pub(super) fn new(max: usize, pressure_header_timeout: Duration) -> Slots {
        Slots {
            permits: Arc::new(Semaphore::new(max)),
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            pressure_header_timeout,
        }
    }

    fn open(&self) -> MutexGuard<'_, HashMap<u64, Arc<Tracked>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A newly accepted connection in `slot`, tracked (waiting for its first head) until the
    /// [`Occupied`] returned beside it is dropped.
    pub(super) fn opened(self: &Arc<Self>, slot: OwnedSemaphorePermit) -> (Arc<Tracked>, Occupied) {
        let tracked = Arc::new(Tracked::new(self.next_id.fetch_add(1, Ordering::Relaxed)));
        self.open().insert(tracked.id, tracked.clone());
        let occupied = Occupied {
            slots: self.clone(),
            id: tracked.id,
            _slot: slot,
        };
        (tracked, occupied)
    }

    /// Resolves once every slot is free (every connection ended).
    pub(super) async fn drained(&self, max: usize) {
        let all = u32::try_from(max).unwrap_or(u32::MAX);
        let _ = self.permits.clone().acquire_many_owned(all).await;
    }

    /// A slot for a new connection: a free one, else the one of the connection that has waited
    /// longest for a head, once it has waited the pressure head timeout; else the first to free.
    pub(super) async fn take(&self) -> OwnedSemaphorePermit {
        loop {
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                return permit;
            }
            let recheck = self.reclaim().max(RECHECK_FLOOR);
            tokio::select! {
                permit = self.permits.clone().acquire_owned() => {
                    if let Ok(permit) = permit {
                        return permit;
                    }
                }
                () = tokio::time::sleep(recheck) => {}
            }
        }
    }

    /// Closes the connection that has waited longest for a head when it has waited long
    /// enough; how long until the next look is worth it.
    fn reclaim(&self) -> Duration {
        let now = Instant::now();
        let open = self.open();
        let oldest = open
            .values()
            .filter(|c| !c.evicted.load(Ordering::Acquire))
            .filter_map(|c| c.since().map(|since| (since, c)))
            .min_by_key(|(since, c)| (*since, c.id));
        let Some((since, connection)) = oldest else {
            return self.pressure_header_timeout;
        };
        let due = since + self.pressure_header_timeout;
        if due > now {
            return due - now;
        }
        connection.evicted.store(true, Ordering::Release);
        connection.evict.notify_one();
        tracing::debug!(
            waited_ms = (now - since).as_millis() as u64,
            "every connection slot is taken: closing the connection waiting longest for a request head"
        );
        // The slot frees as soon as its task sees the notice; look again if it does not.
        self.pressure_header_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_connection_dropped_before_it_was_served_gives_its_slot_and_tracking_back() {
        let slots = Arc::new(Slots::new(1, Duration::from_secs(1)));
        let (tracked, occupied) = slots.opened(slots.take().await);
        assert_eq!(slots.open().len(), 1);
        assert!(slots.permits.clone().try_acquire_owned().is_err());
        // The connection's service, dropped without being run (its worker was gone).
        let serving: Box<dyn FnOnce() + Send> = Box::new(move || drop((tracked, occupied)));
        drop(serving);
        assert!(slots.open().is_empty(), "no longer a reclaim candidate");
        assert!(
            slots.permits.clone().try_acquire_owned().is_ok(),
            "the slot is free"
        );
    }
}
