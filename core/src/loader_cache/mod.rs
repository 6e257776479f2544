//! The loader cache: results of loaders keyed by loader key and canonical props, capped in
//! bytes, evicted least-recently-used, fresh and stale by profile. Sans-IO: the core decides
//! hit, stale (serve, and let one caller refresh) or miss; the host runs the loader.

mod cache;
mod freshness;
mod key;

#[cfg(feature = "internals")]
pub use cache::{CacheStats, REFRESH_TIMEOUT_MS, entry_size};
pub use cache::{LoaderCache, LoaderCacheConfig, Lookup, Ticket};
pub use freshness::Freshness;
pub use key::LoaderKey;
