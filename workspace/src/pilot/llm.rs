//! A streaming client for OpenAI-compatible chat-completions providers.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::config::LlmConfig;
use crate::http::SseParser;

/// Most bytes read from the provider in one step; a longer stream fails the run.
const MAX_STEP_BYTES: usize = 16 * 1024 * 1024;
/// Longest a model response may take (each step).
const STEP_TIMEOUT: Duration = Duration::from_secs(300);

/// Something the model streamed.
pub enum LlmEvent<'a> {
    /// More answer text.
    Text(&'a str),
    /// A tool call began (`index` within the step).
    ToolStart {
        /// Call id.
        id: &'a str,
        /// Tool name.
        name: &'a str,
    },
    /// More argument text of a started tool call.
    ToolArgs {
        /// Call id.
        id: &'a str,
        /// Argument JSON fragment.
        delta: &'a str,
    },
}

/// A tool call the model asked for.
#[derive(Clone, Debug)]
pub struct ToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments: String,
}

/// The outcome of one model step.
#[derive(Default)]
pub struct StepOutput {
    /// All text of the step.
    pub text: String,
    /// Tool calls of the step, in index order.
    pub tool_calls: Vec<ToolCall>,
}

/// The provider client.
pub struct LlmClient {
    http: reqwest::Client,
    config: LlmConfig,
}

impl LlmClient {
    /// A client for the configured provider.
    pub fn new(config: &LlmConfig) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            http,
            config: config.clone(),
        })
    }

    /// The model for a tier (falling back to the default model); `None` when the
    /// provider is not configured.
    pub fn model_for(&self, tier: Option<&str>) -> Option<String> {
        self.config.base_url.as_ref()?;
        tier.and_then(|t| self.config.tier_models.get(t))
            .or(self.config.model.as_ref())
            .cloned()
    }

    /// Streams one completion, reporting events as they arrive.
    pub async fn step(
        &self,
        model: &str,
        messages: &[Value],
        tools: &[Value],
        temperature: Option<f64>,
        mut on_event: impl FnMut(LlmEvent<'_>),
    ) -> Result<StepOutput, String> {
        let base = self
            .config
            .base_url
            .as_deref()
            .ok_or("no model provider configured")?;
        let mut body = json!({ "model": model, "messages": messages, "stream": true });
        if !tools.is_empty() {
            body["tools"] = json!(tools);
        }
        if let Some(t) = temperature {
            body["temperature"] = json!(t);
        }
        let mut request = self
            .http
            .post(format!("{}/chat/completions", base.trim_end_matches('/')))
            .header("accept", "text/event-stream")
            .json(&body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let work = async {
            let response = request
                .send()
                .await
                .map_err(|_| "the model provider is unreachable".to_string())?;
            if !response.status().is_success() {
                return Err(format!(
                    "the model provider answered HTTP {}",
                    response.status().as_u16()
                ));
            }
            let mut output = StepOutput::default();
            let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
            let mut parser = SseParser::default();
            let mut stream = response.bytes_stream();
            let mut received = 0usize;
            'read: while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|_| "the model stream was interrupted".to_string())?;
                received += chunk.len();
                if received > MAX_STEP_BYTES {
                    return Err(format!(
                        "the model response exceeded {} MiB",
                        MAX_STEP_BYTES / (1024 * 1024)
                    ));
                }
                for data in parser.push(&chunk) {
                    if data.trim() == "[DONE]" {
                        break 'read;
                    }
                    let Ok(event) = serde_json::from_str::<Value>(&data) else {
                        continue;
                    };
                    if let Some(message) = event["error"]["message"].as_str() {
                        return Err(format!("the model provider failed: {message}"));
                    }
                    let delta = &event["choices"][0]["delta"];
                    if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                        output.text.push_str(text);
                        on_event(LlmEvent::Text(text));
                    }
                    for call in delta["tool_calls"].as_array().into_iter().flatten() {
                        let index = call["index"].as_u64().unwrap_or(0);
                        let entry = calls.entry(index).or_insert_with(|| ToolCall {
                            id: String::new(),
                            name: String::new(),
                            arguments: String::new(),
                        });
                        let started = !entry.name.is_empty();
                        if let Some(id) = call["id"].as_str() {
                            entry.id = id.to_string();
                        }
                        if let Some(name) = call["function"]["name"].as_str() {
                            entry.name.push_str(name);
                        }
                        if !started && !entry.name.is_empty() {
                            if entry.id.is_empty() {
                                entry.id = format!("call_{}", uuid::Uuid::new_v4().simple());
                            }
                            on_event(LlmEvent::ToolStart {
                                id: &entry.id,
                                name: &entry.name,
                            });
                        }
                        if let Some(args) = call["function"]["arguments"]
                            .as_str()
                            .filter(|a| !a.is_empty())
                        {
                            entry.arguments.push_str(args);
                            on_event(LlmEvent::ToolArgs {
                                id: &entry.id,
                                delta: args,
                            });
                        }
                    }
                }
            }
            output.tool_calls = calls.into_values().filter(|c| !c.name.is_empty()).collect();
            Ok(output)
        };
        tokio::time::timeout(STEP_TIMEOUT, work)
            .await
            .map_err(|_| "the model provider timed out".to_string())?
    }
}
