//! The MCP double's stateless revision (2026-07-28): what its `modern` and `dual` modes answer
//! a request carrying the revision's envelope. It checks that the headers repeat the body, as
//! a server of the revision does, and records what it was sent.

use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::mcp_double::Seen;

/// The revision served.
pub const VERSION: &str = "2026-07-28";
const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Whether `message` claims the stateless revision.
pub fn is_stateless(message: &Value) -> bool {
    message["params"]["_meta"]
        .get(PROTOCOL_VERSION_KEY)
        .is_some()
}

/// 400 with a JSON-RPC error.
fn refuse(id: &Value, code: i64, message: &str, data: Value) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message, "data": data } });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// The answer to a session revision's request on a server of the stateless revision only.
pub fn refuse_sessions(message: &Value) -> Response {
    let asked = message["params"]["protocolVersion"]
        .as_str()
        .unwrap_or("2025-11-25");
    let data = json!({ "supported": [VERSION], "requested": asked });
    refuse(&message["id"], -32022, "Unsupported protocol version", data)
}

/// The header `name` as sent.
fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A header value as meant: `=?base64?<data>?=` is UTF-8 in Base64.
fn decode_sentinel(value: &str) -> String {
    use base64::Engine as _;
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(data) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            String::from_utf8(bytes).unwrap()
        }
        None => value.to_string(),
    }
}

/// Answers a stateless request.
pub fn respond(seen: &Arc<Mutex<Seen>>, headers: &HeaderMap, message: Value) -> Response {
    let id = message["id"].clone();
    let method = message["method"].as_str().unwrap_or_default().to_string();
    let meta = &message["params"]["_meta"];
    let named = match method.as_str() {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        _ => None,
    };
    seen.lock().unwrap().stateless_methods.push(method.clone());
    let name = header(headers, "mcp-name").map(decode_sentinel);
    let agree = header(headers, "mcp-protocol-version") == meta[PROTOCOL_VERSION_KEY].as_str()
        && header(headers, "mcp-method") == Some(method.as_str())
        && name.as_deref() == named;
    if !agree || header(headers, "mcp-session-id").is_some() {
        return refuse(
            &id,
            -32020,
            "Bad Request: the request headers and body disagree",
            json!({}),
        );
    }
    if meta[PROTOCOL_VERSION_KEY] != VERSION {
        let data = json!({ "supported": [VERSION], "requested": meta[PROTOCOL_VERSION_KEY] });
        return refuse(&id, -32022, "Unsupported protocol version", data);
    }
    if id.is_null() {
        return StatusCode::ACCEPTED.into_response();
    }
    let text =
        |t: String| json!({ "resultType": "complete", "content": [{ "type": "text", "text": t }] });
    let info = json!({ "io.modelcontextprotocol/serverInfo": { "name": "stateless double", "version": "2.0.0" } });
    let result = match method.as_str() {
        "server/discover" => json!({
            "resultType": "complete", "supportedVersions": [VERSION],
            "capabilities": { "tools": {}, "prompts": {} },
            "instructions": "stateless double", "ttlMs": 60000, "cacheScope": "public", "_meta": info,
        }),
        "tools/list" => json!({
            "resultType": "complete", "ttlMs": 60000, "cacheScope": "public",
            "tools": [
                { "name": "echo", "inputSchema": { "type": "object", "required": ["text"], "properties": { "text": { "type": "string" } } } },
                { "name": "envelope", "inputSchema": { "type": "object" } },
                { "name": "confirm", "inputSchema": { "type": "object" } },
                { "name": "progress", "inputSchema": { "type": "object" } },
                { "name": "héllo", "inputSchema": { "type": "object" } },
            ],
        }),
        "tools/call" => {
            let params = &message["params"];
            {
                let mut seen = seen.lock().unwrap();
                seen.calls.push(named.unwrap_or_default().to_string());
                seen.last_params = params.clone();
                seen.last_headers = headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
                    .collect();
            }
            match named.unwrap_or_default() {
                "echo" | "héllo" => text(
                    params["arguments"]["text"]
                        .as_str()
                        .unwrap_or("hello")
                        .into(),
                ),
                "envelope" => text(meta.to_string()),
                // A multi round-trip call: it asks the client to confirm, then answers.
                "confirm" => match (&params["inputResponses"]["ok"], &params["requestState"]) {
                    (Value::Null, _) => json!({
                        "resultType": "input_required", "requestState": "asked-once",
                        "inputRequests": { "ok": { "method": "elicitation/create", "params": {
                            "mode": "form", "message": "Proceed?",
                            "requestedSchema": { "type": "object", "properties": { "ok": { "type": "boolean" } } } } } },
                    }),
                    (answer, state) if state == "asked-once" => {
                        text(format!("confirmed: {}", answer["content"]["ok"]))
                    }
                    _ => {
                        return refuse(
                            &id,
                            -32602,
                            "requestState is not one this server wrote",
                            json!({}),
                        );
                    }
                },
                "progress" => {
                    let token = &meta["progressToken"];
                    let progress = json!({ "jsonrpc": "2.0", "method": "notifications/progress",
                        "params": { "progressToken": token, "progress": 1, "total": 2 } });
                    let body = json!({ "jsonrpc": "2.0", "id": id, "result": text("done".into()) });
                    let events = format!(
                        "event: message\ndata: {progress}\n\nevent: message\ndata: {body}\n\n"
                    );
                    return ([("content-type", "text/event-stream")], events).into_response();
                }
                _ => {
                    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602, "message": "Unknown tool" } });
                    return axum::Json(body).into_response();
                }
            }
        }
        "prompts/list" => {
            json!({ "resultType": "complete", "ttlMs": 0, "cacheScope": "private", "prompts": [] })
        }
        _ => {
            let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "Method not found" } });
            return (StatusCode::NOT_FOUND, axum::Json(body)).into_response();
        }
    };
    let mut result = result;
    result["_meta"] = info;
    axum::Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response()
}
