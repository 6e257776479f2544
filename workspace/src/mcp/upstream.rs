//! The MCP streamable-HTTP client used to reach upstream servers.
//!
//! One shared session per connection and caller ([`Target::caller`]: the key, or the
//! service itself) is initialized on first use and reused (stateless callers, listings),
//! so what one key builds upstream without a session is never seen by another; those
//! sessions are bounded ([`MAX_SHARED_SESSIONS`]) and expire when idle
//! ([`SHARED_SESSION_IDLE`]). An upstream that forgets one (404) re-initializes it once. A
//! shared session is set up in a task of its own ([`LIST_TIMEOUT`] at most), which the
//! callers needing it share; each waits for it no longer than the connection's tool timeout,
//! so an upstream slow to set up delays a call by that much at most, and a set-up that
//! outlasts one caller still serves the next. A
//! downstream MCP session gets an upstream session of its own ([`Upstream::open_session`],
//! carried in [`Target::session`]), which is never re-initialized behind its client's
//! back; its server-to-client stream is read with [`Upstream::listen`] and
//! [`Upstream::relay_events`]. What an upstream sends to the client (notifications, and
//! requests under ids of the proxy's own, see [`super::server_requests`]) goes to the
//! target's relay; the client's answers go back with [`Upstream::answer`]. Certificates are
//! validated.
//!
//! An upstream that speaks the stateless revision (2026-07-28, found out once per connection
//! revision by [`super::stateless`]) is spoken to statelessly: the shared "session" is its
//! `server/discover` result and every request carries the revision's envelope and headers. A
//! downstream session gets an upstream session of its own wherever the upstream still serves
//! sessions (a dual-revision server), since only a session carries what the session revisions
//! promise (requests to the client mid-call, the GET stream, subscriptions); on an upstream
//! that serves none, the downstream session is translated: its requests go statelessly with
//! what its client declared at `initialize` as their envelope.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::Instant;

use futures_util::future::{BoxFuture, FutureExt};
use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::journal::Journal;
use super::jsonrpc::{self, INTERNAL_ERROR, REQUEST_TIMEOUT};
use super::mrtr;
use super::relay::Relay;
use super::server_requests::{Asker, ServerRequests, TooMany};
use super::stateless;
use crate::http::SseParser;

/// The protocol version the shared session asks for: the newest the service speaks
/// (tasks need 2025-11-25). A downstream session's own upstream session asks for the
/// version its client asked for.
pub const CLIENT_PROTOCOL_VERSION: &str = "2025-11-25";
/// Versions the service speaks, newest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Largest upstream answer read (JSON body or event stream; on a session's GET stream,
/// one event); beyond it the request (or the GET stream) fails.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// The most bytes read of an upstream's error answer (a JSON-RPC error is small).
const MAX_ERROR_BYTES: usize = 64 * 1024;
/// Timeout for session set-up and listings (tool calls use the connection's timeout).
pub const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// Most shared (stateless) upstream sessions kept; beyond it the least recently used one
/// is forgotten.
pub const MAX_SHARED_SESSIONS: usize = 4096;
/// A shared upstream session unused this long is forgotten (a new one is initialized).
pub const SHARED_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// Where and how to reach one upstream server.
#[derive(Clone)]
pub struct Target {
    /// Connection id (session cache key).
    pub connection_id: String,
    /// Connection `updated_at`: a changed connection gets a new session.
    pub revision: i64,
    /// Endpoint URL.
    pub url: String,
    /// Headers sent on every request: decrypted credentials, then custom headers.
    pub headers: HeaderMap,
    /// Tool-call timeout.
    pub tool_timeout: Duration,
    /// Who the shared session is for when `session` is `None`: the calling key (`Some`),
    /// or the service itself and anonymous callers (`None`).
    pub caller: Option<String>,
    /// The upstream session of one downstream MCP session; `None` uses the connection's
    /// shared session (stateless callers).
    pub session: Option<Arc<Session>>,
    /// Where the notifications an upstream sends in its event-stream answer, before the
    /// answer itself, go (the downstream client's event stream); `None` reads past them.
    pub relay: Option<Relay>,
    /// The 2026-07-28 envelope of the downstream request (a stateless client's own), sent to
    /// an upstream spoken to statelessly; `None` for other callers.
    pub envelope: Option<Value>,
}

/// Why an upstream request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// Connection refused, DNS, TLS or certificate failure, an upstream 5xx or a redirect.
    #[error("upstream unavailable: {0}")]
    Unreachable(String),
    /// No answer within the timeout.
    #[error("Request timed out")]
    Timeout,
    /// The upstream answered, but not with a usable JSON-RPC response.
    #[error("upstream protocol error: {0}")]
    Protocol(String),
    /// The upstream refused the request with an HTTP 4xx without a JSON-RPC error.
    #[error("upstream protocol error: upstream answered HTTP {0}")]
    Status(u16),
    /// The upstream refused the request with an HTTP 4xx carrying a JSON-RPC error (a version
    /// it does not serve, headers it finds wrong): relayed as it is.
    #[error("upstream refused the request (HTTP {status}): {}", error["message"].as_str().unwrap_or("no message"))]
    Refused {
        /// The upstream's HTTP status.
        status: u16,
        /// The upstream's JSON-RPC error object.
        error: Value,
    },
    /// The upstream no longer knows the downstream session's own upstream session.
    #[error("Session not found: the upstream ended it; initialize a new session")]
    SessionExpired,
    /// The upstream offers no server-to-client stream (it answered GET with 405).
    #[error("the upstream offers no server-to-client stream")]
    NoStream,
}

/// An initialized upstream session, or the stateless stand-in for one (no id, the
/// stateless revision, the `initialize` result drawn from `server/discover`).
pub struct Session {
    revision: i64,
    id: Option<String>,
    protocol_version: String,
    init_result: Value,
    client: Option<ClientSide>,
    /// Stateless: the envelope of the downstream session's requests (what its client
    /// declared at `initialize`).
    envelope: Option<Value>,
    /// Stateless: the level the downstream client set with `logging/setLevel`, sent as the
    /// envelope's `logLevel` (the stateless revision's opt-in to log messages).
    log_level: std::sync::Mutex<Option<Value>>,
}

/// What the proxy keeps for the downstream client of a session's own upstream session (the
/// connection's shared session has none: its callers cannot be asked anything).
pub struct ClientSide {
    /// The upstream's requests awaiting the client's answer.
    pub requests: ServerRequests,
    /// The session's GET stream, kept for replay.
    pub journal: Journal,
}

/// Which shared session: a connection and a caller ([`Target::caller`]).
type SharedKey = (String, Option<String>);

/// A shared session and when it was last used.
struct Shared {
    session: Arc<Session>,
    used: Instant,
}

/// What a probe found a connection's upstream to speak (see [`super::stateless`]).
struct Discovered {
    /// The connection revision probed.
    revision: i64,
    /// The `server/discover` result of a stateless upstream; `None`: a session revision.
    result: Option<Value>,
    /// When it was probed (a probe older than [`SHARED_SESSION_IDLE`] is repeated).
    used: Instant,
}

/// Which set-up: a shared session's key and the connection revision it is for.
type SetUpKey = (SharedKey, i64);

/// A shared session's set-up under way, awaited by every caller needing it.
type SetUp = futures_util::future::Shared<BoxFuture<'static, Result<Arc<Session>, UpstreamError>>>;

/// A pooled HTTP client plus the upstream sessions.
pub struct Upstream {
    http: reqwest::Client,
    sessions: Mutex<HashMap<SharedKey, Shared>>,
    setting_up: std::sync::Mutex<HashMap<SetUpKey, SetUp>>,
    discovered: Mutex<HashMap<String, Discovered>>,
    next_id: AtomicU64,
}

/// The shared-session key of a target.
fn shared_key(target: &Target) -> SharedKey {
    (target.connection_id.clone(), target.caller.clone())
}

impl Upstream {
    /// A client trusting the system roots plus `extra_roots_pem` (a PEM bundle).
    pub fn new(extra_roots_pem: Option<&[u8]>) -> Result<Self, String> {
        // Redirects are never followed: a redirect would carry the connection's stored
        // credentials (custom headers survive even cross-host redirects) to a URL nobody
        // configured. A 3xx answer is an upstream failure.
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(90));
        if let Some(pem) = extra_roots_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| e.to_string())?;
            builder = builder.tls_certs_merge(certs);
        }
        Ok(Self {
            http: builder.build().map_err(|e| e.to_string())?,
            sessions: Mutex::new(HashMap::new()),
            setting_up: std::sync::Mutex::new(HashMap::new()),
            discovered: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        })
    }

    /// A new upstream session of its own for one downstream session, asking for
    /// `protocol_version` (the downstream client's ask, when the service speaks it) and
    /// declaring `capabilities` (what the client declared that the proxy relays) as
    /// `client_info`. On a stateless upstream that serves no session, the session is
    /// translated (see the module's doc) and its `initialize` result is in
    /// `protocol_version`.
    pub async fn open_session(
        &self,
        target: &Target,
        protocol_version: &str,
        capabilities: Value,
        client_info: Option<Value>,
        client: ClientSide,
    ) -> Result<Arc<Session>, UpstreamError> {
        let open = async {
            let discovered = self.discovered(target).await?;
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let body = initialize_body(id, protocol_version, capabilities.clone());
            let mut session = match (self.initialize_once(target, &body, id).await, discovered) {
                (Ok(session), _) => session,
                (Err(error), Some(discovered)) if stateless::refuses_the_revision(&error) => {
                    let init = stateless::init_result(&discovered, protocol_version);
                    let envelope = stateless::session_envelope(capabilities, client_info);
                    Session::stateless(target.revision, init, Some(envelope))
                }
                (Err(error), _) => return Err(error),
            };
            session.client = Some(client);
            Ok(Arc::new(session))
        };
        tokio::time::timeout(LIST_TIMEOUT, open)
            .await
            .map_err(|_| UpstreamError::Timeout)?
    }

    /// Ends an upstream session in the background (HTTP DELETE with its id; an upstream
    /// that does not allow it answers 405, which is ignored).
    pub fn close_session(&self, target: &Target, session: Arc<Session>) {
        let Some(id) = session.id.clone() else {
            return;
        };
        let (http, target) = (self.http.clone(), target.clone());
        tokio::spawn(async move {
            let mut request = http
                .delete(&target.url)
                .headers(target.headers.clone())
                .header("mcp-session-id", id);
            if let Ok(v) = HeaderValue::from_str(&session.protocol_version) {
                request = request.header("mcp-protocol-version", v);
            }
            let _ = tokio::time::timeout(Duration::from_secs(5), request.send()).await;
        });
    }

    /// The upstream's `initialize` result (from the cached session).
    pub async fn initialize(self: &Arc<Self>, target: &Target) -> Result<Value, UpstreamError> {
        Ok(self.session(target).await?.init_result.clone())
    }

    /// Sends one request and returns the upstream's JSON-RPC response, always a JSON
    /// object (callers put their own id in it); anything else is a protocol error.
    pub async fn request(
        self: &Arc<Self>,
        target: &Target,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, UpstreamError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": &params });
        let attempt = async {
            if let Some(session) = &target.session {
                // A downstream session's own upstream session is never silently replaced:
                // whatever state the client built in it would be gone.
                let answer = match self.post(target, Some(session), &body, Some(id)).await {
                    Err(PostError::SessionGone) => Err(UpstreamError::SessionExpired),
                    other => other.map_err(PostError::into_upstream),
                };
                return match session.is_stateless() {
                    true => self.fulfil(target, session, method, &params, answer?).await,
                    false => answer,
                };
            }
            let session = self.session(target).await?;
            match self.post(target, Some(&session), &body, Some(id)).await {
                Err(PostError::SessionGone) => {
                    self.sessions.lock().await.remove(&shared_key(target));
                    let session = self.session(target).await?;
                    self.post(target, Some(&session), &body, Some(id))
                        .await
                        .map_err(PostError::into_upstream)
                }
                other => other.map_err(PostError::into_upstream),
            }
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(Ok(Some(response))) if response.is_object() => Ok(response),
            Ok(Ok(Some(_))) => Err(UpstreamError::Protocol(
                "upstream answered with JSON that is not a JSON-RPC response object".into(),
            )),
            Ok(Ok(None)) => Err(UpstreamError::Protocol(
                "upstream accepted the request without answering it".into(),
            )),
            Ok(Err(error)) => Err(error),
            Err(_) => {
                let cancel = json!({ "requestId": id, "reason": "Request timed out" });
                self.notify(target, "notifications/cancelled", cancel);
                Err(UpstreamError::Timeout)
            }
        }
    }

    /// The rounds of a translated session's request whose stateless upstream asks its client
    /// for input (see [`super::mrtr`]): asks, sends the request again, until the upstream
    /// answers it complete. Without a stream to ask the client on, the upstream's answer is
    /// returned as it is.
    async fn fulfil(
        &self,
        target: &Target,
        session: &Session,
        method: &str,
        params: &Value,
        mut answer: Option<Value>,
    ) -> Result<Option<Value>, UpstreamError> {
        for _ in 0..mrtr::MAX_ROUNDS {
            let (Some(asked), Some(client), Some(relay)) = (
                answer.as_ref().filter(|a| mrtr::asks_input(a)),
                session.client(),
                &target.relay,
            ) else {
                return Ok(answer);
            };
            let asked = &asked["result"];
            let responses = mrtr::ask(client, relay, asked).await?;
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let params = mrtr::retry_params(params, asked, responses);
            let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
            answer = self
                .post(target, Some(session), &body, Some(id))
                .await
                .map_err(PostError::into_upstream)?;
        }
        Err(UpstreamError::Protocol(format!(
            "the upstream asked for input in more than {} rounds",
            mrtr::MAX_ROUNDS
        )))
    }

    /// `tools/list`, following pagination, with the listing timeout.
    pub async fn list_tools(
        self: &Arc<Self>,
        target: &Target,
    ) -> Result<Vec<Value>, UpstreamError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..50 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let response = self
                .request(target, "tools/list", params, LIST_TIMEOUT)
                .await?;
            let result = response.get("result").ok_or_else(|| {
                UpstreamError::Protocol(format!("tools/list failed: {}", response["error"]))
            })?;
            if let Some(page) = result.get("tools").and_then(Value::as_array) {
                tools.extend(page.iter().cloned());
            }
            cursor = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_string);
            if cursor.is_none() {
                break;
            }
        }
        Ok(tools)
    }

    /// Sends a notification in the background, ignoring the outcome.
    pub fn notify(&self, target: &Target, method: &str, params: Value) {
        let body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        let (http, target) = (self.http.clone(), target.clone());
        let session = target.session.clone().or_else(|| {
            self.sessions
                .try_lock()
                .ok()
                .and_then(|s| s.get(&shared_key(&target)).map(|s| s.session.clone()))
        });
        tokio::spawn(async move {
            let request = build(&http, &target, session.as_deref(), &body);
            let _ = tokio::time::timeout(Duration::from_secs(5), request.send()).await;
        });
    }

    /// The live shared session of a connection and caller, set up when needed (see the
    /// module's doc: the wait is bounded by the target's tool timeout).
    async fn session(self: &Arc<Self>, target: &Target) -> Result<Arc<Session>, UpstreamError> {
        let key = shared_key(target);
        if let Some(s) = self.sessions.lock().await.get_mut(&key)
            && s.session.revision == target.revision
            && s.used.elapsed() < SHARED_SESSION_IDLE
        {
            s.used = Instant::now();
            return Ok(s.session.clone());
        }
        let set_up = {
            let mut setting_up = self.setting_up.lock().unwrap_or_else(|e| e.into_inner());
            let set_up = setting_up
                .entry((key.clone(), target.revision))
                .or_insert_with(|| self.set_up(key, target));
            set_up.clone()
        };
        tokio::time::timeout(target.tool_timeout, set_up)
            .await
            .map_err(|_| UpstreamError::Timeout)?
    }

    /// Sets up the shared session `key` of `target` in a task of its own, which keeps it
    /// once it is up.
    fn set_up(self: &Arc<Self>, key: SharedKey, target: &Target) -> SetUp {
        let this = self.clone();
        // Only the connection's own settings: the set-up belongs to no caller's request.
        let target = Target {
            session: None,
            relay: None,
            envelope: None,
            ..target.clone()
        };
        let task = tokio::spawn(async move {
            let open = async {
                if let Some(discovered) = this.discovered(&target).await? {
                    let init = stateless::init_result(&discovered, stateless::VERSION);
                    return Ok(Session::stateless(target.revision, init, None));
                }
                let id = this.next_id.fetch_add(1, Ordering::Relaxed);
                let body = initialize_body(id, CLIENT_PROTOCOL_VERSION, json!({}));
                this.initialize_once(&target, &body, id).await
            };
            let opened = tokio::time::timeout(LIST_TIMEOUT, open)
                .await
                .map_err(|_| UpstreamError::Timeout)
                .and_then(|opened| opened.map(Arc::new));
            if let Ok(session) = &opened {
                let mut sessions = this.sessions.lock().await;
                make_room(&mut sessions, &key, |s| s.used);
                let used = Instant::now();
                let session = session.clone();
                sessions.insert(key.clone(), Shared { session, used });
            }
            let mut setting_up = this.setting_up.lock().unwrap_or_else(|e| e.into_inner());
            setting_up.remove(&(key, target.revision));
            opened
        });
        let joined = async move {
            task.await.unwrap_or_else(|e| {
                Err(UpstreamError::Protocol(format!(
                    "session set-up failed: {e}"
                )))
            })
        };
        joined.boxed().shared()
    }

    /// What the connection's upstream speaks: its `server/discover` result when it speaks
    /// the stateless revision, `None` for a session revision (probed once per connection
    /// revision, again after [`SHARED_SESSION_IDLE`]; a failed probe is not kept).
    async fn discovered(&self, target: &Target) -> Result<Option<Value>, UpstreamError> {
        let key = &target.connection_id;
        if let Some(d) = self.discovered.lock().await.get_mut(key)
            && d.revision == target.revision
            && d.used.elapsed() < SHARED_SESSION_IDLE
        {
            d.used = Instant::now();
            return Ok(d.result.clone());
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let probe = Session::stateless(target.revision, Value::Null, None);
        let outcome = async {
            let response = build(
                &self.http,
                target,
                Some(&probe),
                &stateless::discover_body(id),
            )
            .send()
            .await
            .map_err(|e| UpstreamError::Unreachable(describe(&e)))?;
            read_response(response, Some(id), None)
                .await
                .map_err(PostError::into_upstream)
        };
        let result = stateless::speaks(outcome.await)?;
        let mut discovered = self.discovered.lock().await;
        make_room(&mut discovered, key, |d| d.used);
        let found = Discovered {
            revision: target.revision,
            result: result.clone(),
            used: Instant::now(),
        };
        discovered.insert(key.clone(), found);
        Ok(result)
    }

    /// Opens a session-revision session: `initialize` (`body`, with id `id`), then
    /// `notifications/initialized`.
    async fn initialize_once(
        &self,
        target: &Target,
        body: &Value,
        id: u64,
    ) -> Result<Session, UpstreamError> {
        let response = build(&self.http, target, None, body)
            .send()
            .await
            .map_err(|e| UpstreamError::Unreachable(describe(&e)))?;
        let session_id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let reply = read_response(response, Some(id), None)
            .await
            .map_err(PostError::into_upstream)?
            .unwrap_or(Value::Null);
        let init_result = reply.get("result").cloned().ok_or_else(|| {
            UpstreamError::Protocol(format!("initialize failed: {}", reply["error"]))
        })?;
        let protocol_version = init_result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(CLIENT_PROTOCOL_VERSION)
            .to_string();
        let session = Session {
            revision: target.revision,
            id: session_id,
            protocol_version,
            init_result,
            client: None,
            envelope: None,
            log_level: std::sync::Mutex::new(None),
        };
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        build(&self.http, target, Some(&session), &initialized)
            .send()
            .await
            .map_err(|e| UpstreamError::Unreachable(describe(&e)))?;
        Ok(session)
    }

    async fn post(
        &self,
        target: &Target,
        session: Option<&Session>,
        body: &Value,
        id: Option<u64>,
    ) -> Result<Option<Value>, PostError> {
        let response = send(&self.http, target, session, body).await?;
        read_response(response, id, Some((self, target))).await
    }

    /// Sends the client's answer (a JSON-RPC response carrying the upstream's id) to the
    /// target's upstream session.
    pub async fn answer(&self, target: &Target, message: &Value) -> Result<(), UpstreamError> {
        send_answer(&self.http, target, message).await
    }

    /// Relays a request the upstream sent (on a stream or in an answer) to the target's
    /// client under an id of the proxy's own, bounded by the session's [`ServerRequests`].
    /// A request that cannot be relayed (no client to ask, too many awaiting it, the client
    /// of an answer's stream gone) is answered with an error; one the client does not
    /// answer in time, with a timeout error.
    async fn relay_request(&self, target: &Target, mut message: Value) {
        let upstream_id = message["id"].clone();
        let session = target.session.as_ref();
        let client = session.and_then(|s| s.client.as_ref());
        let (Some(session), Some(client), Some(relay)) = (session, client, &target.relay) else {
            let why = "the client cannot be asked here: requests reach a client in a session \
                       (Mcp-Session-Id) on its event streams";
            refuse(&self.http, target, upstream_id, INTERNAL_ERROR, why);
            return;
        };
        let id = match client
            .requests
            .register(Asker::Upstream(upstream_id.clone()))
        {
            Ok(id) => id,
            Err(TooMany) => {
                let why = format!(
                    "too many requests await this client's answer (at most {})",
                    client.requests.bounds().pending
                );
                refuse(&self.http, target, upstream_id, INTERNAL_ERROR, &why);
                return;
            }
        };
        message["id"] = json!(id);
        let timeout = client.requests.bounds().timeout;
        let timer = self.answer_late(target, Arc::downgrade(session), id, timeout);
        client.requests.set_timer(id, timer);
        // A journaled stream keeps the request for a client that resumes; otherwise a client
        // gone cannot answer it.
        if relay.send(message).await.is_err()
            && !relay.is_journaled()
            && let Some(Asker::Upstream(upstream_id)) = client.requests.take(&json!(id))
        {
            let why = "the client left before the request reached it";
            refuse(&self.http, target, upstream_id, INTERNAL_ERROR, why);
        }
    }

    /// The timer of relayed request `id`: when the client has not answered within the
    /// session's timeout, the upstream gets a timeout error.
    fn answer_late(
        &self,
        target: &Target,
        session: Weak<Session>,
        id: u64,
        timeout: Duration,
    ) -> tokio_util::task::AbortOnDropHandle<()> {
        let (http, target) = (self.http.clone(), target.clone());
        // The target holds no session (it holds the timer) nor relay (the client's stream).
        let target = Target {
            session: None,
            relay: None,
            ..target
        };
        tokio_util::task::AbortOnDropHandle::new(tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let Some(session) = session.upgrade() else {
                return;
            };
            let expired = session.client.as_ref().and_then(|c| c.requests.expire(id));
            let Some(Asker::Upstream(upstream_id)) = expired else {
                return;
            };
            let why = format!(
                "Request timed out: the client did not answer within {} ms",
                timeout.as_millis()
            );
            let target = Target {
                session: Some(session),
                ..target
            };
            refuse(&http, &target, upstream_id, REQUEST_TIMEOUT, &why);
        }))
    }

    /// Opens the server-to-client stream of the target's own upstream session (HTTP GET
    /// accepting `text/event-stream`); [`Self::relay_events`] then reads it.
    pub async fn listen(&self, target: &Target) -> Result<reqwest::Response, UpstreamError> {
        let session = target
            .session
            .as_deref()
            .ok_or(UpstreamError::SessionExpired)?;
        // The stateless revision has no server-to-client stream.
        if session.is_stateless() {
            return Err(UpstreamError::NoStream);
        }
        let mut headers = session_headers(target, Some(session));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let request = self.http.get(&target.url).headers(headers);
        let response = tokio::time::timeout(LIST_TIMEOUT, request.send())
            .await
            .map_err(|_| UpstreamError::Timeout)?
            .map_err(|e| UpstreamError::Unreachable(describe(&e)))?;
        match response.status() {
            reqwest::StatusCode::METHOD_NOT_ALLOWED => Err(UpstreamError::NoStream),
            reqwest::StatusCode::NOT_FOUND => Err(UpstreamError::SessionExpired),
            status if status.is_success() && is_event_stream(&response) => Ok(response),
            status => Err(UpstreamError::Unreachable(format!(
                "upstream answered the stream request with HTTP {}",
                status.as_u16()
            ))),
        }
    }

    /// Relays what an upstream session's GET stream (from [`Upstream::listen`]) sends into
    /// the target's relay until the stream ends; an event larger than
    /// `MAX_RESPONSE_BYTES` (16 MiB) or a broken connection ends it with an error.
    pub async fn relay_events(
        &self,
        target: &Target,
        response: reqwest::Response,
    ) -> Result<(), UpstreamError> {
        read_events(response.bytes_stream(), None, Some((self, target)))
            .await
            .map(|_| ())
            .map_err(PostError::into_upstream)
    }
}

/// POSTs `body` in `session`; an upstream that no longer knows the session is
/// [`PostError::SessionGone`].
async fn send(
    http: &reqwest::Client,
    target: &Target,
    session: Option<&Session>,
    body: &Value,
) -> Result<reqwest::Response, PostError> {
    let response = build(http, target, session, body)
        .send()
        .await
        .map_err(|e| PostError::Failed(UpstreamError::Unreachable(describe(&e))))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND
        && session.is_some_and(|s| s.id.is_some())
    {
        return Err(PostError::SessionGone);
    }
    Ok(response)
}

/// Sends a JSON-RPC response to the target's upstream session (10 s at most).
async fn send_answer(
    http: &reqwest::Client,
    target: &Target,
    message: &Value,
) -> Result<(), UpstreamError> {
    let sent = async {
        let response = send(http, target, target.session.as_deref(), message).await?;
        read_response(response, None, None).await
    };
    match tokio::time::timeout(Duration::from_secs(10), sent).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(PostError::SessionGone)) => Err(UpstreamError::SessionExpired),
        Ok(Err(PostError::Failed(error))) => Err(error),
        Err(_) => Err(UpstreamError::Timeout),
    }
}

/// Answers the upstream's request `upstream_id` with an error, in the background.
fn refuse(http: &reqwest::Client, target: &Target, upstream_id: Value, code: i64, why: &str) {
    let (http, target) = (http.clone(), target.clone());
    let error = jsonrpc::error(upstream_id, code, why);
    tokio::spawn(async move {
        if let Err(error) = send_answer(&http, &target, &error).await {
            tracing::debug!(%error, "could not answer the upstream's request");
        }
    });
}

/// The `initialize` request the service sends upstream.
fn initialize_body(id: u64, protocol_version: &str, capabilities: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": protocol_version,
            "capabilities": capabilities,
            "clientInfo": { "name": "sitefile-workspace", "version": env!("CARGO_PKG_VERSION") },
        },
    })
}

/// Makes room in a bounded cache for `key`: at [`MAX_SHARED_SESSIONS`] entries, those idle
/// for [`SHARED_SESSION_IDLE`] go, then the least recently used one.
fn make_room<K: Clone + Eq + std::hash::Hash, V>(
    map: &mut HashMap<K, V>,
    key: &K,
    used: impl Fn(&V) -> Instant,
) {
    if map.len() < MAX_SHARED_SESSIONS || map.contains_key(key) {
        return;
    }
    map.retain(|_, v| used(v).elapsed() < SHARED_SESSION_IDLE);
    let oldest = map
        .iter()
        .min_by_key(|(_, v)| used(v))
        .map(|(k, _)| k.clone());
    if let Some(oldest) = oldest {
        map.remove(&oldest);
    }
}

impl Session {
    /// The stateless stand-in for a session: `init_result` as its `initialize` result,
    /// `envelope` for its requests.
    fn stateless(revision: i64, init_result: Value, envelope: Option<Value>) -> Session {
        Session {
            revision,
            id: None,
            protocol_version: stateless::VERSION.to_string(),
            init_result,
            client: None,
            envelope,
            log_level: std::sync::Mutex::new(None),
        }
    }

    /// Whether the upstream is spoken to statelessly.
    fn is_stateless(&self) -> bool {
        self.protocol_version == stateless::VERSION
    }

    /// The `initialize` result the upstream answered.
    pub fn init_result(&self) -> &Value {
        &self.init_result
    }

    /// What the proxy keeps for the session's downstream client (none for the
    /// connection's shared session).
    pub fn client(&self) -> Option<&ClientSide> {
        self.client.as_ref()
    }

    /// Whether this is a downstream session translated for a stateless upstream.
    pub fn is_translated(&self) -> bool {
        self.is_stateless() && self.client.is_some()
    }

    /// Keeps the log `level` a translated session's client set, for its later requests.
    pub fn set_log_level(&self, level: Value) {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
    }

    /// The envelope of a translated session's next request: what its client declared, and
    /// the log level it set.
    fn request_envelope(&self) -> Option<Value> {
        let mut envelope = self.envelope.clone()?;
        let level = self.log_level.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(level), Some(object)) = (level.as_ref(), envelope.as_object_mut()) {
            object.insert(stateless::LOG_LEVEL_KEY.into(), level.clone());
        }
        Some(envelope)
    }
}

/// A POST failure, or a session the upstream no longer knows.
enum PostError {
    SessionGone,
    Failed(UpstreamError),
}

impl PostError {
    fn into_upstream(self) -> UpstreamError {
        match self {
            Self::SessionGone => UpstreamError::Protocol("upstream session lost".into()),
            Self::Failed(e) => e,
        }
    }
}

/// A POST of `body` with the connection's headers and the session's headers.
fn build(
    http: &reqwest::Client,
    target: &Target,
    session: Option<&Session>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut headers = session_headers(target, session);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    match session.filter(|s| s.is_stateless()) {
        Some(session) => {
            let envelope = target
                .envelope
                .clone()
                .or_else(|| session.request_envelope());
            let body = stateless::stamp(body, envelope.as_ref());
            headers.extend(stateless::headers(&body));
            http.post(&target.url).headers(headers).json(&body)
        }
        None => http.post(&target.url).headers(headers).json(body),
    }
}

/// The session's headers (`Mcp-Session-Id`, `Mcp-Protocol-Version`), then the
/// connection's (credentials, custom headers).
fn session_headers(target: &Target, session: Option<&Session>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(session) = session {
        if let Some(id) = session
            .id
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            headers.insert(HeaderName::from_static("mcp-session-id"), id);
        }
        if let Ok(v) = HeaderValue::from_str(&session.protocol_version) {
            headers.insert(HeaderName::from_static("mcp-protocol-version"), v);
        }
    }
    for (name, value) in &target.headers {
        headers.insert(name.clone(), value.clone());
    }
    headers
}

/// Whether an answer is an event stream.
fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Reads a JSON or SSE answer; with `id`, the JSON-RPC response carrying it. What an SSE
/// answer sends to the client before it goes to the relay of `to`'s target.
async fn read_response(
    response: reqwest::Response,
    id: Option<u64>,
    to: Option<(&Upstream, &Target)>,
) -> Result<Option<Value>, PostError> {
    let status = response.status();
    if status.is_redirection() {
        return Err(PostError::Failed(UpstreamError::Unreachable(format!(
            "upstream answered a redirect (HTTP {}); redirects are not followed",
            status.as_u16()
        ))));
    }
    if status.is_server_error() {
        return Err(PostError::Failed(UpstreamError::Unreachable(format!(
            "upstream answered HTTP {}",
            status.as_u16()
        ))));
    }
    if status == reqwest::StatusCode::ACCEPTED || id.is_none() {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(PostError::Failed(refused(response).await));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_large());
    }
    let is_sse = is_event_stream(&response);
    let mut stream = response.bytes_stream();
    if is_sse {
        return read_events(stream, id, to).await;
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(failed)?;
        if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        PostError::Failed(UpstreamError::Protocol(format!(
            "invalid JSON from upstream: {e}"
        )))
    })?;
    Ok(Some(value))
}

/// The failure an upstream's 4xx answer means: its JSON-RPC error when the body holds one
/// (read up to [`MAX_ERROR_BYTES`]), else a protocol error naming the status.
async fn refused(response: reqwest::Response) -> UpstreamError {
    let status = response.status().as_u16();
    let plain = || UpstreamError::Status(status);
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(Ok(chunk)) = stream.next().await {
        if bytes.len() + chunk.len() > MAX_ERROR_BYTES {
            return plain();
        }
        bytes.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(body) if body["error"]["code"].is_i64() && body["error"]["message"].is_string() => {
            UpstreamError::Refused {
                status,
                error: body["error"].clone(),
            }
        }
        _ => plain(),
    }
}

/// Reads an upstream event stream. With `id` (the answer to a POST): returns the JSON-RPC
/// response carrying it, at most [`MAX_RESPONSE_BYTES`] read in all. Without (a GET
/// stream): reads to the end, at most [`MAX_RESPONSE_BYTES`] per event. Notifications go
/// to the relay of `to`'s target, requests to [`Upstream::relay_request`]; anything else
/// (responses not awaited) is read past.
async fn read_events(
    mut stream: impl Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
    id: Option<u64>,
    to: Option<(&Upstream, &Target)>,
) -> Result<Option<Value>, PostError> {
    let mut parser = SseParser::default();
    let mut received = 0usize;
    loop {
        let next = stream.next().await;
        let ended = next.is_none();
        let events = match next {
            Some(chunk) => {
                let chunk = chunk.map_err(failed)?;
                received += chunk.len();
                if received > MAX_RESPONSE_BYTES {
                    return Err(too_large());
                }
                parser.push(&chunk)
            }
            None => parser.finish().into_iter().collect(),
        };
        if id.is_none() && !events.is_empty() {
            received = 0;
        }
        for data in events {
            let Ok(message) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            // A request of the upstream's own may carry the same id: a response has no method.
            if id.is_some()
                && message.get("method").is_none()
                && message.get("id").and_then(Value::as_u64) == id
            {
                return Ok(Some(message));
            }
            let Some((upstream, target)) = to else {
                continue;
            };
            if message.get("method").is_none() {
                continue;
            }
            if message.get("id").is_some() {
                upstream.relay_request(target, message).await;
            } else if let Some(relay) = &target.relay
                && stateless::delivers(target.envelope.as_ref(), &message)
            {
                let message = cancelled_for_client(target, message);
                // A receiver gone means the client left; its request is being dropped.
                let _ = relay.send(message).await;
            }
        }
        if ended {
            return match id {
                Some(_) => Err(PostError::Failed(UpstreamError::Protocol(
                    "upstream stream ended without a response".into(),
                ))),
                None => Ok(None),
            };
        }
    }
}

/// The upstream's notification as the client must read it: a `notifications/cancelled`
/// naming a request relayed to the client names it by the id the client knows (and the
/// request no longer awaits an answer).
fn cancelled_for_client(target: &Target, mut message: Value) -> Value {
    if message["method"] != "notifications/cancelled" {
        return message;
    }
    let client = target.session.as_deref().and_then(Session::client);
    if let Some(client) = client
        && let Some(id) = client.requests.cancel(&message["params"]["requestId"])
    {
        message["params"]["requestId"] = json!(id);
    }
    message
}

/// A transport failure while reading an answer.
fn failed(error: reqwest::Error) -> PostError {
    PostError::Failed(UpstreamError::Unreachable(describe(&error)))
}

/// An answer over [`MAX_RESPONSE_BYTES`].
fn too_large() -> PostError {
    PostError::Failed(UpstreamError::Protocol(format!(
        "upstream response larger than {} MiB",
        MAX_RESPONSE_BYTES / (1024 * 1024)
    )))
}

/// A short description of a transport error, without URLs' credentials.
fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_connect() {
        "connection failed".to_string()
    } else if error.is_timeout() {
        "timed out".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text = format!("{text}: {inner}");
        source = inner.source();
    }
    text
}

/// Builds the upstream headers: bearer token first, then custom headers (last wins).
pub fn upstream_headers(
    token: Option<&str>,
    custom: &[(String, String)],
    request_id: &str,
) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(request_id) {
        headers.insert(HeaderName::from_static("x-request-id"), v);
    }
    if let Some(token) = token
        && let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {token}"))
    {
        v.set_sensitive(true);
        headers.insert(AUTHORIZATION, v);
    }
    for (name, value) in custom {
        if let (Ok(n), Ok(mut v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            v.set_sensitive(true);
            headers.insert(n, v);
        }
    }
    headers
}
