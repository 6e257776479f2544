//! The napi-rs addon of the `sitefile` npm package: conversion and I/O over the core's `Site`.
//!
//! The classes: [`NativeSite`] (one site: content, setup, reload, admin requests, edge plans,
//! purges), [`NativeResolution`] (one page, value, draft or preview resolution, driven one napi
//! call per loader round), [`NativeAdminOutcome`] (an admin request's response, or the host work
//! it needs), [`NativeEdgePlan`] (one request's edge decision, before and after the origin),
//! [`NativeEdgeExchange`] (one request through the edge cache, step by step),
//! [`NativeFastDeploy`] and [`NativeKvSync`] (Fast Deploy on a store the host reads
//! asynchronously), [`NativePageJson`], [`NativeDraft`] and [`NativeSectionLoaders`]. Everything
//! crosses as JSON text in the core's serde forms; the TypeScript side runs loaders and custom
//! matchers. Every error thrown to JS is an `Error` whose `code` is the core's stable code
//! (`INVALID_JSON`, ...), and a Rust panic becomes such an error (code `PANIC`) rather than
//! aborting the process.

#![deny(clippy::unwrap_used, clippy::expect_used)]
// `HostCallbacks` spells its function types out: the typings are generated from them, and the
// lint fires inside the code napi-derive generates for the fields, where no local allow reaches.
#![allow(clippy::type_complexity)]

mod admin;
mod bundle;
mod convert;
mod draft;
mod edge;
mod error;
mod exchange;
mod fast_deploy;
mod host;
mod layout;
mod metadata;
mod page_json;
mod resolution;
mod response;
mod section_loaders;
mod site;

pub use admin::{
    AdminRequestInput, NativeAdminOutcome, preview_page_admin_path, preview_page_redirect,
    unknown_admin_route,
};
pub use bundle::{ContentBundle, content_bundle, fast_deploy_strips_content};
pub use draft::NativeDraft;
pub use edge::{
    DraftSignals, NativeEdgePlan, cache_profiles, draft_signals, editor_frame_ancestors,
    storage_url,
};
pub use error::Code;
pub use exchange::NativeEdgeExchange;
pub use fast_deploy::{KvWrite, NativeFastDeploy, NativeKvSync};
pub use host::HostCallbacks;
pub use layout::root_layout;
pub use metadata::page_metadata;
pub use page_json::NativePageJson;
pub use resolution::NativeResolution;
pub use response::AdminResponseOutput;
pub use section_loaders::NativeSectionLoaders;
pub use site::{NativeSite, cors_headers, section_key};

use napi_derive::napi;
use sitefile_core::ErrorCode;

/// Every stable error code the addon may throw, in the core's order, then `PANIC`.
#[napi]
pub fn error_codes() -> Vec<String> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .chain(std::iter::once("PANIC".to_string()))
        .collect()
}
