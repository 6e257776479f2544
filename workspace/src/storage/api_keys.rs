//! API keys: only the hash of the value is stored.

use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};

use super::{Organization, Store, StoreResult};
use crate::auth::Permissions;

/// A stored API key (never the value).
#[derive(Clone, Debug)]
pub struct ApiKeyRecord {
    /// Key id (used by `API_KEY_DELETE`).
    pub id: String,
    /// The organization the key is bound to.
    pub org_id: String,
    /// The member the key acts for.
    pub member_id: String,
    /// Human-readable label.
    pub name: String,
    /// Hex SHA-256 of the value.
    pub key_hash: String,
    /// What the key may do.
    pub permissions: Permissions,
    /// Expiry in epoch milliseconds; `None` never expires.
    pub expires_at: Option<i64>,
    /// Creation time in epoch milliseconds.
    pub created_at: i64,
}

fn key_from(row: &AnyRow) -> StoreResult<ApiKeyRecord> {
    let permissions: String = row.try_get("permissions")?;
    Ok(ApiKeyRecord {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        member_id: row.try_get("member_id")?,
        name: row.try_get("name")?,
        key_hash: row.try_get("key_hash")?,
        permissions: serde_json::from_str(&permissions)
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        expires_at: row.try_get("expires_at")?,
        created_at: row.try_get("created_at")?,
    })
}

const COLUMNS: &str = "id, org_id, member_id, name, key_hash, permissions, expires_at, created_at";

impl Store {
    /// Stores a new key.
    pub async fn insert_api_key(&self, key: &ApiKeyRecord) -> StoreResult<()> {
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO api_keys ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        )))
        .bind(&key.id)
        .bind(&key.org_id)
        .bind(&key.member_id)
        .bind(&key.name)
        .bind(&key.key_hash)
        .bind(serde_json::to_string(&key.permissions).expect("permissions serialize"))
        .bind(key.expires_at)
        .bind(key.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The key whose value hashes to `key_hash`, with its organization (one query: this
    /// runs on every request whose key is not cached at the current revision).
    pub async fn api_key_by_hash(
        &self,
        key_hash: &str,
    ) -> StoreResult<Option<(ApiKeyRecord, Organization)>> {
        let row = sqlx::query(
            "SELECT k.id, k.org_id, k.member_id, k.name, k.key_hash, k.permissions, \
             k.expires_at, k.created_at, o.slug, o.name AS org_name FROM api_keys k \
             JOIN organizations o ON o.id = k.org_id WHERE k.key_hash = $1",
        )
        .bind(key_hash)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let key = key_from(&row)?;
        let org = Organization {
            id: key.org_id.clone(),
            slug: row.try_get("slug")?,
            name: row.try_get("org_name")?,
        };
        Ok(Some((key, org)))
    }

    /// The keys of an organization, oldest first.
    pub async fn list_api_keys(&self, org_id: &str) -> StoreResult<Vec<ApiKeyRecord>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at, id"
        )))
        .bind(org_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(key_from)
        .collect()
    }

    /// Deletes a key of the organization; `false` when there was none.
    pub async fn delete_api_key(&self, org_id: &str, id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM api_keys WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }
}
