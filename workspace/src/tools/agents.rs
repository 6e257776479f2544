//! Agent (virtual MCP) tools.

use serde::Deserialize;
use serde_json::{Value, json};

use super::input::{ById, listing, parse, text};
use super::threads::by_id_schema;
use super::{ToolCtx, ToolDef};
use crate::clock::{iso, now_ms};
use crate::error::ApiError;
use crate::storage::{Agent, AgentMember};

/// `COLLECTION_VIRTUAL_MCP_CREATE`.
pub const CREATE: ToolDef = ToolDef {
    name: "COLLECTION_VIRTUAL_MCP_CREATE",
    description: "Create an agent: connections, selected tools and instructions.",
    input_schema: || json!({ "type": "object", "required": ["data"], "properties": { "data": data_schema(true) } }),
};
/// `COLLECTION_VIRTUAL_MCP_GET`.
pub const GET: ToolDef = ToolDef {
    name: "COLLECTION_VIRTUAL_MCP_GET",
    description: "Get an agent.",
    input_schema: by_id_schema,
};
/// `COLLECTION_VIRTUAL_MCP_LIST`.
pub const LIST: ToolDef = ToolDef {
    name: "COLLECTION_VIRTUAL_MCP_LIST",
    description: "List agents.",
    input_schema: || json!({ "type": "object", "properties": {} }),
};
/// `COLLECTION_VIRTUAL_MCP_UPDATE`.
pub const UPDATE: ToolDef = ToolDef {
    name: "COLLECTION_VIRTUAL_MCP_UPDATE",
    description: "Update an agent.",
    input_schema: || {
        json!({ "type": "object", "required": ["id", "data"], "properties": {
        "id": { "type": "string" }, "data": data_schema(false) } })
    },
};
/// `COLLECTION_VIRTUAL_MCP_DELETE`.
pub const DELETE: ToolDef = ToolDef {
    name: "COLLECTION_VIRTUAL_MCP_DELETE",
    description: "Delete an agent.",
    input_schema: by_id_schema,
};

fn data_schema(create: bool) -> Value {
    let required: &[&str] = if create { &["title"] } else { &[] };
    json!({ "type": "object", "required": required, "properties": {
        "title": { "type": "string" },
        "description": { "type": ["string", "null"] },
        "instructions": { "type": ["string", "null"] },
        "status": { "enum": ["active", "inactive"] },
        "connections": { "type": "array", "items": { "type": "object", "required": ["connection_id"],
            "properties": { "connection_id": { "type": "string" },
                "selected_tools": { "type": ["array", "null"], "items": { "type": "string" } } } } } } })
}

/// The response shape of an agent.
pub fn agent_json(a: &Agent) -> Value {
    json!({
        "id": a.id,
        "title": a.title,
        "description": a.description,
        "instructions": a.instructions,
        "connection_type": "VIRTUAL",
        "status": a.status,
        "connections": a.members,
        "created_by": a.created_by,
        "created_at": iso(a.created_at),
        "updated_at": iso(a.updated_at),
    })
}

#[derive(Deserialize, Default)]
struct Data {
    title: Option<String>,
    #[serde(default, with = "nullable")]
    description: Option<Option<String>>,
    #[serde(default, with = "nullable")]
    instructions: Option<Option<String>>,
    status: Option<String>,
    connections: Option<Vec<AgentMember>>,
}

/// Distinguishes an absent field (`None`) from `null` (`Some(None)`).
mod nullable {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(d).map(Some)
    }
}

async fn apply(ctx: &ToolCtx<'_>, agent: &mut Agent, data: Data) -> Result<(), ApiError> {
    if let Some(title) = data.title {
        text("data.title", &title, 200)?;
        agent.title = title;
    }
    if let Some(description) = data.description {
        agent.description = description;
    }
    if let Some(instructions) = data.instructions {
        agent.instructions = instructions;
    }
    if let Some(status) = data.status {
        if status != "active" && status != "inactive" {
            return Err(ApiError::BadRequest(
                "data.status must be active or inactive".into(),
            ));
        }
        agent.status = status;
    }
    if let Some(members) = data.connections {
        for member in &members {
            let known = ctx
                .state
                .store
                .connection(&ctx.principal.org.id, &member.connection_id)
                .await?
                .is_some();
            if !known {
                return Err(ApiError::BadRequest(format!(
                    "unknown connection: {}",
                    member.connection_id
                )));
            }
        }
        agent.members = members;
    }
    Ok(())
}

#[derive(Deserialize)]
struct CreateInput {
    data: Data,
}

pub(super) async fn create(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let CreateInput { data } = parse(input)?;
    if data.title.is_none() {
        return Err(ApiError::BadRequest("data.title is required".into()));
    }
    let now = now_ms();
    let mut agent = Agent {
        id: uuid::Uuid::new_v4().to_string(),
        org_id: ctx.principal.org.id.clone(),
        title: String::new(),
        description: None,
        instructions: None,
        status: "active".into(),
        members: Vec::new(),
        created_by: ctx.principal.member_id.clone(),
        created_at: now,
        updated_at: now,
    };
    apply(ctx, &mut agent, data).await?;
    ctx.state.store.insert_agent(&agent).await?;
    Ok(json!({ "item": agent_json(&agent) }))
}

async fn load(ctx: &ToolCtx<'_>, id: &str) -> Result<Agent, ApiError> {
    ctx.state
        .store
        .agent(&ctx.principal.org.id, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Agent not found: {id}")))
}

pub(super) async fn get(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let ById { id } = parse(input)?;
    Ok(json!({ "item": agent_json(&load(ctx, &id).await?) }))
}

pub(super) async fn list(ctx: &ToolCtx<'_>, _input: Value) -> Result<Value, ApiError> {
    let agents = ctx.state.store.list_agents(&ctx.principal.org.id).await?;
    let total = agents.len() as i64;
    Ok(listing(agents.iter().map(agent_json).collect(), total, 0))
}

#[derive(Deserialize)]
struct UpdateInput {
    id: String,
    data: Data,
}

pub(super) async fn update(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let UpdateInput { id, data } = parse(input)?;
    let mut agent = load(ctx, &id).await?;
    apply(ctx, &mut agent, data).await?;
    agent.updated_at = now_ms();
    ctx.state.store.update_agent(&agent).await?;
    Ok(json!({ "item": agent_json(&agent) }))
}

pub(super) async fn delete(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let ById { id } = parse(input)?;
    if !ctx
        .state
        .store
        .delete_agent(&ctx.principal.org.id, &id)
        .await?
    {
        return Err(ApiError::NotFound(format!("Agent not found: {id}")));
    }
    Ok(json!({ "success": true, "id": id }))
}
