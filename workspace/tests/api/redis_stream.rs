//! The run-stream buffer in Redis (`PLATFORM_REDIS_URL`): two servers over one database and
//! one Redis share it, so a run posted on one streams on the other; without Redis each server
//! has its own in-memory buffer. Redis tests fail (not skip) without `SITEFILE_TEST_REDIS_URL`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Api, Backend, database, read_chunks, wait_settled};
use crate::llm_double;
use crate::runs::{open_stream, post, provider_requests, resume_stream, user, whole_stream};

both_backends!(
    run_on_one_server_streams_on_another,
    resume_on_another_server
);

/// The test Redis server.
fn redis_url() -> String {
    std::env::var("SITEFILE_TEST_REDIS_URL").expect(
        "SITEFILE_TEST_REDIS_URL is not set: Redis tests need a server. \
         Run scripts/test.sh, or `source scripts/services.sh && services_start` first.",
    )
}

/// Two servers over one database (and `redis`, if any), an agent and a thread.
async fn two_servers(
    backend: Backend,
    redis: Option<String>,
) -> (Api, Api, String, String, llm_double::LlmDouble) {
    let llm = llm_double::start().await;
    let base = llm.base_url.clone();
    let a = Api::start_with(backend, |c| {
        c.llm.base_url = Some(base);
        c.llm.model = Some("default-model".into());
        c.redis_url = redis;
    })
    .await;
    let b = a.another_server(|_| {}).await;
    let agent = a.agent(&a.owner, &[]).await;
    let out = a
        .ok(
            &a.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "t", "virtual_mcp_id": agent, "id": "th-redis" } }),
        )
        .await;
    let thread = out["item"]["id"].as_str().unwrap().to_string();
    (a, b, agent, thread, llm)
}

/// Asserts one whole run: `start` (with `taskId`), the text, `finish`.
fn assert_whole_run(chunks: &[Value], task_id: &Value) {
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"start"), "{types:?}");
    assert_eq!(chunks[0]["messageMetadata"]["taskId"], *task_id);
    assert_eq!(types.last(), Some(&"finish"), "{types:?}");
    let text: String = chunks
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello there, friend");
}

async fn run_on_one_server_streams_on_another(backend: Backend) {
    let (a, b, agent, thread, _llm) = two_servers(backend, Some(redis_url())).await;
    let body = json!({ "messages": [user("hi")], "agent": { "id": agent } });
    // Opened on B before the post on A: every chunk of the run arrives.
    let stream = open_stream(&b, &b.owner, &thread).await;
    assert_eq!(stream.status(), 200);
    let reader = tokio::spawn(read_chunks(stream, |c| c["type"] == "finish"));
    let (status, out) = post(&a, &a.owner, &thread, body.clone()).await;
    assert_eq!(status, 202, "{out}");
    let (chunks, _) = reader.await.unwrap();
    assert_whole_run(&chunks, &out["taskId"]);
    assert_eq!(wait_settled(&b, &b.owner, &thread).await, "completed");
    // Opened on B while A runs the next one: it is replayed from its start.
    let (status, out) = post(&a, &a.owner, &thread, body.clone()).await;
    assert_eq!(status, 202, "{out}");
    let stream = open_stream(&b, &b.owner, &thread).await;
    let (late, _) = read_chunks(stream, |c| c["type"] == "finish").await;
    assert_whole_run(&late, &out["taskId"]);
    assert_ne!(late[0]["messageId"], chunks[0]["messageId"], "the new run");
    // And the other way round: posted on B, read on A. Opened right after the previous run
    // settled, the stream may still replay that run first (its `finish` can reach Redis after
    // the thread's status): read until the finish of another run.
    wait_settled(&a, &a.owner, &thread).await;
    let stream = open_stream(&a, &a.owner, &thread).await;
    let previous = late[0]["messageId"].clone();
    let mut current = Value::Null;
    let reader = tokio::spawn(read_chunks(stream, move |c| {
        if c["type"] == "start" {
            current = c["messageId"].clone();
        }
        c["type"] == "finish" && current != previous
    }));
    let (status, out) = post(&b, &b.owner, &thread, body).await;
    assert_eq!(status, 202, "{out}");
    let (chunks, _) = reader.await.unwrap();
    let start = chunks.iter().rposition(|c| c["type"] == "start").unwrap();
    assert_whole_run(&chunks[start..], &out["taskId"]);
}

/// A reconnection on B to a run held on A gets it replayed and ended at its `finish`; with
/// no run in progress, 204.
async fn resume_on_another_server(backend: Backend) {
    let (a, b, agent, thread, llm) = two_servers(backend, Some(redis_url())).await;
    assert_eq!(resume_stream(&b, &b.owner, &thread).await.status(), 204);
    let body = json!({ "messages": [user("hold")], "agent": { "id": agent } });
    let (status, out) = post(&a, &a.owner, &thread, body).await;
    assert_eq!(status, 202, "{out}");
    provider_requests(&llm, 1).await;
    // The run's `start` reaches Redis through A's writer task: wait until B sees it running.
    let mut resumed = None;
    for _ in 0..100 {
        let response = resume_stream(&b, &b.owner, &thread).await;
        if response.status() == 200 {
            resumed = Some(response);
            break;
        }
        assert_eq!(response.status(), 204);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reader = tokio::spawn(whole_stream(resumed.expect("B sees the run in progress")));
    llm.provider.release.notify_one();
    let chunks = reader.await.unwrap();
    let text: String = chunks
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| c["delta"].as_str().unwrap())
        .collect();
    assert_eq!(chunks[0]["messageMetadata"]["taskId"], out["taskId"]);
    assert_eq!(chunks.last().unwrap()["type"], "finish");
    assert_eq!(text, "Hello there, friend");
    wait_settled(&b, &b.owner, &thread).await;
    assert_eq!(resume_stream(&b, &b.owner, &thread).await.status(), 204);
}

/// Without `PLATFORM_REDIS_URL` the buffer is in memory: a run streams on its own server, and
/// another server does not see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_buffer_without_redis() {
    let (a, b, agent, thread, _llm) = two_servers(Backend::Sqlite, None).await;
    let on_a = open_stream(&a, &a.owner, &thread).await;
    let on_b = open_stream(&b, &b.owner, &thread).await;
    let reader = tokio::spawn(read_chunks(on_a, |c| c["type"] == "finish"));
    let body = json!({ "messages": [user("hi")], "agent": { "id": agent } });
    let (status, out) = post(&a, &a.owner, &thread, body).await;
    assert_eq!(status, 202, "{out}");
    let (chunks, _) = reader.await.unwrap();
    assert_whole_run(&chunks, &out["taskId"]);
    // Server B's stream carried keep-alive comments only.
    let mut on_b = on_b;
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(800);
    while let Ok(Ok(Some(bytes))) = tokio::time::timeout_at(deadline, on_b.chunk()).await {
        seen.push_str(&String::from_utf8_lossy(&bytes));
    }
    assert!(!seen.contains("data:"), "B saw A's run: {seen}");
}

/// A configured but unreachable Redis refuses to start, naming the variable.
#[tokio::test]
async fn unreachable_redis_refuses_to_start() {
    let db = database(Backend::Sqlite).await;
    let mut config = crate::common::config(&db);
    config.redis_url = Some("redis://127.0.0.1:1/".into());
    let error = sitefile_workspace::AppState::from_config(config)
        .await
        .err()
        .expect("no Redis on port 1");
    assert!(error.to_string().contains("PLATFORM_REDIS_URL"), "{error}");
}
