//! `POST .../pilot/threads/:threadId/messages` and `GET .../pilot/threads/:threadId/stream`.

use std::convert::Infallible;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::request::validate;
use super::run::{RunJob, execute};
use crate::auth::{Principal, authenticate};
use crate::clock::{new_id, now_ms};
use crate::error::ApiError;
use crate::http::parse_json;
use crate::state::AppState;
use crate::storage::{Message, Thread, ThreadStatus};

/// Authenticates a member of `org` (any valid key of the organization) and loads the thread.
async fn member_thread(
    state: &AppState,
    headers: &HeaderMap,
    org: &str,
    thread_id: &str,
) -> Result<(Principal, Thread), ApiError> {
    let principal = authenticate(&state.store, headers).await?.required()?;
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
pub async fn post_message(
    State(state): State<AppState>,
    Path((org, thread_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (principal, thread) = member_thread(&state, &headers, &org, &thread_id).await?;
    let request = validate(&parse_json(&body)?, &thread_id)?;
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
    let now = now_ms();
    let user_message = Message {
        id: new_id("msg"),
        thread_id: thread.id.clone(),
        role: "user".into(),
        parts: Value::Array(request.user_parts),
        metadata: None,
        created_at: now,
        updated_at: now,
    };
    state
        .store
        .upsert_message(&principal.org.id, &user_message)
        .await?;
    let key = format!("{}:{}", principal.org.id, thread.id);
    let slot = state.pilot.queue.slot(&key);
    {
        let mut pending = slot.pending.lock().await;
        state
            .store
            .set_thread_status(&principal.org.id, &thread.id, ThreadStatus::InProgress)
            .await?;
        *pending += 1;
    }
    let task_id = uuid::Uuid::new_v4().to_string();
    let job = RunJob {
        org_id: principal.org.id.clone(),
        thread_id: thread.id.clone(),
        key: key.clone(),
        task_id: task_id.clone(),
        agent,
        model,
        system_text: request.system_text,
        temperature: request.temperature,
    };
    let task_state = state.clone();
    tokio::spawn(async move {
        let state = task_state;
        let status = {
            let _running = slot.run.lock().await;
            execute(&state, job).await
        };
        let mut pending = slot.pending.lock().await;
        *pending -= 1;
        if *pending == 0 {
            let (org_id, thread_id) = key.split_once(':').expect("thread key");
            if let Err(error) = state
                .store
                .set_thread_status(org_id, thread_id, status)
                .await
            {
                tracing::error!(%error, "thread status not saved");
            }
            state.pilot.queue.release(&key);
        }
    });
    Ok((StatusCode::ACCEPTED, Json(json!({ "taskId": task_id }))).into_response())
}

/// The thread's live run stream in the AI SDK UI message stream format. The stream stays
/// open across runs (`finish` marks the end of each) with keep-alive comments.
pub async fn stream(
    State(state): State<AppState>,
    Path((org, thread_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (principal, thread) = member_thread(&state, &headers, &org, &thread_id).await?;
    let key = format!("{}:{}", principal.org.id, thread.id);
    let chunks = state
        .pilot
        .buffer
        .subscribe(&key)
        .map(|chunk| Ok::<_, Infallible>(Event::default().data(chunk.to_string())));
    let sse = Sse::new(chunks).keep_alive(
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
