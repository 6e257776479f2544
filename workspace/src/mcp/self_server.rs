//! `POST /api/:org/mcp/self`: the management tools over MCP.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::era::{self, ServerInfo};
use super::jsonrpc::{self, ACCESS_DENIED, INVALID_PARAMS, METHOD_NOT_FOUND};
use super::proxy::api_error;
use super::transport::{
    RpcBody, accepted, negotiate_version, read_request, reply, rpc_error, unauthorized,
};
use crate::auth::{Credential, authenticate};
use crate::error::ApiError;
use crate::state::AppState;
use crate::tools;

/// The management endpoint's name and version.
const SERVER: ServerInfo<'static> = ServerInfo {
    name: "sitefile-workspace-management",
    version: env!("CARGO_PKG_VERSION"),
};

/// The management endpoint, in the session revisions and the stateless one (2026-07-28: see
/// `era`). Tool failures map like the REST endpoint's statuses: 403 → HTTP 403 with code
/// -32003; 400 → -32602; 404/409 → a result with `isError: true`.
pub async fn self_mcp(
    State(state): State<AppState>,
    Path(org): Path<String>,
    headers: HeaderMap,
    RpcBody(body): RpcBody,
) -> Response {
    let resource = format!("{}/api/{org}/mcp/self", state.config.public_url);
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
    if request.id.is_none() {
        return accepted();
    }
    let method = request.method.as_str();
    let result = |value: Value| {
        reply(
            StatusCode::OK,
            jsonrpc::result(id.clone(), era.stamp_result(method, value, &SERVER)),
        )
    };
    match method {
        "initialize" => result(json!({
            "protocolVersion": negotiate_version(&request.params),
            "capabilities": { "tools": {} },
            "serverInfo": { "name": SERVER.name, "version": SERVER.version },
        })),
        "server/discover" if era != era::Era::Legacy => reply(
            StatusCode::OK,
            jsonrpc::result(id, era.discover(json!({ "tools": {} }), None, &SERVER)),
        ),
        "ping" => result(json!({})),
        "tools/list" => {
            let tools: Vec<Value> = tools::TOOLS.iter().map(tools::ToolDef::describe).collect();
            result(json!({ "tools": tools }))
        }
        "tools/call" => {
            let (name, arguments) = match request.tool_call() {
                Ok(call) => call,
                Err(body) => return reply(StatusCode::OK, body),
            };
            match tools::execute(&state, &principal, &name, arguments, "self").await {
                Ok(output) => result(jsonrpc::tool_result(&output)),
                Err(ApiError::Forbidden(message)) => {
                    rpc_error(StatusCode::FORBIDDEN, id, ACCESS_DENIED, &message)
                }
                Err(error @ ApiError::BadRequest(_)) => {
                    rpc_error(StatusCode::OK, id, INVALID_PARAMS, &error.to_string())
                }
                Err(ApiError::NotFound(message)) if tools::find(&name).is_none() => {
                    rpc_error(StatusCode::OK, id, INVALID_PARAMS, &message)
                }
                Err(error @ (ApiError::NotFound(_) | ApiError::Conflict(_))) => {
                    result(jsonrpc::tool_error(&error.to_string()))
                }
                Err(error) => api_error(id, error),
            }
        }
        method => rpc_error(
            StatusCode::OK,
            id,
            METHOD_NOT_FOUND,
            &format!("Method not found: {method}"),
        ),
    }
}
