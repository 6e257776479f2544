//! The live run-stream buffer: the chunks of each thread's current run, kept for a
//! retention period after the run finishes. Not the system of record. In memory by default
//! (one server); in Redis streams when `PLATFORM_REDIS_URL` is set, so several servers share
//! it (see [`redis`]).

mod redis;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use crate::clock::Clock;

/// Most chunks kept for one run; later chunks are still delivered live.
const MAX_CHUNKS: usize = 20_000;
/// Live-delivery capacity per thread before a slow reader skips chunks.
const CHANNEL_CAPACITY: usize = 4096;

struct Entry {
    chunks: Vec<Value>,
    running: bool,
    /// When the run finished (epoch ms).
    finished_at: Option<i64>,
    /// When the entry was created (epoch ms; a reader may subscribe to a thread that never
    /// runs).
    created_at: i64,
    tx: broadcast::Sender<Value>,
}

impl Entry {
    fn new(now: i64) -> Self {
        Self {
            chunks: Vec::new(),
            running: false,
            finished_at: None,
            created_at: now,
            tx: broadcast::channel(CHANNEL_CAPACITY).0,
        }
    }

    /// Idle at `now` for longer than `retention`: finished that long ago, or never run and
    /// created that long ago.
    fn expired(&self, now: i64, retention: Duration) -> bool {
        let retention = i64::try_from(retention.as_millis()).unwrap_or(i64::MAX);
        let older = |at: i64| now.saturating_sub(at) > retention;
        match self.finished_at {
            Some(at) => older(at),
            None => !self.running && older(self.created_at),
        }
    }
}

/// Per-thread chunk buffers with live subscribers.
pub struct StreamBuffer {
    backend: Backend,
}

enum Backend {
    Memory(Memory),
    Redis(redis::RedisBuffer),
}

impl StreamBuffer {
    /// An in-memory buffer keeping finished runs for `retention`, as `clock` tells time.
    pub fn new(retention: Duration, clock: Clock) -> Self {
        Self {
            backend: Backend::Memory(Memory {
                retention,
                clock,
                threads: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A buffer in the Redis server at `url`, shared by every server using it; fails when
    /// Redis cannot be reached.
    pub async fn connect(url: &str, retention: Duration) -> Result<Self, String> {
        let redis = redis::RedisBuffer::connect(url, retention).await?;
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
    clock: Clock,
    threads: Mutex<HashMap<String, Entry>>,
}

impl Memory {
    fn begin_run(&self, key: &str) {
        let now = self.clock.now_ms();
        let mut threads = self.threads.lock().expect("buffer lock");
        self.sweep(&mut threads, now);
        let entry = threads
            .entry(key.to_string())
            .or_insert_with(|| Entry::new(now));
        entry.chunks.clear();
        entry.running = true;
        entry.finished_at = None;
    }

    fn publish(&self, key: &str, chunk: Value) {
        let now = self.clock.now_ms();
        let mut threads = self.threads.lock().expect("buffer lock");
        let entry = threads
            .entry(key.to_string())
            .or_insert_with(|| Entry::new(now));
        if chunk["type"] == "finish" {
            entry.running = false;
            entry.finished_at = Some(now);
        }
        if entry.chunks.len() < MAX_CHUNKS {
            entry.chunks.push(chunk.clone());
        }
        let _ = entry.tx.send(chunk);
    }

    fn subscribe(&self, key: &str) -> BoxStream<'static, Value> {
        let now = self.clock.now_ms();
        let mut threads = self.threads.lock().expect("buffer lock");
        self.sweep(&mut threads, now);
        follow(
            threads
                .entry(key.to_string())
                .or_insert_with(|| Entry::new(now)),
        )
    }

    fn resume(&self, key: &str) -> Option<BoxStream<'static, Value>> {
        let mut threads = self.threads.lock().expect("buffer lock");
        self.sweep(&mut threads, self.clock.now_ms());
        threads.get(key).filter(|e| e.running).map(follow)
    }

    /// Drops entries idle for longer than the retention (finished runs, and threads that
    /// were subscribed to but never ran) that nobody is reading.
    fn sweep(&self, threads: &mut HashMap<String, Entry>, now: i64) {
        threads.retain(|_, e| {
            let expired = e.expired(now, self.retention);
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
    use crate::clock::ManualClock;

    fn entries(buffer: &StreamBuffer) -> usize {
        match &buffer.backend {
            Backend::Memory(m) => m.threads.lock().unwrap().len(),
            Backend::Redis(_) => unreachable!("a memory buffer"),
        }
    }

    #[test]
    fn idle_entries_are_swept_after_the_retention() {
        let retention = Duration::from_secs(300);
        let clock = ManualClock::new(1_000_000);
        let buffer = StreamBuffer::new(retention, clock.clock());
        for i in 0..10 {
            drop(buffer.subscribe(&format!("org:never-{i}")));
        }
        let live = buffer.subscribe("org:reading");
        buffer.begin_run("org:done");
        buffer.publish("org:done", serde_json::json!({ "type": "finish" }));
        assert_eq!(entries(&buffer), 12);
        clock.advance(retention);
        buffer.begin_run("org:other");
        assert_eq!(
            entries(&buffer),
            13,
            "nothing is older than the retention yet"
        );
        clock.advance(Duration::from_millis(1));
        buffer.begin_run("org:other");
        assert_eq!(
            entries(&buffer),
            2,
            "the reader's entry and the running one stay"
        );
        drop(live);
        clock.advance(retention + Duration::from_millis(1));
        drop(buffer.subscribe("org:x"));
        assert_eq!(
            entries(&buffer),
            2,
            "the running entry and the new one stay"
        );
    }
}
