//! OAuth access tokens of the configured authorization server: JWTs, checked for signature
//! against its keys, and, when the service has client credentials, opaque tokens, checked by
//! its introspection endpoint (RFC 7662). Either way the issuer, the audience (the
//! service-wide audience, or the exact resource the request is for: RFC 8707/9728) and the
//! validity period are checked here.

use std::collections::HashSet;
use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::audience::Audience;
use super::authorization_server::AuthorizationServer;
use super::introspection::Introspection;
use super::jwks::Jwks;
use crate::clock::Clock;
use crate::config::OAuthConfig;

/// The clock skew tolerated on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECS: u64 = 60;

/// The resource server side of OAuth: validates the issuer's access tokens.
pub struct OAuth {
    issuer: String,
    /// The service-wide audience, accepted on every endpoint; without a trailing slash.
    audience: String,
    jwks: Jwks,
    /// The introspection client, when the service has client credentials.
    introspection: Option<Introspection>,
    /// The service's clock, which `exp` and `nbf` are checked against.
    clock: Clock,
    /// The scopes advertised to clients.
    scopes: Vec<String>,
}

/// The claims read from a valid token.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    exp: i64,
    nbf: Option<i64>,
    #[serde(default)]
    aud: Audience,
}

impl OAuth {
    /// A validator for `config`'s issuer (the audience defaulting to `public_url`); its keys
    /// are fetched on first use.
    pub fn new(config: &OAuthConfig, public_url: &str, clock: Clock) -> Result<Self, String> {
        let audience = config.audience.as_deref().unwrap_or(public_url);
        let server = Arc::new(AuthorizationServer::new(&config.issuer)?);
        Ok(Self {
            jwks: Jwks::new(server.clone(), clock.clone()),
            introspection: config
                .client
                .clone()
                .map(|client| Introspection::new(server, client, clock.clone())),
            clock,
            issuer: config.issuer.clone(),
            audience: audience.trim_end_matches('/').to_string(),
            scopes: config.scopes.clone(),
        })
    }

    /// The scopes a client asks for (advertised in the protected-resource metadata).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The issuer URL (advertised in the protected-resource metadata).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Whether `token` is one of this authorization server's to check: a JWT (three
    /// dot-separated parts), or, when the service can introspect, any token that is not one
    /// of its own API keys (`sfk_...`, which never leave the service).
    pub fn takes(&self, token: &str) -> bool {
        is_jwt(token) || (self.introspection.is_some() && !crate::crypto::is_api_key(token))
    }

    /// The subject of a valid access token meant for `resource` (the URL of the MCP resource
    /// the request is for; `None` where only the service-wide audience is accepted), or why
    /// it is refused (an RFC 6750 `error_description`, naming no secret).
    pub async fn subject(&self, token: &str, resource: Option<&str>) -> Result<String, String> {
        match &self.introspection {
            Some(introspection) if !is_jwt(token) => {
                self.introspected_subject(introspection, token, resource)
                    .await
            }
            _ => self.signed_subject(token, resource).await,
        }
    }

    /// [`OAuth::subject`] of an opaque token: what the introspection endpoint says of it.
    async fn introspected_subject(
        &self,
        introspection: &Introspection,
        token: &str,
        resource: Option<&str>,
    ) -> Result<String, String> {
        let answer = introspection.introspect(token).await?;
        if !answer.active {
            return Err("the token is not active".into());
        }
        if answer.iss.as_deref().is_some_and(|iss| iss != self.issuer) {
            return Err(describe(&ErrorKind::InvalidIssuer));
        }
        let (Some(sub), Some(exp)) = (answer.sub, answer.exp) else {
            return Err(describe(&ErrorKind::MissingRequiredClaim(String::new())));
        };
        self.admit(sub, exp, answer.nbf, &answer.aud, resource)
    }

    /// [`OAuth::subject`] of a JWT: its signature checked against the issuer's keys.
    async fn signed_subject(&self, token: &str, resource: Option<&str>) -> Result<String, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| "the token is malformed")?;
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err("the token is not signed with the authorization server's keys".into());
        }
        let jwk = self.jwks.key(header.kid.as_deref()).await?;
        if jwk
            .common
            .key_algorithm
            .is_some_and(|alg| alg.to_string() != format!("{:?}", header.alg))
        {
            return Err("the token's algorithm does not match its key".into());
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| "the token's signing key is unusable")?;
        // The validity period is checked below, against the service's clock.
        let mut validation = Validation::new(header.alg);
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.set_issuer(&[&self.issuer]);
        validation.required_spec_claims = HashSet::from(["exp", "iss", "sub"].map(String::from));
        let claims = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|e| describe(e.kind()))?
            .claims;
        self.admit(claims.sub, claims.exp, claims.nbf, &claims.aud, resource)
    }

    /// `sub` when the token's validity period (with [`LEEWAY_SECS`] of skew, by the
    /// service's clock) holds and one of its audiences is accepted for `resource`.
    fn admit(
        &self,
        sub: String,
        exp: i64,
        nbf: Option<i64>,
        aud: &Audience,
        resource: Option<&str>,
    ) -> Result<String, String> {
        let now = self.clock.now_ms() / 1000;
        let leeway = LEEWAY_SECS as i64;
        if exp + leeway <= now {
            return Err(describe(&ErrorKind::ExpiredSignature));
        }
        if nbf.is_some_and(|nbf| nbf - leeway > now) {
            return Err(describe(&ErrorKind::ImmatureSignature));
        }
        if !aud
            .all()
            .iter()
            .any(|aud| self.accepts_audience(aud, resource))
        {
            return Err("the token is not meant for this resource (aud)".into());
        }
        Ok(sub)
    }

    /// Whether `aud` is the service-wide audience or exactly `resource` (a token a client
    /// obtained for one MCP resource is good for that resource only).
    fn accepts_audience(&self, aud: &str, resource: Option<&str>) -> bool {
        let aud = aud.trim_end_matches('/');
        aud == self.audience || resource.is_some_and(|r| aud == r.trim_end_matches('/'))
    }
}

/// Whether `token` has the shape of a JWT (three dot-separated parts).
fn is_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

/// The `error_description` of a rejected token.
fn describe(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
        ErrorKind::InvalidIssuer => "the token's issuer is not accepted",
        ErrorKind::InvalidSignature => "the token's signature is invalid",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
        _ => "the token is malformed",
    }
    .into()
}
