//! The admin protocol as request → outcome, without I/O.
//!
//! A host first asks [`head`] what the request's head (method, path, query, headers) decides:
//! pass it on, answer it at once (401, 405, 413, ... before any body byte is read), or read the
//! body up to the route's limit. It then hands the whole request (an [`AdminRequest`]) to
//! [`handle`] with its site (an [`AdminSite`]), an [`AdminConfig`] and the current time. The
//! [`AdminOutcome`] is either final (a response to send, or [`AdminOutcome::Pass`] for a path
//! that is not an admin route) or a job the host finishes: apply a reload (with the hook that
//! writes the new snapshot to the key-value store before it serves), delete purged cache
//! entries, render a preview, or run loader and action calls. Each job's `apply` or `finish`
//! builds the response. Routing, methods, tokens, ETags, CORS, body bounds and error bodies are
//! decided here, once, for every binding.

mod auth;
mod body;
mod config;
mod cors;
mod error;
mod etag;
mod handle;
mod head;
mod html;
mod invoke;
mod meta;
mod preview;
mod preview_page;
mod purge;
mod render_shell;
mod request;
mod response;
mod route;
mod schema;
mod site;
mod sitefile;

pub use config::{AdminConfig, AdminSettings};
#[cfg(feature = "internals")]
pub use config::{DEFAULT_MAX_BODY_BYTES, DEFAULT_RELOAD_MAX_BYTES, PurgeToken};
pub use cors::cors_headers;
#[cfg(feature = "internals")]
pub use cors::{CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS};
#[cfg(feature = "internals")]
pub use error::{AdminError, AdminErrorCode};
pub(crate) use etag::if_none_match;
pub use handle::{AdminOutcome, handle, unknown_route};
pub use head::{AdminHead, head};
pub use html::escape as escape_html;
pub use invoke::{InvokeAnswer, InvokeCall, InvokeResult, batch_body, read_batch_answer};
#[cfg(feature = "internals")]
pub use invoke::{InvokeJob, InvokeShape};
#[cfg(feature = "internals")]
pub use preview::{OVERLAY_KEY, PAGE_COMPONENT, RenderedSection, RenderedSectionAnswer};
pub use preview::{PreviewJob, RenderAnswer};
#[cfg(feature = "internals")]
pub use preview_page::PREVIEW_PAGE_PATH;
pub use preview_page::{preview_page_admin_path, preview_page_redirect};
#[cfg(feature = "internals")]
pub use purge::PurgeJob;
pub use render_shell::{RenderShell, RenderShellUpdate};
pub use request::AdminRequest;
pub use response::AdminResponse;
pub use route::{is_admin_route, is_purge_route, is_speculation_rules_route};
#[cfg(feature = "internals")]
pub use schema::SchemaError;
pub use schema::{MatcherSchema, Schema};
pub use site::AdminSite;
pub use sitefile::PreparedReload;
#[cfg(feature = "internals")]
pub use sitefile::ReloadJob;
