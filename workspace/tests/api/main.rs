//! Black-box HTTP tests of the workspace API with loopback test doubles (an MCP server,
//! plain and HTTPS, and an OpenAI-compatible provider), against SQLite and PostgreSQL.

mod audit;
mod bounds;
mod collections;
mod common;
mod credentials;
mod errors;
mod gateway;
mod immediacy;
mod keys;
mod limits;
mod llm_double;
mod mcp_double;
mod modern;
mod nul;
mod oauth;
mod oauth_double;
mod odd_upstream;
mod process;
mod proxy;
mod proxy_order;
mod redis_stream;
mod runs;
mod scopes;
mod server_requests;
mod stateless_double;
mod stateless_upstream;
