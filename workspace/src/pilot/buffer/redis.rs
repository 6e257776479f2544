//! The run-stream buffer in Redis streams, shared by every server using the same Redis.
//!
//! Per buffer key (`<org id>:<thread id>`) there are two Redis keys:
//! - `sitefile:stream:chunks:<key>`, a stream of the current run's chunks (field `c`, the
//!   chunk's JSON), capped near [`MAX_CHUNKS`](super::MAX_CHUNKS) entries;
//! - `sitefile:stream:run:<key>`, `running` while a run is in progress, `finished` after its
//!   `finish` chunk.
//!
//! Writes keep their order: `begin_run` and `publish` queue them to one writer task that
//! sends them in batches over one multiplexed connection. A new run empties the stream with
//! `XTRIM MAXLEN 0` rather than `DEL`, so entry ids keep growing and a reader's cursor stays
//! valid across runs. `finish` marks the run finished and expires both keys after the
//! retention; while running they expire after [`RUNNING_TTL`] (renewed by every chunk) so a
//! server that dies mid-run does not leave them forever.
//!
//! A reader takes an atomic snapshot (run state, last entry id) when it subscribes: a running
//! run is read from the stream's start, otherwise only entries after the last one. It then
//! follows with `XREAD BLOCK` on its own connection (a blocking read would stall the writes'
//! shared connection), across runs, until it is dropped.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::streams::{StreamId, StreamRangeReply, StreamReadReply};
use redis::{AsyncConnectionConfig, Client, RedisResult};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::MAX_CHUNKS;

/// Prefix of the chunk streams.
const CHUNKS_PREFIX: &str = "sitefile:stream:chunks:";
/// Prefix of the run-state keys.
const RUN_PREFIX: &str = "sitefile:stream:run:";
/// Largest chunk (its JSON) written to Redis; larger chunks are dropped with a warning.
const MAX_CHUNK_BYTES: usize = 4 << 20;
/// Writes queued for the writer task beyond which chunks other than `finish` are dropped.
const MAX_PENDING: usize = 65_536;
/// Most writes sent in one pipeline.
const WRITE_BATCH: usize = 256;
/// Attempts at one batch before its writes are given up.
const WRITE_ATTEMPTS: u32 = 4;
/// How long one `XREAD` waits for new entries.
const READ_BLOCK: Duration = Duration::from_secs(5);
/// Most entries one `XREAD` returns.
const READ_COUNT: usize = 256;
/// Expiry of a running run's keys, renewed by each of its chunks.
const RUNNING_TTL: Duration = Duration::from_secs(3600);
/// Time allowed to connect to Redis.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Time allowed for an answer to a non-blocking command.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The Redis stream holding `key`'s chunks.
fn chunks_key(key: &str) -> String {
    format!("{CHUNKS_PREFIX}{key}")
}

/// The Redis key holding `key`'s run state.
fn run_key(key: &str) -> String {
    format!("{RUN_PREFIX}{key}")
}

/// Milliseconds of `d`, at least 1 (Redis refuses a zero expiry).
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// One write, in the order `begin_run`/`publish` were called.
enum Write {
    Begin(String),
    Chunk {
        key: String,
        json: String,
        finish: bool,
    },
}

/// The Redis backend of [`super::StreamBuffer`].
pub(super) struct RedisBuffer {
    client: Client,
    manager: ConnectionManager,
    writes: mpsc::UnboundedSender<Write>,
    pending: Arc<AtomicUsize>,
    overflowing: AtomicBool,
}

impl RedisBuffer {
    /// Connects (and pings) the Redis server at `url` and starts the writer task.
    pub(super) async fn connect(url: &str, retention: Duration) -> Result<Self, String> {
        let client =
            Client::open(url).map_err(|e| format!("PLATFORM_REDIS_URL is invalid: {e}"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2);
        let unreachable = |e: redis::RedisError| {
            format!(
                "PLATFORM_REDIS_URL: Redis is unreachable ({e}); the run-stream buffer needs it"
            )
        };
        let mut manager = ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(unreachable)?;
        redis::cmd("PING")
            .query_async::<()>(&mut manager)
            .await
            .map_err(unreachable)?;
        let (writes, rx) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        tokio::spawn(writer(manager.clone(), rx, pending.clone(), retention));
        Ok(Self {
            client,
            manager,
            writes,
            pending,
            overflowing: AtomicBool::new(false),
        })
    }

    pub(super) fn begin_run(&self, key: &str) {
        self.queue(Write::Begin(key.to_string()));
    }

    pub(super) fn publish(&self, key: &str, chunk: Value) {
        let finish = chunk["type"] == "finish";
        let json = chunk.to_string();
        if json.len() > MAX_CHUNK_BYTES {
            tracing::warn!(
                thread.key = %key,
                bytes = json.len(),
                "run-stream chunk too large for Redis, not streamed"
            );
            return;
        }
        if !finish && self.pending.load(Ordering::Relaxed) >= MAX_PENDING {
            if !self.overflowing.swap(true, Ordering::Relaxed) {
                tracing::warn!("Redis run-stream writes are backing up; chunks are dropped");
            }
            return;
        }
        self.overflowing.store(false, Ordering::Relaxed);
        self.queue(Write::Chunk {
            key: key.to_string(),
            json,
            finish,
        });
    }

    fn queue(&self, write: Write) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        if self.writes.send(write).is_err() {
            self.pending.fetch_sub(1, Ordering::Relaxed);
        }
    }

    pub(super) fn subscribe(&self, key: &str) -> BoxStream<'static, Value> {
        let stream_key = chunks_key(key);
        // Taken now, not at the first poll, so that chunks this server publishes after this
        // call are never missed (another server's are seen from when the snapshot reaches
        // Redis).
        let snapshot = tokio::spawn(snapshot(
            self.manager.clone(),
            run_key(key),
            stream_key.clone(),
        ));
        self.follow(key, Some(snapshot), None)
    }

    pub(super) async fn resume(
        &self,
        key: &str,
    ) -> Result<Option<BoxStream<'static, Value>>, String> {
        let (running, cursor) = snapshot(self.manager.clone(), run_key(key), chunks_key(key))
            .await
            .map_err(|e| format!("Redis is unavailable: {e}"))?;
        Ok(running.then(|| self.follow(key, None, Some(cursor))))
    }

    /// A reader of `key` from `cursor`, or from `snapshot`'s once it resolves.
    fn follow(
        &self,
        key: &str,
        snapshot: Option<JoinHandle<RedisResult<(bool, String)>>>,
        cursor: Option<String>,
    ) -> BoxStream<'static, Value> {
        let reader = Reader {
            client: self.client.clone(),
            manager: self.manager.clone(),
            run_key: run_key(key),
            stream_key: chunks_key(key),
            snapshot,
            cursor,
            conn: None,
            ready: VecDeque::new(),
            failures: 0,
        };
        stream::unfold(reader, |mut reader| async move {
            let chunk = reader.next().await;
            Some((chunk, reader))
        })
        .boxed()
    }
}

/// Sends the queued writes in order, in batches, until the buffer is dropped.
async fn writer(
    mut manager: ConnectionManager,
    mut rx: mpsc::UnboundedReceiver<Write>,
    pending: Arc<AtomicUsize>,
    retention: Duration,
) {
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    while rx.recv_many(&mut batch, WRITE_BATCH).await > 0 {
        pending.fetch_sub(batch.len(), Ordering::Relaxed);
        let pipe = pipeline(&batch, retention);
        for attempt in 1..=WRITE_ATTEMPTS {
            match pipe.query_async::<()>(&mut manager).await {
                Ok(()) => break,
                Err(error) if attempt == WRITE_ATTEMPTS => {
                    tracing::error!(%error, writes = batch.len(), "run-stream chunks lost: Redis write failed");
                }
                Err(error) => {
                    tracing::warn!(%error, attempt, "Redis run-stream write failed, retrying");
                    tokio::time::sleep(Duration::from_millis(100 << (2 * attempt))).await;
                }
            }
        }
        batch.clear();
    }
}

/// The commands of `batch`, in order; each touched stream's expiry is set once at the end.
fn pipeline(batch: &[Write], retention: Duration) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    // The last expiry of each touched stream, in first-touched order.
    let mut expiries: Vec<(&str, u64)> = Vec::new();
    for write in batch {
        match write {
            Write::Begin(key) => {
                pipe.cmd("XTRIM")
                    .arg(chunks_key(key))
                    .arg("MAXLEN")
                    .arg(0)
                    .ignore();
                pipe.cmd("SET")
                    .arg(run_key(key))
                    .arg("running")
                    .arg("PX")
                    .arg(millis(RUNNING_TTL))
                    .ignore();
                set_expiry(&mut expiries, key, millis(RUNNING_TTL));
            }
            Write::Chunk { key, json, finish } => {
                pipe.cmd("XADD")
                    .arg(chunks_key(key))
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(MAX_CHUNKS)
                    .arg("*")
                    .arg("c")
                    .arg(json)
                    .ignore();
                let ttl = if *finish { retention } else { RUNNING_TTL };
                if *finish {
                    pipe.cmd("SET")
                        .arg(run_key(key))
                        .arg("finished")
                        .arg("PX")
                        .arg(millis(retention))
                        .ignore();
                } else {
                    pipe.cmd("PEXPIRE")
                        .arg(run_key(key))
                        .arg(millis(RUNNING_TTL))
                        .ignore();
                }
                set_expiry(&mut expiries, key, millis(ttl));
            }
        }
    }
    for (key, ms) in expiries {
        pipe.cmd("PEXPIRE").arg(chunks_key(key)).arg(ms).ignore();
    }
    pipe
}

/// Records `ms` as `key`'s expiry, replacing an earlier one of the same batch.
fn set_expiry<'a>(expiries: &mut Vec<(&'a str, u64)>, key: &'a str, ms: u64) {
    match expiries.iter_mut().find(|(k, _)| *k == key) {
        Some(entry) => entry.1 = ms,
        None => expiries.push((key, ms)),
    }
}

/// Whether a run is in progress, and where a new reader starts: the stream's start while a
/// run is in progress, else after its last entry. State and last id are read in one
/// transaction.
async fn snapshot(
    mut manager: ConnectionManager,
    run_key: String,
    stream_key: String,
) -> RedisResult<(bool, String)> {
    let (state, last): (Option<String>, StreamRangeReply) = redis::pipe()
        .atomic()
        .cmd("GET")
        .arg(&run_key)
        .cmd("XREVRANGE")
        .arg(&stream_key)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query_async(&mut manager)
        .await?;
    Ok(match state.as_deref() {
        Some("running") => (true, "0-0".to_string()),
        _ => (
            false,
            last.ids
                .into_iter()
                .next()
                .map(|e| e.id)
                .unwrap_or_else(|| "0-0".to_string()),
        ),
    })
}

/// One subscriber's position and connection.
struct Reader {
    client: Client,
    manager: ConnectionManager,
    run_key: String,
    stream_key: String,
    snapshot: Option<JoinHandle<RedisResult<(bool, String)>>>,
    cursor: Option<String>,
    conn: Option<MultiplexedConnection>,
    ready: VecDeque<Value>,
    failures: u32,
}

impl Reader {
    /// The next chunk; waits (retrying Redis failures) as long as it takes.
    async fn next(&mut self) -> Value {
        loop {
            if let Some(chunk) = self.ready.pop_front() {
                return chunk;
            }
            if let Err(error) = self.fill().await {
                self.failures += 1;
                self.conn = None;
                if self.failures == 1 {
                    tracing::warn!(%error, stream = %self.stream_key, "Redis run-stream read failed, retrying");
                }
                let backoff = 100u64 << self.failures.min(5);
                tokio::time::sleep(Duration::from_millis(backoff)).await;
            } else {
                self.failures = 0;
            }
        }
    }

    /// Reads the next entries (or none after [`READ_BLOCK`]) into `ready`.
    async fn fill(&mut self) -> RedisResult<()> {
        let cursor = match (&self.cursor, self.snapshot.take()) {
            (Some(cursor), _) => cursor.clone(),
            (None, Some(handle)) => {
                let (_, cursor) = match handle.await {
                    Ok(result) => result?,
                    Err(join) => {
                        return Err(redis::RedisError::from((
                            redis::ErrorKind::Client,
                            "snapshot task failed",
                            join.to_string(),
                        )));
                    }
                };
                self.cursor = Some(cursor.clone());
                cursor
            }
            (None, None) => {
                let (_, cursor) = snapshot(
                    self.manager.clone(),
                    self.run_key.clone(),
                    self.stream_key.clone(),
                )
                .await?;
                self.cursor = Some(cursor.clone());
                cursor
            }
        };
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => {
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(READ_BLOCK + RESPONSE_TIMEOUT));
                let conn = self
                    .client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await?;
                self.conn.insert(conn)
            }
        };
        let reply: Option<StreamReadReply> = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(READ_COUNT)
            .arg("BLOCK")
            .arg(millis(READ_BLOCK))
            .arg("STREAMS")
            .arg(&self.stream_key)
            .arg(&cursor)
            .query_async(conn)
            .await?;
        let entries = reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids);
        for entry in entries {
            self.cursor = Some(entry.id.clone());
            if let Some(chunk) = decode(&entry) {
                self.ready.push_back(chunk);
            }
        }
        Ok(())
    }
}

/// The chunk of a stream entry; `None` for an entry this code did not write.
fn decode(entry: &StreamId) -> Option<Value> {
    let json: String = entry.get("c")?;
    serde_json::from_str(&json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The test server's URL; Redis tests fail (not skip) without one.
    fn url() -> String {
        std::env::var("SITEFILE_TEST_REDIS_URL").expect(
            "SITEFILE_TEST_REDIS_URL is not set: Redis tests need a server. \
             Run scripts/test.sh, or `source scripts/services.sh && services_start` first.",
        )
    }

    async fn buffer(retention: Duration) -> RedisBuffer {
        RedisBuffer::connect(&url(), retention).await.unwrap()
    }

    fn key() -> String {
        format!("test-{}:t", uuid::Uuid::new_v4())
    }

    async fn next(chunks: &mut BoxStream<'static, Value>) -> Value {
        tokio::time::timeout(Duration::from_secs(10), chunks.next())
            .await
            .expect("a chunk within 10 s")
            .expect("the stream does not end")
    }

    /// Waits until the writer has sent everything queued so far.
    async fn flushed(buffer: &RedisBuffer, key: &str, entries: usize) {
        let mut manager = buffer.manager.clone();
        for _ in 0..200 {
            let len: usize = redis::cmd("XLEN")
                .arg(chunks_key(key))
                .query_async(&mut manager)
                .await
                .unwrap();
            if len >= entries {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{entries} entries never reached Redis");
    }

    #[tokio::test]
    async fn chunks_keep_their_order() {
        let (buffer, key) = (buffer(Duration::from_secs(60)).await, key());
        let mut chunks = buffer.subscribe(&key);
        buffer.begin_run(&key);
        buffer.publish(&key, json!({ "type": "start" }));
        for i in 0..1000 {
            buffer.publish(
                &key,
                json!({ "type": "text-delta", "delta": i.to_string() }),
            );
        }
        buffer.publish(&key, json!({ "type": "finish" }));
        assert_eq!(next(&mut chunks).await["type"], "start");
        for i in 0..1000 {
            assert_eq!(next(&mut chunks).await["delta"], i.to_string());
        }
        assert_eq!(next(&mut chunks).await["type"], "finish");
    }

    #[tokio::test]
    async fn running_run_is_replayed_on_another_server_then_only_new_runs() {
        let (a, b, key) = (
            buffer(Duration::from_secs(60)).await,
            buffer(Duration::from_secs(60)).await,
            key(),
        );
        a.begin_run(&key);
        a.publish(&key, json!({ "type": "start", "n": 1 }));
        a.publish(&key, json!({ "type": "text-delta", "delta": "a" }));
        flushed(&a, &key, 2).await;
        // Server B joins mid-run: the run is replayed from its start, then followed live.
        let mut late = b.subscribe(&key);
        assert_eq!(next(&mut late).await, json!({ "type": "start", "n": 1 }));
        assert_eq!(next(&mut late).await["delta"], "a");
        a.publish(&key, json!({ "type": "text-delta", "delta": "b" }));
        a.publish(&key, json!({ "type": "finish" }));
        assert_eq!(next(&mut late).await["delta"], "b");
        assert_eq!(next(&mut late).await["type"], "finish");
        flushed(&a, &key, 4).await;
        // After the run: a new reader sees only new chunks; both follow the next run, whose
        // start replaces the old chunks.
        let mut idle = b.subscribe(&key);
        // Nothing of the finished run reaches the new reader. Waiting here also lets its
        // snapshot reach Redis before server A's next run does: the two servers' commands
        // travel on different connections, so without the wait Redis may see the whole next
        // run first, and the reader rightly starts after it.
        let early = tokio::time::timeout(Duration::from_millis(500), idle.next()).await;
        assert!(early.is_err(), "a finished run is not replayed: {early:?}");
        a.begin_run(&key);
        a.publish(&key, json!({ "type": "start", "n": 2 }));
        a.publish(&key, json!({ "type": "finish" }));
        for reader in [&mut idle, &mut late] {
            assert_eq!(next(reader).await, json!({ "type": "start", "n": 2 }));
            assert_eq!(next(reader).await["type"], "finish");
        }
        flushed(&a, &key, 2).await;
        let mut manager = a.manager.clone();
        let len: usize = redis::cmd("XLEN")
            .arg(chunks_key(&key))
            .query_async(&mut manager)
            .await
            .unwrap();
        assert_eq!(len, 2, "a new run drops the previous run's chunks");
    }

    #[tokio::test]
    async fn finished_runs_expire_after_the_retention() {
        let (buffer, key) = (buffer(Duration::from_millis(300)).await, key());
        buffer.begin_run(&key);
        buffer.publish(&key, json!({ "type": "start" }));
        buffer.publish(&key, json!({ "type": "finish" }));
        flushed(&buffer, &key, 2).await;
        let mut manager = buffer.manager.clone();
        let state: Option<String> = redis::cmd("GET")
            .arg(run_key(&key))
            .query_async(&mut manager)
            .await
            .unwrap();
        assert_eq!(state.as_deref(), Some("finished"));
        tokio::time::sleep(Duration::from_millis(700)).await;
        let exists: usize = redis::cmd("EXISTS")
            .arg(chunks_key(&key))
            .arg(run_key(&key))
            .query_async(&mut manager)
            .await
            .unwrap();
        assert_eq!(exists, 0, "both keys expired");
        // The expired thread still streams its next run.
        let mut chunks = buffer.subscribe(&key);
        buffer.begin_run(&key);
        buffer.publish(&key, json!({ "type": "start", "again": true }));
        assert_eq!(next(&mut chunks).await["again"], true);
    }

    #[tokio::test]
    async fn unreachable_redis_refuses_to_start() {
        let error = RedisBuffer::connect("redis://127.0.0.1:1/", Duration::from_secs(1))
            .await
            .err()
            .expect("no Redis on port 1");
        assert!(error.contains("PLATFORM_REDIS_URL"), "{error}");
        let error = RedisBuffer::connect("not a url", Duration::from_secs(1))
            .await
            .err()
            .unwrap();
        assert!(error.contains("PLATFORM_REDIS_URL"), "{error}");
    }
}
