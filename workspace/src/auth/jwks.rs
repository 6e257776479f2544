//! The authorization server's signing keys: its JWKS, discovered from its metadata,
//! cached for the response's `Cache-Control: max-age` (bounded to
//! [[`MIN_MAX_AGE_MS`], [`MAX_MAX_AGE_MS`]], [`DEFAULT_MAX_AGE_MS`] without one), and fetched
//! again (at most once per [`REFETCH_INTERVAL_MS`]) when it is older than that or a token
//! names a key the cache lacks, so key rotation and withdrawal need no restart. When a
//! refetch fails, the old set is kept for at most [`STALE_GRACE_MS`] past its age.

use std::time::Duration;

use futures_util::StreamExt;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

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
/// The time limit of each fetch (metadata or JWKS).
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest metadata document or JWKS read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The issuer's JWKS, cached.
pub struct Jwks {
    issuer: String,
    client: reqwest::Client,
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

/// The part of the authorization server metadata (OpenID Connect Discovery or RFC 8414)
/// read here.
#[derive(Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: String,
}

impl Jwks {
    /// The keys of `issuer`, fetched on first use.
    pub fn new(issuer: &str, clock: Clock) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("OAuth HTTP client: {e}"))?;
        Ok(Self {
            issuer: issuer.to_string(),
            client,
            clock,
            cache: Mutex::default(),
        })
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
                    tracing::warn!(issuer = %self.issuer, error = %e, stale, "OAuth JWKS fetch failed");
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
        let mut last_error = String::new();
        for url in metadata_urls(&self.issuer) {
            match self.get::<Metadata>(&url).await {
                Ok((metadata, _)) if metadata.issuer == self.issuer => {
                    let (keys, max_age_ms) = self.get(&metadata.jwks_uri).await?;
                    let max_age_ms = max_age_ms.map_or(DEFAULT_MAX_AGE_MS, |ms| {
                        ms.clamp(MIN_MAX_AGE_MS, MAX_MAX_AGE_MS)
                    });
                    return Ok((keys, max_age_ms));
                }
                Ok((metadata, _)) => {
                    last_error = format!("{url} names issuer {:?}", metadata.issuer);
                }
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// GETs a JSON document of at most [`MAX_DOCUMENT_BYTES`], with its `Cache-Control:
    /// max-age` in milliseconds when it has one.
    async fn get<T: DeserializeOwned>(&self, url: &str) -> Result<(T, Option<i64>), String> {
        let response = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status().as_u16()));
        }
        let max_age_ms = response
            .headers()
            .get(reqwest::header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok())
            .and_then(max_age_ms);
        let mut stream = response.bytes_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("{url}: {e}"))?;
            if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        let document = serde_json::from_slice(&bytes).map_err(|e| format!("{url}: {e}"))?;
        Ok((document, max_age_ms))
    }
}

/// The `max-age` directive of a `Cache-Control` value, in milliseconds; `no-cache` and
/// `no-store` count as an age of zero (so the shortest age applies).
fn max_age_ms(cache_control: &str) -> Option<i64> {
    cache_control.split(',').find_map(|directive| {
        let directive = directive.trim();
        if directive.eq_ignore_ascii_case("no-cache") || directive.eq_ignore_ascii_case("no-store")
        {
            return Some(0);
        }
        let (name, value) = directive.split_once('=')?;
        let secs: i64 = value.trim().trim_matches('"').parse().ok()?;
        name.trim()
            .eq_ignore_ascii_case("max-age")
            .then(|| secs.saturating_mul(1000))
    })
}

/// The key `kid` of `keys`, or the only key when `kid` is absent.
fn find(keys: &JwkSet, kid: Option<&str>) -> Option<Jwk> {
    match kid {
        Some(kid) => keys.find(kid).cloned(),
        None if keys.keys.len() == 1 => keys.keys.first().cloned(),
        None => None,
    }
}

/// Where the issuer's metadata may be: OpenID Connect Discovery (appended), then RFC 8414
/// (inserted before the issuer's path).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let base = issuer.trim_end_matches('/');
    let mut urls = vec![format!("{base}/.well-known/openid-configuration")];
    if let Ok(url) = url::Url::parse(base) {
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        urls.push(format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        ));
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control_max_age() {
        assert_eq!(max_age_ms("public, max-age=300"), Some(300_000));
        assert_eq!(max_age_ms("MAX-AGE=\"60\""), Some(60_000));
        assert_eq!(max_age_ms("no-store"), Some(0));
        assert_eq!(max_age_ms("public, max-age=soon"), None);
        assert_eq!(max_age_ms("public"), None);
    }

    #[test]
    fn metadata_addresses() {
        assert_eq!(
            metadata_urls("https://as.example/tenant/"),
            [
                "https://as.example/tenant/.well-known/openid-configuration",
                "https://as.example/.well-known/oauth-authorization-server/tenant",
            ]
        );
    }
}
