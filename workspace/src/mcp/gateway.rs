//! `POST /api/:org/mcp/gateway/:virtualMcpId`: the tools of an agent's connections,
//! composed under stable, collision-free names `<prefix>_<tool>`, where the prefix is
//! the first 8 hex digits of the connection id (the whole id if two members share them).

use std::collections::HashMap;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::future::join_all;
use serde_json::{Value, json};

use super::call::{CallContext, call_tool};
use super::era::{self, Era, ServerInfo};
use super::jsonrpc::{self, INVALID_PARAMS};
use super::proxy::api_error;
use super::relay;
use super::stateless;
use super::target::target_for;
use super::tool_cache;
use super::transport::{
    RpcBody, accepted, negotiate_version, read_request, reply, rpc_error, unauthorized,
};
use super::upstream::Target;
use crate::auth::{Credential, authenticate};
use crate::error::ApiError;
use crate::http::accepts_event_stream;
use crate::state::AppState;
use crate::storage::{Agent, Connection, ConnectionStatus};

/// One composed tool.
#[derive(Clone)]
pub struct CatalogTool {
    /// The exposed name (`<prefix>_<tool>`).
    pub name: String,
    /// The tool's name at its connection.
    pub original: String,
    /// The member connection.
    pub connection_id: String,
    /// The upstream's tool definition (description, inputSchema, _meta ...).
    pub definition: Value,
}

/// An agent's composed tool surface with the targets to reach each member.
pub struct Catalog {
    /// Tools in member order.
    pub tools: Vec<CatalogTool>,
    members: HashMap<String, (Connection, Target)>,
    prefixes: HashMap<String, String>,
    selected: HashMap<String, Option<Vec<String>>>,
}

/// What an exposed or bare tool name resolves to.
pub enum Resolved<'a> {
    /// One member tool: the connection, its target, the original name and the name the
    /// gateway lists it under.
    Tool {
        /// The member connection.
        connection: &'a Connection,
        /// How to reach it.
        target: &'a Target,
        /// The tool's name at its connection.
        original: String,
        /// The composed name (`<prefix>_<tool>`).
        exposed: String,
    },
    /// A bare name that several members list: these are their composed names.
    Ambiguous(Vec<String>),
    /// Nothing by that name.
    Unknown,
}

impl Catalog {
    /// Resolves a name: a composed name `<prefix>_<tool>` routes by prefix; a bare tool
    /// name (no member's prefix) routes to the one member listing it, as the reference
    /// gateway does, except that a name several members list is ambiguous rather than
    /// given to the first.
    pub fn resolve(&self, name: &str) -> Resolved<'_> {
        if let Some((prefix, original)) = name.split_once('_')
            && let Some(connection_id) = self.prefixes.get(prefix)
        {
            let selected = self.selected.get(connection_id).and_then(Option::as_ref);
            if selected.is_some_and(|s| !s.iter().any(|t| t == original)) {
                return Resolved::Unknown;
            }
            return match self.members.get(connection_id) {
                Some((connection, target)) => Resolved::Tool {
                    connection,
                    target,
                    original: original.to_string(),
                    exposed: name.to_string(),
                },
                None => Resolved::Unknown,
            };
        }
        let owners: Vec<&CatalogTool> = self.tools.iter().filter(|t| t.original == name).collect();
        match owners.as_slice() {
            [] => Resolved::Unknown,
            [tool] => match self.members.get(&tool.connection_id) {
                Some((connection, target)) => Resolved::Tool {
                    connection,
                    target,
                    original: tool.original.clone(),
                    exposed: tool.name.clone(),
                },
                None => Resolved::Unknown,
            },
            several => Resolved::Ambiguous(several.iter().map(|t| t.name.clone()).collect()),
        }
    }
}

/// The prefix of each member: 8 hex digits, or the full id without dashes on collision.
fn prefixes(ids: &[String]) -> HashMap<String, String> {
    let short = |id: &str| id.replace('-', "").to_ascii_lowercase();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for id in ids {
        *counts
            .entry(short(id).chars().take(8).collect())
            .or_default() += 1;
    }
    ids.iter()
        .map(|id| {
            let head: String = short(id).chars().take(8).collect();
            let prefix = if counts[&head] > 1 { short(id) } else { head };
            (prefix, id.clone())
        })
        .collect()
}

/// Composes the active member connections of `agent` (same organization only); one
/// failing upstream is skipped and logged, not fatal.
pub async fn compose(
    state: &AppState,
    agent: &Agent,
    request_id: &str,
) -> Result<Catalog, ApiError> {
    let mut members = HashMap::new();
    let mut selected = HashMap::new();
    let mut order = Vec::new();
    for member in &agent.members {
        let Some(connection) = state
            .store
            .connection(&agent.org_id, &member.connection_id)
            .await?
        else {
            continue;
        };
        if connection.status != ConnectionStatus::Active {
            continue;
        }
        let Ok(target) = target_for(state, &connection, request_id) else {
            continue;
        };
        order.push(connection.id.clone());
        selected.insert(connection.id.clone(), member.selected_tools.clone());
        members.insert(connection.id.clone(), (connection, target));
    }
    let prefixes = prefixes(&order);
    let by_id: HashMap<&String, &String> = prefixes.iter().map(|(p, id)| (id, p)).collect();
    let listings = join_all(order.iter().map(|id| {
        let target = &members[id].1;
        state.tool_cache.tools(&state.upstream, target)
    }))
    .await;
    let mut tools = Vec::new();
    for (id, listing) in order.iter().zip(listings) {
        let listing = match listing {
            Ok(listing) => listing,
            Err(error) => {
                tracing::warn!(connection.id = %id, %error, "gateway member skipped");
                continue;
            }
        };
        for definition in listing.iter() {
            let Some(original) = definition.get("name").and_then(Value::as_str) else {
                continue;
            };
            if selected[id]
                .as_ref()
                .is_some_and(|s| !s.iter().any(|t| t == original))
            {
                continue;
            }
            tools.push(CatalogTool {
                name: format!("{}_{original}", by_id[id]),
                original: original.to_string(),
                connection_id: id.clone(),
                definition: definition.clone(),
            });
        }
    }
    Ok(Catalog {
        tools,
        members,
        prefixes,
        selected,
    })
}

/// The version the gateway reports for itself.
const GATEWAY_VERSION: &str = "1.0.0";

/// The gateway endpoint, in the session revisions and the stateless one (2026-07-28: see
/// `era`).
pub async fn gateway(
    State(state): State<AppState>,
    Path((org, agent_id)): Path<(String, String)>,
    headers: HeaderMap,
    RpcBody(body): RpcBody,
) -> Response {
    let resource = format!(
        "{}/api/{org}/mcp/gateway/{agent_id}",
        state.config.public_url
    );
    let request = match read_request(&headers, &body) {
        Ok(request) => request,
        Err(response) => return response,
    };
    let id = request.reply_id();
    let era = match era::classify(&headers, &request) {
        Ok(era) => era,
        Err(refusal) => return refusal.response(id),
    };
    let principal = match authenticate(&state, &headers, Some(&resource)).await {
        Ok(Credential::Valid(principal)) => principal,
        Ok(other) => return unauthorized(id, &resource, other.refusal()),
        Err(error) => return api_error(id, error),
    };
    if let Err(error) = principal.require_org(&org) {
        return api_error(id, error);
    }
    let agent = match state.store.agent(&principal.org.id, &agent_id).await {
        Ok(Some(agent)) => agent,
        Ok(None) => return api_error(id, ApiError::NotFound("Agent not found".into())),
        Err(error) => return api_error(id, error.into()),
    };
    if agent.status != "active" {
        return api_error(id, ApiError::Unavailable("Agent inactive".into()));
    }
    if request.id.is_none() {
        return accepted();
    }
    let request_id = uuid::Uuid::new_v4().to_string();
    // A stateless client's envelope goes on to a member spoken to statelessly.
    let stateless_envelope = match era {
        Era::Modern(_) => era::envelope_of(&request.params),
        Era::Legacy => None,
    };
    let method = request.method.as_str();
    let server = ServerInfo {
        name: &agent.id,
        version: GATEWAY_VERSION,
    };
    let stamped = |status: StatusCode, body: Value| {
        let (status, body) = era.stamp_reply(method, status, body, &server);
        reply(status, body)
    };
    match method {
        "initialize" => {
            let mut result = json!({
                "protocolVersion": negotiate_version(&request.params),
                "capabilities": { "tools": {} },
                "serverInfo": { "name": agent.id, "title": agent.title, "version": GATEWAY_VERSION },
            });
            if let Some(instructions) = &agent.instructions {
                result["instructions"] = json!(instructions);
            }
            reply(StatusCode::OK, jsonrpc::result(id, result))
        }
        "server/discover" if era != Era::Legacy => {
            let discovered = era.discover(
                json!({ "tools": {} }),
                agent.instructions.as_deref(),
                &server,
            );
            reply(StatusCode::OK, jsonrpc::result(id, discovered))
        }
        "ping" => reply(StatusCode::OK, jsonrpc::result(id, json!({}))),
        "tools/list" => match compose(&state, &agent, &request_id).await {
            Ok(catalog) => {
                let tools: Vec<Value> = catalog
                    .tools
                    .iter()
                    .map(|t| {
                        let mut definition = match &t.definition {
                            Value::Object(object) => object.clone(),
                            _ => serde_json::Map::new(),
                        };
                        definition.insert("name".into(), json!(t.name));
                        let meta = definition.entry("_meta").or_insert_with(|| json!({}));
                        if !meta.is_object() {
                            // An upstream's malformed `_meta` is replaced, not trusted.
                            *meta = json!({});
                        }
                        if let Some(meta) = meta.as_object_mut() {
                            meta.insert("gatewayClientId".into(), json!(t.connection_id));
                        }
                        Value::Object(definition)
                    })
                    .collect();
                stamped(
                    StatusCode::OK,
                    jsonrpc::result(id, json!({ "tools": tools })),
                )
            }
            Err(error) => api_error(id, error),
        },
        "tools/call" => {
            let name = match request.tool_call() {
                Ok((name, _)) => name,
                Err(body) => return reply(StatusCode::OK, body),
            };
            let catalog = match compose(&state, &agent, &request_id).await {
                Ok(catalog) => catalog,
                Err(error) => return api_error(id, error),
            };
            let (connection, target, original, exposed) = match catalog.resolve(&name) {
                Resolved::Tool {
                    connection,
                    target,
                    original,
                    exposed,
                } => (connection, target, original, exposed),
                Resolved::Ambiguous(names) => {
                    let message = format!(
                        "Ambiguous tool name: {name} is listed by several connections; call it as one of {}",
                        names.join(", ")
                    );
                    return rpc_error(StatusCode::OK, id, INVALID_PARAMS, &message);
                }
                Resolved::Unknown => {
                    return rpc_error(
                        StatusCode::OK,
                        id,
                        INVALID_PARAMS,
                        &format!("Unknown tool: {name}"),
                    );
                }
            };
            let public = catalog
                .tools
                .iter()
                .any(|t| t.name == exposed && tool_cache::is_public(&t.definition));
            let allowed = public
                || principal.permissions.grants(&connection.id, &original)
                || principal.permissions.grants(&agent.id, &exposed);
            // The call runs in the key's own shared upstream session of the member; what the
            // member sends before its answer (progress) reaches a client taking a stream.
            let target = Target {
                caller: Some(principal.key_id.clone()),
                envelope: stateless_envelope,
                headers: stateless::with_param_headers(target.headers.clone(), &headers),
                ..target.clone()
            };
            let (actor, org_id, agent_id) = (principal.actor(), agent.org_id, agent.id);
            let (method, params) = (request.method, request.params);
            let streaming = accepts_event_stream(&headers);
            relay::answer(streaming, state.config.keepalive, move |relay| async move {
                let ctx = CallContext {
                    org_id: &org_id,
                    actor,
                    surface: "gateway",
                    request_id: &request_id,
                };
                let target = Target { relay, ..target };
                let (status, body) =
                    call_tool(&state, &ctx, &target, &original, params, id, allowed).await;
                let server = ServerInfo {
                    name: &agent_id,
                    version: GATEWAY_VERSION,
                };
                era.stamp_reply(&method, status, body, &server)
            })
            .await
        }
        method => rpc_error(
            StatusCode::OK,
            id,
            jsonrpc::METHOD_NOT_FOUND,
            &format!("Method not found: {method}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_short_unless_they_collide() {
        let ids = vec![
            "0a1b2c3d-0000-4000-8000-000000000001".to_string(),
            "0a1b2c3d-0000-4000-8000-000000000002".to_string(),
            "ffffeeee-0000-4000-8000-000000000003".to_string(),
        ];
        let p = prefixes(&ids);
        assert_eq!(p["ffffeeee"], ids[2]);
        assert_eq!(p["0a1b2c3d000040008000000000000001"], ids[0]);
        assert_eq!(p.len(), 3);
    }
}
