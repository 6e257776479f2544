//! A loopback OpenAI-compatible chat-completions provider that streams text and tool calls.
//!
//! Script: a user message containing "use tool" gets a call of the first offered tool whose
//! name ends in `_echo` (arguments `{"text":"hello"}`); after a tool result it answers
//! "Tool said: <result>"; "fail" answers HTTP 500; "stall" waits 30 s; "hold" waits for
//! [`Provider::release`]; otherwise it answers "Hello there, friend".

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the provider saw.
#[derive(Default)]
pub struct Provider {
    /// Request bodies.
    pub requests: Mutex<Vec<Value>>,
    active: AtomicUsize,
    /// Highest number of concurrent requests.
    pub max_active: AtomicUsize,
    /// Lets one "hold" request answer.
    pub release: tokio::sync::Notify,
}

/// A running provider double.
pub struct LlmDouble {
    /// Base URL (`PLATFORM_LLM_BASE_URL`).
    pub base_url: String,
    /// What it saw.
    pub provider: Arc<Provider>,
}

fn sse(events: Vec<Value>) -> Response {
    let mut body = String::new();
    for e in events {
        body.push_str(&format!("data: {e}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    ([("content-type", "text/event-stream")], body).into_response()
}

fn delta(d: Value, finish: Option<&str>) -> Value {
    json!({ "id": "c", "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": d, "finish_reason": finish }] })
}

async fn complete(State(p): State<Arc<Provider>>, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap();
    p.requests.lock().unwrap().push(request.clone());
    let now = p.active.fetch_add(1, Ordering::SeqCst) + 1;
    p.max_active.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let response = answer(&p, &request).await;
    p.active.fetch_sub(1, Ordering::SeqCst);
    response
}

async fn answer(p: &Provider, request: &Value) -> Response {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    if last["role"] == "tool" {
        let said = last["content"].as_str().unwrap_or_default();
        return sse(vec![
            delta(
                json!({ "role": "assistant", "content": "Tool said: " }),
                None,
            ),
            delta(json!({ "content": said }), None),
            delta(json!({}), Some("stop")),
        ]);
    }
    let text = last["content"].as_str().unwrap_or_default();
    if text.contains("fail") {
        return (StatusCode::INTERNAL_SERVER_ERROR, "provider broke").into_response();
    }
    if text.contains("stall") {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    if text.contains("hold") {
        p.release.notified().await;
    }
    if text.contains("use tool") {
        let tool = request["tools"]
            .as_array()
            .and_then(|t| {
                t.iter()
                    .find(|t| t["function"]["name"].as_str().unwrap().ends_with("_echo"))
            })
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .expect("an echo tool is offered");
        return sse(vec![
            delta(
                json!({ "role": "assistant", "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
                "function": { "name": tool, "arguments": "" } }] }),
                None,
            ),
            delta(
                json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"text\":" } }] }),
                None,
            ),
            delta(
                json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "\"hello\"}" } }] }),
                None,
            ),
            delta(json!({}), Some("tool_calls")),
        ]);
    }
    sse(vec![
        delta(json!({ "role": "assistant", "content": "Hello " }), None),
        delta(json!({ "content": "there, " }), None),
        delta(json!({ "content": "friend" }), None),
        delta(json!({}), Some("stop")),
    ])
}

/// Starts the provider double.
pub async fn start() -> LlmDouble {
    let provider = Arc::new(Provider::default());
    let router = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(provider.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    LlmDouble {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        provider,
    }
}
