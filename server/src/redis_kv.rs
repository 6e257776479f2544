//! Connections to Redis, shared by the edge cache's Redis storage, Fast Deploy and `sitefile
//! kv`: made lazily (a Redis that is down at start is not fatal to a server), every call
//! bounded in time.

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long connecting to Redis may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(1000);
/// How long Redis may take to answer one command.
const RESPONSE_TIMEOUT: Duration = Duration::from_millis(1500);
/// The most any one call (reconnecting included) may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// A lazily connected, reconnecting connection to the Redis at `url` (`redis://…`); `what`
/// names the setting in the message when the URL is invalid. Must be called inside a Tokio
/// runtime.
pub fn connect(url: &str, what: &str) -> Result<ConnectionManager, String> {
    let client = redis::Client::open(url).map_err(|e| format!("{what}: {e}"))?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
        .set_number_of_retries(1)
        .set_max_delay(Duration::from_millis(200));
    ConnectionManager::new_lazy_with_config(client, config).map_err(|e| format!("{what}: {e}"))
}

/// Runs one Redis call, failing it when it takes longer than the call timeout.
pub async fn bounded<T>(call: impl Future<Output = redis::RedisResult<T>>) -> Result<T, String> {
    match tokio::time::timeout(CALL_TIMEOUT, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {CALL_TIMEOUT:?}")),
    }
}

/// How long a caller leaves Redis alone after a failed call (see [`FailureLog::resting`]).
const REST: Duration = Duration::from_secs(1);

/// Logs Redis failures once per burst (the first failure after a success, and the first
/// success after failures), and remembers the last one so callers can rest after it.
pub struct FailureLog {
    name: &'static str,
    failing: AtomicBool,
    failed_at: Mutex<Option<Instant>>,
}

impl FailureLog {
    /// A log for the Redis use called `name` (`the Redis cache`), succeeding so far.
    pub const fn new(name: &'static str) -> FailureLog {
        FailureLog {
            name,
            failing: AtomicBool::new(false),
            failed_at: Mutex::new(None),
        }
    }

    /// Whether a call failed less than a second ago: callers that may do without Redis skip it
    /// meanwhile, so a Redis that hangs slows one request a second, not every one.
    pub fn resting(&self) -> bool {
        self.failed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < REST)
    }

    /// The value of a call doing `what`, or `None` when it failed (`then` says what happens
    /// instead, in the log line).
    pub fn settle<T>(&self, what: &str, then: &str, result: Result<T, String>) -> Option<T> {
        match result {
            Ok(value) => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("{} answers again", self.name);
                }
                Some(value)
            }
            Err(why) => {
                *self
                    .failed_at
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!("{} failed ({what}: {why}); {then}", self.name);
                }
                None
            }
        }
    }
}
