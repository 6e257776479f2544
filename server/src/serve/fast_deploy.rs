//! Fast Deploy on Redis (`PLATFORM_FAST_DEPLOY` with `PLATFORM_KV` a Redis URL): the snapshot of
//! `PLATFORM_DEPLOYMENT_ID` read at start, written by a reload before it serves (`kvWritten`),
//! and watched: every second this server reads the deployment's revision key and, when the core
//! says the stored content is not the serving one, loads it. The layout and the rules are the
//! core's (`content::fast_deploy`); this module does the I/O.

use crate::redis_kv::{FailureLog, bounded, connect};
use redis::aio::ConnectionManager;
use sitefile_core::Site;
use sitefile_core::config::PlatformConfig;
use sitefile_core::content::Snapshot;
use sitefile_core::content::fast_deploy::{
    needs_load, read_snapshot, revision_key, snapshot_key, snapshot_writes,
};
use std::sync::Arc;
use std::time::Duration;

/// How often a server reads its deployment's revision key.
pub const WATCH_EVERY: Duration = Duration::from_secs(1);

/// One deployment's snapshot in the key-value store.
pub struct FastDeploy {
    connection: ConnectionManager,
    id: String,
    log: FailureLog,
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
        Ok(Some(FastDeploy {
            connection: connect(url, "PLATFORM_KV")?,
            id: id.to_string(),
            log: FailureLog::new("Fast Deploy's key-value store"),
        }))
    }

    /// The deployment id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The deployment's stored snapshot, `None` when there is none.
    pub async fn read(&self) -> Result<Option<Snapshot>, String> {
        let mut connection = self.connection.clone();
        let bytes = bounded(
            redis::cmd("GET")
                .arg(snapshot_key(&self.id))
                .query_async::<Option<Vec<u8>>>(&mut connection),
        )
        .await?;
        bytes
            .map(|bytes| {
                read_snapshot(bytes).map_err(|e| format!("{}: {e}", snapshot_key(&self.id)))
            })
            .transpose()
    }

    /// Writes `snapshot` as the deployment's, its revision after it, in one transaction.
    pub async fn write(&self, snapshot: &Snapshot) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let mut pipe = redis::pipe();
        pipe.atomic();
        for (key, value) in snapshot_writes(&self.id, snapshot) {
            pipe.cmd("SET").arg(key).arg(value).ignore();
        }
        bounded(pipe.query_async::<()>(&mut connection)).await
    }

    /// Loads the stored content into `site` when it is not the serving one; whether it did.
    async fn refresh(&self, site: &Site) -> Result<bool, String> {
        let mut connection = self.connection.clone();
        let stored = bounded(
            redis::cmd("GET")
                .arg(revision_key(&self.id))
                .query_async::<Option<String>>(&mut connection),
        )
        .await?;
        let serving = site.revision();
        if !needs_load(&serving, stored.as_deref()) {
            return Ok(false);
        }
        match self.read().await? {
            Some(snapshot) => Ok(site.replace_content_if(&serving, snapshot)),
            None => Ok(false),
        }
    }

    /// Watches the deployment's revision for as long as the runtime runs, loading every change.
    pub fn watch(self: Arc<Self>, site: Arc<Site>) {
        tokio::spawn(async move {
            let mut every = tokio::time::interval(WATCH_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let refreshed = self.refresh(&site).await;
                let then = "this server keeps its content until it answers again";
                if self.log.settle("reading the revision", then, refreshed) == Some(true) {
                    tracing::info!(
                        "content of deployment {} loaded from the key-value store (revision {})",
                        self.id,
                        site.revision()
                    );
                }
            }
        });
    }
}
