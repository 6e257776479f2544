//! The authorization server's signing keys: its JWKS, discovered from its metadata,
//! cached for the response's `Cache-Control: max-age` (bounded to
//! [[`MIN_MAX_AGE_MS`], [`MAX_MAX_AGE_MS`]], [`DEFAULT_MAX_AGE_MS`] without one), and fetched
//! again (at most once per [`REFETCH_INTERVAL_MS`]) when it is older than that or a token
//! names a key the cache lacks, so key rotation and withdrawal need no restart. When a
//! refetch fails, the old set is kept for at most [`STALE_GRACE_MS`] past its age.

use std::sync::Arc;

use jsonwebtoken::jwk::{Jwk, JwkSet};
use tokio::sync::Mutex;

use super::authorization_server::AuthorizationServer;
use crate::clock::Clock;

/// The shortest time between two fetches of the JWKS.
pub const REFETCH_INTERVAL_MS: i64 = 10_000;
/// How long a JWKS without `Cache-Control: max-age` is trusted.
pub const DEFAULT_MAX_AGE_MS: i64 = 15 * 60 * 1000;
/// The shortest age a JWKS response may ask for.
pub const MIN_MAX_AGE_MS: i64 = 60 * 1000;
/// The longest age a JWKS response may ask for.
pub const MAX_MAX_AGE_MS: i64 = 60 * 60 * 1000;
/// How long past its age a JWKS is still used while the authorization server cannot be
/// reached.
pub const STALE_GRACE_MS: i64 = 60 * 60 * 1000;
/// The issuer's JWKS, cached.
pub struct Jwks {
    server: Arc<AuthorizationServer>,
    clock: Clock,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    keys: Option<JwkSet>,
    /// When the cached keys reach their age.
    expires_at_ms: i64,
    /// When a fetch was last tried (successful or not).
    tried_at_ms: Option<i64>,
}

impl Jwks {
    /// The keys of `server`, fetched on first use.
    pub fn new(server: Arc<AuthorizationServer>, clock: Clock) -> Self {
        Self {
            server,
            clock,
            cache: Mutex::default(),
        }
    }

    /// The key `kid` (or the only key, when the token names none); fetches the JWKS when
    /// none is cached, when the cached set has reached its age, or when the key is unknown,
    /// and the last try is old enough.
    pub async fn key(&self, kid: Option<&str>) -> Result<Jwk, String> {
        let mut cache = self.cache.lock().await;
        let now = self.clock.now_ms();
        let fresh = now < cache.expires_at_ms;
        if fresh && let Some(key) = cache.keys.as_ref().and_then(|keys| find(keys, kid)) {
            return Ok(key);
        }
        if cache
            .tried_at_ms
            .is_none_or(|at| now - at >= REFETCH_INTERVAL_MS)
        {
            cache.tried_at_ms = Some(now);
            match self.fetch().await {
                Ok((keys, max_age_ms)) => {
                    cache.keys = Some(keys);
                    cache.expires_at_ms = now + max_age_ms;
                }
                Err(e) => {
                    let stale = cache.keys.is_some();
                    tracing::warn!(issuer = %self.server.issuer(), error = %e, stale, "OAuth JWKS fetch failed");
                }
            }
        }
        match &cache.keys {
            Some(keys) if now < cache.expires_at_ms + STALE_GRACE_MS => {
                find(keys, kid).ok_or_else(|| "the token's signing key is unknown".into())
            }
            _ => Err("the authorization server's keys could not be fetched".into()),
        }
    }

    /// Discovers the JWKS address from the issuer's metadata and fetches the JWKS; with how
    /// long it may be kept.
    async fn fetch(&self) -> Result<(JwkSet, i64), String> {
        let metadata = self.server.metadata().await?;
        let jwks_uri = metadata
            .jwks_uri
            .ok_or_else(|| format!("{}'s metadata names no jwks_uri", self.server.issuer()))?;
        let (keys, max_age_ms) = self.server.get(&jwks_uri).await?;
        let max_age_ms = max_age_ms.map_or(DEFAULT_MAX_AGE_MS, |ms| {
            ms.clamp(MIN_MAX_AGE_MS, MAX_MAX_AGE_MS)
        });
        Ok((keys, max_age_ms))
    }
}

/// The key `kid` of `keys`, or the only key when `kid` is absent.
fn find(keys: &JwkSet, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => keys.find(kid).cloned(),
        None if keys.keys.len() == 1 => keys.keys.first().cloned(),
        None => None,
    }
}
