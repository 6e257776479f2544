//! The edge cache policy shared by the Rust server and every binding: cache keys, profiles,
//! cacheability, response headers, security headers, purge index, redirects and assets.
//! Pure: the host does the caching, fetching and clock.

pub mod assets;
pub mod cacheability;
pub mod cdn;
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

pub use assets::{
    AssetKind, DEFAULT_FINGERPRINT_PATTERN, IMMUTABLE_CACHE_CONTROL, asset_status, classify_asset,
};
pub use cacheability::{
    Bypass, MATCHERS_OVERRIDE, OriginResponse, RequestFacts, Skip, StoreVerdict,
    carries_matcher_override, request_bypass, set_cookie_name, store_verdict,
};
pub use cdn::{CdnCacheControl, CdnContext, SEGMENT_TOKEN_PARAM, segment_token};
pub use key::{
    CacheKey, GeoCacheKey, KeyContext, STORAGE_KEY_PARAM, build_cache_key, geo_part, storage_url,
    url_key,
};
pub use normalize::{TRACKING_PARAMS, is_tracking_param, normalize_query};
pub use options::{
    CI_COMMIT_SHA_VAR, DEFAULT_BYPASS_PATHS, DEFAULT_SAFE_COOKIES, OutboundUserAgent, PageJsonCors,
    WorkerOptions, build_time_hash, compiled_build_id, path_under,
};
pub use plan::{EdgeAction, EdgePlan, EdgePolicy, RequestInputs, SiteFacts};
pub use profile::{
    CacheProfile, PRIVATE_CACHE_CONTROL, ProfileTable, ProfileTimings, UnknownProfile, Window,
    detect_builtin, detect_profile,
};
pub use purge::{PurgeIndex, PurgeScope};
pub use redirects::{Redirect, RedirectTable};
pub use respond::{Finished, OriginFacts, StoredState, origin_failed, stored_state};
pub use security::{CspMode, CspNonce, SecurityHeaders, security_headers};
pub use segment_key::SegmentKey;
pub use speculation::{
    Eagerness, SPECULATION_RULES_PATH, SpeculationMode, SpeculationRules, speculation_rules_header,
};
