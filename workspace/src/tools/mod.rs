//! The management tools, answered at `POST /api/:org/tools/<TOOL>` and over MCP at
//! `/api/:org/mcp/self`. Each tool needs its name under the key's `self` permissions.

mod agents;
mod api_keys;
mod audit;
mod connections;
mod input;
mod rest;
mod threads;

pub use rest::rest_tool;

use std::time::Instant;

use serde_json::{Value, json};

use crate::auth::{Principal, SELF_RESOURCE};
use crate::clock::now_ms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::storage::AuditEntry;

/// A tool's name, description and input schema (for `tools/list`).
pub struct ToolDef {
    /// Tool name.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// JSON Schema of its input.
    pub input_schema: fn() -> Value,
}

impl ToolDef {
    /// The MCP `tools/list` entry.
    pub fn describe(&self) -> Value {
        json!({ "name": self.name, "description": self.description, "inputSchema": (self.input_schema)() })
    }
}

/// Every management tool.
pub const TOOLS: &[ToolDef] = &[
    threads::CREATE,
    threads::GET,
    threads::LIST,
    threads::MESSAGES_LIST,
    connections::LIST,
    connections::CREATE,
    connections::GET,
    connections::UPDATE,
    connections::DELETE,
    agents::CREATE,
    agents::GET,
    agents::LIST,
    agents::UPDATE,
    agents::DELETE,
    api_keys::CREATE,
    api_keys::LIST,
    api_keys::DELETE,
    audit::LIST,
];

/// The definition of `name`.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// What a tool runs with.
pub struct ToolCtx<'a> {
    /// Shared state.
    pub state: &'a AppState,
    /// The caller.
    pub principal: &'a Principal,
}

/// Runs tool `name`: 404 for an unknown tool, 403 without the `self` permission, then
/// the tool's own validation (400), lookups (404) and conflicts (409). Audited: 503 without
/// running when the audit queue has no room for its row within its wait.
pub async fn execute(
    state: &AppState,
    principal: &Principal,
    name: &str,
    input: Value,
    surface: &'static str,
) -> Result<Value, ApiError> {
    let tool = find(name).ok_or_else(|| ApiError::NotFound(format!("Unknown tool: {name}")))?;
    principal.require(SELF_RESOURCE, tool.name)?;
    crate::http::reject_nul(&input)?;
    let slot = state
        .audit
        .reserve()
        .await
        .map_err(|refused| ApiError::Unavailable(refused.to_string()))?;
    let started = Instant::now();
    let ctx = ToolCtx { state, principal };
    let result = dispatch(&ctx, tool.name, input).await;
    slot.record(AuditEntry {
        org_id: principal.org.id.clone(),
        at: now_ms(),
        actor: principal.actor(),
        surface: surface.to_string(),
        connection_id: None,
        tool: tool.name.to_string(),
        outcome: if result.is_ok() { "success" } else { "error" }.to_string(),
        duration_ms: started.elapsed().as_millis() as i64,
        request_id: uuid::Uuid::new_v4().to_string(),
    });
    result
}

async fn dispatch(ctx: &ToolCtx<'_>, name: &str, input: Value) -> Result<Value, ApiError> {
    match name {
        "COLLECTION_THREADS_CREATE" => threads::create(ctx, input).await,
        "COLLECTION_THREADS_GET" => threads::get(ctx, input).await,
        "COLLECTION_THREADS_LIST" => threads::list(ctx, input).await,
        "COLLECTION_THREAD_MESSAGES_LIST" => threads::messages(ctx, input).await,
        "COLLECTION_CONNECTIONS_LIST" => connections::list(ctx, input).await,
        "COLLECTION_CONNECTIONS_CREATE" => connections::create(ctx, input).await,
        "COLLECTION_CONNECTIONS_GET" => connections::get(ctx, input).await,
        "COLLECTION_CONNECTIONS_UPDATE" => connections::update(ctx, input).await,
        "COLLECTION_CONNECTIONS_DELETE" => connections::delete(ctx, input).await,
        "COLLECTION_VIRTUAL_MCP_CREATE" => agents::create(ctx, input).await,
        "COLLECTION_VIRTUAL_MCP_GET" => agents::get(ctx, input).await,
        "COLLECTION_VIRTUAL_MCP_LIST" => agents::list(ctx, input).await,
        "COLLECTION_VIRTUAL_MCP_UPDATE" => agents::update(ctx, input).await,
        "COLLECTION_VIRTUAL_MCP_DELETE" => agents::delete(ctx, input).await,
        "API_KEY_CREATE" => api_keys::create(ctx, input).await,
        "API_KEY_LIST" => api_keys::list(ctx, input).await,
        "API_KEY_DELETE" => api_keys::delete(ctx, input).await,
        "AUDIT_LOG_LIST" => audit::list(ctx, input).await,
        _ => Err(ApiError::NotFound(format!("Unknown tool: {name}"))),
    }
}
