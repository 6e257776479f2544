//! `sitefile kv`: the Fast Deploy command-line tools, on the store a deployment reads
//! ([`KvStore`]): the Redis the servers read (`PLATFORM_KV`, or `EDGE_KV_NAMESPACE_ID` when it
//! is a `redis://` URL; `EDGE_ACCOUNT_ID` and `EDGE_API_TOKEN` are then the Redis user and
//! password, the token defaulting to `REDISCLI_AUTH`, then to what the URL carries), or a
//! Workers KV namespace (`EDGE_KV_NAMESPACE_ID` a namespace id, through Cloudflare's API).
//! `sync` pushes a site directory's content as a deployment's snapshot; `migrate` copies one
//! deployment's snapshot to another (a new code deployment takes over the content the editor
//! published to the live one). Both keep the deployment bookkeeping and can point `index:live`
//! at the deployment. The layout and its rules are the core's.

use crate::kv_store::KvStore;
use chrono::Utc;
use clap::{Args, Subcommand};
use sitefile_core::fast_deploy::{
    DEPLOYMENTS_KEY, LIVE_KEY, read_snapshot, record_deployment, revision_key, snapshot_key,
    snapshot_writes,
};
use sitefile_core::{PlatformConfig, Snapshot};
use sitefile_site_dir as site_dir;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `sitefile kv`.
#[derive(Debug, Args)]
pub struct KvArgs {
    #[command(subcommand)]
    command: KvCommand,
}

#[derive(Debug, Subcommand)]
enum KvCommand {
    /// Push a site directory's content as a deployment's snapshot.
    Sync(SyncArgs),
    /// Copy a deployment's snapshot (the live one by default) to another deployment.
    Migrate(MigrateArgs),
}

/// Arguments of `sitefile kv sync`.
#[derive(Debug, Args)]
struct SyncArgs {
    /// A site root holding `.platform/blocks/`, or a blocks directory itself.
    site_dir: PathBuf,
    /// The deployment (default: `PLATFORM_DEPLOYMENT_ID`, then `BUILD_HASH`).
    #[arg(long)]
    deployment_id: Option<String>,
    /// Also point `index:live` at the deployment.
    #[arg(long)]
    set_live: bool,
}

/// Arguments of `sitefile kv migrate`.
#[derive(Debug, Args)]
struct MigrateArgs {
    /// The deployment whose snapshot is copied (default: the live one, `index:live`).
    #[arg(long)]
    from: Option<String>,
    /// The deployment it is copied to (default: `PLATFORM_DEPLOYMENT_ID`, then `BUILD_HASH`).
    #[arg(long)]
    to: Option<String>,
    /// Also point `index:live` at the deployment it is copied to.
    #[arg(long)]
    set_live: bool,
}

/// Runs the command: exit 0 when the snapshot is written, 1 when the store failed, 2 on bad
/// input.
pub fn run(args: KvArgs) -> ExitCode {
    let platform = match PlatformConfig::from_env(std::env::vars()) {
        Ok(platform) => platform,
        Err(e) => return crate::fail(&e.to_string()),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => return crate::fail(&e.to_string()),
    };
    runtime.block_on(async {
        let store = match KvStore::from_env(&platform, |name| std::env::var(name).ok()) {
            Ok(store) => store,
            Err(e) => return crate::fail(&e),
        };
        let (snapshot, id, set_live) = match prepare(args.command, &platform, &store).await {
            Ok(Some(prepared)) => prepared,
            Ok(None) => return ExitCode::from(2),
            Err(e) => return failed(&e),
        };
        match publish(&store, &id, &snapshot, set_live).await {
            Ok(pruned) => {
                crate::print(&format!(
                    "sitefile kv: deployment {id}: {} blocks, revision {}{}{}",
                    snapshot.len(),
                    &snapshot.revision()[..12.min(snapshot.revision().len())],
                    if set_live { ", live" } else { "" },
                    if pruned.is_empty() {
                        String::new()
                    } else {
                        format!(", dropped {}", pruned.join(", "))
                    }
                ));
                ExitCode::SUCCESS
            }
            Err(e) => failed(&e),
        }
    })
}

/// The snapshot to write, the deployment and whether it goes live; `None` after bad input was
/// reported.
async fn prepare(
    command: KvCommand,
    platform: &PlatformConfig,
    store: &KvStore,
) -> Result<Option<(Snapshot, String, bool)>, String> {
    let deployment = |given: Option<String>| {
        let id = given.or_else(|| platform.deployment_id(None).map(str::to_string));
        if id.is_none() {
            crate::fail("no deployment: pass it, or set PLATFORM_DEPLOYMENT_ID or BUILD_HASH");
        }
        id
    };
    match command {
        KvCommand::Sync(args) => {
            let Some(id) = deployment(args.deployment_id) else {
                return Ok(None);
            };
            let loaded = match site_dir::load(&args.site_dir) {
                Ok(loaded) => loaded,
                Err(e) => {
                    crate::fail(&e.to_string());
                    return Ok(None);
                }
            };
            for problem in &loaded.problems {
                eprintln!("warning: {problem}");
            }
            Ok(Some((loaded.snapshot, id, args.set_live)))
        }
        KvCommand::Migrate(args) => {
            let Some(to) = deployment(args.to) else {
                return Ok(None);
            };
            let from = match args.from {
                Some(from) => from,
                None => store
                    .get(LIVE_KEY)
                    .await?
                    .map(|id| String::from_utf8_lossy(&id).into_owned())
                    .ok_or("no live deployment (index:live); pass --from")?,
            };
            let bytes = store
                .get(&snapshot_key(&from))
                .await?
                .ok_or_else(|| format!("deployment {from} has no snapshot"))?;
            let snapshot =
                read_snapshot(bytes).map_err(|e| format!("{}: {e}", snapshot_key(&from)))?;
            Ok(Some((snapshot, to, args.set_live)))
        }
    }
}

/// Writes `snapshot` as deployment `id`'s (snapshot, then revision), records the deployment,
/// deletes the keys of the deployments the bookkeeping dropped and, when `set_live`, points
/// `index:live` at it; the dropped deployments.
async fn publish(
    store: &KvStore,
    id: &str,
    snapshot: &Snapshot,
    set_live: bool,
) -> Result<Vec<String>, String> {
    let mut writes = snapshot_writes(id, snapshot).to_vec();
    if set_live {
        writes.push((LIVE_KEY.to_string(), id.as_bytes().to_vec()));
    }
    store.put(&writes).await?;
    let list = store.get(DEPLOYMENTS_KEY).await?;
    let live = store
        .get(LIVE_KEY)
        .await?
        .map(|id| String::from_utf8_lossy(&id).into_owned());
    let record = record_deployment(
        list.as_deref(),
        id,
        Utc::now().timestamp_millis(),
        live.as_deref(),
    );
    store
        .put(&[(DEPLOYMENTS_KEY.to_string(), record.list)])
        .await?;
    let dropped: Vec<String> = record
        .pruned
        .iter()
        .flat_map(|old| [snapshot_key(old), revision_key(old)])
        .collect();
    store.delete(&dropped).await?;
    Ok(record.pruned)
}

fn failed(message: &str) -> ExitCode {
    eprintln!("error: the key-value store failed: {message}");
    ExitCode::from(1)
}
