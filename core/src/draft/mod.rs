//! Draft preview policy: which hosts may render drafts, the pointer format, where drafts are
//! fetched from, and the per-request state transition with its cookie and headers.

mod api_domains;
mod decision;
mod fetch;
mod hosts;
mod pointer;

pub use api_domains::ApiDomains;
pub(crate) use decision::carries_draft;
pub use decision::{
    DRAFT_COOKIE, DRAFT_HEADER, DRAFT_PARAM, DraftDecision, DraftState, PREVIEW_HEADERS,
    decide_draft,
};
#[cfg(feature = "internals")]
pub use decision::{DRAFT_COOKIE_MAX_AGE, DraftTransition};
pub(crate) use fetch::KeptDrafts;
pub use fetch::{Draft, DraftFetch, DraftSource};
pub use hosts::PreviewHosts;
#[cfg(feature = "internals")]
pub use hosts::{normalize_host, request_host_behind_proxy};
