//! Stored credentials only go to the configured URL: a changed URL drops them, and
//! upstream redirects are never followed.

use serde_json::json;

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double;

both_backends!(url_change_drops_credentials, redirects_are_not_followed);

async fn url_change_drops_credentials(backend: Backend) {
    let api = Api::start(backend).await;
    let first = mcp_double::start(false).await;
    let second = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &first.url, json!({
            "connection_token": "secret-token", "connection_headers": { "headers": { "X-Tenant": "t-1" } } }))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    // A key allowed to update connections points the URL elsewhere, nothing else.
    let out = api
        .ok(
            &api.owner,
            "COLLECTION_CONNECTIONS_UPDATE",
            json!({ "id": conn, "data": { "connection_url": second.url } }),
        )
        .await;
    assert_eq!(out["item"]["has_token"], false, "{out}");
    assert_eq!(out["item"]["connection_headers"]["header_names"], json!([]));
    let (status, _, body) = api
        .rpc(&path, Some(&api.owner), call("whoami", json!({})))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "", "no token sent");
    assert_eq!(second.last_header("x-tenant"), None, "no header sent");
    // Updating other fields keeps the credentials; a new URL with new ones uses those.
    api.ok(
        &api.owner,
        "COLLECTION_CONNECTIONS_UPDATE",
        json!({ "id": conn, "data": { "connection_url": first.url,
            "connection_token": "new-token", "connection_headers": { "headers": { "X-Tenant": "t-2" } } } }),
    )
    .await;
    let out = api
        .ok(
            &api.owner,
            "COLLECTION_CONNECTIONS_UPDATE",
            json!({ "id": conn, "data": { "title": "renamed", "connection_url": first.url } }),
        )
        .await;
    assert_eq!(out["item"]["has_token"], true, "same URL keeps the token");
    let (_, _, body) = api
        .rpc(&path, Some(&api.owner), call("whoami", json!({})))
        .await;
    assert_eq!(body["result"]["content"][0]["text"], "Bearer new-token");
    assert_eq!(first.last_header("x-tenant").as_deref(), Some("t-2"));
}

async fn redirects_are_not_followed(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("redirect"), json!({
            "connection_token": "secret-token", "connection_headers": { "headers": { "X-Api-Key": "k-1" } } }))
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    for body in [
        call("echo", json!({ "text": "x" })),
        request("tools/list"),
        request("initialize"),
    ] {
        let (status, _, out) = api.rpc(&path, Some(&api.owner), body).await;
        assert_eq!(status, 503, "{out}");
        assert_eq!(out["error"]["code"], -32603, "{out}");
    }
    assert!(upstream.hits("/redirect/mcp") > 0);
    assert_eq!(upstream.hits("/mcp"), 0, "the redirect was never followed");
}
