//! The typed error every endpoint answers with: an HTTP status plus `{"error": message}`.

use axum::Json;
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
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) | Self::Storage(_) => StatusCode::INTERNAL_SERVER_ERROR,
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response =
            (self.status(), Json(json!({ "error": self.to_string() }))).into_response();
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
