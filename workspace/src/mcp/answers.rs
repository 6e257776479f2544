//! A client's answer to a request an upstream sent it through the connection proxy: a POST
//! of a JSON-RPC response with `Mcp-Session-Id`, forwarded (its `result` or `error` whole)
//! under the upstream's id to the session's own upstream session, and answered 202. An id
//! no request of this session awaits — answered already, timed out, sent to another session
//! — is 400.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};
use super::proxy::{api_error, caller_session, session_caller, session_gone};
use super::server_requests::Asker;
use super::target::target_for;
use super::transport::{accepted, rpc_error};
use super::upstream::{Target, UpstreamError};
use crate::state::AppState;

/// Forwards the client's answer `message` to the upstream session that asked.
pub(super) async fn deliver(
    state: &AppState,
    org: Option<&str>,
    connection_id: &str,
    headers: &HeaderMap,
    mut message: Value,
) -> Response {
    let caller = match session_caller(state, org, connection_id, headers, "answers go to").await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    let session = match caller_session(state, &caller, "the session's requests") {
        Ok(session) => session,
        Err(response) => return response,
    };
    let awaited = session
        .client()
        .and_then(|c| c.requests.take(&message["id"]));
    let upstream_id = match awaited {
        Some(Asker::Upstream(id)) => id,
        // A translated multi round-trip request: the proxy itself waits for the answer.
        Some(Asker::Proxy(waiting)) => {
            let _ = waiting.send(message);
            return accepted();
        }
        None => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                INVALID_REQUEST,
                "Bad Request: no request with this id awaits this session's answer (answered already, timed out, or never sent to this session)",
            );
        }
    };
    message["id"] = upstream_id;
    let request_id = uuid::Uuid::new_v4().to_string();
    let target = match target_for(state, &caller.connection, &request_id) {
        Ok(target) => Target {
            session: Some(session),
            ..target
        },
        Err(error) => return api_error(Value::Null, error),
    };
    match state.upstream.answer(&target, &message).await {
        Ok(()) => accepted(),
        Err(UpstreamError::SessionExpired) => session_gone(state, &caller),
        Err(error) => rpc_error(
            StatusCode::BAD_GATEWAY,
            Value::Null,
            INTERNAL_ERROR,
            &error.to_string(),
        ),
    }
}
