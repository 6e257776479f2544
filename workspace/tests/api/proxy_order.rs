//! Proxy order (spec rule 8): the tool is authorized before anything else can fail, and
//! the remaining rows of the status table (upstream 5xx, expired and revoked keys).

use serde_json::json;
use sitefile_workspace::clock::{ManualClock, now_ms};

use crate::both_backends;
use crate::common::{Api, Backend, call, request};
use crate::mcp_double;

both_backends!(authorize_before_upstream, upstream_5xx_and_dead_keys);

async fn authorize_before_upstream(backend: Backend) {
    let api = Api::start(backend).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    drop(listener);
    let conn = api
        .connection(
            &api.owner,
            &dead_url,
            json!({ "connection_token": "secret-token" }),
        )
        .await;
    let path = format!("/api/acme/mcp/{conn}");
    let (_, key) = api.key(json!({ conn.clone(): ["echo"] })).await;
    // Not granted: 403 even though the upstream is down (its listing is unavailable).
    let (status, _, body) = api
        .rpc(&path, Some(&key), call("add", json!({ "a": 1, "b": 2 })))
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], -32003);
    // Anonymous: 401, not 503.
    let (status, _, _) = api.rpc(&path, None, call("add", json!({}))).await;
    assert_eq!(status, 401);
    // Granted: the call goes on and meets the dead upstream.
    let (status, _, _) = api
        .rpc(&path, Some(&key), call("echo", json!({ "text": "x" })))
        .await;
    assert_eq!(status, 503);
}

async fn upstream_5xx_and_dead_keys(backend: Backend) {
    let clock = ManualClock::new(now_ms());
    let api = Api::start_with(backend, |c| c.clock = clock.clock()).await;
    let upstream = mcp_double::start(false).await;
    let broken = api
        .connection(&api.owner, &upstream.mode_url("error500"), json!({}))
        .await;
    let path = format!("/api/acme/mcp/{broken}");
    for body in [call("echo", json!({ "text": "x" })), request("tools/list")] {
        let (status, _, out) = api.rpc(&path, Some(&api.owner), body).await;
        assert_eq!(status, 503, "{out}");
        assert_eq!(out["error"]["code"], -32603);
    }
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let path = format!("/api/acme/mcp/{conn}");
    // A revoked key is 401 with the challenge.
    let (id, key) = api.key(json!({ conn.clone(): ["*"] })).await;
    assert_eq!(
        api.rpc(&path, Some(&key), call("echo", json!({ "text": "x" })))
            .await
            .0,
        200
    );
    api.ok(&api.owner, "API_KEY_DELETE", json!({ "keyId": id }))
        .await;
    let (status, headers, body) = api
        .rpc(&path, Some(&key), call("echo", json!({ "text": "x" })))
        .await;
    assert_eq!(status, 401, "{body}");
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer ")
    );
    // An expired key too.
    let out = api
        .ok(
            &api.owner,
            "API_KEY_CREATE",
            json!({ "name": "short", "expiresIn": 1, "permissions": { conn.clone(): ["*"] } }),
        )
        .await;
    let short = out["key"].as_str().unwrap().to_string();
    assert_eq!(
        api.rpc(&path, Some(&short), request("tools/list")).await.0,
        200
    );
    clock.advance(std::time::Duration::from_secs(1));
    let (status, headers, _) = api.rpc(&path, Some(&short), request("tools/list")).await;
    assert_eq!(status, 401);
    assert!(headers.contains_key("www-authenticate"));
}
