//! Agent driving: run requests, the agent loop against an OpenAI-compatible provider,
//! and the SSE run stream.

mod buffer;
mod handlers;
mod job;
pub mod lease;
mod llm;
mod queue;
mod request;
mod run;

pub use handlers::{post_message, stream};

use crate::config::Config;
use buffer::StreamBuffer;
use llm::LlmClient;
use queue::RunQueue;

/// Model tiers a run may ask for.
pub const TIERS: &[&str] = &["fast", "smart", "thinking"];

/// Runs in progress, their stream buffer and the model client.
pub struct Pilot {
    /// This server's id, naming the runs it owns (see [`lease`]).
    pub server_id: String,
    /// Cancelled when the server shuts down: every run stream then ends.
    pub shutdown: tokio_util::sync::CancellationToken,
    llm: LlmClient,
    buffer: StreamBuffer,
    queue: RunQueue,
}

impl Pilot {
    /// Builds the model client and the stream buffer (in Redis when `PLATFORM_REDIS_URL`
    /// is set, which must then be reachable; in memory otherwise).
    pub async fn new(config: &Config) -> Result<Self, String> {
        let buffer = match &config.redis_url {
            Some(url) => StreamBuffer::connect(url, config.stream_retention).await?,
            None => StreamBuffer::new(config.stream_retention, config.clock.clone()),
        };
        Ok(Self {
            server_id: uuid::Uuid::new_v4().to_string(),
            shutdown: tokio_util::sync::CancellationToken::new(),
            llm: LlmClient::new(&config.llm)?,
            buffer,
            queue: RunQueue::default(),
        })
    }

    /// Ends the stream of the run on `key` that stopped before finishing: its readers get
    /// an `error` chunk with `message` and a `finish` chunk.
    pub fn interrupted(&self, key: &str, message: &str) {
        self.buffer.publish(
            key,
            serde_json::json!({ "type": "error", "errorText": message }),
        );
        self.buffer
            .publish(key, serde_json::json!({ "type": "finish" }));
    }
}
