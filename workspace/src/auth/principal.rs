//! Bearer authentication: an API key, looked up by hash, checked for expiry.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use super::Permissions;
use crate::clock::Clock;
use crate::crypto::{hash_api_key, hashes_equal};
use crate::error::ApiError;
use crate::storage::{Organization, Store};

/// An authenticated caller.
#[derive(Clone, Debug)]
pub struct Principal {
    /// The API key id.
    pub key_id: String,
    /// The member the key acts for.
    pub member_id: String,
    /// The organization the key is bound to.
    pub org: Organization,
    /// What the key may do.
    pub permissions: Permissions,
}

impl Principal {
    /// The audit identity of this caller.
    pub fn actor(&self) -> String {
        format!("key:{}", self.key_id)
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
    /// A header that is not a valid, unexpired key.
    Invalid,
    /// A valid key.
    Valid(Principal),
}

impl Credential {
    /// The principal, or 401.
    pub fn required(self) -> Result<Principal, ApiError> {
        match self {
            Self::Valid(principal) => Ok(principal),
            _ => Err(ApiError::Unauthorized),
        }
    }
}

/// Reads `Authorization: Bearer <key>` (scheme case-insensitive) and resolves the key; a
/// key whose expiry `clock` has reached is invalid.
pub async fn authenticate(
    store: &Store,
    clock: &Clock,
    headers: &HeaderMap,
) -> Result<Credential, ApiError> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return Ok(Credential::Missing);
    };
    let Some(token) = value.to_str().ok().and_then(bearer_token) else {
        return Ok(Credential::Invalid);
    };
    let hash = hash_api_key(token);
    let Some((key, org)) = store.api_key_by_hash(&hash).await? else {
        return Ok(Credential::Invalid);
    };
    if !hashes_equal(&key.key_hash, &hash) || key.expires_at.is_some_and(|at| at <= clock.now_ms())
    {
        return Ok(Credential::Invalid);
    }
    Ok(Credential::Valid(Principal {
        key_id: key.id,
        member_id: key.member_id,
        org,
        permissions: key.permissions,
    }))
}

/// The token of a `Bearer` authorization value.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
