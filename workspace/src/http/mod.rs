//! HTTP plumbing shared by every endpoint: bounded JSON bodies and SSE parsing.

mod body;
mod sse;

pub use body::{BODY_LIMIT_BYTES, MAX_JSON_DEPTH, parse_json, reject_nul};
pub use sse::SseParser;
