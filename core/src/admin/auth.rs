//! The two token rules: the reload token (the whole `Authorization` value) and the purge bearer
//! token. Both compare in constant time.

use super::config::{AdminConfig, PurgeToken};
use super::error::{AdminError, AdminErrorCode};
use super::request::AdminRequest;
use sha2::{Digest, Sha256};

/// Compares two secrets in time independent of where they differ and of their lengths (both are
/// hashed first).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (Sha256::digest(a), Sha256::digest(b));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// The one `Authorization` value; none, or several, is no credential.
fn authorization(request: &AdminRequest) -> Option<&str> {
    let mut values = request.header_values("authorization");
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

fn unauthorized(message: &str) -> AdminError {
    AdminError::new(AdminErrorCode::Unauthorized, message)
}

/// `POST /.sitefile`: in development anything goes; otherwise `Authorization` must equal
/// `PLATFORM_RELEASE_RELOAD_TOKEN` exactly, and an unset variable refuses every reload.
pub(crate) fn check_reload(config: &AdminConfig, request: &AdminRequest) -> Result<(), AdminError> {
    if config.development {
        return Ok(());
    }
    let Some(token) = &config.reload_token else {
        return Err(unauthorized(
            "Reload is disabled: PLATFORM_RELEASE_RELOAD_TOKEN is not set",
        ));
    };
    match authorization(request) {
        Some(given) if constant_time_eq(given.as_bytes(), token.expose().as_bytes()) => Ok(()),
        // Said whether or not the rest is the token, so the answer tells nothing about it.
        Some(given) if has_scheme(given) => Err(unauthorized(
            "Invalid Authorization header: the reload token is the whole value \
             (Authorization: <PLATFORM_RELEASE_RELOAD_TOKEN>), without a scheme such as Bearer",
        )),
        _ => Err(unauthorized("Missing or invalid Authorization header")),
    }
}

/// Whether an `Authorization` value starts with a scheme word (`Bearer x`, `Basic x`).
fn has_scheme(value: &str) -> bool {
    value.trim().split_once(' ').is_some_and(|(scheme, _)| {
        ["bearer", "basic", "token"]
            .iter()
            .any(|known| scheme.eq_ignore_ascii_case(known))
    })
}

/// The purge endpoints: `Authorization: Bearer <token>` (scheme in any case).
pub(crate) fn check_purge(config: &AdminConfig, request: &AdminRequest) -> Result<(), AdminError> {
    let token = match &config.purge_token {
        PurgeToken::Disabled => {
            return Err(AdminError::new(
                AdminErrorCode::PurgeDisabled,
                "Purging is disabled",
            ));
        }
        PurgeToken::Unset => {
            return Err(unauthorized(
                "Purging is refused: the purge token variable is not set",
            ));
        }
        PurgeToken::Token(token) => token,
    };
    let credentials = authorization(request)
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, credentials)| credentials.trim());
    match credentials {
        Some(given) if constant_time_eq(given.as_bytes(), token.expose().as_bytes()) => Ok(()),
        _ => Err(unauthorized("Missing or invalid bearer token")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    #[test]
    fn a_reload_with_a_scheme_is_refused_saying_the_token_is_the_whole_value() {
        let config = AdminConfig {
            reload_token: Some(Secret::new("s3cret")),
            ..AdminConfig::default()
        };
        let request = |value: &str| {
            AdminRequest::new("POST", "/.sitefile").with_header("authorization", value)
        };
        assert!(check_reload(&config, &request("s3cret")).is_ok());
        for value in ["Bearer s3cret", "bearer nope", "Basic czNjcmV0"] {
            let refused = check_reload(&config, &request(value)).expect_err(value);
            assert_eq!(refused.code, AdminErrorCode::Unauthorized);
            assert!(
                refused.message.contains("without a scheme such as Bearer"),
                "{value}"
            );
        }
        let wrong = check_reload(&config, &request("s3cret2")).expect_err("a wrong token");
        assert_eq!(wrong.message, "Missing or invalid Authorization header");
    }

    #[test]
    fn equal_only_when_equal() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
    }
}
