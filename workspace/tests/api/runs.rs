//! Agent runs: strict validation, a full run with a tool call seen on a stream opened
//! before the post, the transcript, failures and per-thread serialization.

use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use sitefile_workspace::clock::{ManualClock, now_ms};

use crate::both_backends;
use crate::common::{Api, Backend, read_chunks, wait_settled};
use crate::{llm_double, mcp_double};

both_backends!(
    run_validation,
    full_run_with_tool_call,
    failed_run_and_serialized_runs,
    queued_runs_keep_post_order,
    queue_is_bounded,
    keepalive_comments,
    resume_without_a_run_is_204,
    a_starting_server_leaves_live_runs_alone,
    a_thread_running_on_another_server_is_busy,
    a_run_taken_over_keeps_the_status_set_by_the_taker,
    lease_renewal_keeps_a_long_run_alive,
    a_reposted_message_id_is_answered_once
);

pub(crate) fn user(text: &str) -> Value {
    json!({ "role": "user", "parts": [{ "type": "text", "text": text }] })
}

struct Setup {
    api: Api,
    agent: String,
    thread: String,
    upstream: mcp_double::McpDouble,
    llm: llm_double::LlmDouble,
}

async fn setup(backend: Backend) -> Setup {
    let llm = llm_double::start().await;
    let base = llm.base_url.clone();
    let api = Api::start_with(backend, |c| {
        c.llm.base_url = Some(base);
        c.llm.model = Some("default-model".into());
        c.llm
            .tier_models
            .insert("smart".into(), "smart-model".into());
    })
    .await;
    let upstream = mcp_double::start(false).await;
    let conn = api.connection(&api.owner, &upstream.url, json!({})).await;
    let agent = api.agent(&api.owner, &[&conn]).await;
    let out = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "t", "virtual_mcp_id": agent, "id": "th-1" } }),
        )
        .await;
    Setup {
        api,
        agent,
        thread: out["item"]["id"].as_str().unwrap().into(),
        upstream,
        llm,
    }
}

pub(crate) async fn post(api: &Api, key: &str, thread: &str, body: Value) -> (u16, Value) {
    let r = api
        .client
        .post(format!(
            "{}/api/acme/pilot/threads/{thread}/messages",
            api.base
        ))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn open_stream(api: &Api, key: &str, thread: &str) -> reqwest::Response {
    api.client
        .get(format!(
            "{}/api/acme/pilot/threads/{thread}/stream",
            api.base
        ))
        .bearer_auth(key)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap()
}

async fn run_validation(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let ok = json!({ "messages": [user("hi")], "agent": { "id": agent } });
    let mut cases = vec![
        json!({ "messages": [user("a"), user("b")], "agent": { "id": agent } }),
        json!({ "messages": [], "agent": { "id": agent } }),
        json!({ "messages": [user("a")] }),
        json!({ "messages": [user("a")], "agent": { "id": agent }, "thread_id": "other" }),
        json!({ "messages": [user("a")], "agent": { "id": agent }, "tier": "galaxy-brain" }),
        json!({ "messages": [user("a")], "agent": { "id": agent }, "temperature": "warm" }),
        json!({ "messages": [{ "role": "user", "parts": [{ "type": "image", "url": "x" }] }], "agent": { "id": agent } }),
        json!("not an object"),
    ];
    let mut extra = ok.clone();
    extra["stream"] = json!(true);
    cases.push(extra);
    for body in cases {
        let (status, out) = post(api, &api.owner, thread, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(out["error"]["code"], "INVALID_REQUEST", "{out}");
    }
    let r = api
        .client
        .post(format!(
            "{}/api/acme/pilot/threads/{thread}/messages",
            api.base
        ))
        .bearer_auth(&api.owner)
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "malformed JSON");
    assert_eq!(post(api, &api.owner, "no-thread", ok.clone()).await.0, 404);
    assert_eq!(post(api, "sfk_bad", thread, ok.clone()).await.0, 401);
    let other = api.new_org("globex").await;
    assert_eq!(post(api, &other, thread, ok.clone()).await.0, 403);
    let mismatched = json!({ "messages": [user("a")], "agent": { "id": "someone-else" } });
    assert_eq!(post(api, &api.owner, thread, mismatched).await.0, 409);
    assert_eq!(open_stream(api, &other, thread).await.status(), 403);
    assert_eq!(
        open_stream(api, &api.owner, "no-thread").await.status(),
        404
    );
    // None of these touched the thread.
    assert_eq!(status_on(api, thread).await, "completed");
    assert!(s.llm.provider.requests.lock().unwrap().is_empty());
}

async fn full_run_with_tool_call(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    // Any key of the organization may drive the agent: no grants needed.
    let (_, member) = api.key(json!({})).await;
    let stream = open_stream(api, &member, thread).await;
    assert_eq!(stream.status(), 200);
    let h = stream.headers();
    assert_eq!(h["content-type"], "text/event-stream");
    assert_eq!(h["cache-control"], "no-cache");
    assert_eq!(h["x-vercel-ai-ui-message-stream"], "v1");
    assert_eq!(h["x-accel-buffering"], "no");
    let reader = tokio::spawn(read_chunks(stream, |c| c["type"] == "finish"));
    let body = json!({ "messages": [{ "role": "system", "parts": [{ "type": "text", "text": "Extra rule." }] }, user("please use tool")],
                       "agent": { "id": agent }, "tier": "smart", "temperature": 0.3, "thread_id": thread });
    let (status, out) = post(api, &member, thread, body).await;
    assert_eq!(status, 202, "{out}");
    assert!(out["taskId"].is_string());
    assert_eq!(out.as_object().unwrap().len(), 1);
    assert_eq!(
        status_on(api, thread).await,
        "in_progress",
        "in_progress before the 202 is read"
    );
    let (chunks, keepalives) = reader.await.unwrap();
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"start"));
    assert_eq!(chunks[0]["messageMetadata"]["taskId"], out["taskId"]);
    for expected in [
        "start-step",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish",
    ] {
        assert!(types.contains(&expected), "{expected} in {types:?}");
    }
    let available = chunks
        .iter()
        .find(|c| c["type"] == "tool-input-available")
        .unwrap();
    assert_eq!(available["input"], json!({ "text": "hello" }));
    let text_id = chunks.iter().find(|c| c["type"] == "text-start").unwrap()["id"].clone();
    let text: String = chunks
        .iter()
        .filter(|c| c["type"] == "text-delta")
        .map(|c| {
            assert_eq!(c["id"], text_id);
            c["delta"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(text, "Tool said: hello");
    assert!(chunks.iter().all(|c| c.get("finishReason").is_none()));
    let _ = keepalives;
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    assert_eq!(s.upstream.calls(), vec!["echo".to_string()]);
    // The provider got the tier's model, the instructions, the tools and the temperature.
    let requests = s.llm.provider.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["model"], "smart-model");
    assert_eq!(requests[0]["stream"], true);
    assert_eq!(requests[0]["temperature"], 0.3);
    assert!(
        requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Be brief.\n\nExtra rule.")
    );
    // The durable transcript.
    let items = transcript(api, thread).await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["role"], "user");
    assert_eq!(
        items[0]["parts"],
        json!([{ "type": "text", "text": "please use tool" }])
    );
    assert_eq!(items[1]["role"], "assistant");
    let parts = items[1]["parts"].as_array().unwrap();
    let tool_part = parts
        .iter()
        .find(|p| p["type"].as_str().unwrap().starts_with("tool-"))
        .unwrap();
    assert_eq!(tool_part["state"], "output-available");
    assert_eq!(tool_part["output"]["content"][0]["text"], "hello");
    assert!(
        parts
            .iter()
            .any(|p| p["type"] == "text" && p["text"] == "Tool said: hello")
    );

    // A second run on the same stream connection: it stays open across runs, and the
    // history (with the tool exchange) goes to the model.
    let stream = open_stream(api, &member, thread).await;
    let reader = tokio::spawn(read_chunks(stream, |c| c["type"] == "finish"));
    let (status, _) = post(
        api,
        &member,
        thread,
        json!({ "messages": [user("thanks")], "agent": { "id": agent } }),
    )
    .await;
    assert_eq!(status, 202);
    let (chunks, keepalives) = reader.await.unwrap();
    assert!(
        chunks
            .iter()
            .any(|c| c["type"] == "text-delta" && c["delta"] == "friend")
    );
    let _ = keepalives;
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    let last = s
        .llm
        .provider
        .requests
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["model"], "default-model");
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "assistant", "user"]
    );
}

async fn failed_run_and_serialized_runs(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let stream = open_stream(api, &api.owner, thread).await;
    let reader = tokio::spawn(read_chunks(stream, |c| c["type"] == "finish"));
    let (status, _) = post(
        api,
        &api.owner,
        thread,
        json!({ "messages": [user("please fail")], "agent": { "id": agent } }),
    )
    .await;
    assert_eq!(status, 202);
    let (chunks, _) = reader.await.unwrap();
    let error = chunks
        .iter()
        .find(|c| c["type"] == "error")
        .expect("an error chunk");
    assert!(error["errorText"].as_str().unwrap().contains("500"));
    assert_eq!(chunks.last().unwrap()["type"], "finish");
    assert_eq!(wait_settled(api, &api.owner, thread).await, "failed");

    // Three posts in a row: accepted at once, run one at a time, all transcribed.
    s.llm.provider.max_active.store(0, Ordering::SeqCst);
    for text in ["one", "two", "three"] {
        let (status, _) = post(
            api,
            &api.owner,
            thread,
            json!({ "messages": [user(text)], "agent": { "id": agent } }),
        )
        .await;
        assert_eq!(status, 202);
    }
    assert_eq!(status_on(api, thread).await, "in_progress");
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    assert_eq!(
        s.llm.provider.max_active.load(Ordering::SeqCst),
        1,
        "runs of one thread are serialized"
    );
    let messages = transcript_page(api, thread).await;
    assert_eq!(
        messages["totalCount"], 8,
        "4 user messages and 4 assistant messages"
    );
    // A late stream joiner during a run gets the run replayed from its start.
    let (status, _) = post(
        api,
        &api.owner,
        thread,
        json!({ "messages": [user("again")], "agent": { "id": agent } }),
    )
    .await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let late = open_stream(api, &api.owner, thread).await;
    let (chunks, _) = read_chunks(late, |c| c["type"] == "finish").await;
    assert_eq!(chunks[0]["type"], "start");
}

fn text_of(message: &Value) -> String {
    message["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

async fn queued_runs_keep_post_order(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let (member_id, member) = api.key(json!({})).await;
    for text in ["one please use tool", "two"] {
        let body = json!({ "messages": [user(text)], "agent": { "id": agent } });
        assert_eq!(post(api, &member, thread, body).await.0, 202);
    }
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    let items = transcript(api, thread).await;
    let roles: Vec<&str> = items.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant"],
        "{items:?}"
    );
    assert_eq!(text_of(&items[0]), "one please use tool");
    assert_eq!(text_of(&items[1]), "Tool said: hello");
    assert_eq!(text_of(&items[2]), "two");
    assert_eq!(text_of(&items[3]), "Hello there, friend");
    // Each run's history ends with its own user message, never a later one.
    let requests = s.llm.provider.requests.lock().unwrap().clone();
    assert_eq!(
        requests.len(),
        3,
        "two steps for the tool run, one for the second"
    );
    for request in &requests[..2] {
        let all = request["messages"].to_string();
        assert!(!all.contains("two"), "run one saw run two's message: {all}");
    }
    let last: Vec<(String, String)> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        last.last().unwrap(),
        &("user".to_string(), "two".to_string())
    );
    assert!(
        last.iter()
            .any(|(r, c)| r == "user" && c == "one please use tool")
    );
    // The stream's message ids are the transcript's assistant ids.
    assert!(items[1]["metadata"]["taskId"].is_string());
    // Tool calls made by the run are audited as the key that posted it.
    let mut rows = Vec::new();
    for _ in 0..50 {
        let out = api
            .ok(&api.owner, "AUDIT_LOG_LIST", json!({ "limit": 100 }))
            .await;
        rows = out["items"].as_array().unwrap().clone();
        if rows.iter().any(|r| r["surface"] == "run") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let run_row = rows
        .iter()
        .find(|r| r["surface"] == "run")
        .expect("a run audit row");
    assert_eq!(run_row["actor"], format!("key:{member_id}"), "{run_row}");
    assert_eq!(run_row["tool"], "echo");
}

async fn queue_is_bounded(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let body = |text: &str| json!({ "messages": [user(text)], "agent": { "id": agent } });
    assert_eq!(post(api, &api.owner, thread, body("stall")).await.0, 202);
    // Wait until the stalled run is running (not waiting).
    for _ in 0..100 {
        if !s.llm.provider.requests.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in 0..16 {
        let (status, out) = post(api, &api.owner, thread, body(&format!("q{i}"))).await;
        assert_eq!(status, 202, "{i}: {out}");
    }
    let (status, out) = post(api, &api.owner, thread, body("one too many")).await;
    assert_eq!(status, 429, "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 runs"),
        "{out}"
    );
    let messages = transcript_page(api, thread).await;
    assert_eq!(
        messages["totalCount"], 34,
        "the refused post left no message"
    );
}

/// An idle stream carries `: keepalive` comments, exactly as the reference writes them.
async fn keepalive_comments(backend: Backend) {
    let s = setup(backend).await;
    let stream = open_stream(&s.api, &s.api.owner, &s.thread).await;
    assert_eq!(stream.status(), 200);
    let mut bytes = stream.bytes_stream();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&seen).contains("\n\n") {
        let next = tokio::time::timeout_at(deadline, bytes.next()).await;
        let Ok(Some(Ok(chunk))) = next else {
            panic!(
                "no keep-alive within 10 s: {:?}",
                String::from_utf8_lossy(&seen)
            )
        };
        seen.extend_from_slice(&chunk);
    }
    assert!(
        String::from_utf8_lossy(&seen).starts_with(": keepalive\n\n"),
        "{:?}",
        String::from_utf8_lossy(&seen)
    );
}

/// The stream as the AI SDK's `reconnectToStream` requests it: no `Accept: text/event-stream`.
pub(crate) async fn resume_stream(api: &Api, key: &str, thread: &str) -> reqwest::Response {
    api.client
        .get(format!(
            "{}/api/acme/pilot/threads/{thread}/stream",
            api.base
        ))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

/// The `data:` chunks of a whole response body, which must end within 10 s.
pub(crate) async fn whole_stream(response: reqwest::Response) -> Vec<Value> {
    let body = tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .expect("the stream ends")
        .unwrap();
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// Waits until the provider double has received `n` requests.
pub(crate) async fn provider_requests(llm: &llm_double::LlmDouble, n: usize) {
    let what = format!("the provider receiving {n} requests");
    poll_until(&what, async || {
        llm.provider.requests.lock().unwrap().len() >= n
    })
    .await;
}

/// Checks `done` every 50 ms until it holds; panics naming `what` after 10 s.
async fn poll_until(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

/// A reconnection (the AI SDK's resume) gets 204 when no run is in progress, and the run in
/// progress, replayed from its start, up to its `finish`, where the response ends.
async fn resume_without_a_run_is_204(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let idle = resume_stream(api, &api.owner, thread).await;
    assert_eq!(idle.status(), 204);
    assert_eq!(idle.text().await.unwrap(), "");
    let body = json!({ "messages": [user("hold on")], "agent": { "id": agent } });
    assert_eq!(post(api, &api.owner, thread, body).await.0, 202);
    provider_requests(&s.llm, 1).await;
    let resumed = resume_stream(api, &api.owner, thread).await;
    assert_eq!(resumed.status(), 200);
    assert_eq!(resumed.headers()["x-vercel-ai-ui-message-stream"], "v1");
    let reader = tokio::spawn(whole_stream(resumed));
    s.llm.provider.release.notify_one();
    let chunks = reader.await.unwrap();
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"start"), "replayed from the start");
    assert_eq!(types.last(), Some(&"finish"), "ends at the run's finish");
    assert!(types.contains(&"text-delta"), "{types:?}");
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    assert_eq!(resume_stream(api, &api.owner, thread).await.status(), 204);
    // A reader naming `text/event-stream` still gets the tail of an idle thread.
    assert_eq!(open_stream(api, &api.owner, thread).await.status(), 200);
}

/// A second server starting on the same database leaves the first one's running run alone:
/// it is still `in_progress`, and then completes with its stream ended normally.
async fn a_starting_server_leaves_live_runs_alone(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let stream = open_stream(api, &api.owner, thread).await;
    let reader = tokio::spawn(read_chunks(stream, |c| c["type"] == "finish"));
    let body = json!({ "messages": [user("hold on")], "agent": { "id": agent } });
    assert_eq!(post(api, &api.owner, thread, body).await.0, 202);
    provider_requests(&s.llm, 1).await;
    let second = api.another_server(|_| {}).await;
    assert_eq!(status_on(&second, thread).await, "in_progress");
    s.llm.provider.release.notify_one();
    let (chunks, _) = reader.await.unwrap();
    assert!(chunks.iter().all(|c| c["type"] != "error"), "{chunks:?}");
    assert_eq!(
        wait_settled(&second, &second.owner, thread).await,
        "completed"
    );
}

/// The first page (100 messages) of the thread's transcript, with its `totalCount`.
async fn transcript_page(api: &Api, thread: &str) -> Value {
    api.ok(
        &api.owner,
        "COLLECTION_THREAD_MESSAGES_LIST",
        json!({ "thread_id": thread, "limit": 100 }),
    )
    .await
}

/// The thread's transcript (its first 100 messages).
async fn transcript(api: &Api, thread: &str) -> Vec<Value> {
    let page = transcript_page(api, thread).await;
    page["items"].as_array().unwrap().clone()
}

/// Posts a run that the provider holds until released, through `api`, and waits until the
/// provider has it.
async fn post_held_run(s: &Setup, api: &Api) {
    let body = json!({ "messages": [user("hold on")], "agent": { "id": s.agent } });
    assert_eq!(post(api, &api.owner, &s.thread, body).await.0, 202);
    provider_requests(&s.llm, 1).await;
}

/// Waits until the thread's last assistant message has parts (its run saved its answer).
async fn assistant_answered(api: &Api, thread: &str) {
    poll_until("the run saving its answer", async || {
        let items = transcript(api, thread).await;
        items.last().is_some_and(|m| m["parts"] != json!([]))
    })
    .await;
}

/// Another server with run lease `lease`, whose clock runs `ahead` of the others.
async fn skewed_server(api: &Api, lease: Duration, ahead: Duration) -> Api {
    let clock = ManualClock::new(now_ms());
    clock.advance(ahead);
    api.another_server(|c| {
        c.run_lease = lease;
        c.clock = clock.clock();
    })
    .await
}

/// The thread's status as `api` reads it.
async fn status_on(api: &Api, thread: &str) -> Value {
    let got = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_GET",
            json!({ "id": thread }),
        )
        .await;
    got["item"]["status"].clone()
}

/// A post to a thread whose run is in progress on another live server is refused with 409
/// (nothing is stored: the transcript does not grow), so two servers never run one thread
/// at once; once that run is over, the same post is accepted and runs.
async fn a_thread_running_on_another_server_is_busy(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    post_held_run(&s, api).await;
    let second = api.another_server(|_| {}).await;
    let again = json!({ "messages": [user("hello")], "agent": { "id": agent } });
    let (status, refused) = post(&second, &second.owner, thread, again.clone()).await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("in progress on this thread on another server"),
        "{refused}"
    );
    assert_eq!(
        transcript(api, thread).await.len(),
        2,
        "the refused post stored nothing"
    );
    s.llm.provider.release.notify_one();
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    assert_eq!(post(&second, &second.owner, thread, again).await.0, 202);
    assert_eq!(
        wait_settled(&second, &second.owner, thread).await,
        "completed"
    );
    assert_eq!(transcript(api, thread).await.len(), 4);
    assert_eq!(s.llm.provider.max_active.load(Ordering::SeqCst), 1);
}

/// A server whose clock runs ahead by less than a lease leaves a live run alone; one that
/// finds the owner's lease lapsed (here: its clock runs three leases ahead, as a stalled
/// owner would look) marks the run `failed`. The owner's run then finishes, and its final
/// status does not overwrite the taker's: the thread stays `failed`.
async fn a_run_taken_over_keeps_the_status_set_by_the_taker(backend: Backend) {
    let s = setup(backend).await;
    let (api, thread) = (&s.api, &s.thread);
    post_held_run(&s, api).await;
    let lease = Duration::from_secs(30);
    let near = skewed_server(api, lease, lease + lease / 2).await;
    assert_eq!(
        status_on(&near, thread).await,
        "in_progress",
        "skew under a lease"
    );
    let taker = skewed_server(api, lease, 3 * lease).await;
    assert_eq!(
        status_on(&taker, thread).await,
        "failed",
        "the lapsed run is taken over"
    );
    s.llm.provider.release.notify_one();
    // The owner saves the run's answer, then writes its final status.
    assistant_answered(api, thread).await;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(status_on(&taker, thread).await, "failed", "not overwritten");
    }
}

/// With a short lease (300 ms) the owner's renewals keep a run held for 2 s alive: another
/// server sees it `in_progress` all along, and it completes with no `error` chunk.
async fn lease_renewal_keeps_a_long_run_alive(backend: Backend) {
    let s = setup(backend).await;
    let (api, thread) = (&s.api, &s.thread);
    // The setup's server keeps the default lease; the owner and the watcher have the short one.
    let lease = Duration::from_millis(300);
    let owner = api.another_server(|c| c.run_lease = lease).await;
    let watcher = api.another_server(|c| c.run_lease = lease).await;
    let stream = open_stream(&owner, &owner.owner, thread).await;
    let reader = tokio::spawn(read_chunks(stream, |c| c["type"] == "finish"));
    post_held_run(&s, &owner).await;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            status_on(&watcher, thread).await,
            "in_progress",
            "held for 2 s"
        );
    }
    s.llm.provider.release.notify_one();
    let (chunks, _) = reader.await.unwrap();
    assert!(chunks.iter().all(|c| c["type"] != "error"), "{chunks:?}");
    assert_eq!(
        wait_settled(&watcher, &watcher.owner, thread).await,
        "completed"
    );
}

/// A user message with the client's id `id` and `text`.
fn user_with_id(id: &str, text: &str) -> Value {
    let mut message = user(text);
    message["id"] = json!(id);
    message
}

/// The client's message id is kept, and a post is idempotent on it within a thread: posted
/// again (one after another, or many at once on two servers) it is answered with the first
/// post's 202 and `taskId`, with no second run and no second transcript row; with other
/// content it is 409. Ids are per thread: another thread takes the same id for its own run.
async fn a_reposted_message_id_is_answered_once(backend: Backend) {
    let s = setup(backend).await;
    let (api, agent, thread) = (&s.api, &s.agent, &s.thread);
    let body = |id: &str, text: &str| json!({ "messages": [user_with_id(id, text)], "agent": { "id": agent } });
    let (status, first) = post(api, &api.owner, thread, body("m-1", "hi")).await;
    assert_eq!(status, 202, "{first}");
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    let (status, again) = post(api, &api.owner, thread, body("m-1", "hi")).await;
    assert_eq!((status, &again), (202, &first), "the first post's answer");
    let (status, refused) = post(api, &api.owner, thread, body("m-1", "bye")).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "CONFLICT", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("m-1"),
        "{refused}"
    );
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    let items = transcript(api, thread).await;
    let ids: Vec<&str> = items.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids.len(),
        2,
        "one user and one assistant message: {items:?}"
    );
    assert_eq!(ids[0], "m-1", "the client's id, as sent");
    assert_eq!(text_of(&items[0]), "hi");
    assert_eq!(items[1]["metadata"]["taskId"], first["taskId"]);
    assert_eq!(s.llm.provider.requests.lock().unwrap().len(), 1, "one run");

    // Many posts of one new id at once, on two servers: one run, one answer.
    let second = api.another_server(|_| {}).await;
    let posts = (0..8).map(|i| {
        let server = if i % 2 == 0 { api } else { &second };
        post(server, &server.owner, thread, body("m-2", "hold on"))
    });
    let answers = futures_util::future::join_all(posts).await;
    provider_requests(&s.llm, 2).await;
    s.llm.provider.release.notify_one();
    assert_eq!(wait_settled(api, &api.owner, thread).await, "completed");
    for (status, answer) in &answers {
        assert_eq!((*status, answer), (202, &answers[0].1), "{answers:?}");
    }
    assert_ne!(answers[0].1, first);
    let items = transcript(api, thread).await;
    let ids: Vec<&str> = items.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4, "{items:?}");
    assert_eq!(ids[2], "m-2");
    assert_eq!(items[3]["metadata"]["taskId"], answers[0].1["taskId"]);
    assert_eq!(
        s.llm.provider.requests.lock().unwrap().len(),
        2,
        "one run more"
    );

    // Another thread of the agent takes the id "m-1" for a run of its own.
    let other = api
        .ok(
            &api.owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "title": "t2", "virtual_mcp_id": agent, "id": "th-2" } }),
        )
        .await["item"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, elsewhere) = post(api, &api.owner, &other, body("m-1", "hi")).await;
    assert_eq!(status, 202, "{elsewhere}");
    assert_ne!(elsewhere, first);
    assert_eq!(wait_settled(api, &api.owner, &other).await, "completed");
    let items = transcript(api, &other).await;
    assert_eq!(items[0]["id"], "m-1");
    assert_eq!(items.len(), 2);
    assert_eq!(
        transcript(api, thread).await.len(),
        4,
        "the first thread is untouched"
    );
}
