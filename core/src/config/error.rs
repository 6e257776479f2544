//! The configuration error: which variable or option is wrong, what it held, what was expected.

/// Stands for a secret value in errors ([`ConfigError::value`]).
pub(super) const REDACTED: &str = "<redacted>";

/// A configuration value that cannot be used. The message names the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {variable}={value:?}: expected {expected}")]
pub struct ConfigError {
    /// The environment variable or option name (`PLATFORM_LOADER_CACHE_MAX_BYTES`, `geoCacheKey`).
    pub variable: String,
    /// The value given (`<redacted>` for secrets).
    pub value: String,
    /// What a valid value looks like.
    pub expected: String,
}

impl ConfigError {
    /// An error for `variable` holding `value`.
    pub fn new(variable: &str, value: &str, expected: impl Into<String>) -> ConfigError {
        ConfigError {
            variable: variable.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

impl crate::errors::HasErrorCode for ConfigError {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidConfig
    }
}
