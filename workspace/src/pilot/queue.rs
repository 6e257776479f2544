//! Per-thread run serialization: one worker per thread runs the accepted runs one at a
//! time, in the order they were posted; the thread's final status is written only when
//! its queue is empty.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use super::job::RunJob;

/// Most runs waiting behind the running one on one thread; one more post is a 429.
pub const MAX_QUEUED_RUNS: usize = 16;
/// Stripes of the per-thread admission lock.
const STRIPES: usize = 64;

/// The waiting runs of each thread that has a worker.
pub struct RunQueue {
    /// A thread is present exactly while its worker runs.
    waiting: Mutex<HashMap<String, VecDeque<RunJob>>>,
    /// Held while a post writes its messages and status and enqueues, and while a worker
    /// decides that its queue is empty and writes the final status: the two never
    /// interleave, so a finishing worker cannot overwrite the status of a new post.
    admission: Vec<tokio::sync::Mutex<()>>,
}

impl Default for RunQueue {
    fn default() -> Self {
        Self {
            waiting: Mutex::new(HashMap::new()),
            admission: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
        }
    }
}

impl RunQueue {
    /// The admission lock of `key`.
    pub async fn admit(&self, key: &str) -> tokio::sync::MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        self.admission[(hasher.finish() as usize) % STRIPES]
            .lock()
            .await
    }

    /// Runs of `key` waiting behind the running one.
    pub fn waiting(&self, key: &str) -> usize {
        self.lock().get(key).map_or(0, VecDeque::len)
    }

    /// Appends a run; `true` when the thread had no worker and one must be started.
    pub fn push(&self, key: &str, job: RunJob) -> bool {
        let mut waiting = self.lock();
        let start = !waiting.contains_key(key);
        waiting.entry(key.to_string()).or_default().push_back(job);
        start
    }

    /// The next run of `key` for its worker.
    pub fn pop(&self, key: &str) -> Option<RunJob> {
        self.lock().get_mut(key).and_then(VecDeque::pop_front)
    }

    /// Ends the worker of `key` when nothing waits (call under the admission lock);
    /// `true` when it ended.
    pub fn finish_if_idle(&self, key: &str) -> bool {
        let mut waiting = self.lock();
        if waiting.get(key).is_some_and(|q| !q.is_empty()) {
            return false;
        }
        waiting.remove(key);
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<RunJob>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}
