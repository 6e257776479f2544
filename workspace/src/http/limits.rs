//! The limits of a served socket, and their `PLATFORM_*` variables (shared by
//! `sitefile workspace serve` and `sitefile serve`).

use std::time::Duration;

use crate::config::{ConfigError, read_count, read_millis};

/// The limits of a served socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time allowed for a complete request head, on a new connection or an idle keep-alive one
    /// (`PLATFORM_HEADER_TIMEOUT_MS`).
    pub header_timeout: Duration,
    /// Longest silence within a request body (`PLATFORM_BODY_TIMEOUT_MS`).
    pub body_timeout: Duration,
    /// Most connections open at once (`PLATFORM_MAX_CONNECTIONS`).
    pub max_connections: usize,
    /// How long a stopping server lets open requests finish (`PLATFORM_SHUTDOWN_TIMEOUT_MS`).
    pub shutdown_timeout: Duration,
    /// How long a connection may wait for a request head while every connection slot is taken
    /// and a new connection needs one; then the longest waiting is closed to make room (0
    /// closes it at once; `PLATFORM_PRESSURE_HEADER_TIMEOUT_MS`).
    pub pressure_header_timeout: Duration,
}

impl Default for ConnectionLimits {
    /// 10 s for a request head, 30 s of silence in a body, 512 connections, 10 s to stop, and
    /// 1 s for a head when every slot is taken: a real client's head follows its connection
    /// within a round trip, and an idle keep-alive connection closed is one the client reopens.
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
            shutdown_timeout: Duration::from_secs(10),
            pressure_header_timeout: Duration::from_millis(1000),
        }
    }
}

impl ConnectionLimits {
    /// The defaults, overridden by the variables `lookup` (a variable name to its value)
    /// holds; a value that is not a number is an error naming its variable.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut limits = ConnectionLimits::default();
        if let Some(timeout) = read_millis(lookup, "PLATFORM_HEADER_TIMEOUT_MS", 1)? {
            limits.header_timeout = timeout;
        }
        if let Some(timeout) = read_millis(lookup, "PLATFORM_BODY_TIMEOUT_MS", 1)? {
            limits.body_timeout = timeout;
        }
        if let Some(timeout) = read_millis(lookup, "PLATFORM_SHUTDOWN_TIMEOUT_MS", 0)? {
            limits.shutdown_timeout = timeout;
        }
        if let Some(timeout) = read_millis(lookup, "PLATFORM_PRESSURE_HEADER_TIMEOUT_MS", 0)? {
            limits.pressure_header_timeout = timeout;
        }
        if let Some(max) = read_count(lookup, "PLATFORM_MAX_CONNECTIONS")? {
            limits.max_connections = max;
        }
        Ok(limits)
    }

    /// [`ConnectionLimits::from_lookup`] over the process environment (empty values unset).
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&crate::config::env_lookup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_override_the_defaults_and_bad_values_name_their_variable() {
        let vars = |name: &str| match name {
            "PLATFORM_HEADER_TIMEOUT_MS" => Some("250".to_string()),
            "PLATFORM_MAX_CONNECTIONS" => Some("3".to_string()),
            _ => None,
        };
        let limits = ConnectionLimits::from_lookup(&vars).unwrap();
        assert_eq!(limits.header_timeout, Duration::from_millis(250));
        assert_eq!(limits.max_connections, 3);
        assert_eq!(
            limits.body_timeout,
            ConnectionLimits::default().body_timeout
        );
        let bad = |name: &str| (name == "PLATFORM_MAX_CONNECTIONS").then(|| "0".to_string());
        let error = ConnectionLimits::from_lookup(&bad).unwrap_err().to_string();
        assert!(error.contains("PLATFORM_MAX_CONNECTIONS"), "{error}");
    }

    #[test]
    fn the_pressure_head_timeout_has_a_default_and_a_bad_value_names_its_variable() {
        let pressure = |value: &'static str| {
            ConnectionLimits::from_lookup(&|name: &str| {
                (name == "PLATFORM_PRESSURE_HEADER_TIMEOUT_MS").then(|| value.to_string())
            })
        };
        assert_eq!(
            ConnectionLimits::from_lookup(&|_: &str| None)
                .unwrap()
                .pressure_header_timeout,
            Duration::from_millis(1000)
        );
        assert_eq!(
            pressure("250").unwrap().pressure_header_timeout,
            Duration::from_millis(250)
        );
        assert_eq!(
            pressure("0").unwrap().pressure_header_timeout,
            Duration::ZERO
        );
        let error = pressure("soon").unwrap_err().to_string();
        assert_eq!(
            error,
            "PLATFORM_PRESSURE_HEADER_TIMEOUT_MS is invalid: not a number"
        );
    }
}
