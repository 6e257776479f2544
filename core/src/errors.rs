//! One error kind for every binding: each core error type names a stable [`ErrorCode`], which
//! becomes Node's `error.code`, the C status value and the `code` of the server's JSON errors.

use serde::Serialize;

/// The stable code of a core error. The strings never change once released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::VariantArray)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
// The strings `as_str` writes (a test below holds them equal).
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A JSON text could not be parsed, or is nested too deeply.
    InvalidJson,
    /// Valid JSON of the wrong shape (a reload body that is not an object, say).
    InvalidContent,
    /// A request could not be built (a URL that is not absolute).
    InvalidRequest,
    /// A configuration variable or option holds an unusable value.
    InvalidConfig,
    /// No content was found where the host pointed.
    NotFound,
    /// Reading content failed for a reason other than its absence (permissions, a device error).
    Io,
    /// `provide` for a loader call that was never handed out.
    UnknownCall,
    /// `provide` for a loader call answered before.
    AlreadyAnswered,
    /// `next` or `provide` after the resolution returned its page.
    Finished,
    /// The host's hook refused a reload before the swap (Fast Deploy could not write).
    HookFailed,
}

impl ErrorCode {
    /// Every code, in declaration order (tests and bindings enumerate them).
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::InvalidJson,
        ErrorCode::InvalidContent,
        ErrorCode::InvalidRequest,
        ErrorCode::InvalidConfig,
        ErrorCode::NotFound,
        ErrorCode::Io,
        ErrorCode::UnknownCall,
        ErrorCode::AlreadyAnswered,
        ErrorCode::Finished,
        ErrorCode::HookFailed,
    ];

    /// The code's stable text, `SCREAMING_SNAKE_CASE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "INVALID_JSON",
            ErrorCode::InvalidContent => "INVALID_CONTENT",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::InvalidConfig => "INVALID_CONFIG",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Io => "IO",
            ErrorCode::UnknownCall => "UNKNOWN_CALL",
            ErrorCode::AlreadyAnswered => "ALREADY_ANSWERED",
            ErrorCode::Finished => "FINISHED",
            ErrorCode::HookFailed => "HOOK_FAILED",
        }
    }
}

impl From<ErrorCode> for &'static str {
    fn from(code: ErrorCode) -> &'static str {
        code.as_str()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a stable code. Every public error type of the core implements it.
pub trait HasErrorCode: std::error::Error {
    /// The error's stable code.
    fn code(&self) -> ErrorCode;
}

/// The serde form of any core error: `{"code": "INVALID_JSON", "message": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ErrorBody {
    /// The stable code.
    pub code: ErrorCode,
    /// A readable message (never holds a secret).
    pub message: String,
}

impl ErrorBody {
    /// The body of `error`.
    pub fn of(error: &dyn HasErrorCode) -> ErrorBody {
        ErrorBody {
            code: error.code(),
            message: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_distinct_and_serialize_as_their_text() {
        // `ALL` is written out (a const array bindings enumerate); it is every variant.
        assert_eq!(
            ErrorCode::ALL.as_slice(),
            <ErrorCode as strum::VariantArray>::VARIANTS
        );
        let texts: HashSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(texts.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
        let body = ErrorBody {
            code: ErrorCode::InvalidJson,
            message: "x".into(),
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"code":"INVALID_JSON","message":"x"}"#
        );
    }
}
