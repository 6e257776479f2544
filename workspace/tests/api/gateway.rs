//! The agent gateway: composed names, selection, routing, isolation of failing members.

use serde_json::json;

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double;

both_backends!(gateway_composes_connections);

async fn gateway_composes_connections(backend: Backend) {
    let api = Api::start(backend).await;
    let a = mcp_double::start(false).await;
    let b = mcp_double::start(true).await;
    let conn_a = api.connection(&api.owner, &a.url, json!({})).await;
    let conn_b = api.connection(&api.owner, &b.url, json!({})).await;
    let dead = api
        .connection(&api.owner, "http://127.0.0.1:9/mcp", json!({}))
        .await;
    let out = api
        .ok(
            &api.owner,
            "COLLECTION_VIRTUAL_MCP_CREATE",
            json!({ "data": { "title": "g", "connections": [
            { "connection_id": conn_a },
            { "connection_id": conn_b, "selected_tools": ["echo"] },
            { "connection_id": dead } ] } }),
        )
        .await;
    let agent = out["item"]["id"].as_str().unwrap().to_string();
    let path = format!("/api/acme/mcp/gateway/{agent}");
    assert_eq!(api.rpc(&path, None, request("tools/list")).await.0, 401);
    let (status, _, list) = api
        .rpc(&path, Some(&api.owner), request("tools/list"))
        .await;
    assert_eq!(
        status, 200,
        "one failing member does not break tools/list: {list}"
    );
    let tools = list["result"]["tools"].as_array().unwrap();
    let prefix_a = conn_a.replace('-', "")[..8].to_string();
    let prefix_b = conn_b.replace('-', "")[..8].to_string();
    assert_eq!(tools.len(), 8, "7 tools of a + the selected one of b");
    let echo_a = format!("{prefix_a}_echo");
    let echo_b = format!("{prefix_b}_echo");
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == echo_a && t["_meta"]["gatewayClientId"] == conn_a)
    );
    assert!(tools.iter().any(|t| t["name"] == echo_b));
    assert!(!tools.iter().any(|t| t["name"] == format!("{prefix_b}_add")));
    // Names are stable across listings.
    let (_, _, again) = api
        .rpc(&path, Some(&api.owner), request("tools/list"))
        .await;
    assert_eq!(list, again);
    // Calls are routed by prefix with the original name.
    let (status, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call(&echo_b, json!({ "text": "to b" })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "to b");
    assert_eq!(b.calls(), vec!["echo".to_string()]);
    assert!(a.calls().is_empty());
    let (_, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call(&format!("{prefix_b}_add"), json!({ "a": 1, "b": 2 })),
        )
        .await;
    assert_eq!(
        body["error"]["code"], -32602,
        "unselected tools are not callable"
    );
    // A bare tool name listed by exactly one member goes to it (`add`: only a lists it,
    // b's selection leaves it out); one listed by several is ambiguous, naming the
    // composed names to use; an unknown one is unknown. Both are -32602, the upstream is
    // not called.
    let (status, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call("add", json!({ "a": 2, "b": 3 })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "5");
    assert_eq!(a.calls(), vec!["add".to_string()]);
    let (status, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call("echo", json!({ "text": "?" })),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (200, Some(-32602))
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Ambiguous") && message.contains(&echo_a) && message.contains(&echo_b),
        "{message}"
    );
    let (_, _, body) = api
        .rpc(&path, Some(&api.owner), call("nope", json!({})))
        .await;
    assert_eq!(body["error"]["code"], -32602);
    assert_eq!(body["error"]["message"], "Unknown tool: nope");
    assert_eq!(a.calls(), vec!["add".to_string()]);
    assert_eq!(b.calls(), vec!["echo".to_string()]);
    // Authorization per member connection.
    let (_, key) = api.key(json!({ conn_a.clone(): ["add"] })).await;
    assert_eq!(
        api.rpc(
            &path,
            Some(&key),
            call(&format!("{prefix_a}_add"), json!({ "a": 1, "b": 2 }))
        )
        .await
        .0,
        200
    );
    assert_eq!(
        api.rpc(&path, Some(&key), call("add", json!({ "a": 1, "b": 2 })))
            .await
            .0,
        200,
        "a bare name is authorized as the tool it resolves to"
    );
    let (_, echo_only) = api.key(json!({ conn_b.clone(): ["echo"] })).await;
    assert_eq!(
        api.rpc(
            &path,
            Some(&echo_only),
            call("add", json!({ "a": 1, "b": 2 }))
        )
        .await
        .0,
        403
    );
    assert_eq!(
        api.rpc(&path, Some(&key), call(&echo_b, json!({ "text": "x" })))
            .await
            .0,
        403
    );
    // Unknown or foreign agents are 404.
    let other = api.new_org("globex").await;
    let (s, _, _) = api
        .rpc(
            &format!("/api/globex/mcp/gateway/{agent}"),
            Some(&other),
            request("tools/list"),
        )
        .await;
    assert_eq!(s, 404);
}

both_backends!(gateway_keys_do_not_share_upstream_sessions);

async fn gateway_keys_do_not_share_upstream_sessions(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("tasks"), json!({}))
        .await;
    let out = api
        .ok(
            &api.owner,
            "COLLECTION_VIRTUAL_MCP_CREATE",
            json!({ "data": { "title": "g", "connections": [{ "connection_id": conn }] } }),
        )
        .await;
    let agent = out["item"]["id"].as_str().unwrap().to_string();
    let path = format!("/api/acme/mcp/gateway/{agent}");
    let (_, one) = api.key(json!({ conn.clone(): ["session"] })).await;
    let (_, two) = api.key(json!({ conn.clone(): ["session"] })).await;
    // The `session` tool answers the upstream session it ran in.
    let upstream_session = |key: String| {
        let (api, path) = (&api, &path);
        async move {
            let (status, _, body) = api.rpc(path, Some(&key), call("session", json!({}))).await;
            assert_eq!(status, 200, "{body}");
            body["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let first = upstream_session(one.clone()).await;
    let second = upstream_session(two.clone()).await;
    assert!(!first.is_empty() && !second.is_empty());
    assert_ne!(first, second, "two keys share an upstream session");
    assert_eq!(upstream_session(one).await, first);
    assert_eq!(upstream_session(two).await, second);
}
