//! The three MCP endpoint families (connection proxy, agent gateway, management) plus
//! the legacy unscoped proxy route, discovery metadata, the upstream client and the relay
//! of what upstreams send to clients.

mod answers;
mod call;
mod discovery;
mod era;
mod gateway;
mod host_guard;
mod journal;
pub mod jsonrpc;
mod listen;
mod mrtr;
mod proxy;
mod relay;
pub mod schema;
mod self_server;
mod server_requests;
mod sessions;
mod stateless;
mod target;
mod tool_cache;
mod transport;
mod upstream;

pub use call::{CallContext, call_tool};
pub use discovery::{protected_resource, protected_resource_prefixed};
pub use gateway::{Catalog, CatalogTool, Resolved, compose, gateway};
pub use host_guard::guard_host;
pub use journal::JournalBounds;
pub use listen::{legacy_listen, listen};
pub use proxy::{
    LEGACY_DEPRECATED_AT, end_session, legacy_deprecation, legacy_end_session, legacy_proxy, proxy,
};
pub use self_server::self_mcp;
pub use server_requests::RequestBounds;
pub use sessions::{SessionLimits, Sessions};
pub use target::target_for;
pub use tool_cache::ToolCache;
pub use transport::{method_not_allowed, session_method_not_allowed};
pub use upstream::{Upstream, UpstreamError};
