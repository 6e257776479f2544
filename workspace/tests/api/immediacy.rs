//! What a call may do is decided by the database as of the call, on every server sharing
//! it, even though each server keeps copies of keys and connections: a revoked or expired
//! key and a deactivated or changed connection apply to the very next call, whether the
//! change came through this server, another one, or SQL run by hand.

use std::time::Duration;

use serde_json::{Value, json};
use sitefile_workspace::clock::{ManualClock, now_ms};
use sqlx::Connection;

use crate::both_backends;
use crate::common::{Api, Backend, call};
use crate::mcp_double;

both_backends!(
    revoked_keys_stop_at_once_on_every_server,
    expired_keys_stop_at_once_on_every_server,
    connection_changes_apply_at_once_on_every_server
);

/// A proxied `echo` call on `api` with `key`: the HTTP status.
async fn echo(api: &Api, key: &str, connection: &str) -> u16 {
    let path = format!("/api/{}/mcp/{connection}", api.org);
    let (status, _, body) = api
        .rpc(&path, Some(key), call("echo", json!({ "text": "hi" })))
        .await;
    if status == 200 {
        assert_eq!(body["result"]["content"][0]["text"], "hi", "{body}");
    }
    status
}

/// Calls twice through each server, so each has the key and the connection in memory.
async fn warm(servers: &[&Api], key: &str, connection: &str) {
    for api in servers {
        for _ in 0..2 {
            assert_eq!(echo(api, key, connection).await, 200);
        }
    }
}

/// Changes the connection `id` through `api`'s management endpoint.
async fn update(api: &Api, id: &str, data: Value) {
    let body = json!({ "id": id, "data": data });
    api.ok(&api.owner, "COLLECTION_CONNECTIONS_UPDATE", body)
        .await;
}

/// Runs `sql` on the database directly, as an operator would.
async fn by_hand(api: &Api, sql: &str) {
    sqlx::any::install_default_drivers();
    let mut db = sqlx::AnyConnection::connect(api.database_url())
        .await
        .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(&mut db)
        .await
        .unwrap();
    db.close().await.unwrap();
}

async fn revoked_keys_stop_at_once_on_every_server(backend: Backend) {
    let a = Api::start(backend).await;
    let b = a.another_server(|_| {}).await;
    let upstream = mcp_double::start(false).await;
    let conn = a.connection(&a.owner, &upstream.url, json!({})).await;
    let grant = json!({ conn.clone(): ["echo"], "self": ["COLLECTION_THREADS_LIST"] });

    // Revoked through one server: refused by both on the next call.
    let (id, key) = a.key(grant.clone()).await;
    warm(&[&a, &b], &key, &conn).await;
    a.ok(&a.owner, "API_KEY_DELETE", json!({ "keyId": id }))
        .await;
    assert_eq!(echo(&a, &key, &conn).await, 401, "revoking server");
    assert_eq!(echo(&b, &key, &conn).await, 401, "other server");
    let (status, _) = b.tool(&key, "COLLECTION_THREADS_LIST", json!({})).await;
    assert_eq!(status, 401, "management endpoint of the other server");

    // Revoked through the other server.
    let (id, key) = a.key(grant.clone()).await;
    warm(&[&a, &b], &key, &conn).await;
    b.ok(&b.owner, "API_KEY_DELETE", json!({ "keyId": id }))
        .await;
    assert_eq!(echo(&a, &key, &conn).await, 401);
    assert_eq!(echo(&b, &key, &conn).await, 401);

    // Deleted by SQL run by hand, bypassing every server.
    let (id, key) = a.key(grant).await;
    warm(&[&a, &b], &key, &conn).await;
    by_hand(&a, &format!("DELETE FROM api_keys WHERE id = '{id}'")).await;
    assert_eq!(echo(&a, &key, &conn).await, 401);
    assert_eq!(echo(&b, &key, &conn).await, 401);

    // The keys left alone still work on both.
    warm(&[&a, &b], &a.owner, &conn).await;
}

async fn expired_keys_stop_at_once_on_every_server(backend: Backend) {
    let clock = ManualClock::new(now_ms());
    let a = Api::start_with(backend, |c| c.clock = clock.clock()).await;
    let b = a.another_server(|_| {}).await;
    let upstream = mcp_double::start(false).await;
    let conn = a.connection(&a.owner, &upstream.url, json!({})).await;
    let out = a
        .ok(
            &a.owner,
            "API_KEY_CREATE",
            json!({ "name": "short", "expiresIn": 60, "permissions": { conn.clone(): ["echo"] } }),
        )
        .await;
    let key = out["key"].as_str().unwrap().to_string();
    warm(&[&a, &b], &key, &conn).await;
    clock.advance(Duration::from_millis(59_999));
    warm(&[&a, &b], &key, &conn).await;
    clock.advance(Duration::from_millis(1));
    assert_eq!(echo(&a, &key, &conn).await, 401);
    assert_eq!(echo(&b, &key, &conn).await, 401);
}

async fn connection_changes_apply_at_once_on_every_server(backend: Backend) {
    let a = Api::start(backend).await;
    let b = a.another_server(|_| {}).await;
    let upstream = mcp_double::start(false).await;
    let conn = a
        .connection(
            &a.owner,
            &upstream.url,
            json!({ "connection_token": "first" }),
        )
        .await;
    warm(&[&a, &b], &a.owner, &conn).await;
    assert_eq!(
        upstream.last_header("authorization").as_deref(),
        Some("Bearer first")
    );

    // A credential changed through one server is the one the other sends next.
    update(&a, &conn, json!({ "connection_token": "second" })).await;
    assert_eq!(echo(&b, &a.owner, &conn).await, 200);
    assert_eq!(
        upstream.last_header("authorization").as_deref(),
        Some("Bearer second")
    );

    // Deactivated through one server: both answer 503 on the next call, and serve again
    // once it is reactivated through the other.
    update(&a, &conn, json!({ "status": "inactive" })).await;
    assert_eq!(echo(&a, &a.owner, &conn).await, 503);
    assert_eq!(echo(&b, &a.owner, &conn).await, 503);
    update(&b, &conn, json!({ "status": "active" })).await;
    warm(&[&a, &b], &a.owner, &conn).await;

    // Deactivated by SQL run by hand.
    by_hand(
        &a,
        &format!("UPDATE connections SET status = 'inactive' WHERE id = '{conn}'"),
    )
    .await;
    assert_eq!(echo(&a, &a.owner, &conn).await, 503);
    assert_eq!(echo(&b, &a.owner, &conn).await, 503);

    // Deleted through the other server: 404 on both.
    by_hand(
        &a,
        &format!("UPDATE connections SET status = 'active' WHERE id = '{conn}'"),
    )
    .await;
    warm(&[&a, &b], &a.owner, &conn).await;
    b.ok(
        &b.owner,
        "COLLECTION_CONNECTIONS_DELETE",
        json!({ "id": conn }),
    )
    .await;
    assert_eq!(echo(&a, &a.owner, &conn).await, 404);
    assert_eq!(echo(&b, &a.owner, &conn).await, 404);
}
