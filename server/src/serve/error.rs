//! The errors `sitefile serve` answers itself (beside the admin protocol's, which the core
//! decides): the same body as every sitefile HTTP error, `{"error": {"code", "message"}}`, with
//! a code from `docs/src/reference/errors.md`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why `sitefile serve` refused or failed a request of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum ServeErrorCode {
    /// 400: the request could not be read as a site request (the core's `INVALID_REQUEST`).
    InvalidRequest,
    /// 400: the request body could not be read.
    InvalidBody,
    /// 408: the request body stopped arriving for the body timeout.
    BodyTimeout,
    /// 413: a body to send on to the origin is over the limit.
    BodyTooLarge,
    /// 405: pages take GET and HEAD.
    MethodNotAllowed,
    /// 502: the origin failed and no stored copy could stand in.
    OriginUnavailable,
    /// 500: the server drove a resolution out of order (a bug of its own).
    ResolutionFailed,
    /// 500: a reload could not be applied (its task failed).
    ReloadFailed,
}

impl ServeErrorCode {
    /// The HTTP status of this error.
    pub fn status(self) -> StatusCode {
        match self {
            Self::InvalidRequest | Self::InvalidBody => StatusCode::BAD_REQUEST,
            Self::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::OriginUnavailable => StatusCode::BAD_GATEWAY,
            Self::ResolutionFailed | Self::ReloadFailed => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The answer: this code's status and `{"error": {"code", "message"}}`.
    pub fn respond(self, message: &str) -> Response {
        let code: &'static str = self.into();
        let body = serde_json::json!({"error": {"code": code, "message": message}});
        (
            self.status(),
            [("content-type", "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn every_code_is_documented_with_its_status() {
        let documented = include_str!("../../../docs/src/reference/errors.md");
        for code in ServeErrorCode::VARIANTS {
            let text: &'static str = code.into();
            let row = format!("| `{text}` | {} |", code.status().as_u16());
            assert!(
                documented.lines().any(|line| line.starts_with(&row)),
                "docs/src/reference/errors.md has no row starting {row}"
            );
        }
    }
}
