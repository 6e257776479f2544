//! Who is calling (an API key bound to one organization, or an OAuth access token whose
//! subject is a member) and what it may do.

mod audience;
mod authorization_server;
mod cache;
mod introspection;
mod jwks;
mod oauth;
mod permissions;
mod principal;
mod revision;

pub use cache::AuthCache;
pub use introspection::CACHE_MS as INTROSPECTION_CACHE_MS;
pub use jwks::{MIN_MAX_AGE_MS, REFETCH_INTERVAL_MS, STALE_GRACE_MS};
pub use oauth::{LEEWAY_SECS, OAuth};

pub use permissions::{Permissions, SELF_RESOURCE};
pub use principal::{Credential, Principal, authenticate, invalid_token};
