//! Origin requests in flight, by cache key: concurrent misses for one key collapse into one
//! origin request (the leader's), and the others (followers) wait for it to settle.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// How a flight ended, as its followers read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Landing {
    /// Still in the air.
    Pending,
    /// The leader stored a copy under the key: a follower serves it from the store.
    Stored,
    /// The origin answered but nothing was stored (or the store refused the copy).
    NotStored,
    /// The origin failed, or the leader was given up before it finished.
    Failed,
}

/// One origin request in flight for a key.
#[derive(Debug)]
pub(crate) struct Flight {
    /// The id the host waits on.
    pub(crate) id: u64,
    key: String,
    landing: AtomicU8,
}

impl Flight {
    /// How the flight ended (`Pending` while it has not).
    pub(crate) fn landing(&self) -> Landing {
        match self.landing.load(Ordering::Acquire) {
            1 => Landing::Stored,
            2 => Landing::NotStored,
            3 => Landing::Failed,
            _ => Landing::Pending,
        }
    }
}

/// Whether an exchange leads a new flight or follows one already in the air.
pub(crate) enum Seat {
    /// Ask the origin; the others wait for this flight.
    Leader(Arc<Flight>),
    /// Wait for this flight to settle.
    Follower(Arc<Flight>),
}

/// The flights of one site.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    next_id: AtomicU64,
    by_key: Mutex<HashMap<String, Arc<Flight>>>,
}

impl Flights {
    /// A seat on `key`'s flight: the leader of a new one, or a follower of the one in the air.
    pub(crate) fn board(&self, key: &str) -> Seat {
        let mut by_key = self.by_key.lock();
        if let Some(flight) = by_key.get(key) {
            return Seat::Follower(flight.clone());
        }
        let flight = Arc::new(Flight {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            key: key.to_string(),
            landing: AtomicU8::new(0),
        });
        by_key.insert(key.to_string(), flight.clone());
        Seat::Leader(flight)
    }

    /// Ends `flight` with `landing`: the next miss for its key starts a new one. Only the first
    /// landing counts.
    pub(crate) fn land(&self, flight: &Flight, landing: Landing) {
        let code = match landing {
            Landing::Pending => return,
            Landing::Stored => 1,
            Landing::NotStored => 2,
            Landing::Failed => 3,
        };
        let _ = flight
            .landing
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire);
        let mut by_key = self.by_key.lock();
        if by_key.get(&flight.key).is_some_and(|f| f.id == flight.id) {
            by_key.remove(&flight.key);
        }
    }

    /// How many flights are in the air.
    pub(crate) fn in_air(&self) -> usize {
        self.by_key.lock().len()
    }
}
