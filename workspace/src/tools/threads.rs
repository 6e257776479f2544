//! Thread tools: create, get, list, and the transcript listing.

use serde::Deserialize;
use serde_json::{Value, json};

use super::input::{ById, Page, listing, parse, text};
use super::{ToolCtx, ToolDef};
use crate::clock::{iso, new_id, now_ms};
use crate::error::ApiError;
use crate::storage::{Message, Thread, ThreadStatus};

/// `COLLECTION_THREADS_CREATE`.
pub const CREATE: ToolDef = ToolDef {
    name: "COLLECTION_THREADS_CREATE",
    description: "Create a thread for an agent; idempotent on a caller-supplied data.id.",
    input_schema: || {
        json!({ "type": "object", "required": ["data"], "properties": { "data": {
            "type": "object", "required": ["virtual_mcp_id"], "properties": {
                "id": { "type": "string" }, "title": { "type": "string" },
                "virtual_mcp_id": { "type": "string" } } } } })
    },
};
/// `COLLECTION_THREADS_GET`.
pub const GET: ToolDef = ToolDef {
    name: "COLLECTION_THREADS_GET",
    description: "Get a thread with its status.",
    input_schema: by_id_schema,
};
/// `COLLECTION_THREADS_LIST`.
pub const LIST: ToolDef = ToolDef {
    name: "COLLECTION_THREADS_LIST",
    description: "List threads, most recently updated first.",
    input_schema: || {
        json!({ "type": "object", "properties": {
            "limit": { "type": "integer", "minimum": 1, "maximum": 1000 },
            "offset": { "type": "integer", "minimum": 0 },
            "virtual_mcp_id": { "type": "string" } } })
    },
};
/// `COLLECTION_THREAD_MESSAGES_LIST`.
pub const MESSAGES_LIST: ToolDef = ToolDef {
    name: "COLLECTION_THREAD_MESSAGES_LIST",
    description: "Read a thread's durable transcript, oldest message first.",
    input_schema: || {
        json!({ "type": "object", "required": ["thread_id"], "properties": {
            "thread_id": { "type": "string" },
            "limit": { "type": "integer", "minimum": 1, "maximum": 1000 },
            "offset": { "type": "integer", "minimum": 0 } } })
    },
};

/// Schema of `{ id }`.
pub(super) fn by_id_schema() -> Value {
    json!({ "type": "object", "required": ["id"], "properties": { "id": { "type": "string" } } })
}

/// The response shape of a thread.
pub fn thread_json(t: &Thread) -> Value {
    json!({
        "id": t.id,
        "title": t.title,
        "virtual_mcp_id": t.virtual_mcp_id,
        "status": t.status,
        "created_by": t.created_by,
        "created_at": iso(t.created_at),
        "updated_at": iso(t.updated_at),
    })
}

/// The response shape of a transcript message.
pub fn message_json(m: &Message) -> Value {
    json!({
        "id": m.id,
        "thread_id": m.thread_id,
        "role": m.role,
        "parts": m.parts,
        "metadata": m.metadata,
        "created_at": iso(m.created_at),
        "updated_at": iso(m.updated_at),
    })
}

/// Whether a caller-supplied thread id is acceptable: 1–128 of `[A-Za-z0-9_-]`.
pub fn valid_thread_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[derive(Deserialize)]
struct CreateInput {
    data: CreateData,
}

#[derive(Deserialize)]
struct CreateData {
    id: Option<String>,
    title: Option<String>,
    virtual_mcp_id: String,
}

pub(super) async fn create(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let CreateInput { data } = parse(input)?;
    let org_id = &ctx.principal.org.id;
    if let Some(id) = &data.id
        && !valid_thread_id(id)
    {
        return Err(ApiError::BadRequest(
            "data.id must be 1 to 128 letters, digits, '_' or '-'".into(),
        ));
    }
    let title = data.title.unwrap_or_else(|| "New chat".into());
    text("data.title", &title, 500)?;
    if ctx
        .state
        .store
        .agent(org_id, &data.virtual_mcp_id)
        .await?
        .is_none()
    {
        return Err(ApiError::NotFound(format!(
            "Agent not found: {}",
            data.virtual_mcp_id
        )));
    }
    let now = now_ms();
    let thread = Thread {
        org_id: org_id.clone(),
        id: data.id.unwrap_or_else(|| new_id("thrd")),
        title,
        virtual_mcp_id: data.virtual_mcp_id,
        status: ThreadStatus::Completed,
        created_by: ctx.principal.member_id.clone(),
        created_at: now,
        updated_at: now,
    };
    let (thread, _) = ctx.state.store.create_thread(&thread).await?;
    Ok(json!({ "item": thread_json(&thread) }))
}

pub(super) async fn get(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let ById { id } = parse(input)?;
    let thread = ctx
        .state
        .store
        .thread(&ctx.principal.org.id, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Thread not found: {id}")))?;
    Ok(json!({ "item": thread_json(&thread) }))
}

#[derive(Deserialize)]
struct ListInput {
    #[serde(flatten)]
    page: Page,
    virtual_mcp_id: Option<String>,
}

pub(super) async fn list(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let input: ListInput = parse(input)?;
    let (limit, offset) = input.page.bounds()?;
    let (threads, total) = ctx
        .state
        .store
        .list_threads(
            &ctx.principal.org.id,
            input.virtual_mcp_id.as_deref(),
            limit,
            offset,
        )
        .await?;
    Ok(listing(
        threads.iter().map(thread_json).collect(),
        total,
        offset,
    ))
}

#[derive(Deserialize)]
struct MessagesInput {
    thread_id: Option<String>,
    #[serde(flatten)]
    page: Page,
}

pub(super) async fn messages(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let input: MessagesInput = parse(input)?;
    let thread_id = input
        .thread_id
        .ok_or_else(|| ApiError::BadRequest("thread_id is required".into()))?;
    let (limit, offset) = input.page.bounds()?;
    let org_id = &ctx.principal.org.id;
    if ctx.state.store.thread(org_id, &thread_id).await?.is_none() {
        return Err(ApiError::NotFound(format!("Thread not found: {thread_id}")));
    }
    let (messages, total) = ctx
        .state
        .store
        .list_messages(org_id, &thread_id, limit, offset)
        .await?;
    Ok(listing(
        messages.iter().map(message_json).collect(),
        total,
        offset,
    ))
}
