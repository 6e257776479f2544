//! Per-thread run serialization: one run at a time, later posts queue behind it, and
//! the thread's final status is written only when the queue is empty.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The run lock and pending count of one thread.
pub struct Slot {
    /// Held for the whole of a run.
    pub run: tokio::sync::Mutex<()>,
    /// Runs accepted and not yet finished; guards status writes.
    pub pending: tokio::sync::Mutex<usize>,
}

/// Slots by thread key.
#[derive(Default)]
pub struct RunQueue {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

impl RunQueue {
    /// The slot of `key`, created on first use.
    pub fn slot(&self, key: &str) -> Arc<Slot> {
        self.slots
            .lock()
            .expect("queue lock")
            .entry(key.to_string())
            .or_insert_with(|| {
                Arc::new(Slot {
                    run: tokio::sync::Mutex::new(()),
                    pending: tokio::sync::Mutex::new(0),
                })
            })
            .clone()
    }

    /// Forgets an idle slot.
    pub fn release(&self, key: &str) {
        self.slots.lock().expect("queue lock").remove(key);
    }
}
