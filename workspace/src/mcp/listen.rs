//! `GET /api/:org/mcp/:connectionId` (and the legacy `GET /mcp/:connectionId`) with
//! `Mcp-Session-Id`: the session's server-to-client stream. The upstream session's own GET
//! stream is opened and its notifications relayed to the client that owns the session,
//! until the upstream ends it, the client leaves, the server stops, or half the session
//! idle time has passed (the client then reconnects, which marks the session used).

use axum::extract::{Path, State};
use axum::http::header::ALLOW;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};
use super::proxy::{api_error, end_sessions, method_allowed, session_caller, session_not_found};
use super::relay;
use super::target::target_for;
use super::transport::rpc_error;
use super::upstream::{Target, UpstreamError, relay_events};
use crate::error::ApiError;
use crate::http::accepts_event_stream;
use crate::state::AppState;
use crate::storage::ConnectionStatus;

/// The org-scoped session stream.
pub async fn listen(
    State(state): State<AppState>,
    Path((org, connection_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    open(&state, Some(&org), &connection_id, &headers).await
}

/// The legacy unscoped session stream: the organization comes from the key.
pub async fn legacy_listen(
    State(state): State<AppState>,
    Path(connection_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    open(&state, None, &connection_id, &headers).await
}

async fn open(
    state: &AppState,
    org: Option<&str>,
    connection_id: &str,
    headers: &HeaderMap,
) -> Response {
    let caller = match session_caller(state, org, connection_id, headers, "GET streams").await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    if !accepts_event_stream(headers) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            Value::Null,
            INVALID_REQUEST,
            "Not Acceptable: the client must accept text/event-stream",
        );
    }
    let connection = &caller.connection;
    if connection.status != ConnectionStatus::Active {
        let message = format!("Connection {}", connection.status.as_str());
        return api_error(Value::Null, ApiError::Unavailable(message));
    }
    // The stream carries what the session's requests cause: the grant to set the session
    // up is the grant to listen to it.
    if !method_allowed(&caller.principal, &connection.id, "initialize") {
        let message = "Access denied to: the session stream".to_string();
        return api_error(Value::Null, ApiError::Forbidden(message));
    }
    let limits = &state.config.mcp_sessions;
    let now = state.config.clock.now_ms();
    let (found, ended) = state.sessions.get(
        limits,
        now,
        &caller.session_id,
        &caller.owner,
        connection.updated_at,
    );
    end_sessions(state, ended);
    let Some(session) = found else {
        return session_not_found(Value::Null);
    };
    let request_id = uuid::Uuid::new_v4().to_string();
    let target = match target_for(state, connection, &request_id) {
        Ok(target) => Target {
            session: Some(session),
            ..target
        },
        Err(error) => return api_error(Value::Null, error),
    };
    let upstream = match state.upstream.listen(&target).await {
        Ok(upstream) => upstream,
        Err(UpstreamError::NoStream) => return no_stream(),
        Err(UpstreamError::SessionExpired) => {
            if let Some(ended) = state.sessions.remove(&caller.session_id, &caller.owner) {
                end_sessions(state, vec![ended]);
            }
            return session_not_found(Value::Null);
        }
        Err(error) => {
            return rpc_error(
                StatusCode::BAD_GATEWAY,
                Value::Null,
                INTERNAL_ERROR,
                &error.to_string(),
            );
        }
    };
    let lasts = limits.idle / 2;
    let shutdown = state.pilot.shutdown.clone();
    relay::stream(state.config.keepalive, move |relay| async move {
        tokio::select! {
            ended = relay_events(upstream, &relay) => {
                if let Err(error) = ended {
                    tracing::debug!(%error, "upstream session stream ended");
                }
            }
            () = tokio::time::sleep(lasts) => {}
            () = shutdown.cancelled() => {}
        }
    })
}

/// 405 when the upstream offers no server-to-client stream: POST requests, DELETE ends a
/// session.
fn no_stream() -> Response {
    let mut response = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        Value::Null,
        INVALID_REQUEST,
        "Method not allowed: the upstream offers no server-to-client stream; POST requests, DELETE ends a session",
    );
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST, DELETE"));
    response
}
