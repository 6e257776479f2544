//! Schema migrations, one script list per backend, applied in order and recorded.

use sqlx::Row;

use super::{Backend, Store, StoreResult};
use crate::clock::now_ms;

/// The migrations of one backend: `(version, script)`.
fn scripts(backend: Backend) -> &'static [(i64, &'static str)] {
    match backend {
        Backend::Sqlite => &[
            (1, include_str!("sql/sqlite/001_init.sql")),
            (2, include_str!("sql/sqlite/002_run_owner.sql")),
            (3, include_str!("sql/sqlite/003_member_oauth_subject.sql")),
            (4, include_str!("sql/sqlite/004_auth_revision.sql")),
            (5, include_str!("sql/sqlite/005_message_ids_per_thread.sql")),
        ],
        Backend::Postgres => &[
            (1, include_str!("sql/postgres/001_init.sql")),
            (2, include_str!("sql/postgres/002_run_owner.sql")),
            (3, include_str!("sql/postgres/003_member_oauth_subject.sql")),
            (4, include_str!("sql/postgres/004_auth_revision.sql")),
            (
                5,
                include_str!("sql/postgres/005_message_ids_per_thread.sql"),
            ),
        ],
    }
}

/// Applies every migration not yet recorded in `workspace_migrations`.
pub(super) async fn run(store: &Store) -> StoreResult<()> {
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS workspace_migrations \
         (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
    )
    .execute(&store.pool)
    .await?;
    let applied: Vec<i64> = sqlx::query("SELECT version FROM workspace_migrations")
        .fetch_all(&store.pool)
        .await?
        .iter()
        .map(|row| row.try_get::<i64, _>(0))
        .collect::<Result<_, _>>()?;
    for (version, script) in scripts(store.backend) {
        if applied.contains(version) {
            continue;
        }
        let mut tx = store.pool.begin().await?;
        sqlx::raw_sql(*script).execute(&mut *tx).await?;
        sqlx::query("INSERT INTO workspace_migrations (version, applied_at) VALUES ($1, $2)")
            .bind(*version)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(version, "applied workspace migration");
    }
    Ok(())
}
