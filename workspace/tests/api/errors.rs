//! Every REST error of the workspace API has the one body of every sitefile HTTP error,
//! `{"error": {"code", "message"}}` with a code from `docs/src/reference/errors.md`, including the refusals
//! the HTTP layer makes before a handler runs (a body over the limit, a wrong method, an
//! unknown route). MCP endpoints answer JSON-RPC errors, a body over the limit included.
//! Transport and routing only, so on SQLite alone.

use crate::common::{Api, Backend, post_over_limit};
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

    let wrong_method = api.client.get(tools("COLLECTION_THREADS_LIST"));
    let answer = wrong_method.bearer_auth(&api.owner).send().await.unwrap();
    assert_eq!(refusal(answer).await, (405, "METHOD_NOT_ALLOWED".into()));

    let nowhere = api.client.get(format!("{}/api/acme/nowhere", api.base));
    let answer = nowhere.bearer_auth(&api.owner).send().await.unwrap();
    assert_eq!(refusal(answer).await, (404, "NOT_FOUND".into()));

    let not_utf8 = api.client.post(format!("{}/api/%FF/tools/X", api.base));
    let answer = not_utf8.bearer_auth(&api.owner).send().await.unwrap();
    assert_eq!(refusal(answer).await, (404, "NOT_FOUND".into()));

    // Bodies over the limit: `bodies_over_the_limit_are_refused_in_json`.
}

/// A body over the 1 MiB limit, declared by `Content-Length` or streamed chunked past it, is
/// refused 413 in JSON on the `/tools`, `/mcp/self` and `/pilot` routes: the one error body on
/// the REST routes, a JSON-RPC error on the MCP one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_are_refused_in_json() {
    let api = Api::start(Backend::Sqlite).await;
    let routes = [
        "/api/acme/tools/COLLECTION_THREADS_LIST",
        "/api/acme/mcp/self",
        "/api/acme/pilot/threads/th-1/messages",
    ];
    for path in routes {
        for chunked in [false, true] {
            let (status, content_type, body) = post_over_limit(&api, path, chunked).await;
            let what = format!("{path} (chunked: {chunked}): {content_type} {body}");
            assert_eq!(status, 413, "{what}");
            assert!(content_type.starts_with("application/json"), "{what}");
            let body: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{what}"));
            if path.ends_with("/mcp/self") {
                assert_eq!(body["jsonrpc"], "2.0", "{what}");
                assert_eq!(body["error"]["code"], -32600, "{what}");
            } else {
                assert_eq!(body["error"]["code"], "BODY_TOO_LARGE", "{what}");
                assert!(body["error"]["message"].is_string(), "{what}");
            }
        }
    }
}

/// Any other method on an MCP endpoint is 405 with a JSON-RPC error and the methods it takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_methods_on_mcp_endpoints_are_refused_in_json() {
    let api = Api::start(Backend::Sqlite).await;
    let cases = [
        ("/api/acme/mcp/self", "POST"),
        ("/api/acme/mcp/gateway/some-agent", "POST"),
        ("/api/acme/mcp/some-connection", "GET, POST, DELETE"),
        ("/mcp/some-connection", "GET, POST, DELETE"),
    ];
    for (path, allow) in cases {
        for method in [reqwest::Method::PUT, reqwest::Method::PATCH] {
            let answer = api
                .client
                .request(method.clone(), format!("{}{path}", api.base))
                .bearer_auth(&api.owner)
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 405, "{method} {path}");
            assert_eq!(answer.headers()["allow"], allow, "{method} {path}");
            let body: Value = answer.json().await.unwrap();
            assert_eq!(body["error"]["code"], -32600, "{method} {path}: {body}");
        }
    }
}
