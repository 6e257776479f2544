//! The stateless MCP revision (2026-07-28) on `self` and the gateway: `server/discover`, the
//! revision's request checks in their order, stamped results, and no 2026 envelope reaching an
//! upstream spoken to in a session revision.

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double;

pub(crate) const VERSION: &str = "2026-07-28";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `message` with the 2026-07-28 envelope in its params.
pub(crate) fn enveloped(mut message: Value, version: &str) -> Value {
    message["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "1" },
    });
    message
}

/// The headers a 2026-07-28 client sends for `message`.
pub(crate) fn headers_for(message: &Value) -> Vec<(&'static str, String)> {
    let method = message["method"].as_str().unwrap().to_string();
    let mut headers = vec![
        ("mcp-protocol-version", VERSION.to_string()),
        ("mcp-method", method.clone()),
    ];
    if method == "tools/call" {
        headers.push((
            "mcp-name",
            message["params"]["name"].as_str().unwrap().into(),
        ));
    }
    headers
}

/// POSTs `message` to `path` with `key` and `headers`.
async fn post(
    api: &Api,
    path: &str,
    key: &str,
    message: &Value,
    headers: &[(&'static str, String)],
) -> (u16, HeaderMap, Value) {
    api.rpc_with(path, Some(key), message, headers).await
}

/// A 2026-07-28 request as a client sends it.
pub(crate) async fn modern(api: &Api, path: &str, key: &str, message: Value) -> (u16, Value) {
    let message = enveloped(message, VERSION);
    let (status, _, body) = post(api, path, key, &message, &headers_for(&message)).await;
    (status, body)
}

/// The checks every endpoint makes of a 2026-07-28 request, in the revision's order.
async fn refuses_as_the_revision_says(api: &Api, path: &str, key: &str) {
    let list = enveloped(request("tools/list"), VERSION);
    let headers = headers_for(&list);
    // A version not served: 400 -32022, naming what is.
    let future = enveloped(request("tools/list"), "2099-01-01");
    let later = [
        ("mcp-protocol-version", "2099-01-01".to_string()),
        ("mcp-method", "tools/list".to_string()),
    ];
    let (status, _, body) = post(api, path, key, &future, &later).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(
        body["error"]["data"],
        json!({"supported": [VERSION], "requested": "2099-01-01"})
    );
    // The same body under this revision's header: the header contradicts it first.
    let (status, _, body) = post(api, path, key, &future, &headers).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32020)),
        "{body}"
    );
    // An envelope without the client's capabilities: 400 -32602.
    let mut bare = list.clone();
    bare["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let (status, _, body) = post(api, path, key, &bare, &headers).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32602)),
        "{body}"
    );
    // A method the revision removed: 404 -32601.
    let ping = enveloped(request("ping"), VERSION);
    let (status, _, body) = post(api, path, key, &ping, &headers_for(&ping)).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (404, json!(-32601)),
        "{body}"
    );
    // Headers that disagree with the body, or are missing: 400 -32020.
    for (name, value) in [
        ("mcp-method", Some("tools/call")),
        ("mcp-protocol-version", None),
    ] {
        let mut sent: Vec<_> = headers
            .iter()
            .filter(|(n, _)| *n != name)
            .cloned()
            .collect();
        if let Some(value) = value {
            sent.push((name, value.to_string()));
        }
        let (status, _, body) = post(api, path, key, &list, &sent).await;
        assert_eq!(status, 400, "{name}: {body}");
        assert_eq!(body["error"]["code"], -32020);
        assert_eq!(body["error"]["data"]["mismatch"]["header"], name);
    }
    // A modern header on a body without the envelope: 400 -32602.
    let (status, _, body) = post(api, path, key, &request("tools/list"), &headers).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32602)),
        "{body}"
    );
    // A notification of the revision is accepted.
    let cancelled = enveloped(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
        VERSION,
    );
    let (status, _, _) = post(api, path, key, &cancelled, &headers_for(&cancelled)).await;
    assert_eq!(status, 202);
}

both_backends!(
    self_speaks_the_stateless_revision,
    gateway_speaks_the_stateless_revision,
    proxy_serves_stateless_clients_over_a_session_upstream,
    an_upstream_refusal_is_relayed_as_it_is
);

async fn self_speaks_the_stateless_revision(backend: Backend) {
    let api = Api::start(backend).await;
    let path = "/api/acme/mcp/self";
    let (status, body) = modern(&api, path, &api.owner, request("server/discover")).await;
    assert_eq!(status, 200, "{body}");
    let discovered = &body["result"];
    assert_eq!(discovered["supportedVersions"], json!([VERSION]));
    assert_eq!(discovered["capabilities"], json!({"tools": {}}));
    assert_eq!(discovered["resultType"], "complete");
    assert_eq!(
        (
            discovered["ttlMs"].clone(),
            discovered["cacheScope"].clone()
        ),
        (json!(0), json!("private"))
    );
    assert_eq!(
        discovered["_meta"][SERVER_INFO]["name"],
        "sitefile-workspace-management"
    );

    let (status, body) = modern(&api, path, &api.owner, request("tools/list")).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(body["result"]["cacheScope"], "private");
    assert!(body["result"]["tools"].as_array().unwrap().len() > 5);

    let (status, body) = modern(&api, path, &api.owner, call("API_KEY_LIST", json!({}))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");
    assert!(
        body["result"].get("ttlMs").is_none(),
        "no cache hints on a call"
    );
    assert_eq!(
        body["result"]["_meta"][SERVER_INFO]["version"],
        env!("CARGO_PKG_VERSION")
    );

    refuses_as_the_revision_says(&api, path, &api.owner).await;

    // The session revision is unchanged, and has no server/discover.
    let (status, _, body) = api.rpc(path, Some(&api.owner), request("tools/list")).await;
    assert_eq!(status, 200);
    assert!(body["result"].get("resultType").is_none(), "{body}");
    let (_, _, body) = api
        .rpc(path, Some(&api.owner), request("server/discover"))
        .await;
    assert_eq!(body["error"]["code"], -32601);
}

async fn gateway_speaks_the_stateless_revision(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let connection = api.connection(&api.owner, &upstream.url, json!({})).await;
    let agent = api.agent(&api.owner, &[&connection]).await;
    let path = format!("/api/acme/mcp/gateway/{agent}");

    let (status, body) = modern(&api, &path, &api.owner, request("server/discover")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["supportedVersions"], json!([VERSION]));
    assert_eq!(body["result"]["instructions"], "Be brief.");
    assert_eq!(body["result"]["_meta"][SERVER_INFO]["name"], agent);

    let (status, body) = modern(&api, &path, &api.owner, request("tools/list")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");
    let echo = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .find(|n| n.ends_with("_echo"))
        .unwrap();

    let (status, body) = modern(&api, &path, &api.owner, call(&echo, json!({"text": "hi"}))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "hi");
    assert_eq!(body["result"]["resultType"], "complete");
    // The member speaks a session revision: the envelope stays at the gateway.
    let forwarded = upstream.last_params();
    assert!(
        !forwarded.to_string().contains("io.modelcontextprotocol/"),
        "no 2026 envelope in a 2025 session: {forwarded}"
    );

    refuses_as_the_revision_says(&api, &path, &api.owner).await;
}

async fn proxy_serves_stateless_clients_over_a_session_upstream(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let connection = api.connection(&api.owner, &upstream.url, json!({})).await;
    let path = format!("/api/acme/mcp/{connection}");

    // A key with one tool granted may discover, list and call it; not another tool.
    let (_, key) = api.key(json!({ &connection: ["echo"] })).await;
    let (status, body) = modern(&api, &path, &key, request("server/discover")).await;
    assert_eq!(
        status, 200,
        "a grant on the connection is enough to discover it: {body}"
    );
    let discovered = &body["result"];
    assert_eq!(discovered["supportedVersions"], json!([VERSION]));
    assert!(
        discovered["capabilities"]["tools"].is_object(),
        "{discovered}"
    );
    assert_eq!(discovered["resultType"], "complete");
    assert_eq!(discovered["cacheScope"], "private");
    assert!(discovered["_meta"][SERVER_INFO]["name"].is_string());

    let (status, body) = modern(&api, &path, &key, request("tools/list")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (
            body["result"]["resultType"].clone(),
            body["result"]["ttlMs"].clone()
        ),
        (json!("complete"), json!(0))
    );

    let (status, body) = modern(
        &api,
        &path,
        &key,
        call("echo", json!({"text": "stateless"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "stateless");
    assert_eq!(body["result"]["resultType"], "complete");
    let forwarded = upstream.last_params();
    assert!(
        !forwarded.to_string().contains("io.modelcontextprotocol/"),
        "no 2026 envelope in the upstream's session: {forwarded}"
    );
    let (status, body) = modern(&api, &path, &key, call("add", json!({"a": 1, "b": 2}))).await;
    assert_eq!(status, 403, "{body}");

    // A session id sent along is ignored: the revision has none.
    let message = enveloped(call("echo", json!({"text": "again"})), VERSION);
    let mut headers = headers_for(&message);
    headers.push(("mcp-session-id", "no-such-session".into()));
    let (status, _, body) = post(&api, &path, &key, &message, &headers).await;
    assert_eq!(status, 200, "{body}");

    refuses_as_the_revision_says(&api, &path, &api.owner).await;
}

async fn an_upstream_refusal_is_relayed_as_it_is(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let connection = api
        .connection(&api.owner, &upstream.mode_url("future-only"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{connection}");
    for message in [request("tools/list"), call("echo", json!({"text": "hi"}))] {
        let (status, _, body) = api.rpc(&path, Some(&api.owner), message.clone()).await;
        assert_eq!(status, 400, "the upstream's status, not 200: {body}");
        assert_eq!(
            body["error"]["code"], -32022,
            "not flattened into -32603: {body}"
        );
        assert_eq!(body["error"]["data"]["supported"], json!(["2099-01-01"]));
        assert!(body["id"].is_number(), "the client's id: {body}");
        // To a stateless client the refusal is not about its request (whose version was
        // checked here): 502, the upstream's refusal in data.
        let (status, body) = modern(&api, &path, &api.owner, message).await;
        assert_eq!(status, 502, "{body}");
        assert_eq!(body["error"]["code"], -32603);
        assert_eq!(body["error"]["data"]["upstream"]["error"]["code"], -32022);
    }
    let (status, body) = modern(&api, &path, &api.owner, request("server/discover")).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (502, json!(-32603)),
        "{body}"
    );

    // An upstream refusing the proxy's own standing (its credentials): never the client's 401.
    let refusing = api
        .connection(&api.owner, &upstream.mode_url("refuse401"), json!({}))
        .await;
    let (status, headers, body) = api
        .rpc(
            &format!("/api/acme/mcp/{refusing}"),
            Some(&api.owner),
            request("tools/list"),
        )
        .await;
    assert_eq!(status, 502, "{body}");
    assert!(headers.get("www-authenticate").is_none());
    assert_eq!(body["error"]["data"]["upstream"]["status"], 401);
}

both_backends!(
    a_host_the_service_does_not_answer_for_is_refused,
    log_messages_reach_stateless_clients_that_opt_in
);

/// A session upstream's log messages reach a stateless client only when its request opted in
/// with `logLevel`, at or above that level (the 2026-07-28 rule).
async fn log_messages_reach_stateless_clients_that_opt_in(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let path = format!("/api/acme/mcp/{conn}");
    for (level, delivered) in [(None, false), (Some("info"), true), (Some("error"), false)] {
        let mut message = enveloped(call("log", json!({})), VERSION);
        if let Some(level) = level {
            message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        let mut request = api
            .client
            .post(format!("{}{path}", api.base))
            .bearer_auth(&api.owner)
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        for (name, value) in headers_for(&message) {
            request = request.header(name, value);
        }
        let answer = request.send().await.unwrap().text().await.unwrap();
        assert_eq!(
            answer.contains("notifications/message"),
            delivered,
            "{level:?}: {answer}"
        );
        assert!(answer.contains("done"), "{answer}");
    }
}

/// DNS-rebinding protection: every MCP endpoint refuses a `Host` or `Origin` naming another
/// host (403, a JSON-RPC error without id) before authentication, and serves its own.
async fn a_host_the_service_does_not_answer_for_is_refused(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let agent = api.agent(&api.owner, &[&conn]).await;
    let own = api.base.trim_start_matches("http://").to_string();
    let paths = [
        "/api/acme/mcp/self".to_string(),
        format!("/api/acme/mcp/gateway/{agent}"),
        format!("/api/acme/mcp/{conn}"),
        format!("/mcp/{conn}"),
    ];
    let cases = [
        (own.clone(), None, 200),
        (own.clone(), Some(api.base.clone()), 200),
        (
            "evil.example.com".to_string(),
            Some("http://evil.example.com".to_string()),
            403,
        ),
        ("evil.example.com".to_string(), None, 403),
        (
            own.clone(),
            Some("http://evil.example.com".to_string()),
            403,
        ),
    ];
    for path in &paths {
        for (host, origin, expected) in &cases {
            let mut headers = vec![("host", host.clone())];
            if let Some(origin) = origin {
                headers.push(("origin", origin.clone()));
            }
            let (status, _, body) = api
                .rpc_with(path, Some(&api.owner), &request("tools/list"), &headers)
                .await;
            assert_eq!(status, *expected, "{path} {host} {origin:?}: {body}");
            if *expected == 403 {
                assert_eq!(body["error"]["code"], -32000, "{body}");
                assert!(body["id"].is_null());
            }
        }
    }
    // A name the operator adds is answered for.
    let extra = api
        .another_server(|c| c.allowed_hosts = vec!["mcp.internal".into()])
        .await;
    let headers = [("host", "mcp.internal:9".to_string())];
    let (status, _, body) = extra
        .rpc_with(
            "/api/acme/mcp/self",
            Some(&api.owner),
            &request("tools/list"),
            &headers,
        )
        .await;
    assert_eq!(status, 200, "{body}");
}
