//! Request bodies: the size bound and JSON parsing (the content parser, with its nesting bound).

use super::error::{AdminError, AdminErrorCode};
use crate::value::Value;

/// 413 when `body` is longer than `limit`.
pub(crate) fn check_size(body: &[u8], limit: usize) -> Result<(), AdminError> {
    if body.len() > limit {
        return Err(AdminError::new(
            AdminErrorCode::BodyTooLarge,
            format!("The body is larger than {limit} bytes"),
        ));
    }
    Ok(())
}

/// Parses a JSON body; an empty body is `None`. Nesting deeper than
/// [`MAX_PARSE_DEPTH`](crate::value::MAX_PARSE_DEPTH) is invalid JSON.
pub(crate) fn parse_json(body: &[u8]) -> Result<Option<Value>, AdminError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    Value::from_slice(body)
        .map(Some)
        .map_err(|e| AdminError::new(AdminErrorCode::InvalidJson, e.to_string()))
}

/// A JSON body that must be an object when present.
pub(crate) fn parse_object(body: &[u8], what: &str) -> Result<Option<Value>, AdminError> {
    match parse_json(body)? {
        Some(v) if v.as_object().is_none() => Err(AdminError::new(
            AdminErrorCode::InvalidBody,
            format!("{what} must be a JSON object"),
        )),
        other => Ok(other),
    }
}
