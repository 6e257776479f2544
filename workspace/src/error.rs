//! The typed error every REST endpoint answers with: an HTTP status plus the one error body of
//! every sitefile HTTP surface, `{"error": {"code": "NOT_FOUND", "message": "…"}}`
//! (`docs/src/reference/errors.md`). MCP endpoints answer JSON-RPC error objects instead, as MCP requires.

use axum::Json;
use axum::extract::rejection::BytesRejection;
use axum::http::header::WWW_AUTHENTICATE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error with the HTTP status it maps to.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or fails validation.
    #[error("{0}")]
    BadRequest(String),
    /// 400: the body is not JSON, or nests too deep.
    #[error("{0}")]
    InvalidJson(String),
    /// 413: the body is larger than [`crate::http::BODY_LIMIT_BYTES`].
    #[error("request bodies are at most {} bytes", crate::http::BODY_LIMIT_BYTES)]
    BodyTooLarge,
    /// 405: the route does not take this method.
    #[error("this route does not take the request's method")]
    MethodNotAllowed,
    /// 401: no valid credentials; why a presented one was refused (RFC 6750
    /// `error_description`), if one was.
    #[error("unauthorized")]
    Unauthorized(Option<String>),
    /// 403: authenticated but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// 404: the thing does not exist (or belongs to another organization).
    #[error("{0}")]
    NotFound(String),
    /// 409: the request conflicts with the current state.
    #[error("{0}")]
    Conflict(String),
    /// 429: too much work is already waiting.
    #[error("{0}")]
    TooManyRequests(String),
    /// 503: a dependency is unavailable.
    #[error("{0}")]
    Unavailable(String),
    /// 500: an unexpected fault; the detail is logged, never returned.
    #[error("internal error")]
    Internal(String),
    /// 500: the database failed; the detail is logged with the database's location (see
    /// [`StorageFailure`]), never returned.
    #[error("internal error")]
    Storage(String),
}

/// The detail of a storage failure, carried on its 500 response to the layer that logs it
/// with the database's location (`router::log_storage_failures`).
#[derive(Clone, Debug)]
pub struct StorageFailure(pub String);

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) | Self::InvalidJson(_) => StatusCode::BAD_REQUEST,
            Self::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) | Self::Storage(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The error's stable code, the `code` of its body (listed in `docs/src/reference/errors.md`).
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "INVALID_REQUEST",
            Self::InvalidJson(_) => "INVALID_JSON",
            Self::BodyTooLarge => "BODY_TOO_LARGE",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::Unauthorized(_) => "UNAUTHORIZED",
            Self::Forbidden(_) => "FORBIDDEN",
            Self::NotFound(_) => "NOT_FOUND",
            Self::Conflict(_) => "CONFLICT",
            Self::TooManyRequests(_) => "TOO_MANY_REQUESTS",
            Self::Unavailable(_) => "UNAVAILABLE",
            Self::Internal(_) | Self::Storage(_) => "INTERNAL",
        }
    }

    /// Records a fault for the logs as `response` answers it: an internal fault is logged
    /// now; a storage failure rides on the response to the layer that logs it with the
    /// database's location. Other errors are the client's and are not logged.
    pub fn record(&self, response: &mut Response) {
        match self {
            Self::Internal(detail) => tracing::error!(%detail, "internal error"),
            Self::Storage(detail) => {
                response
                    .extensions_mut()
                    .insert(StorageFailure(detail.clone()));
            }
            _ => {}
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &error
            && db.is_unique_violation()
        {
            return Self::Conflict("already exists".into());
        }
        Self::Storage(error.to_string())
    }
}

/// A body the server would not read whole: 413 when it is over the limit, else 400.
impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> Self {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Self::BodyTooLarge
        } else {
            Self::BadRequest(rejection.body_text())
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "code": self.code(), "message": self.to_string() } });
        let mut response = (self.status(), Json(body)).into_response();
        self.record(&mut response);
        if let Self::Unauthorized(refusal) = &self {
            let mut challenge = String::from("Bearer realm=\"workspace\"");
            if let Some(reason) = refusal {
                challenge.push_str(&crate::auth::invalid_token(reason));
            }
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(WWW_AUTHENTICATE, value);
            }
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_documented_with_its_status() {
        let documented = include_str!("../../docs/src/reference/errors.md");
        let errors = [
            ApiError::BadRequest(String::new()),
            ApiError::InvalidJson(String::new()),
            ApiError::BodyTooLarge,
            ApiError::MethodNotAllowed,
            ApiError::Unauthorized(None),
            ApiError::Forbidden(String::new()),
            ApiError::NotFound(String::new()),
            ApiError::Conflict(String::new()),
            ApiError::TooManyRequests(String::new()),
            ApiError::Unavailable(String::new()),
            ApiError::Internal(String::new()),
            ApiError::Storage(String::new()),
        ];
        for error in errors {
            let row = format!("| `{}` | {} |", error.code(), error.status().as_u16());
            assert!(
                documented.lines().any(|line| line.starts_with(&row)),
                "docs/src/reference/errors.md has no row starting {row}"
            );
        }
    }
}
