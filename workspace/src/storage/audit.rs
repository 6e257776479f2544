//! The audit log: one row per tool invocation, with the caller identity.

use serde::Serialize;
use sqlx::Row;

use super::{Store, StoreResult};

/// One audited tool invocation.
#[derive(Clone, Debug, Serialize)]
pub struct AuditEntry {
    /// Organization id.
    #[serde(skip)]
    pub org_id: String,
    /// When it happened (epoch ms).
    pub at: i64,
    /// Who called: `key:<id>` (API key), `anonymous` (public tool) or `run:<thread>`.
    pub actor: String,
    /// Where: `proxy`, `gateway`, `self`, `rest` or `run`.
    pub surface: String,
    /// The connection, for upstream tools.
    pub connection_id: Option<String>,
    /// Tool name.
    pub tool: String,
    /// `success`, `error` or `denied`.
    pub outcome: String,
    /// Duration in milliseconds.
    pub duration_ms: i64,
    /// Request id (also sent upstream as `x-request-id`).
    pub request_id: String,
}

impl Store {
    /// Appends audit rows, in one transaction (one commit, one pooled connection).
    pub async fn insert_audit(&self, entries: &[AuditEntry]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        for e in entries {
            sqlx::query(
                "INSERT INTO audit_log (org_id, at, actor, surface, connection_id, tool, outcome, \
                 duration_ms, request_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(&e.org_id)
            .bind(e.at)
            .bind(&e.actor)
            .bind(&e.surface)
            .bind(&e.connection_id)
            .bind(&e.tool)
            .bind(&e.outcome)
            .bind(e.duration_ms)
            .bind(&e.request_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The most recent audit rows of an organization, newest first.
    pub async fn list_audit(&self, org_id: &str, limit: i64) -> StoreResult<Vec<AuditEntry>> {
        sqlx::query(
            "SELECT org_id, at, actor, surface, connection_id, tool, outcome, duration_ms, \
             request_id FROM audit_log WHERE org_id = $1 ORDER BY seq DESC LIMIT $2",
        )
        .bind(org_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| {
            Ok(AuditEntry {
                org_id: row.try_get("org_id")?,
                at: row.try_get("at")?,
                actor: row.try_get("actor")?,
                surface: row.try_get("surface")?,
                connection_id: row.try_get("connection_id")?,
                tool: row.try_get("tool")?,
                outcome: row.try_get("outcome")?,
                duration_ms: row.try_get("duration_ms")?,
                request_id: row.try_get("request_id")?,
            })
        })
        .collect()
    }
}
