//! Threads, connections and agents through the REST tools and the MCP management endpoint.

use serde_json::json;

use crate::both_backends;
use crate::common::{Api, Backend, call, request};

both_backends!(
    threads_crud,
    connections_never_return_credentials,
    agents_crud_and_self_mcp
);

async fn threads_crud(backend: Backend) {
    let api = Api::start(backend).await;
    let agent = api.agent(&api.owner, &[]).await;
    let out = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "Support", "virtual_mcp_id": agent, "id": "ticket-42" } }),
        )
        .await;
    assert_eq!(out["item"]["id"], "ticket-42");
    assert_eq!(out["item"]["status"], "completed");
    assert_eq!(out["item"]["virtual_mcp_id"], agent);
    // Idempotent on a caller-supplied id.
    let again = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "Other", "virtual_mcp_id": agent, "id": "ticket-42" } }),
        )
        .await;
    assert_eq!(again["item"]["title"], "Support");
    let generated = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "Gen", "virtual_mcp_id": agent } }),
        )
        .await;
    assert!(
        generated["item"]["id"]
            .as_str()
            .unwrap()
            .starts_with("thrd_")
    );
    for bad in [
        json!({ "data": { "virtual_mcp_id": agent, "id": "has space" } }),
        json!({ "data": {} }),
        json!({}),
    ] {
        assert_eq!(
            api.tool(&api.owner, "COLLECTION_THREADS_CREATE", bad.clone())
                .await
                .0,
            400,
            "{bad}"
        );
    }
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "virtual_mcp_id": "nope" } })
        )
        .await
        .0,
        404
    );
    let got = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_GET",
            json!({ "id": "ticket-42" }),
        )
        .await;
    assert_eq!(got["item"]["title"], "Support");
    let list = api
        .ok(&api.owner, "COLLECTION_THREADS_LIST", json!({ "limit": 1 }))
        .await;
    assert_eq!(list["totalCount"], 2);
    assert_eq!(list["hasMore"], true);
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let messages = api
        .ok(
            &api.owner,
            "COLLECTION_THREAD_MESSAGES_LIST",
            json!({ "thread_id": "ticket-42", "limit": 10 }),
        )
        .await;
    assert_eq!(
        messages,
        json!({ "items": [], "totalCount": 0, "hasMore": false })
    );
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_THREAD_MESSAGES_LIST",
            json!({ "thread_id": "nope" })
        )
        .await
        .0,
        404
    );
    assert_eq!(
        api.tool(&api.owner, "COLLECTION_THREAD_MESSAGES_LIST", json!({}))
            .await
            .0,
        400
    );

    // Thread ids are scoped per organization: another org neither sees nor collides.
    let other = api.new_org("globex").await;
    assert_eq!(
        api.tool_in(
            "globex",
            &other,
            "COLLECTION_THREADS_GET",
            json!({ "id": "ticket-42" })
        )
        .await
        .0,
        404
    );
}

async fn connections_never_return_credentials(backend: Backend) {
    let api = Api::start(backend).await;
    let id = api
        .connection(&api.owner, "https://mcp.example.com/mcp", json!({
            "connection_token": "tok-SECRET-1", "connection_headers": { "headers": { "X-Tenant": "hdr-SECRET-2" } } }))
        .await;
    let got = api
        .ok(
            &api.owner,
            "COLLECTION_CONNECTIONS_GET",
            json!({ "id": id }),
        )
        .await;
    let item = &got["item"];
    assert_eq!(item["status"], "active");
    assert_eq!(item["tool_timeout_ms"], 300000);
    assert_eq!(item["has_token"], true);
    assert_eq!(
        item["connection_headers"]["header_names"],
        json!(["X-Tenant"])
    );
    let list = api
        .ok(&api.owner, "COLLECTION_CONNECTIONS_LIST", json!({}))
        .await;
    let updated = api
        .ok(&api.owner, "COLLECTION_CONNECTIONS_UPDATE", json!({ "id": id, "data": { "status": "inactive", "tool_timeout_ms": 1000, "title": "renamed" } }))
        .await;
    assert_eq!(updated["item"]["status"], "inactive");
    assert_eq!(updated["item"]["tool_timeout_ms"], 1000);
    for text in [got.to_string(), list.to_string(), updated.to_string()] {
        assert!(!text.contains("SECRET"), "credentials leaked: {text}");
    }
    for bad in [
        json!({ "data": { "title": "t", "connection_url": "http://mcp.example.com/mcp" } }),
        json!({ "data": { "title": "t", "connection_url": "https://u:p@mcp.example.com/" } }),
        json!({ "data": { "title": "t", "connection_url": "https://x", "status": "broken" } }),
        json!({ "data": { "title": "t", "connection_url": "https://x", "tool_timeout_ms": "5" } }),
        json!({ "data": { "title": "t" } }),
    ] {
        assert_eq!(
            api.tool(&api.owner, "COLLECTION_CONNECTIONS_CREATE", bad.clone())
                .await
                .0,
            400,
            "{bad}"
        );
    }
    let other = api.new_org("globex").await;
    assert_eq!(
        api.tool_in(
            "globex",
            &other,
            "COLLECTION_CONNECTIONS_GET",
            json!({ "id": id })
        )
        .await
        .0,
        404
    );
    let deleted = api
        .ok(
            &api.owner,
            "COLLECTION_CONNECTIONS_DELETE",
            json!({ "id": id }),
        )
        .await;
    assert_eq!(deleted["success"], true);
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_CONNECTIONS_GET",
            json!({ "id": id })
        )
        .await
        .0,
        404
    );
}

async fn agents_crud_and_self_mcp(backend: Backend) {
    let api = Api::start(backend).await;
    let conn = api
        .connection(&api.owner, "https://mcp.example.com/mcp", json!({}))
        .await;
    let agent = api.agent(&api.owner, &[&conn]).await;
    let got = api
        .ok(
            &api.owner,
            "COLLECTION_VIRTUAL_MCP_GET",
            json!({ "id": agent }),
        )
        .await;
    assert_eq!(got["item"]["connections"][0]["connection_id"], conn);
    let upd = api
        .ok(&api.owner, "COLLECTION_VIRTUAL_MCP_UPDATE", json!({ "id": agent, "data": {
            "instructions": null, "connections": [{ "connection_id": conn, "selected_tools": ["echo"] }] } }))
        .await;
    assert_eq!(upd["item"]["instructions"], serde_json::Value::Null);
    assert_eq!(
        upd["item"]["connections"][0]["selected_tools"],
        json!(["echo"])
    );
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_VIRTUAL_MCP_CREATE",
            json!({ "data": { "title": "x", "connections": [{ "connection_id": "nope" }] } })
        )
        .await
        .0,
        400
    );
    // Agents are listed with connections (their ids are found there).
    let list = api
        .ok(&api.owner, "COLLECTION_CONNECTIONS_LIST", json!({}))
        .await;
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["id"] == agent && i["connection_type"] == "VIRTUAL")
    );
    assert_eq!(
        api.ok(&api.owner, "COLLECTION_VIRTUAL_MCP_LIST", json!({}))
            .await["totalCount"],
        1
    );

    // The same tools over MCP at /api/:org/mcp/self.
    let path = "/api/acme/mcp/self";
    let (status, headers, _) = api.rpc(path, None, request("tools/list")).await;
    assert_eq!(status, 401);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("/api/acme/mcp/self/.well-known/oauth-protected-resource")
    );
    let (status, _, init) = api.rpc(path, Some(&api.owner), json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } })).await;
    assert_eq!(status, 200);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let (_, _, tools) = api.rpc(path, Some(&api.owner), request("tools/list")).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "COLLECTION_THREADS_CREATE",
        "COLLECTION_VIRTUAL_MCP_DELETE",
        "API_KEY_CREATE",
        "COLLECTION_CONNECTIONS_UPDATE",
    ] {
        assert!(names.contains(&expected), "{expected}");
    }
    let (status, _, out) = api
        .rpc(
            path,
            Some(&api.owner),
            call("COLLECTION_VIRTUAL_MCP_GET", json!({ "id": agent })),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(out["result"]["structuredContent"]["item"]["id"], agent);
    let (_, key) = api
        .key(json!({ "self": ["COLLECTION_THREADS_LIST"] }))
        .await;
    let (status, _, out) = api
        .rpc(
            path,
            Some(&key),
            call("COLLECTION_VIRTUAL_MCP_DELETE", json!({ "id": agent })),
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(out["error"]["code"], -32003);
    let (status, _, out) = api
        .rpc(
            path,
            Some(&api.owner),
            call("COLLECTION_VIRTUAL_MCP_GET", json!({})),
        )
        .await;
    assert_eq!((status, out["error"]["code"].as_i64()), (200, Some(-32602)));
    let (_, _, out) = api
        .rpc(
            path,
            Some(&api.owner),
            call("COLLECTION_VIRTUAL_MCP_DELETE", json!({ "id": agent })),
        )
        .await;
    assert_eq!(out["result"]["structuredContent"]["success"], true);
    let (_, _, out) = api
        .rpc(
            path,
            Some(&api.owner),
            call("COLLECTION_VIRTUAL_MCP_GET", json!({ "id": agent })),
        )
        .await;
    assert_eq!(out["result"]["isError"], true);
    let r = api
        .client
        .get(format!("{}{path}", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
}
