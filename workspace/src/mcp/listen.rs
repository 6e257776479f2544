//! `GET /api/:org/mcp/:connectionId` (and the legacy `GET /mcp/:connectionId`) with
//! `Mcp-Session-Id`: the session's server-to-client stream. The upstream session's own GET
//! stream is opened and its notifications relayed to the client that owns the session,
//! until the upstream ends it, the client leaves, the server stops, or half the session
//! idle time has passed (the client then reconnects, which marks the session used).
//! Events carry ids; a client reconnecting with `Last-Event-ID` first gets the events after
//! it that the session's journal still holds (400 for an id never sent, 409 when some are
//! gone).

use axum::extract::{Path, State};
use axum::http::header::ALLOW;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::journal::Unresumable;
use super::jsonrpc::{INTERNAL_ERROR, INVALID_REQUEST};
use super::proxy::{api_error, caller_session, session_caller, session_gone};
use super::relay;
use super::target::target_for;
use super::transport::rpc_error;
use super::upstream::{Session, Target, UpstreamError};
use crate::http::accepts_event_stream;
use crate::state::AppState;

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
    let session = match caller_session(state, &caller, "the session stream") {
        Ok(session) => session,
        Err(response) => return response,
    };
    let connection = &caller.connection;
    let replay = match replay(&session, headers) {
        Ok(replay) => replay,
        Err(response) => return response,
    };
    let request_id = uuid::Uuid::new_v4().to_string();
    let target = match target_for(state, connection, &request_id) {
        Ok(target) => Target {
            session: Some(session.clone()),
            ..target
        },
        Err(error) => return api_error(Value::Null, error),
    };
    let upstream = match state.upstream.listen(&target).await {
        Ok(upstream) => upstream,
        Err(UpstreamError::NoStream) => return no_stream(),
        Err(UpstreamError::SessionExpired) => return session_gone(state, &caller),
        Err(error) => {
            return rpc_error(
                StatusCode::BAD_GATEWAY,
                Value::Null,
                INTERNAL_ERROR,
                &error.to_string(),
            );
        }
    };
    let lasts = state.config.mcp_sessions.idle / 2;
    let shutdown = state.pilot.shutdown.clone();
    let client = state.upstream.clone();
    relay::stream(
        state.config.keepalive,
        session,
        replay,
        move |relay| async move {
            let target = Target {
                relay: Some(relay),
                ..target
            };
            tokio::select! {
                ended = client.relay_events(&target, upstream) => {
                    if let Err(error) = ended {
                        tracing::debug!(%error, "upstream session stream ended");
                    }
                }
                () = tokio::time::sleep(lasts) => {}
                () = shutdown.cancelled() => {}
            }
        },
    )
}

/// The journaled events a client resuming with `Last-Event-ID` missed (none without the
/// header); 400 for an id the session never sent, 409 when some of them are gone.
#[allow(clippy::result_large_err)]
fn replay(session: &Session, headers: &HeaderMap) -> Result<Vec<(u64, Value)>, Response> {
    let Some(last) = headers.get("last-event-id") else {
        return Ok(Vec::new());
    };
    let Some(client) = session.client() else {
        return Ok(Vec::new());
    };
    let last = last.to_str().unwrap_or_default();
    client.journal.after(last).map_err(|why| match why {
        Unresumable::Unknown => rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            "Bad Request: Last-Event-ID names no event of this session's stream",
        ),
        Unresumable::Gone => rpc_error(
            StatusCode::CONFLICT,
            Value::Null,
            INVALID_REQUEST,
            &format!(
                "Conflict: events after Last-Event-ID {last} are no longer held (the session keeps its last {} events, {} KiB); open the stream without Last-Event-ID",
                client.journal.bounds().events,
                client.journal.bounds().bytes / 1024
            ),
        ),
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
