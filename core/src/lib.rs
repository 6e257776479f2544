//! sitefile-core: the pure, synchronous core of the sitefile site content runtime.
//!
//! Content is a flat map of JSON blocks held in immutable snapshots; resolving a request is a
//! state machine that hands loader calls to its host and never does I/O itself.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod admin;
pub mod check;
pub mod config;
pub mod content;
pub mod device;
pub mod draft;
pub mod edge;
pub mod effects;
pub mod errors;
mod hash;
pub mod host;
pub mod layout;
pub mod loader_cache;
pub mod matchers;
pub mod page_json;
pub mod pages;
pub mod request;
pub mod resolve;
pub mod section_loaders;
pub mod site;
pub mod uri;
pub mod value;

pub use device::Device;
pub use effects::{Effects, FlagChoice, ResolveErrorEvent, TimeWindow, TriedRule};
pub use errors::{ErrorBody, ErrorCode, HasErrorCode};
pub use host::{FeatureFlagAdapter, Host, MatcherContext, NoHost};
pub use request::{Geo, RandomSource, Request, RequestError, RequestForm};
pub use site::{Site, SiteSetup};
pub use value::{Key, Object, Value};
