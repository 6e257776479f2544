//! Every REST error of the workspace API has the one body of every sitefile HTTP error,
//! `{"error": {"code", "message"}}` with a code from `docs/errors.md`, including the refusals
//! the HTTP layer makes before a handler runs (a body over the limit, a wrong method, an
//! unknown route). MCP endpoints answer JSON-RPC errors, a body over the limit included.
//! Transport and routing only, so on SQLite alone.

use crate::common::{Api, Backend};
use serde_json::{Value, json};

/// The status and `error.code` of an answer, checking the body's shape on the way.
async fn refusal(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    let body: Value = response.json().await.unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let error = body["error"]
        .as_object()
        .unwrap_or_else(|| panic!("{body}"));
    assert!(error["message"].is_string(), "{body}");
    (status, error["code"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_errors_share_one_body() {
    let api = Api::start(Backend::Sqlite).await;
    let tools = |tool: &str| format!("{}/api/acme/tools/{tool}", api.base);
    let fresh = reqwest::Client::new;

    let no_key = api.client.post(tools("COLLECTION_THREADS_LIST"));
    let answer = no_key.json(&json!({})).send().await.unwrap();
    assert_eq!(refusal(answer).await, (401, "UNAUTHORIZED".into()));

    let bad_json = api.client.post(tools("COLLECTION_THREADS_GET"));
    let answer = bad_json.bearer_auth(&api.owner).body("{not json").send();
    assert_eq!(
        refusal(answer.await.unwrap()).await,
        (400, "INVALID_JSON".into())
    );

    let invalid = api.client.post(tools("COLLECTION_THREADS_GET"));
    let answer = invalid.bearer_auth(&api.owner).json(&json!({})).send();
    assert_eq!(
        refusal(answer.await.unwrap()).await,
        (400, "INVALID_REQUEST".into())
    );

    let unknown = api.client.post(tools("NO_SUCH_TOOL"));
    let answer = unknown.bearer_auth(&api.owner).json(&json!({})).send();
    assert_eq!(
        refusal(answer.await.unwrap()).await,
        (404, "NOT_FOUND".into())
    );

    let huge = format!("{{\"id\":\"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let too_large = fresh().post(tools("COLLECTION_THREADS_GET"));
    let answer = too_large.bearer_auth(&api.owner).body(huge).send();
    assert_eq!(
        refusal(answer.await.unwrap()).await,
        (413, "BODY_TOO_LARGE".into())
    );

    let wrong_method = api.client.get(tools("COLLECTION_THREADS_LIST"));
    let answer = wrong_method.bearer_auth(&api.owner).send().await.unwrap();
    assert_eq!(refusal(answer).await, (405, "METHOD_NOT_ALLOWED".into()));

    let nowhere = api.client.get(format!("{}/api/acme/nowhere", api.base));
    let answer = nowhere.bearer_auth(&api.owner).send().await.unwrap();
    assert_eq!(refusal(answer).await, (404, "NOT_FOUND".into()));

    let not_utf8 = api.client.post(format!("{}/api/%FF/tools/X", api.base));
    let answer = not_utf8.bearer_auth(&api.owner).send().await.unwrap();
    assert_eq!(refusal(answer).await, (404, "NOT_FOUND".into()));

    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":\"{}\"}}",
        "x".repeat(2 << 20)
    );
    let rpc = fresh().post(format!("{}/api/acme/mcp/self", api.base));
    let answer = rpc
        .bearer_auth(&api.owner)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 413);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(
        (body["jsonrpc"].as_str(), body["error"]["code"].as_i64()),
        (Some("2.0"), Some(-32600)),
        "{body}"
    );
}
