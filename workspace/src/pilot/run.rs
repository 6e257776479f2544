//! One agent run: the model loop with tool calls through the gateway, every chunk
//! published to the stream buffer, the assistant message persisted after each step.

use serde_json::{Value, json};

use super::job::RunJob;
use super::llm::LlmEvent;
use super::queue::MAX_QUEUED_RUNS;
use crate::mcp::{CallContext, Catalog, Resolved, call_tool, compose};
use crate::state::AppState;
use crate::storage::{Message, ThreadStatus};

/// Most model steps in one run.
const MAX_STEPS: usize = 20;
/// Most transcript messages sent to the model as history.
const HISTORY: i64 = 200;

/// Executes a run to its end and returns the thread's resulting status.
pub async fn execute(state: &AppState, job: RunJob) -> ThreadStatus {
    let pilot = &state.pilot;
    pilot.buffer.begin_run(&job.key);
    let message_id = job.assistant_message.id.clone();
    let publish = |chunk: Value| pilot.buffer.publish(&job.key, chunk);
    publish(
        json!({ "type": "start", "messageId": message_id, "messageMetadata": { "taskId": job.task_id } }),
    );
    let mut transcript = Transcript {
        state,
        org_id: &job.org_id,
        message: job.assistant_message.clone(),
    };
    let outcome = run_loop(state, &job, &mut transcript, &publish).await;
    let status = match outcome {
        Ok(()) => ThreadStatus::Completed,
        Err(message) => {
            tracing::warn!(thread.id = %job.thread_id, error = %message, "run failed");
            publish(json!({ "type": "error", "errorText": message }));
            ThreadStatus::Failed
        }
    };
    transcript.save().await;
    publish(json!({ "type": "finish" }));
    status
}

/// The assistant message being built, saved after every step.
struct Transcript<'a> {
    state: &'a AppState,
    org_id: &'a str,
    message: Message,
}

impl Transcript<'_> {
    fn push(&mut self, part: Value) {
        if let Some(parts) = self.message.parts.as_array_mut() {
            parts.push(part);
        }
    }

    async fn save(&mut self) {
        self.message.updated_at = self.state.config.clock.now_ms();
        if let Err(error) = self
            .state
            .store
            .upsert_message(self.org_id, &self.message)
            .await
        {
            let error = self.state.store.error(error);
            tracing::error!(%error, "assistant message not saved");
        }
    }
}

async fn run_loop(
    state: &AppState,
    job: &RunJob,
    transcript: &mut Transcript<'_>,
    publish: &impl Fn(Value),
) -> Result<(), String> {
    let request_id = uuid::Uuid::new_v4().to_string();
    let catalog = compose(state, &job.agent, &request_id)
        .await
        .map_err(|e| format!("the agent's tools could not be loaded: {e}"))?;
    let tools: Vec<Value> = catalog
        .tools
        .iter()
        .map(|t| {
            json!({ "type": "function", "function": {
                "name": t.name,
                "description": t.definition.get("description").cloned().unwrap_or(json!("")),
                "parameters": t.definition.get("inputSchema").cloned().unwrap_or(json!({ "type": "object" })),
            } })
        })
        .collect();
    let mut messages = history(state, job).await?;
    for step in 0..MAX_STEPS {
        publish(json!({ "type": "start-step" }));
        transcript.push(json!({ "type": "step-start" }));
        let text_id = format!("{}_t{step}", transcript.message.id);
        let mut text_open = false;
        let output = state
            .pilot
            .llm
            .step(&job.model, &messages, &tools, job.temperature, |event| match event {
                LlmEvent::Text(delta) => {
                    if !text_open {
                        text_open = true;
                        publish(json!({ "type": "text-start", "id": text_id }));
                    }
                    publish(json!({ "type": "text-delta", "id": text_id, "delta": delta }));
                }
                LlmEvent::ToolStart { id, name } => {
                    publish(json!({ "type": "tool-input-start", "toolCallId": id, "toolName": name }));
                }
                LlmEvent::ToolArgs { id, delta } => {
                    publish(json!({ "type": "tool-input-delta", "toolCallId": id, "inputTextDelta": delta }));
                }
            })
            .await;
        if text_open {
            publish(json!({ "type": "text-end", "id": text_id }));
        }
        let output = match output {
            Ok(output) => output,
            Err(error) => {
                publish(json!({ "type": "finish-step" }));
                return Err(error);
            }
        };
        if !output.text.is_empty() {
            transcript.push(json!({ "type": "text", "text": output.text, "state": "done" }));
        }
        if output.tool_calls.is_empty() {
            publish(json!({ "type": "finish-step" }));
            transcript.save().await;
            return Ok(());
        }
        let calls: Vec<Value> = output
            .tool_calls
            .iter()
            .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
            .collect();
        let content = if output.text.is_empty() {
            Value::Null
        } else {
            json!(output.text)
        };
        messages.push(json!({ "role": "assistant", "content": content, "tool_calls": calls }));
        for call in &output.tool_calls {
            let input: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
            publish(
                json!({ "type": "tool-input-available", "toolCallId": call.id, "toolName": call.name, "input": input }),
            );
            let result =
                run_tool(state, job, &catalog, &call.name, input.clone(), &request_id).await;
            let (part, model_text) = match result {
                Ok(output) => {
                    publish(
                        json!({ "type": "tool-output-available", "toolCallId": call.id, "output": output }),
                    );
                    let text = tool_text(&output);
                    (
                        json!({ "type": format!("tool-{}", call.name), "toolCallId": call.id,
                             "state": "output-available", "input": input, "output": output }),
                        text,
                    )
                }
                Err(error) => {
                    publish(
                        json!({ "type": "tool-output-error", "toolCallId": call.id, "errorText": error }),
                    );
                    (
                        json!({ "type": format!("tool-{}", call.name), "toolCallId": call.id,
                             "state": "output-error", "input": input, "errorText": error }),
                        format!("Error: {error}"),
                    )
                }
            };
            transcript.push(part);
            messages
                .push(json!({ "role": "tool", "tool_call_id": call.id, "content": model_text }));
        }
        publish(json!({ "type": "finish-step" }));
        transcript.save().await;
    }
    Ok(())
}

/// Calls a composed tool as the run (membership authorizes agent runs).
async fn run_tool(
    state: &AppState,
    job: &RunJob,
    catalog: &Catalog,
    name: &str,
    arguments: Value,
    request_id: &str,
) -> Result<Value, String> {
    let (target, original) = match catalog.resolve(name) {
        Resolved::Tool {
            target, original, ..
        } => (target, original),
        Resolved::Ambiguous(names) => {
            return Err(format!(
                "Ambiguous tool name: {name}; call it as one of {}",
                names.join(", ")
            ));
        }
        Resolved::Unknown => return Err(format!("Unknown tool: {name}")),
    };
    let ctx = CallContext {
        org_id: &job.org_id,
        actor: job.actor.clone(),
        surface: "run",
        request_id,
    };
    let (_, response) = call_tool(
        state,
        &ctx,
        target,
        &original,
        json!({ "arguments": arguments }),
        json!(1),
        true,
    )
    .await;
    if let Some(message) = response["error"]["message"].as_str() {
        return Err(message.to_string());
    }
    let result = response["result"].clone();
    if result["isError"] == Value::Bool(true) {
        return Err(tool_text(&result));
    }
    Ok(result)
}

/// The text the model sees for a tool result.
fn tool_text(result: &Value) -> String {
    if let Some(structured) = result.get("structuredContent") {
        return structured.to_string();
    }
    result["content"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The model's messages: instructions, then the transcript (which ends with this run's
/// user message).
async fn history(state: &AppState, job: &RunJob) -> Result<Vec<Value>, String> {
    let mut system: Vec<String> = job.agent.instructions.iter().cloned().collect();
    system.extend(job.system_text.iter().cloned());
    let mut messages = Vec::new();
    if !system.is_empty() {
        messages.push(json!({ "role": "system", "content": system.join("\n\n") }));
    }
    // Later posts queued behind this run add at most two messages each after its own
    // user message: read enough to find it, then cut there.
    let window = HISTORY + 2 * (MAX_QUEUED_RUNS as i64 + 1);
    let (_, total) = state
        .store
        .list_messages(&job.org_id, &job.thread_id, 1, 0)
        .await
        .map_err(|e| e.to_string())?;
    let (mut transcript, _) = state
        .store
        .list_messages(&job.org_id, &job.thread_id, window, (total - window).max(0))
        .await
        .map_err(|e| e.to_string())?;
    if let Some(own) = transcript.iter().position(|m| m.id == job.user_message_id) {
        transcript.truncate(own + 1);
    }
    let skip = transcript.len().saturating_sub(HISTORY as usize);
    for message in transcript.into_iter().skip(skip) {
        let parts = message.parts.as_array().cloned().unwrap_or_default();
        if message.role != "assistant" {
            let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
            messages.push(json!({ "role": message.role, "content": text.join("\n") }));
            continue;
        }
        let (mut text, mut calls, mut results) = (String::new(), Vec::new(), Vec::new());
        let mut flush = |text: &mut String, calls: &mut Vec<Value>, results: &mut Vec<Value>| {
            if text.is_empty() && calls.is_empty() {
                return;
            }
            let mut m = json!({ "role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) } });
            if !calls.is_empty() {
                m["tool_calls"] = json!(calls);
            }
            messages.push(m);
            messages.append(results);
            text.clear();
            calls.clear();
        };
        for part in &parts {
            let kind = part["type"].as_str().unwrap_or_default();
            if kind == "step-start" {
                flush(&mut text, &mut calls, &mut results);
            } else if kind == "text" {
                text.push_str(part["text"].as_str().unwrap_or_default());
            } else if let Some(tool) = kind.strip_prefix("tool-") {
                let id = part["toolCallId"].clone();
                calls.push(json!({ "id": id, "type": "function",
                                   "function": { "name": tool, "arguments": part["input"].to_string() } }));
                let content = match part.get("output") {
                    Some(output) => tool_text(output),
                    None => format!("Error: {}", part["errorText"].as_str().unwrap_or("failed")),
                };
                results.push(json!({ "role": "tool", "tool_call_id": id, "content": content }));
            }
        }
        flush(&mut text, &mut calls, &mut results);
    }
    Ok(messages)
}
