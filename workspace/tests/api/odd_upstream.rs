//! Upstream answers that are valid JSON but not what MCP promises never panic.

use serde_json::json;

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double;

both_backends!(odd_upstream_answers_do_not_panic);

async fn odd_upstream_answers_do_not_panic(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("odd"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    // JSON that is not a JSON-RPC object: a JSON-RPC error, the server keeps serving.
    for method in ["resources/list", "resources/templates/list"] {
        let (status, _, body) = api.rpc(&path, Some(&api.owner), request(method)).await;
        assert_eq!(status, 200, "{method}: {body}");
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], 1);
        assert_eq!(body["error"]["code"], -32603, "{body}");
    }
    let (status, _, body) = api
        .rpc(
            &path,
            Some(&api.owner),
            call("echo", json!({ "text": "still up" })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "still up");
    // A gateway listing a tool whose `_meta` is not an object replaces it.
    let agent = api.agent(&api.owner, &[&conn]).await;
    let gateway = format!("/api/acme/mcp/gateway/{agent}");
    let (status, _, list) = api
        .rpc(&gateway, Some(&api.owner), request("tools/list"))
        .await;
    assert_eq!(status, 200, "{list}");
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 7, "the non-object entry is skipped: {list}");
    for tool in tools {
        assert_eq!(tool["_meta"]["gatewayClientId"], conn, "{tool}");
    }
    let public = tools
        .iter()
        .find(|t| t["name"].as_str().unwrap().ends_with("_public_ping"))
        .unwrap();
    assert_eq!(
        public["_meta"]["mcp.platform"]["public_tool"], true,
        "other _meta kept"
    );
}
