//! The one error body of every admin response: `{"error": {"code", "message"}}`, with a stable
//! `SCREAMING_SNAKE_CASE` code per condition — the shape and spelling of every sitefile HTTP
//! error (`docs/src/reference/errors.md`); a condition that is a core error carries the core's own code.

use super::cors::Cors;
use super::response::AdminResponse;
use serde::Serialize;

/// Why an admin request failed; each has a stable `code` and an HTTP status.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(into = "&'static str")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum AdminErrorCode {
    /// 401: the token is missing, wrong, or not configured.
    Unauthorized,
    /// 404: purging is disabled (`purgeTokenEnv: false`).
    PurgeDisabled,
    /// 404: no loader or action is registered under the invoked key.
    UnknownHandler,
    /// 404: a handler mounted for an admin route was called for a path no admin route takes.
    UnknownRoute,
    /// 405: the route does not take this method (see `Allow`).
    MethodNotAllowed,
    /// 400: the body is not JSON, or nests too deep.
    InvalidJson,
    /// 400: the body is JSON of the wrong shape.
    InvalidBody,
    /// 400: a reload body that is JSON but not content (not an object; a delta that is not a
    /// map) — the core's `INVALID_CONTENT`.
    InvalidContent,
    /// 413: the body is larger than the configured limit.
    BodyTooLarge,
    /// 415: a body encoding the endpoint does not read.
    UnsupportedMediaType,
    /// 500: the invoked loader or action failed.
    InvokeFailed,
    /// 503: no schema has been set.
    SchemaNotInitialized,
    /// 503: the new content could not be written to the key-value store; it does not serve.
    KvWriteFailed,
    /// 503: previews and renders need a renderer the host does not have (a server without an
    /// origin).
    RendererUnavailable,
}

impl AdminErrorCode {
    /// The code's stable text (`UNAUTHORIZED`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The HTTP status of this error.
    pub fn status(self) -> u16 {
        match self {
            AdminErrorCode::Unauthorized => 401,
            AdminErrorCode::PurgeDisabled
            | AdminErrorCode::UnknownHandler
            | AdminErrorCode::UnknownRoute => 404,
            AdminErrorCode::MethodNotAllowed => 405,
            AdminErrorCode::InvalidJson
            | AdminErrorCode::InvalidBody
            | AdminErrorCode::InvalidContent => 400,
            AdminErrorCode::BodyTooLarge => 413,
            AdminErrorCode::UnsupportedMediaType => 415,
            AdminErrorCode::InvokeFailed => 500,
            AdminErrorCode::SchemaNotInitialized
            | AdminErrorCode::KvWriteFailed
            | AdminErrorCode::RendererUnavailable => 503,
        }
    }
}

/// An admin error: the body's `error` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdminError {
    /// The stable code.
    pub code: AdminErrorCode,
    /// A human-readable message.
    pub message: String,
    /// The failure's stack trace (invoke errors in development only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

impl AdminError {
    /// An error without a stack trace.
    pub fn new(code: AdminErrorCode, message: impl Into<String>) -> AdminError {
        AdminError {
            code,
            message: message.into(),
            stack: None,
        }
    }

    /// `{"error": {...}}` as a JSON value (also the shape of one failed call in a batch).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self })
    }

    /// The response carrying this error, with its status.
    pub(crate) fn into_response(self, cors: &Cors) -> AdminResponse {
        AdminResponse::json(self.code.status(), &self.to_json(), cors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::ErrorCode;
    use strum::VariantArray;

    const DOCUMENTED: &str = include_str!("../../../docs/src/reference/errors.md");

    fn documented(row: &str) -> bool {
        DOCUMENTED.lines().any(|line| line.starts_with(row))
    }

    #[test]
    fn every_admin_code_is_documented_with_its_status() {
        for code in AdminErrorCode::VARIANTS {
            let row = format!("| `{}` | {} |", code.as_str(), code.status());
            assert!(
                documented(&row),
                "docs/src/reference/errors.md has no row starting {row}"
            );
        }
    }

    #[test]
    fn every_core_code_is_documented() {
        for code in ErrorCode::ALL {
            let row = format!("| `{}` |", code.as_str());
            assert!(
                documented(&row),
                "docs/src/reference/errors.md has no row starting {row}"
            );
        }
    }

    #[test]
    fn admin_codes_serialize_as_their_text() {
        assert_eq!(
            serde_json::to_value(AdminErrorCode::KvWriteFailed).unwrap(),
            "KV_WRITE_FAILED"
        );
    }
}
