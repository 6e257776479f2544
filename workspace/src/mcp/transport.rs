//! The inbound side of MCP streamable HTTP: request checks and JSON-RPC replies.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::{ACCEPT, ALLOW, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::jsonrpc::{self, RpcRequest};
use crate::http::parse_json;

/// A JSON-RPC reply with its HTTP status.
pub fn reply(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

/// A JSON-RPC error reply.
pub fn rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    reply(status, jsonrpc::error(id, code, message))
}

/// The body of a POST to an MCP endpoint; one the server would not read whole (over
/// [`crate::http::BODY_LIMIT_BYTES`]: 413) is refused with a JSON-RPC error, as every answer of
/// an MCP endpoint is one.
pub struct RpcBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RpcBody {
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        match Bytes::from_request(request, state).await {
            Ok(body) => Ok(RpcBody(body)),
            Err(rejection) => Err(super::proxy::api_error(Value::Null, rejection.into())),
        }
    }
}

/// 202 for notifications and client responses.
pub fn accepted() -> Response {
    StatusCode::ACCEPTED.into_response()
}

/// 401 with the bearer challenge pointing at the resource's discovery document; a refused
/// credential adds RFC 6750 `error="invalid_token"` and why (`error_description`).
pub fn unauthorized(id: Value, resource: &str, refusal: Option<&str>) -> Response {
    let mut challenge = format!(
        "Bearer realm=\"mcp\", resource_metadata=\"{resource}/.well-known/oauth-protected-resource\""
    );
    if let Some(reason) = refusal {
        challenge.push_str(&crate::auth::invalid_token(reason));
    }
    let mut response = rpc_error(
        StatusCode::UNAUTHORIZED,
        id,
        jsonrpc::INTERNAL_ERROR,
        "Unauthorized: a valid API key or OAuth access token is required",
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response
}

/// 405 for any method but POST on a stateless MCP endpoint.
pub async fn method_not_allowed() -> Response {
    refuse_method(
        "POST",
        "Method not allowed: this endpoint accepts POST only",
    )
}

/// 405 for a method other than POST, GET and DELETE on a session endpoint (the proxy).
pub async fn session_method_not_allowed() -> Response {
    let message = "Method not allowed: this endpoint accepts POST, GET and DELETE";
    refuse_method("GET, POST, DELETE", message)
}

/// 405 as a JSON-RPC error, naming the methods allowed.
fn refuse_method(allow: &'static str, message: &str) -> Response {
    let status = StatusCode::METHOD_NOT_ALLOWED;
    let mut response = rpc_error(status, Value::Null, jsonrpc::INVALID_REQUEST, message);
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    response
}

/// One JSON-RPC message a client POSTs.
pub enum Inbound {
    /// A request or notification.
    Request(RpcRequest),
    /// The client's answer to a request relayed to it: an object with an `id` and a
    /// `result` or an `error`, and no `method`.
    Response(Value),
}

/// Checks the headers and parses the body into one JSON-RPC request or notification; a
/// response is refused (400) like any message without a method.
#[allow(clippy::result_large_err)]
pub fn read_request(headers: &HeaderMap, body: &[u8]) -> Result<RpcRequest, Response> {
    match read_message(headers, body)? {
        Inbound::Request(request) => Ok(request),
        Inbound::Response(message) => {
            let refused = RpcRequest::parse(&message).map(|_| ()).unwrap_err();
            Err(reply(StatusCode::BAD_REQUEST, refused))
        }
    }
}

/// Checks the headers and parses the body into one JSON-RPC message: a request, a
/// notification or a response.
#[allow(clippy::result_large_err)]
pub fn read_message(headers: &HeaderMap, body: &[u8]) -> Result<Inbound, Response> {
    if let Some(accept) = headers.get(ACCEPT).and_then(|v| v.to_str().ok())
        && !accept.is_empty()
        && !["application/json", "application/*", "*/*"]
            .iter()
            .any(|t| accept.contains(t))
    {
        return Err(rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            Value::Null,
            jsonrpc::INVALID_REQUEST,
            "Not Acceptable: the client must accept application/json",
        ));
    }
    if let Some(kind) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok())
        && !kind.starts_with("application/json")
    {
        return Err(rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Value::Null,
            jsonrpc::INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    let value = parse_json(body).map_err(|e| {
        rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            jsonrpc::PARSE_ERROR,
            &format!("Parse error: {e}"),
        )
    })?;
    if is_response(&value) {
        return Ok(Inbound::Response(value));
    }
    let request =
        RpcRequest::parse(&value).map_err(|error| reply(StatusCode::BAD_REQUEST, error))?;
    // Names are logged and audited; tool arguments go upstream untouched (the self
    // endpoint checks them like every management tool input).
    let name = request.params.get("name").and_then(Value::as_str);
    if request.method.contains('\0') || name.is_some_and(|n| n.contains('\0')) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            request.reply_id(),
            jsonrpc::INVALID_REQUEST,
            "method and tool names must not contain NUL characters",
        ));
    }
    Ok(Inbound::Request(request))
}

/// Whether `value` is a JSON-RPC 2.0 response: an `id`, a `result` or an `error`, no
/// `method`.
fn is_response(value: &Value) -> bool {
    value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && value.get("method").is_none()
        && value.get("id").is_some()
        && (value.get("result").is_some() || value.get("error").is_some())
}

/// The protocol version to answer `initialize` with: the client's when supported.
pub fn negotiate_version(params: &Value) -> &'static str {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    super::upstream::SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .find(|v| Some(**v) == asked)
        .copied()
        .unwrap_or(super::upstream::SUPPORTED_PROTOCOL_VERSIONS[0])
}
