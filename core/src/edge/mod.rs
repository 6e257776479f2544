//! The edge cache policy shared by the Rust server and every binding: cache keys, profiles,
//! cacheability, response headers, security headers, purge index, redirects and assets.
//! Pure: the host does the caching, fetching and clock.

pub mod assets;
pub mod cacheability;
pub mod cdn;
pub mod geo_key;
pub(crate) mod headers;
pub mod key;
pub mod normalize;
pub mod options;
pub mod plan;
mod plan_form;
pub mod profile;
pub mod purge;
pub mod redirects;
pub mod respond;
pub mod security;
pub mod segment_key;
pub mod speculation;

#[cfg(feature = "internals")]
pub use assets::{
    AssetKind, DEFAULT_FINGERPRINT_PATTERN, IMMUTABLE_CACHE_CONTROL, asset_status, classify_asset,
};
#[cfg(feature = "internals")]
pub use cacheability::{
    Bypass, MATCHERS_OVERRIDE, OriginResponse, RequestFacts, Skip, StoreVerdict,
    carries_matcher_override, request_bypass, set_cookie_name, store_verdict,
};
#[cfg(feature = "internals")]
pub use cdn::{CdnCacheControl, CdnContext, SEGMENT_TOKEN_PARAM, segment_token};
#[cfg(feature = "internals")]
pub use geo_key::{GeoCacheKey, geo_part};
pub use key::{CacheKey, storage_url};
#[cfg(feature = "internals")]
pub use key::{KeyContext, STORAGE_KEY_PARAM, build_cache_key, url_key};
#[cfg(feature = "internals")]
pub use normalize::{TRACKING_PARAMS, is_tracking_param, normalize_query};
#[cfg(feature = "internals")]
pub use options::{
    CI_COMMIT_SHA_VAR, DEFAULT_BYPASS_PATHS, DEFAULT_SAFE_COOKIES, OutboundUserAgent,
    compiled_build_id, path_under,
};
pub use options::{PageJsonCors, WorkerOptions, build_time_hash};
pub use plan::{EdgeAction, EdgePlan, EdgePolicy, RequestInputs, SiteFacts};
/// The plan's serde form, for the TypeScript declarations (`crate::ts_types`).
#[cfg(all(test, feature = "ts"))]
pub(crate) use plan_form::EdgePlanJson;
pub use profile::{CacheProfile, UnknownProfile};
#[cfg(feature = "internals")]
pub use profile::{
    PRIVATE_CACHE_CONTROL, ProfileTable, ProfileTimings, Window, detect_builtin, detect_profile,
};
pub use purge::{PurgeIndex, PurgeScope};
#[cfg(feature = "internals")]
pub use redirects::Redirect;
pub use redirects::RedirectTable;
#[cfg(feature = "internals")]
pub use respond::Finished;
pub use respond::{OriginFacts, StoredState, origin_failed, stored_state};
pub use security::CspNonce;
#[cfg(feature = "internals")]
pub use security::{CspMode, SecurityHeaders, security_headers};
pub use segment_key::SegmentKey;
pub use speculation::SPECULATION_RULES_PATH;
#[cfg(feature = "internals")]
pub use speculation::{Eagerness, SpeculationMode, SpeculationRules, speculation_rules_header};
