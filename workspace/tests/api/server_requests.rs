//! Requests an upstream sends the client through the connection proxy, the client's answers
//! going back, their bounds, and resuming the session stream with `Last-Event-ID`.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Api, Backend};
use crate::mcp_double::{self, McpDouble};

both_backends!(
    proxy_relays_server_requests,
    proxy_resumes_the_session_stream
);

/// The events of an SSE body as they arrive: `(id, data)` of each event with data.
struct Events {
    stream: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self {
            stream: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event with data (keep-alive comments skipped).
    async fn next(&mut self) -> (Option<String>, Value) {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let id = event
                    .lines()
                    .find_map(|l| l.strip_prefix("id: "))
                    .map(str::to_string);
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return (id, serde_json::from_str(data).unwrap());
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(20), self.stream.next())
                .await
                .expect("an event within 20 s")
                .expect("the stream stays open")
                .unwrap();
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// `initialize` on `path` with `key`, declaring `capabilities`; the session id.
async fn open(api: &Api, path: &str, key: &str, capabilities: Value) -> String {
    let message = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": { "name": "t", "version": "1" } } });
    let (status, headers, body) = api.rpc(path, Some(key), message).await;
    assert_eq!(status, 200, "{body}");
    headers["mcp-session-id"].to_str().unwrap().to_string()
}

/// POSTs the double's `ask` tool call (`count` requests) in `session`, accepting `accept`.
async fn ask(api: &Api, path: &str, session: &str, count: u64, accept: &str) -> reqwest::Response {
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": "ask", "arguments": { "count": count } } });
    api.client
        .post(format!("{}{path}", api.base))
        .bearer_auth(&api.owner)
        .header("accept", accept)
        .header("mcp-session-id", session)
        .json(&call)
        .send()
        .await
        .unwrap()
}

/// POSTs the client's answer `{ id, result }` in `session` with `key`: the status and body.
async fn answer(
    api: &Api,
    path: &str,
    key: &str,
    session: &str,
    id: &Value,
    result: Value,
) -> (u16, Value) {
    let message = json!({ "jsonrpc": "2.0", "id": id, "result": result });
    let response = api
        .client
        .post(format!("{}{path}", api.base))
        .bearer_auth(key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .json(&message)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The answers the double's `ask` tool lists in its result.
fn answers_in(result: &Value) -> Vec<Value> {
    assert_eq!(result["id"], 7, "{result}");
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

/// The upstream's request ids are `<its call id>-<n>`: the `n`th of the call.
fn nth(answer: &Value) -> &str {
    answer["id"].as_str().unwrap().rsplit('-').next().unwrap()
}

async fn proxy_relays_server_requests(backend: Backend) {
    let api = Api::start_with(backend, |c| {
        c.mcp_sessions.requests.pending = 2;
        c.mcp_sessions.requests.timeout = Duration::from_millis(300);
    })
    .await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("ask"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");

    // The client's sampling, elicitation and roots capabilities are declared upstream;
    // what the proxy does not relay is not.
    let declared = json!({ "sampling": {}, "elicitation": { "form": {} },
        "roots": { "listChanged": true }, "tasks": { "list": {} }, "experimental": { "x": {} } });
    let s1 = open(&api, &path, &api.owner, declared).await;
    assert_eq!(
        upstream.asked_capabilities().last().unwrap(),
        &json!({ "sampling": {}, "elicitation": { "form": {} }, "roots": { "listChanged": true } })
    );
    let s2 = open(&api, &path, &api.owner, json!({ "sampling": {} })).await;

    // A request in a call's event stream reaches the client under the proxy's own id; the
    // client's answer reaches the upstream under the upstream's id, result whole.
    let mut events =
        Events::new(ask(&api, &path, &s1, 1, "application/json, text/event-stream").await);
    let (_, request) = events.next().await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 10);
    let relayed = request["id"].clone();
    assert!(relayed.is_u64(), "the proxy's own id: {relayed}");
    // Not another session's, not another key's, not an id never sent.
    let sampled = json!({ "role": "assistant", "model": "m",
        "content": { "type": "text", "text": "sampled" } });
    let (status, body) = answer(&api, &path, &api.owner, &s2, &relayed, sampled.clone()).await;
    assert_eq!(status, 400, "another session's request: {body}");
    assert_eq!(body["error"]["code"], -32600);
    let (_, other) = api.key(json!({ conn.clone(): ["*"] })).await;
    let (status, _) = answer(&api, &path, &other, &s1, &relayed, sampled.clone()).await;
    assert_eq!(status, 404, "another key's session");
    let (status, _) = answer(&api, &path, &api.owner, &s1, &json!(u64::MAX), json!({})).await;
    assert_eq!(status, 400, "an id never sent");
    let (status, _) = answer(&api, &path, &api.owner, &s1, &relayed, sampled.clone()).await;
    assert_eq!(status, 202);
    let (_, result) = events.next().await;
    let answers = answers_in(&result);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["result"], sampled);
    assert_eq!(nth(&answers[0]), "1");
    let (status, _) = answer(&api, &path, &api.owner, &s1, &relayed, sampled.clone()).await;
    assert_eq!(status, 400, "answered already");

    // At most 2 requests await the client: the third is answered upstream with an error.
    let mut events =
        Events::new(ask(&api, &path, &s1, 3, "application/json, text/event-stream").await);
    let (_, first) = events.next().await;
    let (_, second) = events.next().await;
    for request in [&first, &second] {
        let (status, _) = answer(
            &api,
            &path,
            &api.owner,
            &s1,
            &request["id"],
            sampled.clone(),
        )
        .await;
        assert_eq!(status, 202);
    }
    let (_, result) = events.next().await;
    let mut answers = answers_in(&result);
    answers.sort_by(|a, b| nth(a).cmp(nth(b)));
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["result"], sampled);
    assert_eq!(answers[1]["result"], sampled);
    assert_eq!(answers[2]["error"]["code"], -32603);
    let message = answers[2]["error"]["message"].as_str().unwrap();
    assert!(message.contains("too many requests"), "{message}");

    // A request the client leaves unanswered gets a timeout error upstream; a late answer
    // is refused.
    let mut events =
        Events::new(ask(&api, &path, &s2, 1, "application/json, text/event-stream").await);
    let (_, request) = events.next().await;
    let (_, result) = events.next().await;
    let answers = answers_in(&result);
    assert_eq!(answers[0]["error"]["code"], -32001, "{answers:?}");
    let (status, _) = answer(
        &api,
        &path,
        &api.owner,
        &s2,
        &request["id"],
        sampled.clone(),
    )
    .await;
    assert_eq!(status, 400, "timed out");

    // A request the upstream cancels is cancelled under the id the client knows, and no
    // longer awaits an answer.
    let call = json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": { "name": "ask_cancel", "arguments": {} } });
    let cancelling = api
        .client
        .post(format!("{}{path}", api.base))
        .bearer_auth(&api.owner)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &s1)
        .json(&call)
        .send()
        .await
        .unwrap();
    let mut events = Events::new(cancelling);
    let (_, request) = events.next().await;
    assert_eq!(request["method"], "elicitation/create");
    let (_, cancelled) = events.next().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    assert_eq!(events.next().await.1["id"], 8);
    let (status, _) = answer(&api, &path, &api.owner, &s1, &request["id"], json!({})).await;
    assert_eq!(status, 400, "cancelled");

    // The session's notifications reach its upstream session; `initialized` was sent when
    // it was opened and is not sent again.
    let changed = json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" });
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    for notification in [initialized, changed] {
        let response = api
            .client
            .post(format!("{}{path}", api.base))
            .bearer_auth(&api.owner)
            .header("mcp-session-id", &s1)
            .json(&notification)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 202);
    }
    let mut forwarded = Vec::new();
    for _ in 0..100 {
        forwarded = upstream.notifications();
        if forwarded.contains(&"notifications/roots/list_changed".to_string()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let count = |method: &str| forwarded.iter().filter(|m| *m == method).count();
    assert_eq!(
        count("notifications/roots/list_changed"),
        1,
        "{forwarded:?}"
    );
    assert_eq!(
        count("notifications/initialized"),
        3,
        "one per upstream session: the two sessions', and the key's shared one, where the \
         tool listing that validates arguments is made: {forwarded:?}"
    );

    // A client taking JSON only cannot be asked: the upstream gets an error at once.
    let plain = ask(&api, &path, &s1, 1, "application/json").await;
    assert_eq!(plain.headers()["content-type"], "application/json");
    let answers = answers_in(&plain.json().await.unwrap());
    assert_eq!(answers[0]["error"]["code"], -32603, "{answers:?}");
}

/// The answers `upstream` received for its request `id`.
async fn answered(upstream: &McpDouble, id: &str) -> Vec<Value> {
    for _ in 0..100 {
        let answers: Vec<Value> = upstream
            .answers()
            .into_iter()
            .filter(|a| a["id"] == id)
            .collect();
        if !answers.is_empty() {
            return answers;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Vec::new()
}

async fn proxy_resumes_the_session_stream(backend: Backend) {
    let api = Api::start_with(backend, |c| {
        c.keepalive = Duration::from_millis(50);
        c.mcp_sessions.journal.events = 2;
    })
    .await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("stream"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    let url = format!("{}{path}", api.base);
    let session = open(&api, &path, &api.owner, json!({ "roots": {} })).await;
    let listen = |last_event_id: Option<&str>| {
        let mut request = api
            .client
            .get(&url)
            .bearer_auth(&api.owner)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        request.send()
    };

    // The session stream numbers its events; the upstream's request on it reaches the
    // client, whose answer reaches the upstream.
    let mut stream = Events::new(listen(None).await.unwrap());
    let (id1, message) = stream.next().await;
    assert_eq!(message["method"], "notifications/message");
    let (id2, request) = stream.next().await;
    assert_eq!(request["method"], "roots/list");
    assert_eq!((id1.as_deref(), id2.as_deref()), (Some("1"), Some("2")));
    let roots = json!({ "roots": [{ "uri": "file:///work", "name": "work" }] });
    let (status, _) = answer(
        &api,
        &path,
        &api.owner,
        &session,
        &request["id"],
        roots.clone(),
    )
    .await;
    assert_eq!(status, 202);
    let answers = answered(&upstream, "r1").await;
    assert_eq!(
        answers,
        vec![json!({ "jsonrpc": "2.0", "id": "r1", "result": roots })]
    );
    drop(stream);

    // Resuming after event 1 replays event 2 (same id, same message), then goes on live.
    let mut resumed = Events::new(listen(Some("1")).await.unwrap());
    assert_eq!(resumed.next().await, (id2, request));
    let (id3, live) = resumed.next().await;
    assert_eq!(id3.as_deref(), Some("3"));
    assert_eq!(live["method"], "notifications/message");
    let (id4, _) = resumed.next().await;
    assert_eq!(id4.as_deref(), Some("4"));
    drop(resumed);

    // Only the last 2 events are kept: resuming after 1 is refused with 409; an id never
    // sent is 400.
    let gone = listen(Some("1")).await.unwrap();
    assert_eq!(gone.status(), 409);
    let body: Value = gone.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("no longer held"), "{message}");
    assert_eq!(listen(Some("99")).await.unwrap().status(), 400);
    assert_eq!(listen(Some("x")).await.unwrap().status(), 400);
    let resumed = Events::new(listen(Some("4")).await.unwrap());
    drop(resumed);
}
