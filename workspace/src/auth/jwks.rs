//! The authorization server's signing keys: its JWKS, discovered from its metadata,
//! cached, and fetched again (at most once per [`REFETCH_INTERVAL_MS`]) when a token names
//! a key the cache lacks, so key rotation needs no restart.

use std::time::Duration;

use futures_util::StreamExt;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

use crate::clock::Clock;

/// The shortest time between two fetches of the JWKS.
pub const REFETCH_INTERVAL_MS: i64 = 10_000;
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
    fetched_at_ms: Option<i64>,
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
    /// none is cached, or when the key is unknown and the last fetch is old enough.
    pub async fn key(&self, kid: Option<&str>) -> Result<Jwk, String> {
        let mut cache = self.cache.lock().await;
        if let Some(key) = cache.keys.as_ref().and_then(|keys| find(keys, kid)) {
            return Ok(key);
        }
        let now = self.clock.now_ms();
        if cache
            .fetched_at_ms
            .is_some_and(|at| now - at < REFETCH_INTERVAL_MS)
        {
            return Err("the token's signing key is unknown".into());
        }
        cache.fetched_at_ms = Some(now);
        let keys = self.fetch().await.map_err(|e| {
            tracing::warn!(issuer = %self.issuer, error = %e, "OAuth JWKS fetch failed");
            "the authorization server's keys could not be fetched".to_string()
        })?;
        let key = find(&keys, kid);
        cache.keys = Some(keys);
        key.ok_or_else(|| "the token's signing key is unknown".into())
    }

    /// Discovers the JWKS address from the issuer's metadata and fetches the JWKS.
    async fn fetch(&self) -> Result<JwkSet, String> {
        let mut last_error = String::new();
        for url in metadata_urls(&self.issuer) {
            match self.get::<Metadata>(&url).await {
                Ok(metadata) if metadata.issuer == self.issuer => {
                    return self.get(&metadata.jwks_uri).await;
                }
                Ok(metadata) => {
                    last_error = format!("{url} names issuer {:?}", metadata.issuer);
                }
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// GETs a JSON document of at most [`MAX_DOCUMENT_BYTES`].
    async fn get<T: DeserializeOwned>(&self, url: &str) -> Result<T, String> {
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
        let mut stream = response.bytes_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("{url}: {e}"))?;
            if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&bytes).map_err(|e| format!("{url}: {e}"))
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
