//! Agent driving: run requests, the agent loop against an OpenAI-compatible provider,
//! and the SSE run stream.

mod buffer;
mod handlers;
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
    llm: LlmClient,
    buffer: StreamBuffer,
    queue: RunQueue,
}

impl Pilot {
    /// Builds the model client and the in-memory stream buffer.
    pub async fn new(config: &Config) -> Result<Self, String> {
        Ok(Self {
            llm: LlmClient::new(&config.llm)?,
            buffer: StreamBuffer::new(config.stream_retention),
            queue: RunQueue::default(),
        })
    }
}
