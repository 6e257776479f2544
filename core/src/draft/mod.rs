//! Draft preview policy: which hosts may render drafts, the pointer format, where drafts are
//! fetched from, and the per-request state transition with its cookie and headers.

mod api_domains;
mod decision;
mod hosts;
mod pointer;

pub use api_domains::ApiDomains;
pub use decision::{
    DRAFT_COOKIE, DRAFT_COOKIE_MAX_AGE, DRAFT_HEADER, DRAFT_PARAM, DraftDecision, DraftState,
    DraftTransition, PREVIEW_HEADERS, decide_draft,
};
pub use hosts::{
    PreviewHosts, SITE_BLOCK_NAMES, normalize_host, request_host, request_host_behind_proxy,
};
pub use pointer::DraftPointer;
