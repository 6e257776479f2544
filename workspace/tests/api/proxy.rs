//! The connection proxy: every row of the status table, credentials, public tools,
//! argument validation, timeouts, a client leaving mid-call, HTTPS, discovery, the legacy
//! route and the audit log.

use std::time::Duration;

use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double::{self, TestCa};
use sitefile_workspace::clock::{ManualClock, now_ms};

both_backends!(
    proxy_status_table,
    proxy_credentials_public_tools_and_validation,
    proxy_https_and_timeout,
    proxy_forwards_params_and_speaks_the_upstream_version,
    proxy_sessions_are_per_client,
    proxy_relays_the_session_stream,
    proxy_ends_the_upstream_call_when_the_client_leaves,
    the_tool_timeout_bounds_the_wait_for_a_session
);

/// Parses `key="value"` / `key=value` auth-params of a challenge.
fn auth_param(challenge: &str, name: &str) -> Option<String> {
    challenge
        .trim_start_matches("Bearer")
        .split(',')
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim_matches('"').to_string())
}

async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/mcp")
}

async fn proxy_status_table(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let path = format!("/api/acme/mcp/{conn}");

    // 401 with the challenge pointing at the discovery document.
    let (status, headers, body) = api
        .rpc(&path, None, call("echo", json!({ "text": "x" })))
        .await;
    assert_eq!(status, 401);
    assert!(
        body["error"]["code"].is_i64(),
        "JSON-RPC error body: {body}"
    );
    let challenge = headers["www-authenticate"].to_str().unwrap().to_string();
    assert!(challenge.starts_with("Bearer "));
    assert_eq!(auth_param(&challenge, "realm").as_deref(), Some("mcp"));
    let metadata_url = auth_param(&challenge, "resource_metadata").unwrap();
    assert_eq!(
        metadata_url,
        format!("{}{path}/.well-known/oauth-protected-resource", api.base)
    );
    let (status, _, _) = api
        .rpc(&path, Some("sfk_invalid"), request("tools/list"))
        .await;
    assert_eq!(status, 401);
    // The legacy route's challenge names the legacy path.
    let legacy = format!("/mcp/{conn}");
    let (status, headers, _) = api.rpc(&legacy, None, request("tools/list")).await;
    assert_eq!(status, 401);
    let challenge = headers["www-authenticate"].to_str().unwrap();
    assert_eq!(
        auth_param(challenge, "resource_metadata").unwrap(),
        format!("{}{legacy}/.well-known/oauth-protected-resource", api.base)
    );
    // RFC 9728 document, both URL shapes; `resource` equals the protected URL.
    let doc: Value = api
        .client
        .get(&metadata_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["resource"], format!("{}{path}", api.base));
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    let prefixed = format!("{}/.well-known/oauth-protected-resource{path}", api.base);
    let doc2: Value = api
        .client
        .get(prefixed)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc, doc2);

    // 200: authorized tool.
    let (_, key) = api.key(json!({ conn.clone(): ["echo"] })).await;
    let (status, _, body) = api
        .rpc(&path, Some(&key), call("echo", json!({ "text": "hi" })))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({ "jsonrpc": "2.0", "id": 7, "result": { "content": [{ "type": "text", "text": "hi" }] } })
    );
    // 403: tool not granted on this connection (the upstream is not called).
    let (status, _, body) = api
        .rpc(&path, Some(&key), call("add", json!({ "a": 1, "b": 2 })))
        .await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], -32003);
    assert_eq!(body["error"]["message"], "Access denied to: add");
    assert!(!upstream.calls().contains(&"add".to_string()));
    // 404: unknown connection, and another organization's connection (same answer).
    let other = api.new_org("globex").await;
    let foreign = api.connection_in_org("globex", &other, &upstream.url).await;
    let (s1, _, b1) = api
        .rpc(
            &format!("/api/acme/mcp/{}", uuid::Uuid::new_v4()),
            Some(&api.owner),
            request("tools/list"),
        )
        .await;
    let (s2, _, b2) = api
        .rpc(
            &format!("/api/acme/mcp/{foreign}"),
            Some(&api.owner),
            request("tools/list"),
        )
        .await;
    assert_eq!((s1, s2), (404, 404));
    assert_eq!(b1, b2);
    // 403: a key used on another organization's path.
    let (status, _, _) = api
        .rpc(
            &format!("/api/globex/mcp/{foreign}"),
            Some(&api.owner),
            request("tools/list"),
        )
        .await;
    assert_eq!(status, 403);
    // 503: inactive connection, and an unreachable upstream.
    api.ok(
        &api.owner,
        "COLLECTION_CONNECTIONS_UPDATE",
        json!({ "id": conn, "data": { "status": "inactive" } }),
    )
    .await;
    let (status, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call("echo", json!({ "text": "x" })),
        )
        .await;
    assert_eq!(status, 503, "{body}");
    api.ok(
        &api.owner,
        "COLLECTION_CONNECTIONS_UPDATE",
        json!({ "id": conn, "data": { "status": "error" } }),
    )
    .await;
    assert_eq!(
        api.rpc(&path, Some(&api.owner), request("tools/list"))
            .await
            .0,
        503
    );
    let dead = api
        .connection(&api.owner, &closed_port_url().await, json!({}))
        .await;
    let (status, _, body) = api
        .rpc(
            &format!("/api/acme/mcp/{dead}"),
            Some(&api.owner),
            call("echo", json!({ "text": "x" })),
        )
        .await;
    assert_eq!(status, 503);
    assert_eq!(body["error"]["code"], -32603);
    // Malformed JSON-RPC is 400; GET (the session stream) without a key is 401.
    let r = api
        .client
        .post(format!("{}{path}", api.base))
        .bearer_auth(&api.owner)
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = api
        .client
        .get(format!("{}{path}", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

async fn proxy_credentials_public_tools_and_validation(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(true).await;
    let conn = api
        .connection(&api.owner, &upstream.url, json!({
            "connection_token": "upstream-token", "connection_headers": { "headers": { "X-Tenant": "t-1" } } }))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    // initialize and tools/list pass through (SSE answers from the upstream are read).
    let (status, _, init) = api.rpc(&path, Some(&api.owner), json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })).await;
    assert_eq!(status, 200);
    // Negotiated per session: the upstream was asked the client's version and answered it.
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(init["result"]["serverInfo"]["name"], "double");
    let notification = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(api.rpc(&path, Some(&api.owner), notification).await.0, 202);
    let (_, _, tools) = api
        .rpc(&path, Some(&api.owner), request("tools/list"))
        .await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 7);
    // Stored credentials are injected; the caller's key is never forwarded.
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), call("whoami", json!({})))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Bearer upstream-token"
    );
    assert_eq!(upstream.last_header("x-tenant").as_deref(), Some("t-1"));
    assert!(upstream.last_header("x-request-id").is_some());
    // Public tools need no authentication (both markers); others still answer 401.
    for tool in ["public_ping", "legacy_ping"] {
        let (status, _, body) = api.rpc(&path, None, call(tool, json!({}))).await;
        assert_eq!(status, 200, "{tool}: {body}");
        assert_eq!(body["result"]["content"][0]["text"], "pong");
    }
    assert_eq!(
        api.rpc(&path, None, call("echo", json!({ "text": "x" })))
            .await
            .0,
        401
    );
    assert_eq!(api.rpc(&path, None, request("tools/list")).await.0, 401);
    // A key without grants may call public tools, not others.
    let (_, narrow) = api.key(json!({})).await;
    assert_eq!(
        api.rpc(&path, Some(&narrow), call("public_ping", json!({})))
            .await
            .0,
        200
    );
    assert_eq!(
        api.rpc(&path, Some(&narrow), call("whoami", json!({})))
            .await
            .0,
        403
    );
    // Arguments are validated against the input schema before forwarding.
    let before = upstream.calls().len();
    for bad in [json!({}), json!({ "text": 5 })] {
        let (status, _, body) = api.rpc(&path, Some(&api.owner), call("echo", bad)).await;
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (200, Some(-32602)),
            "{body}"
        );
    }
    assert_eq!(
        upstream.calls().len(),
        before,
        "invalid calls never reach the upstream"
    );
    // Tool errors pass through.
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), call("fail", json!({})))
        .await;
    assert_eq!(
        (status, body["result"]["isError"].as_bool()),
        (200, Some(true))
    );
    // The legacy unscoped route works with the same key.
    let r = api
        .client
        .post(format!("{}/mcp/{conn}", api.base))
        .bearer_auth(&api.owner)
        .json(&call("echo", json!({ "text": "legacy" })))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // RFC 9745: the date the route was deprecated, as a structured-field date, and the
    // canonical route of the caller's organization as the successor.
    assert_eq!(r.headers()["deprecation"], "@1795305600");
    assert_eq!(
        r.headers()["link"],
        format!("</api/acme/mcp/{conn}>; rel=\"successor-version\"")
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "legacy");
    // Every invocation is audited with the caller identity.
    let mut rows = Vec::new();
    for _ in 0..50 {
        let out = api
            .ok(&api.owner, "AUDIT_LOG_LIST", json!({ "limit": 100 }))
            .await;
        rows = out["items"].as_array().unwrap().clone();
        if rows.iter().filter(|r| r["surface"] == "proxy").count() >= 9 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        rows.iter()
            .any(|r| r["tool"] == "public_ping" && r["actor"] == "anonymous")
    );
    assert!(rows.iter().any(|r| r["tool"] == "whoami"
        && r["outcome"] == "denied"
        && r["actor"].as_str().unwrap().starts_with("key:")));
    assert!(
        rows.iter().any(|r| r["tool"] == "echo"
            && r["outcome"] == "success"
            && r["connection_id"] == conn)
    );
}

async fn proxy_https_and_timeout(backend: Backend) {
    let ca = TestCa::new();
    let ca_file = std::env::temp_dir().join(format!("ws-ca-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&ca_file, &ca.pem).unwrap();
    let api = Api::start_with(backend, |c| c.upstream_ca_file = Some(ca_file.clone())).await;
    let trusted = mcp_double::start_tls(&ca).await;
    let untrusted = mcp_double::start_tls(&TestCa::new()).await;
    let good = api.connection(&api.owner, &trusted.url, json!({})).await;
    let bad = api.connection(&api.owner, &untrusted.url, json!({})).await;
    let (status, _, body) = api
        .rpc(
            &format!("/api/acme/mcp/{good}"),
            Some(&api.owner),
            call("echo", json!({ "text": "tls" })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "tls");
    let (status, _, body) = api
        .rpc(
            &format!("/api/acme/mcp/{bad}"),
            Some(&api.owner),
            call("echo", json!({ "text": "tls" })),
        )
        .await;
    assert_eq!(status, 503, "certificate validation: {body}");
    // Per-connection tool timeout.
    api.ok(
        &api.owner,
        "COLLECTION_CONNECTIONS_UPDATE",
        json!({ "id": good, "data": { "tool_timeout_ms": 300 } }),
    )
    .await;
    let started = std::time::Instant::now();
    let (status, _, body) = api
        .rpc(
            &format!("/api/acme/mcp/{good}"),
            Some(&api.owner),
            call("slow", json!({})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (200, Some(-32001)),
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    let _ = std::fs::remove_file(ca_file);
}

async fn proxy_forwards_params_and_speaks_the_upstream_version(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("tasks"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    let initialize = |version: &str| {
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })
    };
    // Negotiated per session: the upstream session is asked the client's version (or the
    // newest this service speaks) and its answer is what the client is told.
    let (status, _, init) = api
        .rpc(&path, Some(&api.owner), initialize("2025-03-26"))
        .await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    let (_, _, init) = api
        .rpc(&path, Some(&api.owner), initialize("1999-01-01"))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        upstream.seen.lock().unwrap().asked_versions,
        vec!["2025-03-26".to_string(), "2025-11-25".to_string()]
    );
    // Advertised: what works through the proxy (what the upstream sends on its own is
    // relayed), not `experimental`.
    assert_eq!(
        init["result"]["capabilities"],
        json!({ "tools": { "listChanged": true },
            "resources": { "subscribe": true, "listChanged": true },
            "prompts": { "listChanged": true }, "logging": {}, "completions": {},
            "tasks": { "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } } })
    );
    let old = api
        .connection(&api.owner, &upstream.mode_url("old"), json!({}))
        .await;
    let (_, _, init) = api
        .rpc(
            &format!("/api/acme/mcp/{old}"),
            Some(&api.owner),
            initialize("2025-11-25"),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");

    // `params` are forwarded whole: a task-augmented call reaches a task-only tool...
    let (_, key) = api
        .key(json!({ conn.clone(): ["task_only", "meta_echo"] }))
        .await;
    let task_call = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "task_only", "arguments": {}, "task": { "ttl": 60000 } } });
    let (status, _, body) = api.rpc(&path, Some(&key), task_call).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], 3);
    assert_eq!(body["result"]["task"]["taskId"], "task-1");
    assert_eq!(upstream.last_params()["task"], json!({ "ttl": 60000 }));
    let (_, _, body) = api
        .rpc(&path, Some(&key), call("task_only", json!({})))
        .await;
    assert_eq!(body["error"]["code"], -32601, "without a task: {body}");
    // ... whose task the same key reads and awaits; listing every task needs `*`.
    for method in ["tasks/get", "tasks/result"] {
        let message = json!({ "jsonrpc": "2.0", "id": 4, "method": method,
            "params": { "taskId": "task-1" } });
        let (status, _, body) = api.rpc(&path, Some(&key), message).await;
        assert_eq!(status, 200, "{method}: {body}");
        assert!(body.get("result").is_some(), "{method}: {body}");
    }
    // Another key, granted the same tool, cannot read nor await that task by its id: its
    // requests run in its own upstream session, where the task does not exist.
    let (_, other) = api.key(json!({ conn.clone(): ["task_only"] })).await;
    for method in ["tasks/get", "tasks/result"] {
        let message = json!({ "jsonrpc": "2.0", "id": 4, "method": method,
            "params": { "taskId": "task-1" } });
        let (_, _, body) = api.rpc(&path, Some(&other), message).await;
        assert_eq!(body["error"]["message"], "Unknown task", "{method}: {body}");
        assert!(body.get("result").is_none(), "{method}: {body}");
    }
    assert_eq!(
        api.rpc(&path, Some(&key), request("tasks/list")).await.0,
        403
    );
    // ... and `_meta` (a progress token) and fields this service does not know pass too.
    let meta_call = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "meta_echo", "_meta": { "progressToken": "p-1" }, "future": [1] } });
    let (status, _, body) = api.rpc(&path, Some(&key), meta_call).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        json!({ "progressToken": "p-1" }).to_string()
    );
    assert_eq!(
        upstream.last_params(),
        json!({ "name": "meta_echo", "arguments": {}, "_meta": { "progressToken": "p-1" }, "future": [1] })
    );
    // Through the gateway too, with the member's own tool name.
    let agent = api.agent(&api.owner, &[&conn]).await;
    let prefix = conn.replace('-', "")[..8].to_string();
    let gateway_call = json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": format!("{prefix}_meta_echo"), "arguments": {}, "_meta": { "progressToken": 9 } } });
    let (status, _, body) = api
        .rpc(
            &format!("/api/acme/mcp/gateway/{agent}"),
            Some(&api.owner),
            gateway_call,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        upstream.last_params(),
        json!({ "name": "meta_echo", "arguments": {}, "_meta": { "progressToken": 9 } })
    );
}

/// `initialize` with `key` on `path`; the `Mcp-Session-Id` answered.
async fn open(api: &Api, path: &str, key: &str) -> (u16, Option<String>) {
    let message = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let (status, headers, _) = api.rpc(path, Some(key), message).await;
    let session = headers
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    (status, session)
}

/// Calls the double's `session` tool (it answers the upstream session id it saw) with `key`
/// in `session` (none: stateless).
async fn upstream_session(
    api: &Api,
    path: &str,
    key: &str,
    session: Option<&str>,
) -> (u16, String) {
    let mut request = api
        .client
        .post(format!("{}{path}", api.base))
        .bearer_auth(key)
        .header("accept", "application/json, text/event-stream")
        .json(&call("session", json!({})));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (status, text)
}

/// The owner's GET stream of `session` at `url`: open, and an event stream.
async fn session_stream(api: &Api, url: &str, session: &str) -> reqwest::Response {
    let stream = api
        .client
        .get(url)
        .bearer_auth(&api.owner)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    stream
}

/// `DELETE` on `path` with `key` and `session`.
async fn end(api: &Api, path: &str, key: &str, session: Option<&str>) -> u16 {
    let mut request = api
        .client
        .delete(format!("{}{path}", api.base))
        .bearer_auth(key);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap().status().as_u16()
}

/// Waits until the double has seen `session` ended by DELETE.
async fn ended_upstream(upstream: &mcp_double::McpDouble, session: &str) -> bool {
    for _ in 0..100 {
        if upstream.deleted().iter().any(|s| s == session) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn proxy_sessions_are_per_client(backend: Backend) {
    let clock = ManualClock::new(now_ms());
    let api = Api::start_with(backend, |c| {
        c.clock = clock.clock();
        c.mcp_sessions.idle = Duration::from_secs(60);
        c.mcp_sessions.per_key = 2;
        c.mcp_sessions.max = 3;
    })
    .await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("tasks"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    let (_, one) = api.key(json!({ conn.clone(): ["session"] })).await;
    let (_, two) = api.key(json!({ conn.clone(): ["session"] })).await;
    let tick = || clock.advance(Duration::from_secs(1));

    // Each initialize gets its own session, here and upstream; stateless calls share one.
    let (status, s1) = open(&api, &path, &one).await;
    assert_eq!(status, 200);
    let s1 = s1.expect("initialize answers Mcp-Session-Id");
    let s2 = open(&api, &path, &two).await.1.unwrap();
    assert_ne!(s1, s2);
    let (status, u1) = upstream_session(&api, &path, &one, Some(&s1)).await;
    assert_eq!(status, 200);
    let u2 = upstream_session(&api, &path, &two, Some(&s2)).await.1;
    let (status, u0) = upstream_session(&api, &path, &one, None).await;
    assert_eq!(status, 200, "stateless callers keep working");
    assert!(!u0.is_empty() && !u1.is_empty() && !u2.is_empty());
    assert!(u0 != u1 && u1 != u2 && u0 != u2, "{u0} {u1} {u2}");
    // Stateless calls of different keys never share an upstream session; one key's
    // stateless calls keep theirs.
    let (status, u3) = upstream_session(&api, &path, &two, None).await;
    assert_eq!(status, 200);
    assert!(
        !u3.is_empty() && u3 != u0 && u3 != u1 && u3 != u2,
        "{u0} {u3}"
    );
    assert_eq!(upstream_session(&api, &path, &one, None).await.1, u0);
    assert_eq!(upstream_session(&api, &path, &one, Some(&s1)).await.1, u1);
    // A session is its key's, on its connection: anything else is 404 (start a new one).
    assert_eq!(upstream_session(&api, &path, &two, Some(&s1)).await.0, 404);
    assert_eq!(
        upstream_session(&api, &path, &one, Some("nope")).await.0,
        404
    );
    let other = api.connection(&api.owner, &upstream.url, json!({})).await;
    let (_, both) = api
        .key(json!({ conn.clone(): ["session"], other.clone(): ["*"] }))
        .await;
    let s_both = open(&api, &path, &both).await.1.unwrap();
    let (status, _) = upstream_session(
        &api,
        &format!("/api/acme/mcp/{other}"),
        &both,
        Some(&s_both),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(end(&api, &path, &both, Some(&s_both)).await, 204);

    // DELETE ends the session here and upstream.
    assert_eq!(
        end(&api, &path, &two, Some(&s1)).await,
        404,
        "not its key's"
    );
    assert_eq!(end(&api, &path, &one, None).await, 400);
    assert_eq!(end(&api, &path, &one, Some(&s1)).await, 204);
    assert!(ended_upstream(&upstream, &u1).await);
    assert_eq!(upstream_session(&api, &path, &one, Some(&s1)).await.0, 404);
    assert_eq!(end(&api, &path, &one, Some(&s1)).await, 404);
    // GET is the session's stream: it names a live session of the key (400 without one,
    // 404 for an ended one) and accepts an event stream (406); an upstream without a
    // stream (this double answers GET 405) makes it 405.
    let listen = |key: &str, session: Option<&str>, accept: &str| {
        let mut request = api
            .client
            .get(format!("{}{path}", api.base))
            .bearer_auth(key)
            .header("accept", accept);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let sse = "text/event-stream";
    assert_eq!(listen(&one, None, sse).await.unwrap().status(), 400);
    assert_eq!(listen(&one, Some(&s1), sse).await.unwrap().status(), 404);
    assert_eq!(listen(&one, Some(&s2), sse).await.unwrap().status(), 404);
    let json = "application/json";
    assert_eq!(listen(&two, Some(&s2), json).await.unwrap().status(), 406);
    let get = listen(&two, Some(&s2), sse).await.unwrap();
    assert_eq!(get.status(), 405);
    assert_eq!(get.headers()["allow"], "POST, DELETE");

    // At most 2 sessions per key: a third ends the least recently used one.
    let s3 = open(&api, &path, &one).await.1.unwrap();
    tick();
    let s4 = open(&api, &path, &one).await.1.unwrap();
    tick();
    let u4 = upstream_session(&api, &path, &one, Some(&s4)).await.1;
    tick();
    let u3 = upstream_session(&api, &path, &one, Some(&s3)).await.1;
    tick();
    let s5 = open(&api, &path, &one).await.1.unwrap();
    assert_eq!(upstream_session(&api, &path, &one, Some(&s4)).await.0, 404);
    assert!(ended_upstream(&upstream, &u4).await);
    assert_eq!(upstream_session(&api, &path, &one, Some(&s3)).await.1, u3);
    // At most 3 on the server (s2, s3, s5): a new session is refused, nothing is evicted.
    let (status, refused) = open(&api, &path, &two).await;
    assert_eq!((status, refused), (503, None));
    assert_eq!(upstream_session(&api, &path, &two, Some(&s2)).await.1, u2);
    let _ = s5;

    // Sessions unused for the idle time are ended, here and upstream.
    clock.advance(Duration::from_secs(61));
    assert_eq!(upstream_session(&api, &path, &one, Some(&s3)).await.0, 404);
    assert!(ended_upstream(&upstream, &u3).await);
    assert!(ended_upstream(&upstream, &u2).await);

    // An upstream that forgets a session: 404, and the session is gone here too.
    let s6 = open(&api, &path, &two).await.1.unwrap();
    let u6 = upstream_session(&api, &path, &two, Some(&s6)).await.1;
    upstream.forget_session(&u6);
    assert_eq!(upstream_session(&api, &path, &two, Some(&s6)).await.0, 404);
    assert_eq!(end(&api, &path, &two, Some(&s6)).await, 404);
    // Stateless callers still share the connection's session.
    assert_eq!(upstream_session(&api, &path, &one, None).await.1, u0);
}

impl Api {
    /// Creates a connection in another organization.
    pub async fn connection_in_org(&self, org: &str, key: &str, url: &str) -> String {
        let (status, out) = self
            .tool_in(
                org,
                key,
                "COLLECTION_CONNECTIONS_CREATE",
                json!({ "data": { "title": "x", "connection_url": url } }),
            )
            .await;
        assert_eq!(status, 200);
        out["item"]["id"].as_str().unwrap().to_string()
    }
}

/// The `data` of each event of an event-stream body.
fn event_data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// GET relays the upstream session's stream to the session's client, and a client that
/// leaves ends the upstream stream; the notifications in an upstream's event-stream answer
/// reach a client that accepts event streams.
async fn proxy_relays_the_session_stream(backend: Backend) {
    let api = Api::start_with(backend, |c| c.keepalive = Duration::from_millis(50)).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("stream"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    let session = open(&api, &path, &api.owner).await.1.unwrap();
    let upstream_id = upstream_session(&api, &path, &api.owner, Some(&session))
        .await
        .1;
    let mut stream = session_stream(&api, &format!("{}{path}", api.base), &session).await;
    let mut text = String::new();
    while !text.contains("\n\n") || !text.contains("data:") {
        let chunk = stream
            .chunk()
            .await
            .unwrap()
            .expect("the stream stays open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("one event");
    let message: Value = serde_json::from_str(data).unwrap();
    assert_eq!(message["method"], "notifications/message");
    assert_eq!(
        message["params"]["data"],
        upstream_id.as_str(),
        "its own session's"
    );
    drop(stream);
    tokio::time::timeout(Duration::from_secs(10), upstream.stream_ended.notified())
        .await
        .expect("the upstream stream ends when the client leaves");
    // The legacy route serves the same stream.
    let legacy = session_stream(&api, &format!("{}/mcp/{conn}", api.base), &session).await;
    drop(legacy);

    // A tool call whose upstream answers progress, a ping request then the result: relayed
    // as an event stream (the ping under the proxy's own id), or JSON to a client taking
    // JSON only.
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": { "text": "hi" }, "_meta": { "progressToken": "p1" } } });
    let post = |accept: &'static str| {
        api.client
            .post(format!("{}{path}", api.base))
            .bearer_auth(&api.owner)
            .header("accept", accept)
            .header("mcp-session-id", &session)
            .json(&call)
            .send()
    };
    let relayed = post("application/json, text/event-stream").await.unwrap();
    assert_eq!(relayed.status(), 200);
    assert_eq!(relayed.headers()["content-type"], "text/event-stream");
    let events = event_data(&relayed.text().await.unwrap());
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[0]["params"]["progressToken"], "p1");
    assert_eq!(events[1]["method"], "ping");
    assert!(
        events[1]["id"].is_u64() && events[1]["id"] != 7,
        "{events:?}"
    );
    assert_eq!(events[2]["id"], 7);
    assert_eq!(events[2]["result"]["content"][0]["text"], "hi");
    let plain = post("application/json").await.unwrap();
    assert_eq!(plain.headers()["content-type"], "application/json");
    let body: Value = plain.json().await.unwrap();
    assert_eq!(body["id"], 7);
    assert_eq!(body["result"]["content"][0]["text"], "hi");
}

async fn proxy_ends_the_upstream_call_when_the_client_leaves(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let url = format!("{}/api/acme/mcp/{conn}", api.base);
    // The upstream takes 5 s; the client leaves after 300 ms, taking an event stream (the
    // answer relayed) or JSON only. Either way the proxy drops its upstream request, so the
    // upstream sees its caller go long before it would answer.
    for (n, accept) in ["application/json, text/event-stream", "application/json"]
        .into_iter()
        .enumerate()
    {
        let left = api
            .client
            .post(&url)
            .bearer_auth(&api.owner)
            .header("accept", accept)
            .json(&call("slow", json!({})))
            .timeout(Duration::from_millis(300))
            .send()
            .await;
        assert!(left.is_err_and(|e| e.is_timeout()), "{accept}");
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while upstream.seen.lock().unwrap().abandoned <= n {
            assert!(
                std::time::Instant::now() < deadline,
                "the upstream call outlived its client ({accept})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_eq!(upstream.calls(), ["slow", "slow"]);
}

/// A connection's tool timeout bounds how long a call (or a listing) waits for the upstream
/// session to be set up; a set-up that outlasts one caller still serves the next.
async fn the_tool_timeout_bounds_the_wait_for_a_session(backend: Backend) {
    let api = Api::start(backend).await;
    // An upstream that accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/mcp", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let timeout = json!({ "tool_timeout_ms": 1000 });
    let conn = api
        .connection(&api.owner, &silent_url, timeout.clone())
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    for message in [call("echo", json!({"text": "hi"})), request("tools/list")] {
        let started = std::time::Instant::now();
        let (status, _, body) = api.rpc(&path, Some(&api.owner), message).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (200, &json!(-32001)),
            "{body}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the 1 s timeout, not the 30 s set-up bound: {:?}",
            started.elapsed()
        );
    }

    let upstream = mcp_double::start(false).await;
    let slow = api
        .connection(&api.owner, &upstream.mode_url("slow-setup"), timeout)
        .await;
    let path = format!("/api/acme/mcp/{slow}");
    let echo = call("echo", json!({"text": "later"}));
    let (_, _, body) = api.rpc(&path, Some(&api.owner), echo.clone()).await;
    assert_eq!(body["error"]["code"], -32001, "{body}");
    let mut answered = Value::Null;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, _, body) = api.rpc(&path, Some(&api.owner), echo.clone()).await;
        answered = body;
        if answered.get("result").is_some() {
            break;
        }
    }
    assert_eq!(
        answered["result"]["content"][0]["text"], "later",
        "{answered}"
    );
    assert_eq!(
        upstream.seen.lock().unwrap().asked_versions.len(),
        1,
        "one set-up"
    );
}
