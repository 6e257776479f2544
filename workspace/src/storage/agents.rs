//! Agents (virtual MCPs): a set of connections, selected tools and instructions.

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};

use super::{Store, StoreResult};

/// One connection of an agent and the tools it exposes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentMember {
    /// The connection id.
    pub connection_id: String,
    /// `null` = every tool; a list = only these (original) tool names.
    #[serde(default)]
    pub selected_tools: Option<Vec<String>>,
}

/// A stored agent.
#[derive(Clone, Debug)]
pub struct Agent {
    /// Id (UUID).
    pub id: String,
    /// Owning organization.
    pub org_id: String,
    /// Display title.
    pub title: String,
    /// Optional description.
    pub description: Option<String>,
    /// System instructions given to the model.
    pub instructions: Option<String>,
    /// `active` or `inactive`.
    pub status: String,
    /// Member connections in order.
    pub members: Vec<AgentMember>,
    /// Member who created it.
    pub created_by: String,
    /// Creation time (epoch ms).
    pub created_at: i64,
    /// Last update (epoch ms).
    pub updated_at: i64,
}

const COLUMNS: &str = "id, org_id, title, description, instructions, status, members, created_by, created_at, updated_at";

fn agent_from(row: &AnyRow) -> StoreResult<Agent> {
    let members: String = row.try_get("members")?;
    Ok(Agent {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        instructions: row.try_get("instructions")?,
        status: row.try_get("status")?,
        members: serde_json::from_str(&members).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

impl Store {
    /// Stores a new agent.
    pub async fn insert_agent(&self, a: &Agent) -> StoreResult<()> {
        sqlx::query(AssertSqlSafe(format!(
            "INSERT INTO agents ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        )))
        .bind(&a.id)
        .bind(&a.org_id)
        .bind(&a.title)
        .bind(&a.description)
        .bind(&a.instructions)
        .bind(&a.status)
        .bind(serde_json::to_string(&a.members).expect("members serialize"))
        .bind(&a.created_by)
        .bind(a.created_at)
        .bind(a.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Rewrites every mutable column of an agent.
    pub async fn update_agent(&self, a: &Agent) -> StoreResult<()> {
        sqlx::query(
            "UPDATE agents SET title = $3, description = $4, instructions = $5, status = $6, \
             members = $7, updated_at = $8 WHERE org_id = $1 AND id = $2",
        )
        .bind(&a.org_id)
        .bind(&a.id)
        .bind(&a.title)
        .bind(&a.description)
        .bind(&a.instructions)
        .bind(&a.status)
        .bind(serde_json::to_string(&a.members).expect("members serialize"))
        .bind(a.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The agent `id` of the organization.
    pub async fn agent(&self, org_id: &str, id: &str) -> StoreResult<Option<Agent>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM agents WHERE org_id = $1 AND id = $2"
        )))
        .bind(org_id)
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(agent_from)
        .transpose()
    }

    /// The agents of an organization, oldest first.
    pub async fn list_agents(&self, org_id: &str) -> StoreResult<Vec<Agent>> {
        sqlx::query(AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM agents WHERE org_id = $1 ORDER BY created_at, id"
        )))
        .bind(org_id)
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(agent_from)
        .collect()
    }

    /// Deletes an agent; `false` when there was none.
    pub async fn delete_agent(&self, org_id: &str, id: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM agents WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }
}
