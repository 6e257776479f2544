//! `POST .../pilot/threads/:threadId/messages` and `GET .../pilot/threads/:threadId/stream`.

use std::convert::Infallible;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use futures_util::stream::{BoxStream, PollNext, select_with_strategy};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Pilot;
use super::job::RunJob;
use super::lease::live_after;
use super::queue::MAX_QUEUED_RUNS;
use super::request::validate;
use super::run::execute;
use crate::auth::{Principal, authenticate};
use crate::clock::new_id;
use crate::error::ApiError;
use crate::http::{accepts_event_stream, parse_json, reject_nul};
use crate::state::AppState;
use crate::storage::{Message, Posted, RunClaim, Thread, ThreadStatus};

/// Authenticates a member of `org` (any valid key of the organization) and loads the thread.
async fn member_thread(
    state: &AppState,
    headers: &HeaderMap,
    org: &str,
    thread_id: &str,
) -> Result<(Principal, Thread), ApiError> {
    let principal = authenticate(state, headers, None).await?.required()?;
    principal.require_org(org)?;
    let thread = state
        .store
        .thread(&principal.org.id, thread_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Thread not found: {thread_id}")))?;
    Ok((principal, thread))
}

/// Accepts a message and enqueues a run: 202 `{ taskId }` once the user message is
/// stored and the thread is `in_progress`.
///
/// The user message keeps the client's id when it names one (a new one otherwise). A thread
/// holds one message per id: the same message posted again (a retry) is answered with its
/// first post's 202 and `taskId`, and runs nothing; another message under that id is 409.
pub async fn post_message(
    State(state): State<AppState>,
    Path((org, thread_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body?;
    let (principal, thread) = member_thread(&state, &headers, &org, &thread_id).await?;
    let body = parse_json(&body)?;
    reject_nul(&body)?;
    let request = validate(&body, &thread_id)?;
    if request.agent_id != thread.virtual_mcp_id {
        return Err(ApiError::Conflict(
            "agent.id does not match the thread's agent".into(),
        ));
    }
    let agent = state
        .store
        .agent(&principal.org.id, &request.agent_id)
        .await?
        .filter(|a| a.status == "active")
        .ok_or_else(|| ApiError::Conflict("the thread's agent is missing or inactive".into()))?;
    let model = state
        .pilot
        .llm
        .model_for(request.tier.as_deref())
        .ok_or_else(|| ApiError::Unavailable("no language model is configured".into()))?;
    let key = format!("{}:{}", principal.org.id, thread.id);
    let task_id = uuid::Uuid::new_v4().to_string();
    let now = state.config.clock.now_ms();
    let user_message = Message {
        id: request.user_message_id.unwrap_or_else(|| new_id("msg")),
        thread_id: thread.id.clone(),
        role: "user".into(),
        parts: Value::Array(request.user_parts),
        metadata: None,
        created_at: now,
        updated_at: now,
    };
    // The run's assistant message is created (empty) right after its user message, so
    // the transcript reads user, assistant, user, assistant even when runs queue.
    let assistant_message = Message {
        id: new_id("msg"),
        thread_id: thread.id.clone(),
        role: "assistant".into(),
        parts: json!([]),
        metadata: Some(json!({ "taskId": task_id, "model": model })),
        created_at: now,
        updated_at: now,
    };
    let queue = &state.pilot.queue;
    let start = {
        let _admission = queue.admit(&key).await;
        if queue.waiting(&key) >= MAX_QUEUED_RUNS {
            return Err(ApiError::TooManyRequests(format!(
                "{MAX_QUEUED_RUNS} runs are already waiting on this thread; \
                 post again when one has finished"
            )));
        }
        let claim = RunClaim {
            owner: &state.pilot.server_id,
            now,
            live_after: live_after(&state, now),
        };
        let posted = state
            .store
            .post_run(
                &principal.org.id,
                &claim,
                &user_message,
                &task_id,
                &assistant_message,
            )
            .await?;
        match posted {
            Posted::Accepted => {}
            Posted::Busy => {
                return Err(ApiError::Conflict(
                    "a run is in progress on this thread on another server; \
                     post again when it has finished"
                        .into(),
                ));
            }
            Posted::Existing { message, task_id } => {
                return posted_before(&user_message, &message, task_id);
            }
        }
        queue.push(
            &key,
            RunJob {
                org_id: principal.org.id.clone(),
                thread_id: thread.id.clone(),
                key: key.clone(),
                task_id: task_id.clone(),
                actor: principal.actor(),
                user_message_id: user_message.id.clone(),
                assistant_message: assistant_message.clone(),
                agent,
                model,
                system_text: request.system_text,
                temperature: request.temperature,
            },
        )
    };
    if start {
        tokio::spawn(worker(state.clone(), key));
    }
    Ok(accepted(&task_id))
}

/// The 202 of an accepted run.
fn accepted(task_id: &str) -> Response {
    (StatusCode::ACCEPTED, Json(json!({ "taskId": task_id }))).into_response()
}

/// The answer to a post whose user message's id its thread already holds, in `existing`,
/// stored with the run `task_id`: the first post's 202 when `posted` is that message again,
/// else 409.
fn posted_before(
    posted: &Message,
    existing: &Message,
    task_id: Option<String>,
) -> Result<Response, ApiError> {
    match task_id {
        Some(task_id) if existing.role == posted.role && existing.parts == posted.parts => {
            Ok(accepted(&task_id))
        }
        _ => Err(ApiError::Conflict(format!(
            "message {} is already on this thread with other content; \
             a new message needs a new id",
            posted.id
        ))),
    }
}

/// Runs the queued runs of one thread, one at a time, until none is left; then writes
/// the thread's final status (the last run's).
async fn worker(state: AppState, key: String) {
    let queue = &state.pilot.queue;
    loop {
        let Some(job) = queue.pop(&key) else {
            // Unreachable: the worker ends only through `finish_if_idle` below.
            let _admission = queue.admit(&key).await;
            if queue.finish_if_idle(&key) {
                return;
            }
            continue;
        };
        let (org_id, thread_id) = (job.org_id.clone(), job.thread_id.clone());
        let run = {
            let state = state.clone();
            async move { execute(&state, job).await }
        };
        let status = supervised(&state.pilot, &key, run).await;
        let _admission = queue.admit(&key).await;
        if queue.finish_if_idle(&key) {
            settle(&state, &org_id, &thread_id, status).await;
            return;
        }
    }
}

/// Writes the thread's final `status`, unless another server took its runs over (this
/// server's lease lapsed while they ran): that server's status then stands, and it is logged.
async fn settle(state: &AppState, org_id: &str, thread_id: &str, status: ThreadStatus) {
    let now = state.config.clock.now_ms();
    match state
        .store
        .set_thread_status(org_id, thread_id, status, &state.pilot.server_id, now)
        .await
    {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            thread.id = %thread_id,
            status = status.as_str(),
            "the thread's runs were taken over by another server (this server's run lease \
             lapsed): its status is left as that server set it"
        ),
        Err(error) => {
            let error = state.store.error(error);
            tracing::error!(%error, "thread status not saved");
        }
    }
}

/// Runs `run` in its own task. A panic does not take the thread's worker down: it is
/// logged, the stream gets an `error` and a `finish` chunk, and the run counts as failed.
async fn supervised(
    pilot: &Pilot,
    key: &str,
    run: impl Future<Output = ThreadStatus> + Send + 'static,
) -> ThreadStatus {
    match tokio::spawn(run).await {
        Ok(status) => status,
        Err(error) => {
            tracing::error!(thread.key = %key, %error, "run task failed");
            pilot.interrupted(key, "the run stopped unexpectedly");
            ThreadStatus::Failed
        }
    }
}

/// The thread's live run stream in the AI SDK UI message stream format.
///
/// A request accepting `text/event-stream` gets the thread's tail: kept open across runs
/// (`finish` marks the end of each) with keep-alive comments, the run in progress replayed
/// from its `start`. Any other request is a reconnection (the AI SDK's resume): the run in
/// progress, replayed, until its `finish`; 204 when no run is in progress.
pub async fn stream(
    State(state): State<AppState>,
    Path((org, thread_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (principal, thread) = member_thread(&state, &headers, &org, &thread_id).await?;
    let key = format!("{}:{}", principal.org.id, thread.id);
    let buffer = &state.pilot.buffer;
    let chunks = if accepts_event_stream(&headers) {
        buffer.subscribe(&key)
    } else {
        let Some(run) = buffer.resume(&key).await.map_err(ApiError::Unavailable)? else {
            return Ok(StatusCode::NO_CONTENT.into_response());
        };
        until_finish(run)
    };
    let events = until_shutdown(chunks, &state.pilot.shutdown)
        .map(|chunk| Ok::<_, Infallible>(Event::default().data(chunk.to_string())));
    let sse = Sse::new(events).keep_alive(
        KeepAlive::new()
            .interval(state.config.keepalive)
            .text("keepalive"),
    );
    let mut response = sse.into_response();
    let h = response.headers_mut();
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    h.insert("connection", HeaderValue::from_static("keep-alive"));
    h.insert(
        "x-vercel-ai-ui-message-stream",
        HeaderValue::from_static("v1"),
    );
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// `chunks` until `shutdown` is cancelled; chunks already waiting are delivered first, so
/// the `error` and `finish` of runs stopped by the shutdown reach local readers.
fn until_shutdown(
    chunks: BoxStream<'static, Value>,
    shutdown: &CancellationToken,
) -> BoxStream<'static, Value> {
    // `None` marks the end, of the chunks or by the shutdown.
    let end = futures_util::stream::once(std::future::ready(None));
    let stop = futures_util::stream::once(shutdown.clone().cancelled_owned()).map(|()| None);
    select_with_strategy(chunks.map(Some).chain(end), stop, |_: &mut ()| {
        PollNext::Left
    })
    .take_while(|chunk| std::future::ready(chunk.is_some()))
    .filter_map(std::future::ready)
    .boxed()
}

/// `chunks` up to and including the first `finish`, where it ends.
fn until_finish(chunks: BoxStream<'static, Value>) -> BoxStream<'static, Value> {
    futures_util::stream::unfold((chunks, false), |(mut chunks, finished)| async move {
        if finished {
            return None;
        }
        let chunk = chunks.next().await?;
        let finished = chunk["type"] == "finish";
        Some((chunk, (chunks, finished)))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;
    use crate::config::Config;

    #[tokio::test]
    async fn a_panicking_run_fails_and_finishes_its_stream() {
        let pilot = Pilot::new(&Config::new("sqlite://unused.db", [0; 32]))
            .await
            .unwrap();
        let mut chunks = pilot.buffer.subscribe("o:t");
        let run = async {
            if uuid::Uuid::new_v4().is_nil() {
                return ThreadStatus::Completed;
            }
            panic!("boom")
        };
        assert_eq!(supervised(&pilot, "o:t", run).await, ThreadStatus::Failed);
        assert_eq!(chunks.next().await.unwrap()["type"], "error");
        assert_eq!(chunks.next().await.unwrap()["type"], "finish");
        let fine = async { ThreadStatus::Completed };
        assert_eq!(
            supervised(&pilot, "o:t", fine).await,
            ThreadStatus::Completed
        );
    }
}
