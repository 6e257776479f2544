//! `POST /api/:org/mcp/:connectionId` (and the legacy `POST /mcp/:connectionId`).
//!
//! Order: authenticate; look up the connection and check it is active; authorize the
//! tool; decrypt and inject credentials; forward; record metrics; return.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answers;
use super::call::{CallContext, call_tool, upstream_failure};
use super::era::{self, Era, ServerInfo};
use super::journal::Journal;
use super::jsonrpc::{self, ACCESS_DENIED, INTERNAL_ERROR, INVALID_REQUEST, RpcRequest};
use super::relay;
use super::server_requests::ServerRequests;
use super::sessions::{Ended, Owner};
use super::stateless;
use super::target::target_for;
use super::tool_cache;
use super::transport::{
    Inbound, RpcBody, accepted, negotiate_version, read_message, reply, rpc_error, unauthorized,
};
use super::upstream::{ClientSide, LIST_TIMEOUT, Session, Target};
use crate::auth::{Credential, Principal, authenticate};
use crate::error::ApiError;
use crate::http::accepts_event_stream;
use crate::state::AppState;
use crate::storage::{Connection, ConnectionStatus};

/// The org-scoped connection proxy.
pub async fn proxy(
    State(state): State<AppState>,
    Path((org, connection_id)): Path<(String, String)>,
    headers: HeaderMap,
    RpcBody(body): RpcBody,
) -> Response {
    serve(
        &state,
        Some(&org),
        &connection_id,
        &headers,
        &body,
        &mut None,
    )
    .await
}

/// The legacy unscoped proxy: the organization comes from the key. Works like the
/// scoped route; [`legacy_deprecation`] adds the deprecation signal and log line.
pub async fn legacy_proxy(
    State(state): State<AppState>,
    Path(connection_id): Path<String>,
    headers: HeaderMap,
    RpcBody(body): RpcBody,
) -> Response {
    let mut org = None;
    let mut response = serve(&state, None, &connection_id, &headers, &body, &mut org).await;
    if let Some(slug) = org {
        response.extensions_mut().insert(CallerOrg(slug));
    }
    response
}

/// The date the legacy route `/mcp/:connectionId` was deprecated: 2026-11-22T00:00:00Z,
/// the day the org-scoped route shipped (`Deprecation: @1795305600`, RFC 9745).
pub const LEGACY_DEPRECATED_AT: i64 = 1_795_305_600;

/// The slug of the caller's organization, when a valid key named it; set by the legacy
/// POST handler so the middleware does not authenticate twice.
#[derive(Clone)]
struct CallerOrg(String);

/// Middleware on every method of `/mcp/:connectionId` (POST, the 405 answers to GET and
/// DELETE, and the method router's own 405 for anything else): logs one `deprecated
/// route` warning per request and adds `Deprecation: @<unix seconds>` (RFC 9745, a
/// structured-field date) and, when the caller's organization is known from a valid key,
/// `Link: </api/<org>/mcp/<id>>; rel="successor-version"`. Anonymous callers get no
/// Link: it would reveal which organization owns the connection.
pub async fn legacy_deprecation(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let headers = request.headers().clone();
    let mut response = next.run(request).await;
    let connection_id = path.strip_prefix("/mcp/").unwrap_or_default().to_string();
    let mut org = response.extensions_mut().remove::<CallerOrg>().map(|o| o.0);
    if org.is_none()
        && method != axum::http::Method::POST
        && let Ok(Credential::Valid(principal)) = authenticate(
            &state,
            &headers,
            Some(&resource_url(&state, None, &connection_id)),
        )
        .await
    {
        org = Some(principal.org.slug);
    }
    tracing::warn!(
        route = "/mcp/:connectionId",
        http.method = %method,
        connection.id = %connection_id,
        org = org.as_deref().unwrap_or(""),
        status = response.status().as_u16(),
        "deprecated route: use /api/:org/mcp/:connectionId"
    );
    let response_headers = response.headers_mut();
    response_headers.insert(
        "deprecation",
        HeaderValue::from_str(&format!("@{LEGACY_DEPRECATED_AT}"))
            .expect("a structured-field date is a valid header value"),
    );
    if let Some(slug) = org
        && let Ok(link) = HeaderValue::from_str(&format!(
            "</api/{slug}/mcp/{connection_id}>; rel=\"successor-version\""
        ))
    {
        response_headers.append(axum::http::header::LINK, link);
    }
    response
}

/// The version the proxy reports for itself where the upstream names none.
const PROXY_VERSION: &str = "1.0.0";

/// Shared body of both routes; `org` is `None` on the legacy route.
async fn serve(
    state: &AppState,
    org: Option<&str>,
    connection_id: &str,
    headers: &HeaderMap,
    body: &[u8],
    caller_org: &mut Option<String>,
) -> Response {
    let request = match read_message(headers, body) {
        Ok(Inbound::Request(request)) => request,
        Ok(Inbound::Response(answer)) => {
            return answers::deliver(state, org, connection_id, headers, answer).await;
        }
        Err(response) => return response,
    };
    let id = request.reply_id();
    let era = match era::classify(headers, &request) {
        Ok(era) => era,
        Err(refusal) => return refusal.response(id),
    };
    let resource = resource_url(state, org, connection_id);
    let credential = match authenticate(state, headers, Some(&resource)).await {
        Ok(credential) => credential,
        Err(error) => return api_error(id, error),
    };
    let principal = match credential {
        Credential::Valid(principal) => {
            *caller_org = Some(principal.org.slug.clone());
            if let Some(slug) = org
                && let Err(error) = principal.require_org(slug)
            {
                return api_error(id, error);
            }
            Some(principal)
        }
        other if request.method == "tools/call" => {
            let _ = other;
            None
        }
        other => {
            return unauthorized(
                id,
                &resource_url(state, org, connection_id),
                other.refusal(),
            );
        }
    };
    let connection = match lookup(state, principal.as_ref(), org, connection_id).await {
        Ok(Some(connection)) => connection,
        Ok(None) if principal.is_none() => {
            return unauthorized(id, &resource_url(state, org, connection_id), None);
        }
        Ok(None) => return api_error(id, ApiError::NotFound("Connection not found".into())),
        Err(error) => return api_error(id, error),
    };
    if connection.status != ConnectionStatus::Active {
        if principal.is_none() {
            return unauthorized(id, &resource_url(state, org, connection_id), None);
        }
        let message = format!("Connection {}", connection.status.as_str());
        return api_error(id, ApiError::Unavailable(message));
    }
    if request.method != "tools/call"
        && let Some(principal) = &principal
        && !method_allowed(principal, &connection.id, &request.method)
    {
        let message = format!("Access denied to: {}", request.method);
        return api_error(id, ApiError::Forbidden(message));
    }
    // A request naming a downstream session runs in that session's own upstream session;
    // an unknown, foreign, expired or stale one is 404 (MCP: the client starts a new
    // session). Requests without one (stateless callers) run in the key's own shared
    // upstream session on the connection: what one key builds there (resources, tasks) is
    // never another key's.
    let owner = principal.as_ref().map(|p| Owner {
        org_id: connection.org_id.clone(),
        connection_id: connection.id.clone(),
        key_id: p.key_id.clone(),
    });
    // A stateless (2026-07-28) request names no session: it runs in the key's shared one.
    let session_id = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .filter(|_| era == Era::Legacy)
        .map(str::to_string);
    let session = match (&session_id, &owner) {
        (Some(_), _) if request.method == "initialize" => None,
        (Some(sid), Some(owner)) => {
            let limits = &state.config.mcp_sessions;
            let now = state.config.clock.now_ms();
            let (found, ended) = state
                .sessions
                .get(limits, now, sid, owner, connection.updated_at);
            end_sessions(state, ended);
            match found {
                Some(session) => Some(session),
                None => return session_not_found(id),
            }
        }
        (Some(_), None) => return session_not_found(id),
        (None, _) => None,
    };
    let caller = principal.as_ref().map(|p| p.key_id.clone());
    // A stateless client's envelope goes on to an upstream spoken to statelessly.
    let envelope = match era {
        Era::Modern(_) => era::envelope_of(&request.params),
        Era::Legacy => None,
    };
    let request_id = uuid::Uuid::new_v4().to_string();
    if request.id.is_none() {
        forward_notification(state, &connection, session, &request, &request_id);
        return accepted();
    }
    // What the upstream sends before its answer is relayed when the client takes an event
    // stream; an answer of 404 (the upstream forgot the session) ends the session here too.
    let streaming = accepts_event_stream(headers);
    let keepalive = state.config.keepalive;
    let forget = {
        let state = state.clone();
        let session = session_id.clone().zip(owner.clone());
        move |status: StatusCode| {
            if status == StatusCode::NOT_FOUND
                && let Some((sid, owner)) = &session
                && let Some(ended) = state.sessions.remove(sid, owner)
            {
                end_sessions(&state, vec![ended]);
            }
        }
    };
    if request.method == "tools/call" {
        let tool = match request.tool_call() {
            Ok((tool, _)) => tool,
            Err(body) => return reply(StatusCode::OK, body),
        };
        // Authorize before the caller's request gets credentials. Without a grant, only
        // the public marker can allow the call; it is read from the connection's listing
        // (cached; fetched by the service itself), and an unavailable listing means "not
        // public": the answer is 403 (401 anonymous), whatever the upstream's state.
        let granted = principal
            .as_ref()
            .is_some_and(|p| p.permissions.grants(&connection.id, &tool));
        let allowed = granted
            || match target_for(state, &connection, &request_id) {
                Ok(target) => matches!(is_public(state, &target, &tool).await, Ok(true)),
                Err(_) => false,
            };
        if principal.is_none() && !allowed {
            return unauthorized(id, &resource_url(state, org, connection_id), None);
        }
        let target = if allowed {
            match target_for(state, &connection, &request_id) {
                Ok(target) => Target {
                    session: session.clone(),
                    caller: caller.clone(),
                    envelope: envelope.clone(),
                    headers: stateless::with_param_headers(target.headers, headers),
                    ..target
                },
                Err(error) => return api_error(id, error),
            }
        } else {
            without_credentials(&connection, &request_id)
        };
        let actor = principal
            .as_ref()
            .map_or("anonymous".into(), Principal::actor);
        let (state, org_id, params) = (state.clone(), connection.org_id.clone(), request.params);
        let title = connection.title.clone();
        return relay::answer(streaming, keepalive, move |relay| async move {
            let ctx = CallContext {
                org_id: &org_id,
                actor,
                surface: "proxy",
                request_id: &request_id,
            };
            let target = Target { relay, ..target };
            let (status, body) = call_tool(&state, &ctx, &target, &tool, params, id, allowed).await;
            forget(status);
            let server = ServerInfo {
                name: &title,
                version: PROXY_VERSION,
            };
            era.stamp_reply("tools/call", status, body, &server)
        })
        .await;
    }
    let target = match target_for(state, &connection, &request_id) {
        Ok(target) => Target {
            session,
            caller,
            envelope,
            headers: stateless::with_param_headers(target.headers, headers),
            ..target
        },
        Err(error) => return api_error(id, error),
    };
    match request.method.as_str() {
        "initialize" => {
            // Each initialize opens an upstream session of its own, asking for the client's
            // version when the service speaks it: the version is negotiated per session
            // and the one announced is the upstream's answer.
            let Some(owner) = owner else {
                return unauthorized(id, &resource_url(state, org, connection_id), None);
            };
            let asked = negotiate_version(&request.params);
            let limits = &state.config.mcp_sessions;
            let client = ClientSide {
                requests: ServerRequests::new(limits.requests),
                journal: Journal::new(limits.journal),
            };
            let capabilities = relayed_capabilities(request.params.get("capabilities"));
            let client_info = request.params.get("clientInfo").cloned();
            let opened =
                state
                    .upstream
                    .open_session(&target, asked, capabilities, client_info, client);
            let upstream = match opened.await {
                Ok(upstream) => upstream,
                Err(error) => {
                    let (status, body, _) = upstream_failure(error, id);
                    return reply(status, body);
                }
            };
            let init = upstream.init_result().clone();
            let now = state.config.clock.now_ms();
            let inserted =
                state
                    .sessions
                    .insert(limits, now, owner, connection.updated_at, upstream);
            let session_id = match inserted {
                Ok((session_id, ended)) => {
                    end_sessions(state, ended);
                    session_id
                }
                Err((_, ended)) => {
                    end_sessions(state, ended);
                    return rpc_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        id,
                        INTERNAL_ERROR,
                        "Too many MCP sessions on this server; end unused ones or retry later",
                    );
                }
            };
            let version = init
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(asked)
                .to_string();
            let mut result = json!({
                "protocolVersion": version,
                "capabilities": deliverable_capabilities(init.get("capabilities")),
                "serverInfo": init.get("serverInfo").cloned().unwrap_or_else(|| json!({ "name": connection.title, "version": PROXY_VERSION })),
            });
            if let Some(instructions) = init.get("instructions") {
                result["instructions"] = instructions.clone();
            }
            let mut response = reply(StatusCode::OK, jsonrpc::result(id, result));
            if let Ok(value) = HeaderValue::from_str(&session_id) {
                response.headers_mut().insert("mcp-session-id", value);
            }
            response
        }
        "ping" => reply(StatusCode::OK, jsonrpc::result(id, json!({}))),
        // A stateless upstream has no such method: the level goes with each request instead.
        "logging/setLevel" if target.session.as_ref().is_some_and(|s| s.is_translated()) => {
            let Some(level) = request.params.get("level").filter(|l| l.is_string()) else {
                let message = "Invalid params: level must be a log level";
                return rpc_error(StatusCode::OK, id, jsonrpc::INVALID_PARAMS, message);
            };
            if let Some(session) = &target.session {
                session.set_log_level(level.clone());
            }
            reply(StatusCode::OK, jsonrpc::result(id, json!({})))
        }
        "server/discover" if era != Era::Legacy => {
            // What the upstream announced when the key's shared session was opened.
            let init = match state.upstream.initialize(&target).await {
                Ok(init) => init,
                Err(error) => {
                    let (status, body, _) = upstream_failure(error, id);
                    let server = ServerInfo {
                        name: &connection.title,
                        version: PROXY_VERSION,
                    };
                    let (status, body) = era.stamp_reply("server/discover", status, body, &server);
                    return reply(status, body);
                }
            };
            let text = |key: &str| init["serverInfo"][key].as_str().map(str::to_string);
            let (name, version) = (text("name"), text("version"));
            let server = ServerInfo {
                name: name.as_deref().unwrap_or(&connection.title),
                version: version.as_deref().unwrap_or(PROXY_VERSION),
            };
            let capabilities =
                era::modern_capabilities(deliverable_capabilities(init.get("capabilities")));
            let instructions = init.get("instructions").and_then(Value::as_str);
            let result = era.discover(capabilities, instructions, &server);
            reply(StatusCode::OK, jsonrpc::result(id, result))
        }
        method => {
            // A first page listed as the service lists (no downstream session, no client
            // capabilities that could shape it) is kept for the connection's callers: what a
            // session's client declared may add tools no shared session offers.
            let listing = method == "tools/list"
                && request.params.get("cursor").is_none()
                && target.session.is_none()
                && target.envelope.is_none();
            // `tasks/result` waits for the task's tool call: the connection's tool timeout.
            let timeout = if method == "tasks/result" {
                target.tool_timeout
            } else {
                LIST_TIMEOUT
            };
            // Upstreams are spoken to in a session revision: the envelope stays here.
            let params = era::without_envelope(request.params);
            let (state, method) = (state.clone(), method.to_string());
            let title = connection.title.clone();
            relay::answer(streaming, keepalive, move |relay| async move {
                let target = Target { relay, ..target };
                let (status, body) = match state
                    .upstream
                    .request(&target, &method, params, timeout)
                    .await
                {
                    Ok(mut response) => {
                        if listing && let Some(tools) = response["result"]["tools"].as_array() {
                            state
                                .tool_cache
                                .store(&target, Arc::new(tools.clone()))
                                .await;
                        }
                        // Always an object (`Upstream::request` checks it).
                        if let Some(object) = response.as_object_mut() {
                            object.insert("id".into(), id);
                        }
                        (StatusCode::OK, response)
                    }
                    Err(error) => {
                        let (status, body, _) = upstream_failure(error, id);
                        (status, body)
                    }
                };
                forget(status);
                let server = ServerInfo {
                    name: &title,
                    version: PROXY_VERSION,
                };
                era.stamp_reply(&method, status, body, &server)
            })
            .await
        }
    }
}

/// 404 for a request naming a session this server does not have (for this key and
/// connection): MCP clients answer it by initializing a new session.
pub(super) fn session_not_found(id: Value) -> Response {
    rpc_error(
        StatusCode::NOT_FOUND,
        id,
        INVALID_REQUEST,
        "Session not found: initialize a new session",
    )
}

/// Ends sessions upstream in the background; the target (and so the credentials) is
/// rebuilt from the stored connection, which is not kept decrypted in memory between
/// requests. A connection deleted meanwhile leaves its upstream session to expire there.
pub(super) fn end_sessions(state: &AppState, ended: Vec<Ended>) {
    if ended.is_empty() {
        return;
    }
    let state = state.clone();
    tokio::spawn(async move {
        for Ended { owner, upstream } in ended {
            let Ok(Some(connection)) = state
                .store
                .connection(&owner.org_id, &owner.connection_id)
                .await
            else {
                continue;
            };
            let request_id = uuid::Uuid::new_v4().to_string();
            if let Ok(target) = target_for(&state, &connection, &request_id) {
                state.upstream.close_session(&target, upstream);
            }
        }
    });
}

/// `DELETE /api/:org/mcp/:connectionId` with `Mcp-Session-Id`: ends the caller's session
/// here and upstream (204).
pub async fn end_session(
    State(state): State<AppState>,
    Path((org, connection_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    end(&state, Some(&org), &connection_id, &headers).await
}

/// `DELETE /mcp/:connectionId` (legacy) with `Mcp-Session-Id`.
pub async fn legacy_end_session(
    State(state): State<AppState>,
    Path(connection_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    end(&state, None, &connection_id, &headers).await
}

async fn end(
    state: &AppState,
    org: Option<&str>,
    connection_id: &str,
    headers: &HeaderMap,
) -> Response {
    let caller = match session_caller(state, org, connection_id, headers, "DELETE ends").await {
        Ok(caller) => caller,
        Err(response) => return response,
    };
    match state.sessions.remove(&caller.session_id, &caller.owner) {
        Some(ended) => {
            end_sessions(state, vec![ended]);
            StatusCode::NO_CONTENT.into_response()
        }
        None => session_not_found(Value::Null),
    }
}

/// The caller of a request about one session (GET, DELETE): who it is and which session
/// it names.
pub(super) struct SessionCaller {
    /// The key's holder.
    pub principal: Principal,
    /// The connection, in the key's organization.
    pub connection: Connection,
    /// Whose sessions the caller may use.
    pub owner: Owner,
    /// The `Mcp-Session-Id` the request names.
    pub session_id: String,
}

/// The resource a 401 on a connection's path names (RFC 9728): the org-scoped path, or the
/// legacy one when the path has no organization.
fn resource_url(state: &AppState, org: Option<&str>, connection_id: &str) -> String {
    let base = &state.config.public_url;
    match org {
        Some(org) => format!("{base}/api/{org}/mcp/{connection_id}"),
        None => format!("{base}/mcp/{connection_id}"),
    }
}

/// Authenticates a request about one session (an API key is required), checks the path's
/// organization, reads `Mcp-Session-Id` (400 without it, saying the method `does` what)
/// and looks the connection up in the key's organization (404).
pub(super) async fn session_caller(
    state: &AppState,
    org: Option<&str>,
    connection_id: &str,
    headers: &HeaderMap,
    does: &str,
) -> Result<SessionCaller, Response> {
    let resource = resource_url(state, org, connection_id);
    let principal = match authenticate(state, headers, Some(&resource)).await {
        Ok(Credential::Valid(principal)) => principal,
        Ok(other) => {
            return Err(unauthorized(Value::Null, &resource, other.refusal()));
        }
        Err(error) => return Err(api_error(Value::Null, error)),
    };
    if let Some(slug) = org
        && let Err(error) = principal.require_org(slug)
    {
        return Err(api_error(Value::Null, error));
    }
    let Some(session_id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            &format!("Bad Request: {does} the session named by the Mcp-Session-Id header"),
        ));
    };
    let connection = match state
        .store
        .connection(&principal.org.id, connection_id)
        .await
    {
        Ok(Some(connection)) => connection,
        Ok(None) => {
            let error = ApiError::NotFound("Connection not found".into());
            return Err(api_error(Value::Null, error));
        }
        Err(error) => return Err(api_error(Value::Null, error.into())),
    };
    let owner = Owner {
        org_id: connection.org_id.clone(),
        connection_id: connection.id.clone(),
        key_id: principal.key_id.clone(),
    };
    Ok(SessionCaller {
        session_id: session_id.to_string(),
        principal,
        connection,
        owner,
    })
}

/// 404 for a session the upstream no longer knows, which ends it here too.
pub(super) fn session_gone(state: &AppState, caller: &SessionCaller) -> Response {
    if let Some(ended) = state.sessions.remove(&caller.session_id, &caller.owner) {
        end_sessions(state, vec![ended]);
    }
    session_not_found(Value::Null)
}

/// The live session a request about one session names, when the connection is active
/// (503), the key has some grant on it (403, refusing access to `what`) and the session is
/// the key's, on this connection and revision (404).
#[allow(clippy::result_large_err)]
pub(super) fn caller_session(
    state: &AppState,
    caller: &SessionCaller,
    what: &str,
) -> Result<Arc<Session>, Response> {
    let connection = &caller.connection;
    if connection.status != ConnectionStatus::Active {
        let message = format!("Connection {}", connection.status.as_str());
        return Err(api_error(Value::Null, ApiError::Unavailable(message)));
    }
    // What the session's client receives and answers is caused by its requests: the grant
    // to set the session up is the grant to listen to it and answer it.
    if !method_allowed(&caller.principal, &connection.id, "initialize") {
        let message = format!("Access denied to: {what}");
        return Err(api_error(Value::Null, ApiError::Forbidden(message)));
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
    found.ok_or_else(|| session_not_found(Value::Null))
}

/// The upstream's capabilities the proxy delivers: `tools`, `resources`, `prompts`,
/// `completions`, `tasks` and `logging`, with their `listChanged` and
/// `resources.subscribe` (what the upstream sends on its own reaches the client on the
/// session's GET stream and in event-stream answers). Anything else (`experimental`,
/// capabilities of newer revisions) is dropped until it is known to work through the proxy.
fn deliverable_capabilities(upstream: Option<&Value>) -> Value {
    let Some(upstream) = upstream.and_then(Value::as_object) else {
        return json!({ "tools": {} });
    };
    let delivered = upstream
        .iter()
        .filter(|(name, _)| {
            [
                "tools",
                "prompts",
                "resources",
                "completions",
                "tasks",
                "logging",
            ]
            .contains(&name.as_str())
        })
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    Value::Object(delivered)
}

/// Sends a session's notification to its own upstream session, in the background (roots
/// changes, progress of what the upstream asked). `initialized` was sent when the session
/// was opened, and `cancelled` names the client's request ids, which the upstream never
/// saw (the proxy sends its own): neither is forwarded, nor anything of a stateless caller.
fn forward_notification(
    state: &AppState,
    connection: &Connection,
    session: Option<Arc<Session>>,
    notification: &RpcRequest,
    request_id: &str,
) {
    let method = notification.method.as_str();
    if ["notifications/initialized", "notifications/cancelled"].contains(&method) {
        return;
    }
    let Some(session) = session else {
        return;
    };
    if let Ok(target) = target_for(state, connection, request_id) {
        let target = Target {
            session: Some(session),
            ..target
        };
        let params = notification.params.clone();
        state.upstream.notify(&target, method, params);
    }
}

/// The client capabilities declared upstream for a session: the client's `sampling`,
/// `elicitation` and `roots` as it declared them (the requests they allow are relayed to
/// it and its answers back); anything else (`tasks`, `experimental`) is not declared, as
/// what it allows is not relayed.
fn relayed_capabilities(client: Option<&Value>) -> Value {
    let Some(client) = client.and_then(Value::as_object) else {
        return json!({});
    };
    let relayed = client
        .iter()
        .filter(|(name, _)| ["sampling", "elicitation", "roots"].contains(&name.as_str()))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    Value::Object(relayed)
}

/// Whether a key may send `method` (other than `tools/call`, authorized per tool) to a
/// connection. Session set-up, `ping`, `tools/list`, `server/discover` and notifications need
/// some grant on the connection; `resources/*` and `prompts/*` need the method itself (for example
/// `resources/read`) or `*` granted on it; any other method needs `*` on it.
pub(super) fn method_allowed(principal: &Principal, connection_id: &str, method: &str) -> bool {
    let permissions = &principal.permissions;
    match method {
        "initialize" | "ping" | "tools/list" | "server/discover" => {
            permissions.any_on(connection_id)
        }
        // A task is created by a tool call the key was granted; reading, awaiting and
        // cancelling it by id needs some grant on the connection, and reaches only the
        // key's own upstream sessions, so another key's task is unknown there. Listing
        // every task of the key's upstream session needs `*`.
        "tasks/get" | "tasks/result" | "tasks/cancel" => permissions.any_on(connection_id),
        m if m.starts_with("notifications/") => permissions.any_on(connection_id),
        m if m.starts_with("resources/") || m.starts_with("prompts/") => {
            permissions.grants(connection_id, m)
        }
        _ => permissions.grants(connection_id, "*"),
    }
}

/// Finds the connection: in the key's organization, or for anonymous callers in the
/// path's organization (any organization on the legacy route).
async fn lookup(
    state: &AppState,
    principal: Option<&Principal>,
    org: Option<&str>,
    connection_id: &str,
) -> Result<Option<Connection>, ApiError> {
    Ok(match (principal, org) {
        (Some(p), _) => state.auth.connection(p, connection_id).await?,
        (None, Some(slug)) => match state.store.org_by_slug(slug).await? {
            Some(org) => state.store.connection(&org.id, connection_id).await?,
            None => None,
        },
        (None, None) => state.store.connection_any_org(connection_id).await?,
    })
}

/// Whether the upstream marks `tool` public (`false` when its listing is unavailable).
async fn is_public(state: &AppState, target: &Target, tool: &str) -> Result<bool, ()> {
    match state.tool_cache.tools(&state.upstream, target).await {
        Ok(tools) => Ok(tool_cache::find(&tools, tool).is_some_and(tool_cache::is_public)),
        Err(_) => Err(()),
    }
}

/// The target of a denied call: only its connection id is used (metrics, span, audit);
/// nothing is decrypted for it.
fn without_credentials(connection: &Connection, request_id: &str) -> Target {
    Target {
        connection_id: connection.id.clone(),
        revision: connection.updated_at,
        url: connection.url.clone(),
        headers: super::upstream::upstream_headers(None, &[], request_id),
        tool_timeout: std::time::Duration::from_millis(connection.tool_timeout_ms.max(1) as u64),
        caller: None,
        session: None,
        relay: None,
        envelope: None,
    }
}

/// An API error as a JSON-RPC error body with the error's HTTP status.
pub(super) fn api_error(id: Value, error: ApiError) -> Response {
    let code = match error.status() {
        StatusCode::FORBIDDEN => ACCESS_DENIED,
        StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE => INVALID_REQUEST,
        _ => INTERNAL_ERROR,
    };
    let mut response = rpc_error(error.status(), id, code, &error.to_string());
    error.record(&mut response);
    response
}
