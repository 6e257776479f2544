//! Upstreams of the stateless MCP revision (2026-07-28) behind the proxy and the gateway: the
//! revision an upstream speaks is found out once, every request to it carries the revision's
//! envelope and headers, session clients are translated, multi round-trip requests pass
//! through authorized like the first call, and progress reaches gateway clients.

use std::time::Duration;

use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Api, Backend, call, read_chunks, request};
use crate::mcp_double;
use crate::modern::{VERSION, enveloped, headers_for, modern};

both_backends!(
    a_stateless_upstream_is_spoken_to_statelessly,
    a_session_client_is_translated_for_a_stateless_upstream,
    multi_round_trip_calls_pass_through,
    a_dual_upstream_keeps_sessions_for_session_clients,
    the_gateway_serves_a_stateless_member_and_relays_progress,
    two_servers_serve_stateless_clients_without_affinity,
    a_client_leaving_mid_question_leaves_nothing_waiting
);

/// The JSON-RPC messages of an event-stream answer, one at a time.
struct Events {
    stream:
        std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        Events {
            stream: Box::pin(response.bytes_stream()),
            buffer: String::new(),
        }
    }

    /// The next message (10 s at most).
    async fn next(&mut self) -> Value {
        use futures_util::StreamExt;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return serde_json::from_str(data).unwrap();
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.stream.next()).await;
            let Ok(Some(Ok(bytes))) = chunk else {
                panic!("the stream ended early: {}", self.buffer)
            };
            self.buffer.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
}

/// A server with a connection to the double's `mode`: the server, the double, the
/// connection's id and its proxy path.
async fn on_mode(backend: Backend, mode: &str) -> (Api, mcp_double::McpDouble, String, String) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url(mode), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    (api, upstream, conn, path)
}

/// Calls the double's `confirm` tool in `session`, taking an event stream; its messages.
async fn confirm_in_session(api: &Api, path: &str, session: &str) -> Events {
    let response = reqwest::Client::new()
        .post(format!("{}{path}", api.base))
        .bearer_auth(&api.owner)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .json(&call("confirm", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    Events::new(response)
}

/// The header `name` of the last tool call the double saw.
fn last_header(upstream: &mcp_double::McpDouble, name: &str) -> Option<String> {
    upstream.last_header(name)
}

async fn a_stateless_upstream_is_spoken_to_statelessly(backend: Backend) {
    let (api, upstream, _, path) = on_mode(backend, "modern").await;

    // A session-revision caller without a session: answered in its revision.
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), request("tools/list"))
        .await;
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    assert_eq!(result["tools"][0]["name"], "echo");
    for stamp in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(
            result.get(stamp).is_none(),
            "{stamp} in a 2025 answer: {body}"
        );
    }
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), call("echo", json!({"text": "hi"})))
        .await;
    assert_eq!(
        (status, &body["result"]["content"][0]["text"]),
        (200, &json!("hi")),
        "{body}"
    );
    assert_eq!(
        last_header(&upstream, "mcp-method").as_deref(),
        Some("tools/call")
    );
    assert_eq!(last_header(&upstream, "mcp-name").as_deref(), Some("echo"));
    assert_eq!(
        last_header(&upstream, "mcp-protocol-version").as_deref(),
        Some(VERSION)
    );
    assert!(last_header(&upstream, "mcp-session-id").is_none());
    let meta = upstream.last_params()["_meta"].clone();
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], VERSION);
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "sitefile-workspace"
    );

    // A name outside ASCII travels in the header in Base64 (the double decodes it).
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), call("héllo", json!({})))
        .await;
    assert_eq!(
        (status, &body["result"]["content"][0]["text"]),
        (200, &json!("hello")),
        "{body}"
    );

    // A stateless client: its envelope goes on, the upstream's cache hints come back.
    let (status, body) = modern(&api, &path, &api.owner, request("tools/list")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(
        (&body["result"]["ttlMs"], &body["result"]["cacheScope"]),
        (&json!(60000), &json!("public"))
    );
    let message = enveloped(call("envelope", json!({})), VERSION);
    let mut headers = headers_for(&message);
    headers.push(("mcp-param-region", "eu".into()));
    let (status, _, body) = api
        .rpc_with(&path, Some(&api.owner), &message, &headers)
        .await;
    assert_eq!(status, 200, "{body}");
    // A tool parameter the client put in a header goes on as it is.
    assert_eq!(
        last_header(&upstream, "mcp-param-region").as_deref(),
        Some("eu")
    );
    let seen: Value =
        serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen["io.modelcontextprotocol/clientInfo"]["name"], "test");
    let (status, body) = modern(&api, &path, &api.owner, request("server/discover")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["instructions"], "stateless double");
    assert_eq!(body["result"]["capabilities"]["prompts"], json!({}));

    // One probe for all of it, and nothing of a session revision.
    assert_eq!(upstream.stateless("server/discover"), 1);
    assert!(upstream.seen.lock().unwrap().asked_versions.is_empty());
}

async fn a_session_client_is_translated_for_a_stateless_upstream(backend: Backend) {
    let (api, _, _, path) = on_mode(backend, "modern").await;
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "session client", "version": "3" } } });
    let (status, headers, body) = api.rpc(&path, Some(&api.owner), initialize).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(body["result"]["serverInfo"]["name"], "stateless double");
    assert_eq!(body["result"]["instructions"], "stateless double");
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    let in_session = [
        ("mcp-session-id", session.clone()),
        ("mcp-protocol-version", "2025-06-18".into()),
    ];
    // The stateless revision has no logging/setLevel: the level goes with each request.
    let set_level = json!({ "jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
        "params": { "level": "debug" } });
    let (status, _, body) = api
        .rpc_with(&path, Some(&api.owner), &set_level, &in_session)
        .await;
    assert_eq!((status, &body["result"]), (200, &json!({})), "{body}");
    let (status, _, body) = api
        .rpc_with(
            &path,
            Some(&api.owner),
            &call("envelope", json!({})),
            &in_session,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let seen: Value =
        serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        seen["io.modelcontextprotocol/clientInfo"]["name"],
        "session client"
    );
    assert_eq!(
        seen["io.modelcontextprotocol/clientCapabilities"]["elicitation"],
        json!({})
    );
    assert_eq!(seen["io.modelcontextprotocol/logLevel"], "debug");
    // The upstream's multi round-trip request reaches the client as a request on the call's
    // stream; its answer, POSTed to the session, goes back as the retry's inputResponses.
    let mut events = confirm_in_session(&api, &path, &session).await;
    let asked = events.next().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "Proceed?");
    let answer = json!({ "jsonrpc": "2.0", "id": asked["id"],
        "result": { "action": "accept", "content": { "ok": true } } });
    let (status, _, body) = api
        .rpc_with(&path, Some(&api.owner), &answer, &in_session)
        .await;
    assert_eq!(status, 202, "{body}");
    let done = events.next().await;
    assert_eq!(
        done["result"]["content"][0]["text"], "confirmed: true",
        "{done}"
    );
    assert!(
        done["result"].get("resultType").is_none(),
        "a 2025 answer: {done}"
    );

    // The stateless revision has no server-to-client stream: 405, as MCP allows.
    let response = reqwest::Client::new()
        .get(format!("{}{path}", api.base))
        .bearer_auth(&api.owner)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
}

async fn multi_round_trip_calls_pass_through(backend: Backend) {
    let (api, upstream, conn, path) = on_mode(backend, "modern").await;
    let (status, body) = modern(&api, &path, &api.owner, call("confirm", json!({}))).await;
    assert_eq!(status, 200, "{body}");
    let asked = &body["result"];
    assert_eq!(asked["resultType"], "input_required", "{body}");
    assert_eq!(asked["inputRequests"]["ok"]["method"], "elicitation/create");
    assert!(
        asked.get("ttlMs").is_none(),
        "no cache hints on input_required: {body}"
    );
    let mut retry = call("confirm", json!({}));
    retry["params"]["inputResponses"] =
        json!({ "ok": { "action": "accept", "content": { "ok": true } } });
    retry["params"]["requestState"] = asked["requestState"].clone();
    let (status, body) = modern(&api, &path, &api.owner, retry.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"], "confirmed: true",
        "{body}"
    );
    // A session-revision caller cannot be asked: a clear error, not an empty result.
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), call("confirm", json!({})))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    // The retry is authorized like the first call: a key without the tool is refused it.
    let (_, narrow) = api.key(json!({ conn.clone(): ["echo"] })).await;
    let (status, body) = modern(&api, &path, &narrow, retry).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        upstream.calls().iter().filter(|c| *c == "confirm").count(),
        3
    );
    // The audit log tells the round that asked from the one that answered.
    let mut outcomes = Vec::new();
    for _ in 0..50 {
        let out = api
            .ok(&api.owner, "AUDIT_LOG_LIST", json!({ "limit": 100 }))
            .await;
        outcomes = out["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["tool"] == "confirm")
            .map(|r| r["outcome"].as_str().unwrap().to_string())
            .collect::<Vec<_>>();
        if outcomes.len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    outcomes.sort();
    assert_eq!(
        outcomes,
        ["denied", "input_required", "input_required", "success"]
    );
}

async fn a_dual_upstream_keeps_sessions_for_session_clients(backend: Backend) {
    let (api, upstream, _, path) = on_mode(backend, "dual").await;
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "c", "version": "1" } } });
    let (status, headers, body) = api.rpc(&path, Some(&api.owner), initialize).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["serverInfo"]["name"], "double",
        "a session upstream: {body}"
    );
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    let (status, _, body) = api
        .rpc_with(
            &path,
            Some(&api.owner),
            &call("echo", json!({"text": "s"})),
            &[("mcp-session-id", session)],
        )
        .await;
    assert_eq!(
        (status, &body["result"]["content"][0]["text"]),
        (200, &json!("s")),
        "{body}"
    );
    assert!(last_header(&upstream, "mcp-session-id").is_some());
    // A stateless client is spoken for statelessly.
    let (status, body) = modern(&api, &path, &api.owner, call("echo", json!({"text": "m"}))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(upstream.stateless("tools/call"), 1);
    assert!(last_header(&upstream, "mcp-session-id").is_none());
}

async fn the_gateway_serves_a_stateless_member_and_relays_progress(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("modern"), json!({}))
        .await;
    let agent = api.agent(&api.owner, &[&conn]).await;
    let path = format!("/api/acme/mcp/gateway/{agent}");
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), request("tools/list"))
        .await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("echo")),
        "the member is listed: {names:?}"
    );
    let progress = names
        .iter()
        .find(|n| n.ends_with("progress"))
        .unwrap()
        .to_string();
    // Both revisions' clients get the member's progress on their stream.
    for stateless in [false, true] {
        let mut message = call(&progress, json!({}));
        message["params"]["_meta"] = json!({ "progressToken": "p1" });
        let mut headers = vec![];
        if stateless {
            let token = message["params"]["_meta"].clone();
            message = enveloped(message, VERSION);
            message["params"]["_meta"]["progressToken"] = token["progressToken"].clone();
            headers = headers_for(&message);
        }
        let mut sent = reqwest::Client::new()
            .post(format!("{}{path}", api.base))
            .bearer_auth(&api.owner)
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        for (name, value) in headers {
            sent = sent.header(name, value);
        }
        let response = sent.send().await.unwrap();
        assert_eq!(response.status(), 200);
        let (chunks, _) = read_chunks(response, |c| c.get("id").is_some()).await;
        assert_eq!(chunks[0]["method"], "notifications/progress", "{chunks:?}");
        assert_eq!(chunks[0]["params"]["progressToken"], "p1");
        assert_eq!(
            chunks[1]["result"]["content"][0]["text"], "done",
            "{chunks:?}"
        );
    }
}

/// Two servers over one database behind one address, requests alternating between them: a
/// stateless client needs no sticky sessions, not even across the rounds of one call.
async fn two_servers_serve_stateless_clients_without_affinity(backend: Backend) {
    let first = Api::start(backend).await;
    let second = first.another_server(|_| {}).await;
    let upstream = mcp_double::start(false).await;
    let conn = first
        .connection(&first.owner, &upstream.mode_url("modern"), json!({}))
        .await;
    let agent = first.agent(&first.owner, &[&conn]).await;
    let servers = [&first, &second];
    for path in [
        format!("/api/acme/mcp/{conn}"),
        format!("/api/acme/mcp/gateway/{agent}"),
    ] {
        for (turn, method) in [
            "server/discover",
            "tools/list",
            "server/discover",
            "tools/list",
        ]
        .into_iter()
        .enumerate()
        {
            let api = servers[turn % 2];
            let (status, body) = modern(api, &path, &api.owner, request(method)).await;
            assert_eq!(status, 200, "{method} on server {}: {body}", turn % 2);
            assert_eq!(body["result"]["resultType"], "complete");
        }
    }
    // A multi round-trip call asked on one server and answered on the other.
    let path = format!("/api/acme/mcp/{conn}");
    let (status, body) = modern(&first, &path, &first.owner, call("confirm", json!({}))).await;
    assert_eq!(status, 200, "{body}");
    let mut retry = call("confirm", json!({}));
    retry["params"]["inputResponses"] =
        json!({ "ok": { "action": "accept", "content": { "ok": true } } });
    retry["params"]["requestState"] = body["result"]["requestState"].clone();
    let (status, body) = modern(&second, &path, &second.owner, retry).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"], "confirmed: true",
        "{body}"
    );
}

/// A translated session whose client leaves while the upstream's question awaits its answer
/// forgets the question: the session can be asked again (its bound of waiting questions is
/// one here).
async fn a_client_leaving_mid_question_leaves_nothing_waiting(backend: Backend) {
    let api = Api::start_with(backend, |c| c.mcp_sessions.requests.pending = 1).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("modern"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "leaving", "version": "1" } } });
    let (_, headers, _) = api.rpc(&path, Some(&api.owner), initialize).await;
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    for round in 0..3 {
        let mut events = confirm_in_session(&api, &path, &session).await;
        let asked = events.next().await;
        assert_eq!(
            asked["method"], "elicitation/create",
            "round {round}: {asked}"
        );
        // The client goes away without answering.
        drop(events);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
