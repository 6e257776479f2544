//! A loopback MCP server (streamable HTTP, sessions), plain or HTTPS.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::stateless_double;

/// What the double saw.
#[derive(Default)]
pub struct Seen {
    /// `tools/call` names in order.
    pub calls: Vec<String>,
    /// Headers of the last `tools/call`.
    pub last_headers: Vec<(String, String)>,
    /// The path of every request, in order.
    pub hits: Vec<String>,
    /// The params of the last `tools/call`.
    pub last_params: Value,
    /// The `protocolVersion` each `initialize` asked for.
    pub asked_versions: Vec<String>,
    /// Sessions ended by DELETE.
    pub deleted: Vec<String>,
    /// The client `capabilities` each `initialize` declared.
    pub asked_capabilities: Vec<Value>,
    /// The JSON-RPC responses POSTed to the double (answers to its own requests).
    pub answers: Vec<Value>,
    /// The methods of the notifications POSTed to the double, in order.
    pub notifications: Vec<String>,
    /// `slow` calls whose request went away before the double answered.
    pub abandoned: usize,
    /// The methods of the stateless revision's requests, in order.
    pub stateless_methods: Vec<String>,
}

/// Counts its call as abandoned when dropped before it is marked answered (axum drops a
/// handler whose client closed the connection).
struct Abandonment {
    seen: Arc<Mutex<Seen>>,
    answered: bool,
}

impl Drop for Abandonment {
    fn drop(&mut self) {
        if !self.answered {
            self.seen.lock().unwrap().abandoned += 1;
        }
    }
}

#[derive(Clone)]
struct Double {
    seen: Arc<Mutex<Seen>>,
    sessions: Arc<Mutex<HashSet<String>>>,
    sse: bool,
    stream_ended: Arc<tokio::sync::Notify>,
    answered: Arc<tokio::sync::Notify>,
    /// The session that created each task (`task-1` first): a task is known only there.
    tasks: Arc<Mutex<Vec<String>>>,
}

/// A running MCP double.
pub struct McpDouble {
    /// Its endpoint URL.
    pub url: String,
    /// What it saw.
    pub seen: Arc<Mutex<Seen>>,
    sessions: Arc<Mutex<HashSet<String>>>,
    /// Notified when a client leaves a session stream (GET) of the `stream` mode.
    pub stream_ended: Arc<tokio::sync::Notify>,
}

impl McpDouble {
    /// Tool calls seen so far.
    pub fn calls(&self) -> Vec<String> {
        self.seen.lock().unwrap().calls.clone()
    }

    /// How many stateless requests of `method` the double saw.
    pub fn stateless(&self, method: &str) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.stateless_methods
            .iter()
            .filter(|m| *m == method)
            .count()
    }

    /// Requests seen on `path` (`/mcp`, `/<mode>/mcp`).
    pub fn hits(&self, path: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .hits
            .iter()
            .filter(|p| *p == path)
            .count()
    }

    /// The endpoint of a misbehaving mode on the same server: `redirect` answers every
    /// request with a 307 to `/mcp` on another host name (`localhost`), `error500`
    /// answers 500, `odd` is a working server whose listing has a tool with a
    /// non-object `_meta` and which answers other methods with JSON that is not an object,
    /// `huge` answers every tool call with 17 MiB, `old` speaks only 2025-03-26, `tasks`
    /// also lists `task_only` (task-augmented calls only, MCP 2025-11-25) and `meta_echo`
    /// (answers with the call's `params._meta`), `stream` answers GET with a session
    /// stream (one `notifications/message` whose data is the session id, then keep-alive
    /// comments until the client leaves) and a tool call with a progress token with an
    /// event stream: a progress notification, a `ping` request (with the call's id), then
    /// the result; after its message the session stream sends a `roots/list` request (id
    /// `"r1"`). `ask` answers the tool call `ask` (`{ "count": n }`) with an event stream:
    /// `n` `sampling/createMessage` requests (ids `"<call id>-1"`, `"<call id>-2"`, ...), then, once each is
    /// answered (10 s at most), a result whose text is the JSON array of the answers; its
    /// tool call `ask_cancel` sends an `elicitation/create` request (id `"c1"`), cancels it
    /// (`notifications/cancelled`), then answers.
    pub fn mode_url(&self, mode: &str) -> String {
        self.url.replace("/mcp", &format!("/{mode}/mcp"))
    }

    /// Sessions the double ended on DELETE.
    pub fn deleted(&self) -> Vec<String> {
        self.seen.lock().unwrap().deleted.clone()
    }

    /// Forgets `session`, as a restarted upstream would.
    pub fn forget_session(&self, session: &str) {
        self.sessions.lock().unwrap().remove(session);
    }

    /// The JSON-RPC responses the double received, in order.
    pub fn answers(&self) -> Vec<Value> {
        self.seen.lock().unwrap().answers.clone()
    }

    /// The methods of the notifications the double received, in order.
    pub fn notifications(&self) -> Vec<String> {
        self.seen.lock().unwrap().notifications.clone()
    }

    /// The client capabilities each `initialize` declared, in order.
    pub fn asked_capabilities(&self) -> Vec<Value> {
        self.seen.lock().unwrap().asked_capabilities.clone()
    }

    /// The params of the last tool call, as the upstream received them.
    pub fn last_params(&self) -> Value {
        self.seen.lock().unwrap().last_params.clone()
    }

    /// A header of the last tool call.
    pub fn last_header(&self, name: &str) -> Option<String> {
        self.seen
            .lock()
            .unwrap()
            .last_headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

fn tools() -> Value {
    json!([
        { "name": "echo", "description": "Echo text back",
          "inputSchema": { "type": "object", "required": ["text"], "properties": { "text": { "type": "string" } } } },
        { "name": "add", "description": "Add two numbers",
          "inputSchema": { "type": "object", "required": ["a", "b"], "properties": { "a": { "type": "number" }, "b": { "type": "number" } } } },
        { "name": "public_ping", "inputSchema": { "type": "object" }, "_meta": { "mcp.platform": { "public_tool": true } } },
        { "name": "legacy_ping", "inputSchema": { "type": "object" }, "_meta": { "mcp.legacy": { "public_tool": true } } },
        { "name": "slow", "inputSchema": { "type": "object" } },
        { "name": "whoami", "inputSchema": { "type": "object" } },
        { "name": "fail", "inputSchema": { "type": "object" } }
    ])
}

async fn handle(State(d): State<Double>, headers: HeaderMap, body: String) -> Response {
    d.seen.lock().unwrap().hits.push("/mcp".into());
    respond(d, None, headers, body).await
}

async fn handle_mode(
    State(d): State<Double>,
    Path(mode): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    d.seen.lock().unwrap().hits.push(format!("/{mode}/mcp"));
    match mode.as_str() {
        "redirect" => {
            let host = headers["host"].to_str().unwrap();
            let port = host.rsplit_once(':').unwrap().1;
            let location = format!("http://localhost:{port}/mcp");
            (StatusCode::TEMPORARY_REDIRECT, [("location", location)]).into_response()
        }
        "error500" => (StatusCode::INTERNAL_SERVER_ERROR, "broken").into_response(),
        // An upstream that refuses the proxy's own credentials.
        "refuse401" => {
            let error = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32000, "message": "Unauthorized"}});
            (StatusCode::UNAUTHORIZED, axum::Json(error)).into_response()
        }
        // A server of a future revision only: every request is refused with HTTP 400 and
        // -32022, naming a version the service does not speak.
        "future-only" => {
            let msg: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let error = serde_json::json!({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2099-01-01"], "requested": "2025-11-25"}}});
            (StatusCode::BAD_REQUEST, axum::Json(error)).into_response()
        }
        // A session server slow to set one up: `initialize` answers after 1.5 s.
        "slow-setup" => {
            if body.contains("\"initialize\"") {
                tokio::time::sleep(Duration::from_millis(1500)).await;
            }
            respond(d, Some(mode), headers, body).await
        }
        // A server of the stateless revision only (`modern`), or of both kinds (`dual`).
        "modern" | "dual" => {
            let msg: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if stateless_double::is_stateless(&msg) {
                return stateless_double::respond(&d.seen, &headers, msg);
            }
            if mode == "modern" {
                return stateless_double::refuse_sessions(&msg);
            }
            respond(d, Some(mode), headers, body).await
        }
        _ => respond(d, Some(mode), headers, body).await,
    }
}

async fn respond(d: Double, mode: Option<String>, headers: HeaderMap, body: String) -> Response {
    let odd = mode.as_deref() == Some("odd");
    let tasks = mode.as_deref() == Some("tasks");
    let huge = mode.as_deref() == Some("huge");
    let msg: Value = serde_json::from_str(&body).unwrap();
    let method = msg["method"].as_str().unwrap_or_default().to_string();
    let id = msg.get("id").cloned();
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if method != "initialize" {
        let known = session
            .as_ref()
            .is_some_and(|s| d.sessions.lock().unwrap().contains(s));
        if !known {
            return (StatusCode::NOT_FOUND, "unknown session").into_response();
        }
    }
    if msg.get("method").is_none() && id.is_some() {
        d.seen.lock().unwrap().answers.push(msg);
        d.answered.notify_waiters();
        return StatusCode::ACCEPTED.into_response();
    }
    let Some(id) = id else {
        d.seen.lock().unwrap().notifications.push(method);
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match method.as_str() {
        "initialize" => {
            let sid = uuid::Uuid::new_v4().to_string();
            d.sessions.lock().unwrap().insert(sid.clone());
            let asked = msg["params"]["protocolVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            {
                let mut seen = d.seen.lock().unwrap();
                seen.asked_versions.push(asked.clone());
                seen.asked_capabilities
                    .push(msg["params"]["capabilities"].clone());
            }
            let known = ["2025-11-25", "2025-06-18", "2025-03-26"];
            let version = if mode.as_deref() == Some("old") {
                "2025-03-26".to_string()
            } else if known.contains(&asked.as_str()) {
                asked
            } else {
                "2025-06-18".to_string()
            };
            // Everything a server may advertise, deliverable through a proxy or not.
            let body = json!({ "jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": version,
                "capabilities": {
                    "tools": { "listChanged": true },
                    "resources": { "subscribe": true, "listChanged": true },
                    "prompts": { "listChanged": true },
                    "logging": {},
                    "completions": {},
                    "tasks": { "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } },
                    "experimental": { "x": {} }
                },
                "serverInfo": { "name": "double", "version": "1.0.0" } } });
            return ([("mcp-session-id", sid)], axum::Json(body)).into_response();
        }
        "tools/list" if odd => {
            let mut tools = tools();
            tools[0]["_meta"] = json!("not an object");
            tools[1]["_meta"] = json!([1, 2]);
            tools.as_array_mut().unwrap().push(json!("not a tool"));
            json!({ "tools": tools })
        }
        "tools/list" if tasks => {
            let mut tools = tools();
            let list = tools.as_array_mut().unwrap();
            list.push(
                json!({ "name": "task_only", "inputSchema": { "type": "object" },
                "execution": { "taskSupport": "required" } }),
            );
            list.push(json!({ "name": "meta_echo", "inputSchema": { "type": "object" } }));
            list.push(json!({ "name": "session", "inputSchema": { "type": "object" } }));
            json!({ "tools": tools })
        }
        "tools/list" => json!({ "tools": tools() }),
        "tasks/get" | "tasks/result" if !own_task(&d, &msg, session.as_deref()) => {
            let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602,
                "message": "Unknown task" } });
            return axum::Json(body).into_response();
        }
        "tasks/get" => json!({ "taskId": msg["params"]["taskId"], "status": "completed",
            "createdAt": "2026-11-24T00:00:00Z", "lastUpdatedAt": "2026-11-24T00:00:01Z", "ttl": 60000 }),
        "tasks/result" => json!({ "content": [{ "type": "text", "text": "task done" }],
            "_meta": { "io.modelcontextprotocol/related-task": { "taskId": msg["params"]["taskId"] } } }),
        "resources/list" | "prompts/list" if odd => {
            return axum::Json(json!([1, 2, 3])).into_response();
        }
        "resources/templates/list" if odd => {
            return axum::Json(json!("just a string")).into_response();
        }
        "resources/list" => json!({ "resources": [{ "uri": "file:///a", "name": "a" }] }),
        "prompts/list" => json!({ "prompts": [{ "name": "p" }] }),
        "tools/call" => {
            let name = msg["params"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let args = msg["params"]["arguments"].clone();
            {
                let mut seen = d.seen.lock().unwrap();
                seen.calls.push(name.clone());
                seen.last_params = msg["params"].clone();
                seen.last_headers = headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
                    .collect();
            }
            let text = |t: String| json!({ "content": [{ "type": "text", "text": t }] });
            if mode.as_deref() == Some("ask") && name == "ask" {
                let count = args["count"].as_u64().unwrap_or(1);
                return ask(d.clone(), id, count);
            }
            if mode.as_deref() == Some("ask") && name == "ask_cancel" {
                let request = json!({ "jsonrpc": "2.0", "id": "c1", "method": "elicitation/create",
                    "params": { "message": "m", "requestedSchema": { "type": "object" } } });
                let cancelled = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": { "requestId": "c1", "reason": "changed its mind" } });
                let body =
                    json!({ "jsonrpc": "2.0", "id": id, "result": text("cancelled".into()) });
                let text = format!(
                    "event: message\ndata: {request}\n\nevent: message\ndata: {cancelled}\n\nevent: message\ndata: {body}\n\n"
                );
                return ([("content-type", "text/event-stream")], text).into_response();
            }
            if huge {
                let body =
                    json!({ "jsonrpc": "2.0", "id": id, "result": text("x".repeat(17 << 20)) });
                return axum::Json(body).into_response();
            }
            match name.as_str() {
                "echo" => text(args["text"].as_str().unwrap_or_default().to_string()),
                "add" => {
                    text((args["a"].as_f64().unwrap() + args["b"].as_f64().unwrap()).to_string())
                }
                "public_ping" | "legacy_ping" => text("pong".into()),
                "task_only" => match msg["params"].get("task") {
                    Some(task) => {
                        json!({ "task": { "taskId": new_task(&d, session.as_deref()), "status": "working",
                        "ttl": task["ttl"], "createdAt": "2026-11-24T00:00:00Z",
                        "lastUpdatedAt": "2026-11-24T00:00:00Z", "pollInterval": 100 } })
                    }
                    None => {
                        let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601,
                            "message": "task_only must be called as a task" } });
                        return axum::Json(body).into_response();
                    }
                },
                "meta_echo" => text(msg["params"]["_meta"].to_string()),
                // A log message before the answer, as a session server sends one.
                "log" => {
                    let log = json!({ "jsonrpc": "2.0", "method": "notifications/message",
                        "params": { "level": "info", "data": "logged" } });
                    let body = json!({ "jsonrpc": "2.0", "id": id, "result": text("done".into()) });
                    let text =
                        format!("event: message\ndata: {log}\n\nevent: message\ndata: {body}\n\n");
                    return ([("content-type", "text/event-stream")], text).into_response();
                }
                "session" => text(session.clone().unwrap_or_default()),
                "slow" => {
                    let mut call = Abandonment {
                        seen: d.seen.clone(),
                        answered: false,
                    };
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    call.answered = true;
                    text("late".into())
                }
                "whoami" => text(
                    headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string(),
                ),
                "fail" => {
                    json!({ "content": [{ "type": "text", "text": "boom" }], "isError": true })
                }
                _ => {
                    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602, "message": "Unknown tool" } });
                    return axum::Json(body).into_response();
                }
            }
        }
        _ => {
            let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "Method not found" } });
            return axum::Json(body).into_response();
        }
    };
    let body = json!({ "jsonrpc": "2.0", "id": id, "result": result });
    let token = &msg["params"]["_meta"]["progressToken"];
    if mode.as_deref() == Some("stream") && method == "tools/call" && !token.is_null() {
        let progress = json!({ "jsonrpc": "2.0", "method": "notifications/progress",
            "params": { "progressToken": token, "progress": 1, "total": 2 } });
        // The upstream's own request, with the id of the request it answers.
        let ping = json!({ "jsonrpc": "2.0", "id": id, "method": "ping" });
        let text = format!(
            "event: message\ndata: {progress}\n\nevent: message\ndata: {ping}\n\nevent: message\ndata: {body}\n\n"
        );
        return ([("content-type", "text/event-stream")], text).into_response();
    }
    if d.sse {
        let text = format!("event: message\ndata: {body}\n\n");
        ([("content-type", "text/event-stream")], text).into_response()
    } else {
        axum::Json(body).into_response()
    }
}

/// The `ask` mode's answer to a tool call: `count` sampling requests, then (once each is
/// answered, 10 s at most) the result listing the answers.
fn ask(d: Double, id: Value, count: u64) -> Response {
    let ids: Vec<String> = (1..=count).map(|n| format!("{id}-{n}")).collect();
    let requests: String = ids
        .iter()
        .map(|q| {
            let request = json!({ "jsonrpc": "2.0", "id": q, "method": "sampling/createMessage",
                "params": { "messages": [], "maxTokens": 10 } });
            format!("event: message\ndata: {request}\n\n")
        })
        .collect();
    let answers = async move {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let answered = d.answered.notified();
            let found: Vec<Value> = {
                let seen = d.seen.lock().unwrap();
                ids.iter()
                    .filter_map(|q| seen.answers.iter().find(|a| a["id"] == q.as_str()).cloned())
                    .collect()
            };
            if found.len() == ids.len() || tokio::time::Instant::now() >= deadline {
                let result = json!({ "content": [{ "type": "text", "text": Value::from(found).to_string() }] });
                let body = json!({ "jsonrpc": "2.0", "id": id, "result": result });
                return format!("event: message\ndata: {body}\n\n");
            }
            let _ = tokio::time::timeout_at(deadline, answered).await;
        }
    };
    let body = futures_util::stream::once(std::future::ready(requests))
        .chain(futures_util::stream::once(answers))
        .map(Ok::<_, std::convert::Infallible>);
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

async fn delete(State(d): State<Double>, headers: HeaderMap) -> StatusCode {
    let Some(session) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        return StatusCode::BAD_REQUEST;
    };
    if d.sessions.lock().unwrap().remove(session) {
        d.seen.lock().unwrap().deleted.push(session.to_string());
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    }
}

async fn delete_mode(state: State<Double>, _: Path<String>, headers: HeaderMap) -> StatusCode {
    delete(state, headers).await
}

type Sessions = Arc<Mutex<HashSet<String>>>;

/// GET on `/<mode>/mcp`: the `stream` mode's session stream, 405 elsewhere.
async fn listen_mode(
    State(d): State<Double>,
    Path(mode): Path<String>,
    headers: HeaderMap,
) -> Response {
    if mode != "stream" {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    let message = json!({ "jsonrpc": "2.0", "method": "notifications/message",
        "params": { "level": "info", "data": session } });
    /// Notifies when dropped: the body is dropped when the client leaves.
    struct Ended(Arc<tokio::sync::Notify>);
    impl Drop for Ended {
        fn drop(&mut self) {
            self.0.notify_one();
        }
    }
    let ended = Ended(d.stream_ended.clone());
    let roots = json!({ "jsonrpc": "2.0", "id": "r1", "method": "roots/list" });
    let first = format!("event: message\ndata: {message}\n\nevent: message\ndata: {roots}\n\n");
    let ticks = tokio::time::interval(Duration::from_millis(50));
    let keepalive = futures_util::stream::unfold((ticks, ended), |(mut ticks, ended)| async move {
        ticks.tick().await;
        Some((": keep-alive\n\n".to_string(), (ticks, ended)))
    });
    let body = futures_util::stream::once(std::future::ready(first))
        .chain(keepalive)
        .map(Ok::<_, std::convert::Infallible>);
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// Records a task created in `session`; its id.
fn new_task(d: &Double, session: Option<&str>) -> String {
    let mut tasks = d.tasks.lock().unwrap();
    tasks.push(session.unwrap_or_default().to_string());
    format!("task-{}", tasks.len())
}

/// Whether the task `msg` names was created in `session`.
fn own_task(d: &Double, msg: &Value, session: Option<&str>) -> bool {
    let number = msg["params"]["taskId"]
        .as_str()
        .and_then(|t| t.strip_prefix("task-"))
        .and_then(|n| n.parse::<usize>().ok());
    let tasks = d.tasks.lock().unwrap();
    number
        .and_then(|n| tasks.get(n.wrapping_sub(1)))
        .is_some_and(|s| Some(s.as_str()) == session)
}

fn app(sse: bool) -> (Router, Arc<Mutex<Seen>>, Sessions, Arc<tokio::sync::Notify>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sessions = Sessions::default();
    let stream_ended = Arc::new(tokio::sync::Notify::new());
    let d = Double {
        seen: seen.clone(),
        sessions: sessions.clone(),
        sse,
        stream_ended: stream_ended.clone(),
        answered: Arc::new(tokio::sync::Notify::new()),
        tasks: Arc::default(),
    };
    (
        Router::new()
            .route("/mcp", post(handle).delete(delete))
            .route(
                "/{mode}/mcp",
                post(handle_mode).delete(delete_mode).get(listen_mode),
            )
            .with_state(d),
        seen,
        sessions,
        stream_ended,
    )
}

/// Starts a plain HTTP double; `sse` answers tool calls as event streams.
pub async fn start(sse: bool) -> McpDouble {
    let (router, seen, sessions, stream_ended) = app(sse);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    McpDouble {
        url: format!("http://127.0.0.1:{}/mcp", addr.port()),
        seen,
        sessions,
        stream_ended,
    }
}

/// A test certificate authority.
pub struct TestCa {
    /// The CA certificate, PEM.
    pub pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    /// A new CA.
    pub fn new() -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "sitefile test CA");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Self {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }
}

/// Starts an HTTPS double for `localhost` with a certificate issued by `ca`.
pub async fn start_tls(ca: &TestCa) -> McpDouble {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    let config = tokio_rustls::rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            tokio_rustls::rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (router, seen, sessions, stream_ended) = app(false);
    tokio::spawn(axum::serve(TlsListener { listener, acceptor }, router).into_future());
    McpDouble {
        url: format!("https://localhost:{}/mcp", addr.port()),
        seen,
        sessions,
        stream_ended,
    }
}

struct TlsListener {
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, addr)) = self.listener.accept().await else {
                continue;
            };
            if let Ok(Ok(tls)) =
                tokio::time::timeout(Duration::from_secs(5), self.acceptor.accept(tcp)).await
            {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}
