//! Connection tools. Reads never contain credentials: the token is reported only as
//! `has_token` and custom headers only by name.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::input::{ById, listing, parse, text};
use super::threads::by_id_schema;
use super::{ToolCtx, ToolDef};
use crate::clock::{iso, now_ms};
use crate::error::ApiError;
use crate::state::AppState;
use crate::storage::{Connection, ConnectionStatus};

/// Largest per-connection tool timeout: one hour.
const MAX_TOOL_TIMEOUT_MS: i64 = 3_600_000;

/// `COLLECTION_CONNECTIONS_LIST`.
pub const LIST: ToolDef = ToolDef {
    name: "COLLECTION_CONNECTIONS_LIST",
    description: "List connections and agents (agents have connection_type VIRTUAL).",
    input_schema: || json!({ "type": "object", "properties": {} }),
};
/// `COLLECTION_CONNECTIONS_CREATE`.
pub const CREATE: ToolDef = ToolDef {
    name: "COLLECTION_CONNECTIONS_CREATE",
    description: "Create a connection to an upstream MCP server (HTTPS; plain HTTP only on loopback).",
    input_schema: || json!({ "type": "object", "required": ["data"], "properties": { "data": data_schema(true) } }),
};
/// `COLLECTION_CONNECTIONS_GET`.
pub const GET: ToolDef = ToolDef {
    name: "COLLECTION_CONNECTIONS_GET",
    description: "Get a connection (without its credentials).",
    input_schema: by_id_schema,
};
/// `COLLECTION_CONNECTIONS_UPDATE`.
pub const UPDATE: ToolDef = ToolDef {
    name: "COLLECTION_CONNECTIONS_UPDATE",
    description: "Update a connection; null clears connection_token or connection_headers. \
                  Changing connection_url drops the stored token and headers unless new ones \
                  are given in the same update.",
    input_schema: || {
        json!({ "type": "object", "required": ["id", "data"], "properties": {
        "id": { "type": "string" }, "data": data_schema(false) } })
    },
};
/// `COLLECTION_CONNECTIONS_DELETE`.
pub const DELETE: ToolDef = ToolDef {
    name: "COLLECTION_CONNECTIONS_DELETE",
    description: "Delete a connection.",
    input_schema: by_id_schema,
};

fn data_schema(create: bool) -> Value {
    let required: &[&str] = if create {
        &["title", "connection_url"]
    } else {
        &[]
    };
    json!({ "type": "object", "required": required, "properties": {
        "title": { "type": "string" },
        "description": { "type": ["string", "null"] },
        "connection_url": { "type": "string" },
        "connection_token": { "type": ["string", "null"] },
        "connection_headers": { "type": ["object", "null"], "properties": {
            "headers": { "type": "object", "additionalProperties": { "type": "string" } } } },
        "status": { "enum": ["active", "inactive", "error"] },
        "tool_timeout_ms": { "type": "integer", "minimum": 1, "maximum": MAX_TOOL_TIMEOUT_MS } } })
}

/// The response shape of a connection: no token, no header values.
pub fn connection_json(c: &Connection) -> Value {
    json!({
        "id": c.id,
        "title": c.title,
        "description": c.description,
        "connection_type": "HTTP",
        "connection_url": c.url,
        "status": c.status,
        "has_token": c.token_enc.is_some(),
        "connection_headers": { "header_names": c.header_names },
        "tool_timeout_ms": c.tool_timeout_ms,
        "created_by": c.created_by,
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
    })
}

/// Checks an upstream URL: `https`, or `http` to a loopback host; no user-info.
fn check_url(text: &str) -> Result<(), ApiError> {
    let bad = |why: &str| ApiError::BadRequest(format!("connection_url {why}"));
    let url = url::Url::parse(text).map_err(|_| bad("is not a valid URL"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not embed credentials; use connection_token"));
    }
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(bad(
            "must use https (plain http is allowed only for loopback hosts)",
        )),
        _ => Err(bad("must be an https URL")),
    }
}

/// Applies the fields of `data` to `c`, encrypting secrets.
fn apply(state: &AppState, c: &mut Connection, data: &Map<String, Value>) -> Result<(), ApiError> {
    let bad = |field: &str, why: &str| ApiError::BadRequest(format!("data.{field} {why}"));
    if let Some(v) = data.get("title") {
        let title = v.as_str().ok_or_else(|| bad("title", "must be a string"))?;
        text("data.title", title, 200)?;
        c.title = title.to_string();
    }
    if let Some(v) = data.get("description") {
        c.description = match v {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            _ => return Err(bad("description", "must be a string or null")),
        };
    }
    if let Some(v) = data.get("connection_url") {
        let url = v
            .as_str()
            .ok_or_else(|| bad("connection_url", "must be a string"))?;
        check_url(url)?;
        if c.url != url {
            // Stored secrets were given for the old endpoint: never send them to a new
            // one. They are kept only when re-supplied in the same update (below).
            c.token_enc = None;
            c.headers_enc = None;
            c.header_names.clear();
        }
        c.url = url.to_string();
    }
    if let Some(v) = data.get("status") {
        c.status = serde_json::from_value::<ConnectionStatus>(v.clone())
            .map_err(|_| bad("status", "must be active, inactive or error"))?;
    }
    if let Some(v) = data.get("tool_timeout_ms") {
        let ms = v
            .as_i64()
            .filter(|ms| (1..=MAX_TOOL_TIMEOUT_MS).contains(ms))
            .ok_or_else(|| bad("tool_timeout_ms", "must be an integer from 1 to 3600000"))?;
        c.tool_timeout_ms = ms;
    }
    if let Some(v) = data.get("connection_token") {
        c.token_enc = match v {
            Value::Null => None,
            Value::String(token) if !token.is_empty() => Some(
                state
                    .vault
                    .encrypt(token.as_bytes(), &format!("connections:{}:token", c.id)),
            ),
            _ => {
                return Err(bad(
                    "connection_token",
                    "must be a non-empty string or null",
                ));
            }
        };
    }
    if let Some(v) = data.get("connection_headers") {
        let headers: BTreeMap<String, String> = match v {
            Value::Null => BTreeMap::new(),
            Value::Object(o) => match o.get("headers") {
                None | Some(Value::Null) => BTreeMap::new(),
                Some(h) => serde_json::from_value(h.clone()).map_err(|_| {
                    bad(
                        "connection_headers.headers",
                        "must map header names to strings",
                    )
                })?,
            },
            _ => return Err(bad("connection_headers", "must be an object or null")),
        };
        for (name, value) in &headers {
            let valid_name = axum::http::HeaderName::from_bytes(name.as_bytes()).is_ok();
            let valid_value = axum::http::HeaderValue::from_str(value).is_ok();
            if !valid_name || !valid_value {
                return Err(bad(
                    "connection_headers.headers",
                    "holds an invalid HTTP header",
                ));
            }
        }
        c.header_names = headers.keys().cloned().collect();
        c.headers_enc = (!headers.is_empty()).then(|| {
            let pairs: Vec<(&String, &String)> = headers.iter().collect();
            let plain = serde_json::to_vec(&pairs).expect("headers serialize");
            state
                .vault
                .encrypt(&plain, &format!("connections:{}:headers", c.id))
        });
    }
    Ok(())
}

#[derive(Deserialize)]
struct CreateInput {
    data: Map<String, Value>,
}

pub(super) async fn create(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let CreateInput { data } = parse(input)?;
    for field in ["title", "connection_url"] {
        if !data.contains_key(field) {
            return Err(ApiError::BadRequest(format!("data.{field} is required")));
        }
    }
    let now = now_ms();
    let mut connection = Connection {
        id: uuid::Uuid::new_v4().to_string(),
        org_id: ctx.principal.org.id.clone(),
        title: String::new(),
        description: None,
        url: String::new(),
        status: ConnectionStatus::Active,
        token_enc: None,
        headers_enc: None,
        header_names: Vec::new(),
        tool_timeout_ms: crate::storage::DEFAULT_TOOL_TIMEOUT_MS,
        created_by: ctx.principal.member_id.clone(),
        created_at: now,
        updated_at: now,
    };
    apply(ctx.state, &mut connection, &data)?;
    ctx.state.store.insert_connection(&connection).await?;
    Ok(json!({ "item": connection_json(&connection) }))
}

async fn load(ctx: &ToolCtx<'_>, id: &str) -> Result<Connection, ApiError> {
    ctx.state
        .store
        .connection(&ctx.principal.org.id, id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Connection not found: {id}")))
}

pub(super) async fn get(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let ById { id } = parse(input)?;
    Ok(json!({ "item": connection_json(&load(ctx, &id).await?) }))
}

#[derive(Deserialize)]
struct UpdateInput {
    id: String,
    data: Map<String, Value>,
}

pub(super) async fn update(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let UpdateInput { id, data } = parse(input)?;
    let mut connection = load(ctx, &id).await?;
    apply(ctx.state, &mut connection, &data)?;
    connection.updated_at = now_ms().max(connection.updated_at + 1);
    ctx.state.store.update_connection(&connection).await?;
    Ok(json!({ "item": connection_json(&connection) }))
}

pub(super) async fn delete(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let ById { id } = parse(input)?;
    if !ctx
        .state
        .store
        .delete_connection(&ctx.principal.org.id, &id)
        .await?
    {
        return Err(ApiError::NotFound(format!("Connection not found: {id}")));
    }
    Ok(json!({ "success": true, "id": id }))
}

pub(super) async fn list(ctx: &ToolCtx<'_>, _input: Value) -> Result<Value, ApiError> {
    let org_id = &ctx.principal.org.id;
    let mut items: Vec<Value> = ctx
        .state
        .store
        .list_connections(org_id)
        .await?
        .iter()
        .map(connection_json)
        .collect();
    let agents = ctx.state.store.list_agents(org_id).await?;
    items.extend(agents.iter().map(super::agents::agent_json));
    let total = items.len() as i64;
    Ok(listing(items, total, 0))
}

#[cfg(test)]
mod tests {
    use super::check_url;

    #[test]
    fn upstream_urls() {
        assert!(check_url("https://mcp.example.com/mcp").is_ok());
        assert!(check_url("http://127.0.0.1:9000/mcp").is_ok());
        assert!(check_url("http://localhost/mcp").is_ok());
        assert!(check_url("http://mcp.example.com/mcp").is_err());
        assert!(check_url("https://user:pw@mcp.example.com/").is_err());
        assert!(check_url("ftp://x/").is_err());
    }
}
