//! Bearer authentication: an API key, looked up by hash, checked for expiry; or, when an
//! authorization server is configured, an OAuth access token (a JWT, or an opaque token it
//! introspects) whose subject is a member.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use super::{OAuth, Permissions};
use crate::crypto::{hash_api_key, hashes_equal};
use crate::error::ApiError;
use crate::state::AppState;
use crate::storage::Organization;

/// An authenticated caller.
#[derive(Clone, Debug)]
pub struct Principal {
    /// The API key id, or `oauth:<member id>` for an OAuth access token.
    pub key_id: String,
    /// The member the key acts for.
    pub member_id: String,
    /// The organization the key is bound to.
    pub org: Organization,
    /// What the key may do (with an OAuth token: what the member's role may do).
    pub permissions: Permissions,
    /// Whether the caller presented an OAuth access token rather than an API key.
    pub via_oauth: bool,
    /// The authorization revision an API key was validated at (`None` for an OAuth token):
    /// the same request reads its connection at that revision.
    pub revision: Option<i64>,
    /// When the API key expires (milliseconds since the epoch; `None`: never, or an OAuth
    /// token): a key it mints expires no later.
    pub expires_at: Option<i64>,
}

impl Principal {
    /// The audit identity of this caller.
    pub fn actor(&self) -> String {
        if self.via_oauth {
            format!("oauth:{}", self.member_id)
        } else {
            format!("key:{}", self.key_id)
        }
    }

    /// 403 unless the key is bound to the organization `slug` (same answer whether or
    /// not that organization exists).
    pub fn require_org(&self, slug: &str) -> Result<(), ApiError> {
        if self.org.slug == slug {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "this API key is not valid for organization {slug:?}"
            )))
        }
    }

    /// 403 unless the key grants `action` on `resource`.
    pub fn require(&self, resource: &str, action: &str) -> Result<(), ApiError> {
        if self.permissions.grants(resource, action) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!("Access denied to: {action}")))
        }
    }
}

/// What the `Authorization` header amounted to.
#[derive(Debug)]
pub enum Credential {
    /// No `Authorization` header.
    Missing,
    /// A header that is not a valid, unexpired key or token: why (an RFC 6750
    /// `error_description`, naming no secret).
    Invalid(String),
    /// A valid key.
    Valid(Principal),
}

impl Credential {
    /// The principal, or 401.
    pub fn required(self) -> Result<Principal, ApiError> {
        match self {
            Self::Valid(principal) => Ok(principal),
            Self::Invalid(reason) => Err(ApiError::Unauthorized(Some(reason))),
            Self::Missing => Err(ApiError::Unauthorized(None)),
        }
    }

    /// Why the credential was refused, when one was presented and refused.
    pub fn refusal(&self) -> Option<&str> {
        match self {
            Self::Invalid(reason) => Some(reason),
            _ => None,
        }
    }
}

/// Reads `Authorization: Bearer <token>` (scheme case-insensitive) and resolves it: a JWT
/// when OAuth is configured, an API key otherwise; a key whose expiry the state's clock has
/// reached is invalid. A JWT must be meant for the service-wide audience or for `resource`
/// (the MCP resource URL the request is for, as its RFC 9728 document names it; `None` on
/// the non-MCP endpoints). A key is read from the [`super::AuthCache`] at a revision read
/// for this request.
pub async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    resource: Option<&str>,
) -> Result<Credential, ApiError> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return Ok(Credential::Missing);
    };
    let Some(token) = value.to_str().ok().and_then(bearer_token) else {
        return Ok(Credential::Invalid("not a Bearer token".into()));
    };
    if let Some(oauth) = &state.oauth
        && oauth.takes(token)
    {
        return access_token(state, oauth, token, resource).await;
    }
    let hash = hash_api_key(token);
    let invalid = || {
        Ok(Credential::Invalid(
            "the API key is unknown or expired".into(),
        ))
    };
    let revision = state.auth.revision().await?;
    let Some((key, org)) = state.auth.key(&hash, revision).await? else {
        return invalid();
    };
    if !hashes_equal(&key.key_hash, &hash)
        || key
            .expires_at
            .is_some_and(|at| at <= state.config.clock.now_ms())
    {
        return invalid();
    }
    Ok(Credential::Valid(Principal {
        key_id: key.id,
        member_id: key.member_id,
        org,
        permissions: key.permissions,
        via_oauth: false,
        revision: Some(revision),
        expires_at: key.expires_at,
    }))
}

/// An OAuth access token: valid, and its subject a member (acting with its role's
/// permissions in its own organization only).
async fn access_token(
    state: &AppState,
    oauth: &OAuth,
    token: &str,
    resource: Option<&str>,
) -> Result<Credential, ApiError> {
    let subject = match oauth.subject(token, resource).await {
        Ok(subject) => subject,
        Err(reason) => return Ok(Credential::Invalid(reason)),
    };
    let Some((member, org)) = state.store.member_by_oauth_subject(&subject).await? else {
        return Ok(Credential::Invalid(
            "the token's subject is not a member of any organization".into(),
        ));
    };
    Ok(Credential::Valid(Principal {
        key_id: format!("oauth:{}", member.id),
        permissions: Permissions::of_role(&member.role),
        member_id: member.id,
        org,
        via_oauth: true,
        revision: None,
        expires_at: None,
    }))
}

/// The RFC 6750 parameters appended to a `Bearer` challenge for a refused credential:
/// `error="invalid_token"` and why (quotes and backslashes replaced, so the value stays one
/// quoted string).
pub fn invalid_token(reason: &str) -> String {
    let reason = reason.replace(['"', '\\'], "'");
    format!(", error=\"invalid_token\", error_description=\"{reason}\"")
}

/// The token of a `Bearer` authorization value.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
