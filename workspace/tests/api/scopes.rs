//! Key scopes on the proxy (every JSON-RPC method) and on key revocation.

use serde_json::json;

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double;

both_backends!(proxy_method_scopes, key_delete_is_a_subset_check);

async fn proxy_method_scopes(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(
            &api.owner,
            &upstream.url,
            json!({ "connection_token": "secret-token" }),
        )
        .await;
    let other = api.connection(&api.owner, &upstream.url, json!({})).await;
    let path = format!("/api/acme/mcp/{conn}");
    let (_, none) = api.key(json!({ other.clone(): ["*"] })).await;
    let (_, echo) = api.key(json!({ conn.clone(): ["echo"] })).await;
    let (_, reader) = api.key(json!({ conn.clone(): ["resources/list"] })).await;
    let (_, full) = api.key(json!({ conn.clone(): ["*"] })).await;
    let notification = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let status = |(s, _, _): (u16, reqwest::header::HeaderMap, serde_json::Value)| s;
    // No grant on this connection: nothing but public tools.
    for method in [
        "initialize",
        "ping",
        "tools/list",
        "resources/list",
        "prompts/list",
        "completion/complete",
    ] {
        let (s, _, body) = api.rpc(&path, Some(&none), request(method)).await;
        assert_eq!(s, 403, "{method}: {body}");
        assert_eq!(body["error"]["code"], -32003);
    }
    assert_eq!(
        status(api.rpc(&path, Some(&none), notification.clone()).await),
        403
    );
    assert_eq!(
        status(
            api.rpc(&path, Some(&none), call("public_ping", json!({})))
                .await
        ),
        200
    );
    // A tool grant opens the session methods and the listing, not resources or prompts.
    for method in ["initialize", "ping", "tools/list"] {
        assert_eq!(
            status(api.rpc(&path, Some(&echo), request(method)).await),
            200,
            "{method}"
        );
    }
    assert_eq!(
        status(api.rpc(&path, Some(&echo), notification.clone()).await),
        202
    );
    for method in [
        "resources/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
    ] {
        assert_eq!(
            status(api.rpc(&path, Some(&echo), request(method)).await),
            403,
            "{method}"
        );
    }
    // resources/* and prompts/* need the method (or `*`); unknown methods need `*`.
    assert_eq!(
        status(
            api.rpc(&path, Some(&reader), request("resources/list"))
                .await
        ),
        200
    );
    assert_eq!(
        status(api.rpc(&path, Some(&reader), request("prompts/list")).await),
        403
    );
    assert_eq!(
        status(
            api.rpc(&path, Some(&reader), request("completion/complete"))
                .await
        ),
        403
    );
    for method in ["resources/list", "prompts/list", "completion/complete"] {
        let (s, _, body) = api.rpc(&path, Some(&full), request(method)).await;
        assert_eq!(s, 200, "{method}: {body}");
    }
}

async fn key_delete_is_a_subset_check(backend: Backend) {
    let api = Api::start(backend).await;
    let (wide, _) = api
        .key(json!({ "self": ["API_KEY_DELETE", "API_KEY_CREATE", "COLLECTION_THREADS_GET"] }))
        .await;
    let (narrow_id, narrow) = api.key(json!({ "self": ["API_KEY_DELETE"] })).await;
    let (peer, _) = api.key(json!({ "self": ["API_KEY_DELETE"] })).await;
    // The narrow key cannot revoke a wider key, nor the owner key.
    let (status, out) = api
        .tool(&narrow, "API_KEY_DELETE", json!({ "keyId": wide }))
        .await;
    assert_eq!(status, 403, "{out}");
    let keys = api.ok(&api.owner, "API_KEY_LIST", json!({})).await;
    let owner_id = keys["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["permissions"] == json!({ "*": ["*"] }))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        api.tool(&narrow, "API_KEY_DELETE", json!({ "keyId": owner_id }))
            .await
            .0,
        403
    );
    let keys = api.ok(&api.owner, "API_KEY_LIST", json!({})).await;
    assert_eq!(
        keys["items"].as_array().unwrap().len(),
        4,
        "nothing was revoked"
    );
    // It can revoke a key with the same (or fewer) permissions, and itself.
    api.ok(&narrow, "API_KEY_DELETE", json!({ "keyId": peer }))
        .await;
    api.ok(&narrow, "API_KEY_DELETE", json!({ "keyId": narrow_id }))
        .await;
    // The owner revokes anything.
    api.ok(&api.owner, "API_KEY_DELETE", json!({ "keyId": wide }))
        .await;
}
