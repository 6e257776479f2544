//! Run ownership across servers sharing one database. Each server holds a lease in
//! `workspace_servers`, renewed every third of [`Config::run_lease`]; a thread's runs name
//! the server running them (`threads.run_owner`). A run whose server holds no lease any more
//! died with it: the first server to notice (at its start, then at each renewal) marks the
//! thread `failed` and ends the run's stream. A run whose server is alive is left alone, so
//! several servers can share one database.
//!
//! Leases are written by the clock of the server holding them and read by the clocks of the
//! others: a lease counts as lapsed only one whole lease after its end, so clocks that
//! disagree by less than a lease never fail a live run. A server that stalls longer than
//! that may find its runs taken over: its final status is then not written
//! ([`crate::storage::Store::set_thread_status`] is fenced by the owner).

use std::time::Duration;

use tokio::time::MissedTickBehavior;

use crate::config::Config;
use crate::state::AppState;
use crate::storage::StoreResult;

/// Renews this server's lease, then fails the runs of servers whose lease has lapsed.
pub async fn recover(state: &AppState) -> StoreResult<()> {
    let pilot = &state.pilot;
    let now = state.config.clock.now_ms();
    let lease = lease_ms(&state.config);
    state
        .store
        .renew_server_lease(&pilot.server_id, now.saturating_add(lease))
        .await?;
    let orphaned = state
        .store
        .fail_orphaned_runs(now, live_after(state, now))
        .await?;
    if !orphaned.is_empty() {
        tracing::warn!(
            orphaned = orphaned.len(),
            "runs whose server stopped were marked failed"
        );
    }
    end_streams(state, &orphaned, "the run was interrupted");
    Ok(())
}

/// Stops this server's runs: marks them `failed`, ends their streams and gives up the
/// lease, so no other server waits for it to lapse. For a server that is shutting down.
pub async fn stop(state: &AppState) -> StoreResult<()> {
    let now = state.config.clock.now_ms();
    let stopped = state
        .store
        .fail_runs_of(&state.pilot.server_id, now)
        .await?;
    if !stopped.is_empty() {
        tracing::warn!(
            stopped = stopped.len(),
            "runs stopped by the shutdown were marked failed"
        );
    }
    end_streams(state, &stopped, "the server shut down during the run");
    state
        .store
        .release_server_lease(&state.pilot.server_id)
        .await
}

/// The earliest lease end that still counts as live at `now` (epoch ms): one lease before
/// it, the margin for clock skew between servers.
pub fn live_after(state: &AppState, now: i64) -> i64 {
    now.saturating_sub(lease_ms(&state.config))
}

/// The lease length in milliseconds.
fn lease_ms(config: &Config) -> i64 {
    i64::try_from(config.run_lease.as_millis()).unwrap_or(i64::MAX)
}

/// Ends the run streams of `threads` (`(org id, thread id)`) with an error `message`.
fn end_streams(state: &AppState, threads: &[(String, String)], message: &str) {
    for (org_id, thread_id) in threads {
        state
            .pilot
            .interrupted(&format!("{org_id}:{thread_id}"), message);
    }
}

/// Keeps this server's lease and recovers orphaned runs every third of the lease, for as
/// long as the runtime runs.
pub fn maintain(state: AppState) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(renewal_interval(&state.config));
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            if let Err(error) = recover(&state).await {
                let error = state.store.error(error);
                tracing::error!(%error, "run lease not renewed");
            }
        }
    });
}

/// How often the lease is renewed.
fn renewal_interval(config: &Config) -> Duration {
    (config.run_lease / 3).max(Duration::from_millis(10))
}
