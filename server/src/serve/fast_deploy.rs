//! Fast Deploy on Redis (`PLATFORM_FAST_DEPLOY` with `PLATFORM_KV` a Redis URL): the snapshot of
//! `PLATFORM_DEPLOYMENT_ID` read at start, written by a reload before it serves (`kvWritten`),
//! and watched: every second this server reads the deployment's revision key and, when the core
//! says the stored content is not the serving one, loads it. The layout and the rules are the
//! core's (`sitefile_core::fast_deploy`, its `Replica`); this module does the I/O.
//!
//! A store that does not answer at start is waited for, up to
//! [`START_TIMEOUT_VAR`] (nothing is served meanwhile); past that the site directory stands in,
//! every answer marked [`CONTENT_HEADER`]`: directory-fallback`, until the store answers and
//! its snapshot is loaded. A reload is refused while this server has not read what the store
//! holds (at start or since a failed read), so it never overwrites an acknowledged one.

use crate::kv_store::KvStore;
use crate::redis_kv::FailureLog;
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use sitefile_core::fast_deploy::{KvStep, Replica, Synced, read_snapshot};
use sitefile_core::{PlatformConfig, Site, Snapshot};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often a server reads its deployment's revision key.
pub const WATCH_EVERY: Duration = Duration::from_secs(1);

/// The variable bounding how long a starting server waits for the store (milliseconds; `0`
/// serves the directory at once).
pub const START_TIMEOUT_VAR: &str = "PLATFORM_FAST_DEPLOY_START_TIMEOUT_MS";

/// How long a starting server waits for the store unless [`START_TIMEOUT_VAR`] says otherwise:
/// Envoy's `initial_fetch_timeout`, well inside a Kubernetes liveness probe's default 30 s.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(15);

/// The pause between two reads of a store that does not answer at start.
const START_RETRY: Duration = Duration::from_millis(250);

/// The header on every answer served from the site directory because the store did not answer.
pub const CONTENT_HEADER: &str = "x-sitefile-content";

/// Its value.
pub const DIRECTORY_FALLBACK: &str = "directory-fallback";

/// One deployment's snapshot in the key-value store.
pub struct FastDeploy {
    store: KvStore,
    /// This server's standing with the deployment: what it loaded, whether a reload may write.
    replica: Replica,
    log: FailureLog,
    start_timeout: Duration,
    /// Whether it serves the site directory because the store did not answer at start.
    fallback: AtomicBool,
}

/// What a starting server found in the store.
pub enum Start {
    /// The deployment's snapshot.
    Snapshot(Snapshot),
    /// No snapshot: the site directory is the deployment's content.
    Empty,
    /// The store did not answer within the bound (or held an unreadable snapshot): the site
    /// directory stands in, marked, until it answers.
    Fallback(String),
}

/// The start timeout `value` of [`START_TIMEOUT_VAR`] sets, if any.
fn start_timeout(value: Option<&str>) -> Result<Duration, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(DEFAULT_START_TIMEOUT),
        Some(value) => value
            .parse()
            .map(Duration::from_millis)
            .map_err(|_| format!("{START_TIMEOUT_VAR}: {value:?} is not a number of milliseconds")),
    }
}

impl FastDeploy {
    /// Fast Deploy as `platform` configures it: `None` when it is off, or when no deployment id
    /// resolves (`PLATFORM_DEPLOYMENT_ID`, then `BUILD_HASH`; the store is then never touched).
    /// Must be called inside a Tokio runtime.
    pub fn configured(platform: &PlatformConfig) -> Result<Option<FastDeploy>, String> {
        let (true, Some(url)) = (
            platform.fast_deploy_enabled(),
            platform.fast_deploy.kv.as_deref(),
        ) else {
            return Ok(None);
        };
        let Some(id) = platform.deployment_id(None) else {
            tracing::warn!(
                "Fast Deploy is off: neither PLATFORM_DEPLOYMENT_ID nor BUILD_HASH names the \
                 deployment"
            );
            return Ok(None);
        };
        let start_timeout = start_timeout(std::env::var(START_TIMEOUT_VAR).ok().as_deref())?;
        Ok(Some(FastDeploy {
            store: KvStore::redis(url, "PLATFORM_KV")?,
            replica: Replica::new(id),
            log: FailureLog::new("Fast Deploy's key-value store"),
            start_timeout,
            fallback: AtomicBool::new(false),
        }))
    }

    /// The deployment id.
    pub fn id(&self) -> &str {
        self.replica.id()
    }

    /// Whether this server serves the site directory because the store did not answer.
    pub fn serves_fallback(&self) -> bool {
        self.fallback.load(Ordering::Relaxed)
    }

    /// The deployment's stored snapshot as a starting server reads it: waiting for a store that
    /// does not answer, up to the start timeout.
    pub async fn read_at_start(&self) -> Start {
        let now = tokio::time::Instant::now();
        // A bound past what an instant can hold is no bound.
        let deadline = now.checked_add(self.start_timeout);
        let mut why = format!("no answer within {:?}", self.start_timeout);
        let mut told = false;
        loop {
            let left = deadline.map_or(Duration::MAX, |deadline| {
                deadline.saturating_duration_since(tokio::time::Instant::now())
            });
            if left.is_zero() {
                break;
            }
            let read = match tokio::time::timeout(left, self.fetch()).await {
                Ok(read) => read,
                Err(_) => break,
            };
            match read {
                Ok(bytes) => match self.decode(bytes) {
                    Ok(found) => {
                        self.replica.started(true);
                        return found.map_or(Start::Empty, Start::Snapshot);
                    }
                    // Waiting does not mend it.
                    Err(e) => {
                        why = e;
                        break;
                    }
                },
                Err(e) => {
                    if !told {
                        told = true;
                        tracing::warn!(
                            "the key-value store does not answer ({e}); waiting up to {:?} \
                             ({START_TIMEOUT_VAR}) for the snapshot of deployment {} before \
                             serving anything",
                            self.start_timeout,
                            self.id()
                        );
                    }
                    why = e;
                }
            }
            tokio::time::sleep(START_RETRY.min(left)).await;
        }
        self.fallback.store(true, Ordering::Relaxed);
        Start::Fallback(why)
    }

    /// The deployment's stored snapshot, its bytes; `None` when there is none.
    async fn fetch(&self) -> Result<Option<Vec<u8>>, String> {
        self.store.get(&self.replica.snapshot_key()).await
    }

    /// The snapshot `bytes` hold.
    fn decode(&self, bytes: Option<Vec<u8>>) -> Result<Option<Snapshot>, String> {
        bytes
            .map(|bytes| {
                read_snapshot(bytes).map_err(|e| format!("{}: {e}", self.replica.snapshot_key()))
            })
            .transpose()
    }

    /// Writes `snapshot` as the deployment's, its revision after it, in one transaction;
    /// refused while this server has not read what the store holds, which the write would
    /// overwrite unseen (a reload acknowledged by another server, or before this one fell back).
    pub async fn write(&self, snapshot: &Snapshot) -> Result<(), String> {
        let writes = self.replica.writes(snapshot).map_err(|why| {
            if self.serves_fallback() {
                format!("{why} (the site directory serves meanwhile)")
            } else {
                why
            }
        })?;
        self.store.put(&writes).await
    }

    /// Loads the stored content into `site` when it is not the serving one (the core's pass
    /// over the store); whether it did.
    async fn refresh(&self, site: &Site) -> Result<bool, String> {
        let mut sync = self.replica.refresh();
        loop {
            let key = match sync.step(&self.replica) {
                KvStep::Get(key) => key,
                KvStep::Done(Synced::Loaded { .. }) => return Ok(true),
                KvStep::Done(Synced::Failed { message }) => return Err(message.clone()),
                KvStep::Done(Synced::Unchanged | Synced::Empty) => return Ok(false),
            };
            let read = self.store.get(&key).await;
            sync.answer(&self.replica, site, read);
        }
    }

    /// [`FastDeploy::refresh`], noting when this server stops serving the directory fallback.
    async fn refresh_and_note(&self, site: &Site) -> Result<bool, String> {
        let refreshed = self.refresh(site).await;
        if refreshed.is_ok() && self.fallback.swap(false, Ordering::Relaxed) {
            tracing::info!(
                "the key-value store answers: deployment {} no longer serves the site directory \
                 (revision {})",
                self.id(),
                site.revision()
            );
        }
        refreshed
    }

    /// Watches the deployment's revision for as long as the runtime runs, loading every change.
    pub fn watch(self: Arc<Self>, site: Arc<Site>) {
        tokio::spawn(async move {
            let mut every = tokio::time::interval(WATCH_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let refreshed = self.refresh_and_note(&site).await;
                let then = "this server keeps its content until it answers again";
                if self.log.settle("reading the revision", then, refreshed) == Some(true) {
                    tracing::info!(
                        "content of deployment {} loaded from the key-value store (revision {})",
                        self.id(),
                        site.revision()
                    );
                }
            }
        });
    }
}

/// The layer marking every answer served while the site directory stands in for the store.
pub async fn mark_fallback(
    State(fast_deploy): State<Arc<FastDeploy>>,
    request: Request,
    next: Next,
) -> Response {
    let fallback = fast_deploy.serves_fallback();
    let mut response = next.run(request).await;
    if fallback {
        response
            .headers_mut()
            .insert(CONTENT_HEADER, HeaderValue::from_static(DIRECTORY_FALLBACK));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_timeout_is_milliseconds_with_a_default() {
        assert_eq!(start_timeout(None), Ok(DEFAULT_START_TIMEOUT));
        assert_eq!(start_timeout(Some("")), Ok(DEFAULT_START_TIMEOUT));
        assert_eq!(start_timeout(Some("0")), Ok(Duration::ZERO));
        assert_eq!(start_timeout(Some("2500")), Ok(Duration::from_millis(2500)));
        assert!(
            start_timeout(Some(&u64::MAX.to_string())).is_ok(),
            "no bound"
        );
        let bad = start_timeout(Some("15s")).unwrap_err();
        assert!(bad.contains(START_TIMEOUT_VAR), "{bad}");
    }
}
