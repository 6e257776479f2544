//! Connections to upstream MCP servers; credentials and header values stay encrypted.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};

use super::{Store, StoreResult};

/// Default per-connection tool-call timeout: 5 minutes.
pub const DEFAULT_TOOL_TIMEOUT_MS: i64 = 300_000;

/// Whether the proxy serves a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionStatus {
    /// Ready to proxy.
    Active,
    /// Disabled: the proxy answers 503.
    Inactive,
    /// Misconfigured: the proxy answers 503.
    Error,
}

impl ConnectionStatus {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Inactive => "inactive",
            Self::Error => "error",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "active" => Self::Active,
            "inactive" => Self::Inactive,
            _ => Self::Error,
        }
    }
}

/// A stored connection.
#[derive(Clone, Debug)]
pub struct Connection {
    /// UUID.
    pub id: String,
    /// Owning organization.
    pub org_id: String,
    /// Display title.
    pub title: String,
    /// Optional description.
    pub description: Option<String>,
    /// Upstream MCP endpoint (streamable HTTP).
    pub url: String,
    /// Proxy status.
    pub status: ConnectionStatus,
    /// Encrypted bearer token sent upstream (AAD `connections:<id>:token`).
    pub token_enc: Option<String>,
    /// Encrypted JSON object of custom headers (AAD `connections:<id>:headers`).
    pub headers_enc: Option<String>,
    /// Names of the custom headers (values are secret).
    pub header_names: Vec<String>,
    /// Tool-call timeout in milliseconds.
    pub tool_timeout_ms: i64,
    /// Member who created it.
    pub created_by: String,
    /// Creation time (epoch ms).
    pub created_at: i64,
    /// Last update (epoch ms).
    pub updated_at: i64,
}

const COLUMNS: &str = "id, org_id, title, description, url, status, token_enc, headers_enc, \
                       header_names, tool_timeout_ms, created_by, created_at, updated_at";

fn connection_from(row: &AnyRow) -> StoreResult<Connection> {
    let names: String = row.try_get("header_names")?;
    let status: String = row.try_get("status")?;
    Ok(Connection {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        url: row.try_get("url")?,
        status: ConnectionStatus::parse(&status),
        token_enc: row.try_get("token_enc")?,
        headers_enc: row.try_get("headers_enc")?,
        header_names: serde_json::from_str(&names).unwrap_or_default(),
        tool_timeout_ms: row.try_get("tool_timeout_ms")?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

impl Store {
    /// Stores a new connection.
    pub async fn insert_connection(&self, c: &Connection) -> StoreResult<()> {
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO connections ({COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        )))
        .bind(&c.id)
        .bind(&c.org_id)
        .bind(&c.title)
        .bind(&c.description)
        .bind(&c.url)
        .bind(c.status.as_str())
        .bind(&c.token_enc)
        .bind(&c.headers_enc)
        .bind(serde_json::to_string(&c.header_names).expect("names serialize"))
        .bind(c.tool_timeout_ms)
        .bind(&c.created_by)
        .bind(c.created_at)
        .bind(c.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Rewrites every mutable column of a connection.
    pub async fn update_connection(&self, c: &Connection) -> StoreResult<()> {
        sqlx::query(
            "UPDATE connections SET title = $3, description = $4, url = $5, status = $6, \
             token_enc = $7, headers_enc = $8, header_names = $9, tool_timeout_ms = $10, \
             updated_at = $11 WHERE org_id = $1 AND id = $2",
        )
        .bind(&c.org_id)
        .bind(&c.id)
        .bind(&c.title)
        .bind(&c.description)
        .bind(&c.url)
        .bind(c.status.as_str())
        .bind(&c.token_enc)
        .bind(&c.headers_enc)
        .bind(serde_json::to_string(&c.header_names).expect("names serialize"))
        .bind(c.tool_timeout_ms)
        .bind(c.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The connection `id` of the organization.
    pub async fn connection(&self, org_id: &str, id: &str) -> StoreResult<Option<Connection>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM connections WHERE org_id = $1 AND id = $2"
        )))
        .bind(org_id)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(connection_from)
        .transpose()
    }

    /// The connection `id`, whatever its organization (legacy unscoped route).
    pub async fn connection_any_org(&self, id: &str) -> StoreResult<Option<Connection>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM connections WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(connection_from)
        .transpose()
    }

    /// The connections of an organization, oldest first.
    pub async fn list_connections(&self, org_id: &str) -> StoreResult<Vec<Connection>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM connections WHERE org_id = $1 ORDER BY created_at, id"
        )))
        .bind(org_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(connection_from)
        .collect()
    }

    /// Deletes a connection; `false` when there was none.
    pub async fn delete_connection(&self, org_id: &str, id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM connections WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }
}
