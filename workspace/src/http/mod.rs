//! HTTP plumbing shared by every endpoint: bounded JSON bodies, SSE parsing, and the one
//! accept loop of the binary's servers (connection limits and fairness under pressure).

mod body;
mod limits;
mod progress;
mod serve;
mod slots;
mod sse;
mod workers;

pub use body::{BODY_LIMIT_BYTES, MAX_JSON_DEPTH, parse_json, reject_nul};
pub use limits::ConnectionLimits;
pub use serve::{is_body_timeout, serve, shutdown_signal};
pub use sse::{SseParser, accepts_event_stream};
