//! The sitefile workspace API: scoped API keys, agent threads and runs streamed over SSE,
//! and the MCP connection proxy, gateway and management endpoints.
//!
//! [`router`] builds the axum router over an [`AppState`] made by
//! [`AppState::from_config`]; [`cli`] holds the `workspace init` and `workspace serve`
//! commands.

pub mod auth;
pub mod cli;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod error;
pub mod http;
pub mod mcp;
pub mod pilot;
mod router;
mod state;
pub mod storage;
pub mod telemetry;
pub mod tools;

pub use config::Config;
pub use router::router;
pub use state::{AppState, StartError};
