//! One upstream tool call: argument validation, forwarding with the connection's timeout,
//! metrics, the `mcp.proxy.callTool` span and an audit row.

use std::time::Instant;

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::era;
use super::jsonrpc::{
    self, ACCESS_DENIED, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, REQUEST_TIMEOUT,
};
use super::schema;
use super::tool_cache;
use super::upstream::{Target, UpstreamError};
use crate::clock::now_ms;
use crate::state::AppState;
use crate::storage::AuditEntry;
use crate::telemetry::CallSpan;

/// Who is calling, from where, for the audit log.
pub struct CallContext<'a> {
    /// Organization id.
    pub org_id: &'a str,
    /// Audit identity (`key:<id>`, `anonymous`, `run:<thread>`).
    pub actor: String,
    /// `proxy`, `gateway` or `run`.
    pub surface: &'static str,
    /// Request id (also sent upstream).
    pub request_id: &'a str,
}

/// Calls `tool` on the target and returns the HTTP status and JSON-RPC response (with
/// `rpc_id`). `params` are the caller's `tools/call` params, forwarded (`task`, `_meta` with
/// a progress token, anything a newer protocol adds) without the 2026-07-28 request envelope
/// and with `name` set to `tool`, the name at the connection; a missing `arguments` is sent as `{}`. `allowed`
/// is the caller's authorization verdict: a denied call is recorded and answered 403
/// without reaching the upstream. A call whose audit row finds no room in the audit queue
/// within its wait is answered 503 without reaching the upstream.
pub async fn call_tool(
    state: &AppState,
    ctx: &CallContext<'_>,
    target: &Target,
    tool: &str,
    params: Value,
    rpc_id: Value,
    allowed: bool,
) -> (StatusCode, Value) {
    let slot = match state.audit.reserve().await {
        Ok(slot) => slot,
        Err(refused) => {
            let body = jsonrpc::error(rpc_id, INTERNAL_ERROR, &refused.to_string());
            return (StatusCode::SERVICE_UNAVAILABLE, body);
        }
    };
    let started = Instant::now();
    let span = CallSpan::start(&target.connection_id, tool, ctx.request_id);
    let (status, response, outcome) = if !allowed {
        let message = format!("Access denied to: {tool}");
        let body = jsonrpc::error(rpc_id, ACCESS_DENIED, &message);
        (StatusCode::FORBIDDEN, body, "denied")
    } else {
        forward(state, target, tool, params, rpc_id).await
    };
    let success = outcome == "success";
    let error_text = response["error"]["message"].as_str().map(str::to_string);
    span.end(if success {
        None
    } else {
        Some(error_text.as_deref().unwrap_or("tool error"))
    });
    let elapsed = started.elapsed();
    state
        .metrics
        .record(&target.connection_id, tool, success, elapsed);
    slot.record(AuditEntry {
        org_id: ctx.org_id.to_string(),
        at: now_ms(),
        actor: ctx.actor.clone(),
        surface: ctx.surface.to_string(),
        connection_id: Some(target.connection_id.clone()),
        tool: tool.to_string(),
        outcome: outcome.to_string(),
        duration_ms: elapsed.as_millis() as i64,
        request_id: ctx.request_id.to_string(),
    });
    (status, response)
}

/// Validates and forwards; the third value is the outcome label.
async fn forward(
    state: &AppState,
    target: &Target,
    tool: &str,
    params: Value,
    rpc_id: Value,
) -> (StatusCode, Value, &'static str) {
    let mut params = match params {
        Value::Object(object) => object,
        _ => serde_json::Map::new(),
    };
    let mut arguments = params.remove("arguments").unwrap_or_else(|| json!({}));
    // The listing counts against the call's timeout: one deadline for both.
    let deadline = tokio::time::Instant::now() + target.tool_timeout;
    let listing =
        tokio::time::timeout_at(deadline, state.tool_cache.tools(&state.upstream, target));
    match listing.await.unwrap_or(Err(UpstreamError::Timeout)) {
        Ok(tools) => {
            if let Some(input_schema) = tool_cache::find(&tools, tool).map(|t| &t["inputSchema"])
                && let Err(problem) = schema::validate(input_schema, &arguments)
            {
                let message = format!("Invalid arguments for tool {tool}: {problem}");
                let body = jsonrpc::error(rpc_id, INVALID_PARAMS, &message);
                return (StatusCode::OK, body, "error");
            }
        }
        Err(error) => return upstream_failure(error, rpc_id),
    }
    if let Some(args) = arguments.as_object_mut() {
        args.remove("_meta");
    }
    params.insert("name".into(), json!(tool));
    params.insert("arguments".into(), arguments);
    // The caller's envelope is the target's (see `Target::envelope`), never a param.
    let params = era::without_envelope(Value::Object(params));
    match state
        .upstream
        .request(
            target,
            "tools/call",
            params,
            deadline.saturating_duration_since(tokio::time::Instant::now()),
        )
        .await
    {
        Ok(mut response) => {
            let outcome = if response.get("error").is_some()
                || response["result"]["isError"] == Value::Bool(true)
            {
                "error"
            } else if response["result"]["resultType"] == "input_required" {
                // A multi round-trip call's first rounds: the upstream asks the client.
                "input_required"
            } else {
                "success"
            };
            if let Some(object) = response.as_object_mut() {
                object.insert("id".into(), rpc_id);
            }
            (StatusCode::OK, response, outcome)
        }
        Err(error) => upstream_failure(error, rpc_id),
    }
}

/// Maps an upstream failure: unreachable → 503, timeout → -32001, protocol → -32603; a
/// JSON-RPC error the upstream refused the request with is relayed as it is, with its status,
/// when that is 400 or 429, and is a 502 `-32603` carrying it in `data.upstream` otherwise.
pub(super) fn upstream_failure(
    error: UpstreamError,
    rpc_id: Value,
) -> (StatusCode, Value, &'static str) {
    let (status, code) = match &error {
        // A refusal of what the request said (400, 429) is the client's to read, as it is;
        // one about the proxy's own standing upstream (401, 403, 404, …) is not: a 401 would
        // read as the client's key refused, a 404 as its session gone.
        UpstreamError::Refused { status, error } if [400, 429].contains(status) => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST);
            let body = json!({ "jsonrpc": "2.0", "id": rpc_id, "error": error });
            return (status, body, "error");
        }
        UpstreamError::Refused {
            status,
            error: refusal,
        } => {
            let mut body = jsonrpc::error(rpc_id, INTERNAL_ERROR, &error.to_string());
            body["error"]["data"] = json!({ "upstream": { "status": status, "error": refusal } });
            return (StatusCode::BAD_GATEWAY, body, "error");
        }
        UpstreamError::Unreachable(_) => (StatusCode::SERVICE_UNAVAILABLE, INTERNAL_ERROR),
        UpstreamError::Timeout => (StatusCode::OK, REQUEST_TIMEOUT),
        UpstreamError::Protocol(_) | UpstreamError::Status(_) => (StatusCode::OK, INTERNAL_ERROR),
        // MCP: a request naming an ended session is answered 404, and the client starts
        // a new session.
        UpstreamError::SessionExpired => (StatusCode::NOT_FOUND, INVALID_REQUEST),
        UpstreamError::NoStream => (StatusCode::METHOD_NOT_ALLOWED, INVALID_REQUEST),
    };
    (
        status,
        jsonrpc::error(rpc_id, code, &error.to_string()),
        "error",
    )
}
