//! The loader cache: results of loaders keyed by loader key and canonical props, capped in
//! bytes, evicted least-recently-used, fresh and stale by profile. Sans-IO: the core decides
//! hit, stale (serve, and let one caller refresh) or miss; the host runs the loader.

mod cache;
mod freshness;
mod key;

pub use cache::{
    CacheStats, LoaderCache, LoaderCacheConfig, Lookup, REFRESH_TIMEOUT_MS, Ticket, entry_size,
};
pub use freshness::Freshness;
pub use key::LoaderKey;
