//! Opaque access tokens, checked by the authorization server's RFC 7662 introspection
//! endpoint (discovered from its metadata), with this service's client credentials. Answers
//! are kept for at most [`CACHE_MS`] (never past the token's `exp`), keyed by the token's
//! SHA-256, so a busy client does not cost a round trip per request and a revocation at the
//! authorization server applies within that time.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use super::audience::Audience;
use super::authorization_server::AuthorizationServer;
use super::jwks::REFETCH_INTERVAL_MS;
use crate::clock::Clock;
use crate::config::OAuthClient;

/// How long an introspection answer (active or not) is used.
pub const CACHE_MS: i64 = 30_000;
/// Most answers kept; past it they are all dropped.
const MAX_ENTRIES: usize = 10_000;

/// What the introspection endpoint says of a token (the members read here).
#[derive(Clone, Deserialize)]
pub struct Introspected {
    /// Whether the token is currently active.
    pub active: bool,
    /// The subject.
    pub sub: Option<String>,
    /// The issuer, when the endpoint says.
    pub iss: Option<String>,
    /// Expiry, seconds since the epoch.
    pub exp: Option<i64>,
    /// Not before, seconds since the epoch.
    pub nbf: Option<i64>,
    /// The audiences.
    #[serde(default)]
    pub aud: Audience,
}

/// The introspection client with its cache.
pub struct Introspection {
    server: Arc<AuthorizationServer>,
    client: OAuthClient,
    clock: Clock,
    endpoint: Mutex<Endpoint>,
    answers: std::sync::Mutex<HashMap<[u8; 32], (Introspected, i64)>>,
}

/// The discovered endpoint, and when discovery was last tried.
#[derive(Default)]
struct Endpoint {
    url: Option<String>,
    tried_at_ms: Option<i64>,
}

impl Introspection {
    /// Introspects at `server`'s endpoint as `client`.
    pub fn new(server: Arc<AuthorizationServer>, client: OAuthClient, clock: Clock) -> Self {
        Self {
            server,
            client,
            clock,
            endpoint: Mutex::default(),
            answers: std::sync::Mutex::default(),
        }
    }

    /// What the authorization server says of `token` (from the cache when asked within
    /// [`CACHE_MS`]), or why it could not be asked.
    pub async fn introspect(&self, token: &str) -> Result<Introspected, String> {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let now = self.clock.now_ms();
        if let Some((answer, until)) = self.lock().get(&hash)
            && now < *until
        {
            return Ok(answer.clone());
        }
        let url = self.endpoint().await?;
        let answer: Introspected = self
            .server
            .post_form(
                &url,
                &[("token", token), ("token_type_hint", "access_token")],
                &self.client.id,
                &self.client.secret,
            )
            .await
            .map_err(|e| {
                tracing::warn!(issuer = %self.server.issuer(), error = %e, "OAuth token introspection failed");
                "the authorization server could not introspect the token".to_string()
            })?;
        let until = match answer.exp {
            Some(exp) => (now + CACHE_MS).min(exp.saturating_mul(1000)),
            None => now + CACHE_MS,
        };
        let mut answers = self.lock();
        if answers.len() >= MAX_ENTRIES {
            answers.clear();
        }
        answers.insert(hash, (answer.clone(), until));
        Ok(answer)
    }

    /// The introspection endpoint from the issuer's metadata (discovered once; a failed
    /// discovery is tried again at most once per [`REFETCH_INTERVAL_MS`]).
    async fn endpoint(&self) -> Result<String, String> {
        let mut endpoint = self.endpoint.lock().await;
        if let Some(url) = &endpoint.url {
            return Ok(url.clone());
        }
        let now = self.clock.now_ms();
        let unavailable =
            || "the authorization server's introspection endpoint is unknown".to_string();
        if endpoint
            .tried_at_ms
            .is_some_and(|at| now - at < REFETCH_INTERVAL_MS)
        {
            return Err(unavailable());
        }
        endpoint.tried_at_ms = Some(now);
        let found = self.server.metadata().await.and_then(|metadata| {
            metadata.introspection_endpoint.ok_or_else(|| {
                format!(
                    "{}'s metadata names no introspection_endpoint",
                    self.server.issuer()
                )
            })
        });
        match found {
            Ok(url) => {
                endpoint.url = Some(url.clone());
                Ok(url)
            }
            Err(e) => {
                tracing::warn!(issuer = %self.server.issuer(), error = %e, "OAuth introspection endpoint not discovered");
                Err(unavailable())
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (Introspected, i64)>> {
        self.answers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
