//! Strict parsers for configuration values; each error names the variable.

use super::error::{ConfigError, REDACTED};
use url::Url;

/// `true/1/yes/on` or `false/0/no/off`, case-insensitive.
pub fn parse_bool(variable: &str, raw: &str) -> Result<bool, ConfigError> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::new(
            variable,
            raw,
            "true or false (also 1/0, yes/no, on/off)",
        )),
    }
}

/// A positive byte count: an integer with an optional `B`, `KB`, `MB` or `GB` suffix
/// (binary multiples, case-insensitive; `KiB`, `MiB`, `GiB` accepted too).
pub fn parse_byte_size(variable: &str, raw: &str) -> Result<u64, ConfigError> {
    let bad = || {
        ConfigError::new(
            variable,
            raw,
            "a positive whole number of bytes, optionally with KB, MB or GB (e.g. 33554432 or 32MB)",
        )
    };
    let s = raw.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "kib" | "k" => 1 << 10,
        "mb" | "mib" | "m" => 1 << 20,
        "gb" | "gib" | "g" => 1 << 30,
        _ => return Err(bad()),
    };
    match n.checked_mul(multiplier) {
        Some(0) | None => Err(bad()),
        Some(bytes) => Ok(bytes),
    }
}

/// A fraction from 0 to 1 inclusive.
pub fn parse_rate(variable: &str, raw: &str) -> Result<f64, ConfigError> {
    match raw.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(ConfigError::new(variable, raw, "a number from 0 to 1")),
    }
}

/// An absolute `http` or `https` URL.
pub fn parse_http_url(variable: &str, raw: &str) -> Result<Url, ConfigError> {
    match Url::parse(raw.trim()) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(u),
        _ => Err(ConfigError::new(variable, raw, "an absolute http(s) URL")),
    }
}

/// A comma-separated list, entries trimmed, empty entries dropped.
pub fn parse_list(raw: &str) -> Vec<String> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `k=v,k2=v2` pairs; every entry needs a non-empty key and an `=`. The values are often
/// credentials, so an error names the entry by position, never by content.
pub fn parse_pairs(variable: &str, raw: &str) -> Result<Vec<(String, String)>, ConfigError> {
    parse_list(raw)
        .into_iter()
        .enumerate()
        .map(|(i, entry)| match entry.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(ConfigError::new(
                variable,
                REDACTED,
                format!("comma-separated key=value pairs (entry {} is not)", i + 1),
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_byte_size("V", "33554432"), Ok(33_554_432));
        assert_eq!(parse_byte_size("V", "32MB"), Ok(33_554_432));
        assert_eq!(parse_byte_size("V", "32 mb"), Ok(33_554_432));
        assert_eq!(parse_byte_size("V", "64KiB"), Ok(65_536));
        assert_eq!(parse_byte_size("V", "1GB"), Ok(1 << 30));
        for bad in [
            "",
            "0",
            "-1",
            "1e6",
            "64 parsecs",
            "MB",
            "1.5MB",
            "99999999999999999999GB",
        ] {
            let err = parse_byte_size("V", bad).unwrap_err();
            assert_eq!(err.variable, "V", "{bad}");
        }
    }

    #[test]
    fn bools_and_rates() {
        assert_eq!(parse_bool("V", "TRUE"), Ok(true));
        assert_eq!(parse_bool("V", "0"), Ok(false));
        assert!(parse_bool("V", "maybe").is_err());
        assert_eq!(parse_rate("V", "0.25"), Ok(0.25));
        assert!(parse_rate("V", "1.5").is_err());
        assert!(parse_rate("V", "NaN").is_err());
    }

    #[test]
    fn pairs() {
        assert_eq!(
            parse_pairs("V", "a=1, b = 2=3").unwrap(),
            vec![("a".into(), "1".into()), ("b".into(), "2=3".into())]
        );
        assert!(parse_pairs("V", "a=1,b").is_err());
    }

    proptest! {
        #[test]
        fn byte_size_never_panics(s in ".*") {
            let _ = parse_byte_size("V", &s);
        }

        #[test]
        fn byte_size_round_trips(n in 1u64..1_000_000_000) {
            prop_assert_eq!(parse_byte_size("V", &n.to_string()), Ok(n));
        }
    }
}
