//! The live run-stream buffer: the chunks of each thread's current run, kept for a
//! retention period after the run finishes. Not the system of record. In memory by default
//! (one server); in Redis streams when `PLATFORM_REDIS_URL` is set, so several servers share
//! it (see [`redis`]).

mod redis;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

/// Most chunks kept for one run; later chunks are still delivered live.
const MAX_CHUNKS: usize = 20_000;
/// Live-delivery capacity per thread before a slow reader skips chunks.
const CHANNEL_CAPACITY: usize = 4096;

struct Entry {
    chunks: Vec<Value>,
    running: bool,
    finished_at: Option<Instant>,
    /// When the entry was created (a reader may subscribe to a thread that never runs).
    created_at: Instant,
    tx: broadcast::Sender<Value>,
}

impl Entry {
    fn new() -> Self {
        Self {
            chunks: Vec::new(),
            running: false,
            finished_at: None,
            created_at: Instant::now(),
            tx: broadcast::channel(CHANNEL_CAPACITY).0,
        }
    }

    /// Idle for longer than `retention`: finished that long ago, or never run and created
    /// that long ago.
    fn expired(&self, retention: Duration) -> bool {
        match self.finished_at {
            Some(at) => at.elapsed() > retention,
            None => !self.running && self.created_at.elapsed() > retention,
        }
    }
}

/// Per-thread chunk buffers with live subscribers.
pub struct StreamBuffer {
    backend: Backend,
}

enum Backend {
    Memory(Memory),
    Redis(self::redis::RedisBuffer),
}

impl StreamBuffer {
    /// An in-memory buffer keeping finished runs for `retention`.
    pub fn new(retention: Duration) -> Self {
        Self {
            backend: Backend::Memory(Memory {
                retention,
                threads: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A buffer in the Redis server at `url`, shared by every server using it; fails when
    /// Redis cannot be reached.
    pub async fn connect(url: &str, retention: Duration) -> Result<Self, String> {
        let redis = self::redis::RedisBuffer::connect(url, retention).await?;
        Ok(Self {
            backend: Backend::Redis(redis),
        })
    }

    /// Starts a new run on `key`: the previous run's chunks are dropped.
    pub fn begin_run(&self, key: &str) {
        match &self.backend {
            Backend::Memory(m) => m.begin_run(key),
            Backend::Redis(r) => r.begin_run(key),
        }
    }

    /// Appends a chunk and delivers it to live subscribers; a `finish` chunk ends the run.
    pub fn publish(&self, key: &str, chunk: Value) {
        match &self.backend {
            Backend::Memory(m) => m.publish(key, chunk),
            Backend::Redis(r) => r.publish(key, chunk),
        }
    }

    /// The chunks of `key` from now on; when a run is in progress, it is replayed from
    /// its `start` first so a late reader sees the whole run.
    pub fn subscribe(&self, key: &str) -> BoxStream<'static, Value> {
        match &self.backend {
            Backend::Memory(m) => m.subscribe(key),
            Backend::Redis(r) => r.subscribe(key),
        }
    }

    /// Like [`subscribe`](Self::subscribe) when a run is in progress on `key` (replayed
    /// from its `start`); `None` when no run is. Fails only when Redis cannot be read.
    pub async fn resume(&self, key: &str) -> Result<Option<BoxStream<'static, Value>>, String> {
        match &self.backend {
            Backend::Memory(m) => Ok(m.resume(key)),
            Backend::Redis(r) => r.resume(key).await,
        }
    }
}

/// The in-memory backend.
struct Memory {
    retention: Duration,
    threads: Mutex<HashMap<String, Entry>>,
}

impl Memory {
    fn begin_run(&self, key: &str) {
        let mut threads = self.threads.lock().expect("buffer lock");
        self.sweep(&mut threads);
        let entry = threads.entry(key.to_string()).or_insert_with(Entry::new);
        entry.chunks.clear();
        entry.running = true;
        entry.finished_at = None;
    }

    fn publish(&self, key: &str, chunk: Value) {
        let mut threads = self.threads.lock().expect("buffer lock");
        let entry = threads.entry(key.to_string()).or_insert_with(Entry::new);
        if chunk["type"] == "finish" {
            entry.running = false;
            entry.finished_at = Some(Instant::now());
        }
        if entry.chunks.len() < MAX_CHUNKS {
            entry.chunks.push(chunk.clone());
        }
        let _ = entry.tx.send(chunk);
    }

    fn subscribe(&self, key: &str) -> BoxStream<'static, Value> {
        let mut threads = self.threads.lock().expect("buffer lock");
        self.sweep(&mut threads);
        follow(threads.entry(key.to_string()).or_insert_with(Entry::new))
    }

    fn resume(&self, key: &str) -> Option<BoxStream<'static, Value>> {
        let mut threads = self.threads.lock().expect("buffer lock");
        self.sweep(&mut threads);
        threads.get(key).filter(|e| e.running).map(follow)
    }

    /// Drops entries idle for longer than the retention (finished runs, and threads that
    /// were subscribed to but never ran) that nobody is reading.
    fn sweep(&self, threads: &mut HashMap<String, Entry>) {
        threads.retain(|_, e| {
            let expired = e.expired(self.retention);
            if expired {
                e.chunks.clear();
            }
            !(expired && e.tx.receiver_count() == 0)
        });
    }
}

/// The entry's running run replayed (none when idle), then its chunks live.
fn follow(entry: &Entry) -> BoxStream<'static, Value> {
    let replay = if entry.running {
        entry.chunks.clone()
    } else {
        Vec::new()
    };
    let live = BroadcastStream::new(entry.tx.subscribe()).filter_map(|c| async move { c.ok() });
    stream::iter(replay).chain(live).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(buffer: &StreamBuffer) -> usize {
        match &buffer.backend {
            Backend::Memory(m) => m.threads.lock().unwrap().len(),
            Backend::Redis(_) => unreachable!("a memory buffer"),
        }
    }

    #[test]
    fn subscriptions_to_threads_that_never_run_are_swept() {
        // A retention long enough that creating the entries never outlasts it, even on a busy
        // machine.
        let retention = Duration::from_millis(1000);
        let buffer = StreamBuffer::new(retention);
        for i in 0..10 {
            drop(buffer.subscribe(&format!("org:never-{i}")));
        }
        let live = buffer.subscribe("org:reading");
        assert_eq!(entries(&buffer), 11);
        std::thread::sleep(retention + Duration::from_millis(200));
        buffer.begin_run("org:other");
        assert_eq!(
            entries(&buffer),
            2,
            "the reader's entry and the running one stay"
        );
        drop(live);
        std::thread::sleep(retention + Duration::from_millis(200));
        drop(buffer.subscribe("org:x"));
        assert_eq!(
            entries(&buffer),
            2,
            "the running entry and the new one stay"
        );
    }
}
