//! NUL characters (`\u0000`) in text inputs and path parameters are refused before they
//! reach storage (PostgreSQL text cannot hold them): 400 for inputs, 404 for paths.

use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Api, Backend, call};
use crate::mcp_double;

both_backends!(nul_is_refused_everywhere);

async fn nul_is_refused_everywhere(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let agent = api.agent(&api.owner, &[&conn]).await;
    let thread = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "t", "virtual_mcp_id": agent, "id": "th-1" } }),
        )
        .await["item"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Tool inputs: values and keys, ids and free text.
    let inputs = [
        (
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "a\u{0}b", "virtual_mcp_id": agent } }),
        ),
        (
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "t", "virtual_mcp_id": agent, "id": "x\u{0}" } }),
        ),
        ("COLLECTION_THREADS_GET", json!({ "id": "th-1\u{0}" })),
        (
            "COLLECTION_THREAD_MESSAGES_LIST",
            json!({ "thread_id": "\u{0}" }),
        ),
        (
            "COLLECTION_CONNECTIONS_GET",
            json!({ "id": format!("{conn}\u{0}") }),
        ),
        (
            "COLLECTION_CONNECTIONS_UPDATE",
            json!({ "id": conn, "data": { "description": "\u{0}" } }),
        ),
        ("COLLECTION_VIRTUAL_MCP_GET", json!({ "id": "\u{0}" })),
        ("API_KEY_CREATE", json!({ "name": "k\u{0}" })),
        ("API_KEY_DELETE", json!({ "keyId": "\u{0}" })),
        (
            "COLLECTION_THREADS_LIST",
            json!({ "virtual_mcp_id": "\u{0}" }),
        ),
        ("COLLECTION_THREADS_LIST", json!({ "\u{0}": 1 })),
    ];
    for (tool, input) in inputs {
        let (status, out) = api.tool(&api.owner, tool, input.clone()).await;
        assert_eq!(status, 400, "{tool} {input}: {out}");
        assert!(
            out["error"]["message"].as_str().unwrap().contains("NUL"),
            "{out}"
        );
    }
    // The same over MCP at /self.
    let (status, _, body) = api
        .rpc(
            "/api/acme/mcp/self",
            Some(&api.owner),
            call("COLLECTION_THREADS_GET", json!({ "id": "\u{0}" })),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (200, Some(-32602)),
        "{body}"
    );
    assert!(
        body["error"]["message"].as_str().unwrap().contains("NUL"),
        "{body}"
    );
    // Run posts.
    let r = api
        .client
        .post(format!("{}/api/acme/pilot/threads/{thread}/messages", api.base))
        .bearer_auth(&api.owner)
        .json(&json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "hi\u{0}" }] }],
                       "agent": { "id": agent } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // Tool names on the proxy and gateway.
    for path in [
        format!("/api/acme/mcp/{conn}"),
        format!("/api/acme/mcp/gateway/{agent}"),
    ] {
        let (status, _, body) = api
            .rpc(
                &path,
                Some(&api.owner),
                call("echo\u{0}", json!({ "text": "x" })),
            )
            .await;
        assert_eq!(status, 400, "{path}: {body}");
    }
    // Path parameters, with and without a key (the anonymous proxy looks the org up).
    let id = uuid::Uuid::new_v4();
    let paths = [
        format!("/api/ac%00me/mcp/{id}"),
        format!("/api/acme/mcp/{id}%00"),
        format!("/mcp/{id}%00"),
        format!("/api/acme/mcp/gateway/{agent}%00"),
        "/api/acme/pilot/threads/th-1%00/messages".to_string(),
        "/api/acme/tools/COLLECTION_THREADS_LIST%00".to_string(),
        "/api/ac%00me/tools/COLLECTION_THREADS_LIST".to_string(),
    ];
    for path in &paths {
        for key in [None, Some(api.owner.as_str())] {
            let (status, _, body) = api.rpc(path, key, call("public_ping", json!({}))).await;
            assert_eq!(status, 404, "{path} {key:?}: {body}");
        }
    }
    let r = api
        .client
        .get(format!(
            "{}/api/acme/pilot/threads/th-1%00/stream",
            api.base
        ))
        .bearer_auth(&api.owner)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // Nothing was stored and the service is healthy.
    let out: Value = api
        .ok(&api.owner, "COLLECTION_THREADS_LIST", json!({}))
        .await;
    assert_eq!(out["totalCount"], 1);
}
