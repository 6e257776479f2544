//! `date.ts` (strict, also `$live/matchers/MatchDate.ts`) and `cron.ts` (inclusive).
//!
//! Both compare the request's clock with `start` and `end` at millisecond precision, like
//! JavaScript `Date`. A bound that is absent or falsy is not checked; a bound that cannot be
//! parsed makes the rule false.

use super::{Inputs, RuleFields};
use crate::value::Value;
use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// Largest magnitude of a JavaScript time value, in milliseconds.
const MAX_TIME_MS: f64 = 8.64e15;

/// True when now is strictly after `start` and strictly before `end`.
pub(super) fn date(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let Some((start, end)) = bounds(rule, inputs) else {
        return true;
    };
    let now = inputs.request.now.timestamp_millis();
    // `now > s` flips at `s + 1`, `now < e` at `e`.
    steady_between(inputs, start.shifted(1), end, now);
    start.holds(|s| now > s) && end.holds(|e| now < e)
}

/// True when now is at or after `start` and at or before `end`.
pub(super) fn cron(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let Some((start, end)) = bounds(rule, inputs) else {
        return true;
    };
    let now = inputs.request.now.timestamp_millis();
    // `now >= s` flips at `s`, `now <= e` at `e + 1`.
    steady_between(inputs, start, end.shifted(1), now);
    start.holds(|s| now >= s) && end.holds(|e| now <= e)
}

/// Narrows the page's steady window to the instants where the rule's two comparisons, which
/// flip at `start` and `end`, answer as they do at `now`.
fn steady_between(inputs: &mut Inputs, start: Bound, end: Bound, now: i64) {
    for bound in [start, end] {
        if let Bound::At(threshold) = bound {
            inputs.effects.steady.split_at(threshold, now);
        }
    }
}

/// One end of a time window.
#[derive(Clone, Copy)]
enum Bound {
    /// Not set (absent or falsy): not checked.
    Unset,
    /// Set but not a date: the rule is false.
    Invalid,
    /// An instant in epoch milliseconds.
    At(i64),
}

impl Bound {
    fn of(value: Option<&Value>) -> Bound {
        match value.filter(|v| v.is_truthy()) {
            None => Bound::Unset,
            Some(v) => instant(v).map_or(Bound::Invalid, Bound::At),
        }
    }

    /// The bound moved by `ms` milliseconds.
    fn shifted(self, ms: i64) -> Bound {
        match self {
            Bound::At(t) => Bound::At(t.saturating_add(ms)),
            other => other,
        }
    }

    fn holds(self, test: impl Fn(i64) -> bool) -> bool {
        match self {
            Bound::Unset => true,
            Bound::Invalid => false,
            Bound::At(t) => test(t),
        }
    }
}

/// `(start, end)`, or `None` when neither is set (the rule then does not consult the clock).
fn bounds(rule: &dyn RuleFields, inputs: &mut Inputs) -> Option<(Bound, Bound)> {
    let (start, end) = (Bound::of(rule.field("start")), Bound::of(rule.field("end")));
    if matches!((start, end), (Bound::Unset, Bound::Unset)) {
        return None;
    }
    inputs.effects.vary("time");
    Some((start, end))
}

/// A `Date` bound as epoch milliseconds: an ISO 8601 / RFC 3339 / RFC 2822 string or a number
/// of milliseconds. A date-time without an offset is read as UTC.
pub(crate) fn instant(value: &Value) -> Option<i64> {
    match value {
        Value::String(s) => parse_instant(s),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite() && f.abs() <= MAX_TIME_MS)
            .map(|f| f.trunc() as i64),
        _ => None,
    }
}

fn parse_instant(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis());
    }
    let (local, offset_ms) = split_offset(s);
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(local, format) {
            return Some(t.and_utc().timestamp_millis() - offset_ms);
        }
    }
    DateTime::parse_from_rfc2822(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// Splits a trailing `Z` or `±HH:MM` / `±HHMM` offset off a date-time; no offset → UTC.
fn split_offset(s: &str) -> (&str, i64) {
    if let Some(local) = s.strip_suffix(['Z', 'z']) {
        return (local, 0);
    }
    let Some(time_at) = s.find(['T', ' ']) else {
        return (s, 0);
    };
    let Some(sign_at) = s[time_at..].rfind(['+', '-']).map(|i| i + time_at) else {
        return (s, 0);
    };
    let digits: String = s[sign_at + 1..].chars().filter(|c| *c != ':').collect();
    let parsed = (digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| {
            digits[..2]
                .parse::<i64>()
                .ok()
                .zip(digits[2..].parse::<i64>().ok())
        })
        .flatten();
    match parsed {
        Some((h, m)) if h < 24 && m < 60 => {
            let sign = if s.as_bytes()[sign_at] == b'-' { -1 } else { 1 };
            (&s[..sign_at], sign * (h * 3_600_000 + m * 60_000))
        }
        _ => (s, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchers::builtins::Builtin;
    use crate::matchers::test_support::{builtin, request_at};

    fn ms(s: &str) -> i64 {
        parse_instant(s).unwrap_or_else(|| panic!("unparsed {s}"))
    }

    #[test]
    fn parses_the_usual_shapes() {
        let base = 1_767_225_600_000; // 2026-01-01T00:00:00Z
        assert_eq!(ms("2026-01-01T00:00:00Z"), base);
        assert_eq!(ms("2026-01-01T00:00:00.000Z"), base);
        assert_eq!(ms("2026-01-01"), base);
        assert_eq!(ms("2026-01-01T00:00"), base);
        assert_eq!(ms("2026-01-01T00:00Z"), base);
        assert_eq!(ms("2026-01-01T00:00:00"), base);
        assert_eq!(ms("2026-01-01T03:00:00+03:00"), base);
        assert_eq!(ms("2025-12-31T21:00:00-0300"), base);
        assert_eq!(ms("2025-12-31T21:00-03:00"), base);
        assert_eq!(ms("2026-01-01 00:00:00"), base);
        assert_eq!(ms("Thu, 01 Jan 2026 00:00:00 GMT"), base);
        assert_eq!(ms("2026-01-01T00:00:00.1239Z"), base + 123);
        assert_eq!(instant(&Value::from(base)), Some(base));
        for bad in [
            "",
            "soon",
            "2026-13-01",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:00:00+99:99",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
        assert_eq!(instant(&Value::Bool(true)), None);
        assert_eq!(instant(&Value::from(1e300)), None);
    }

    const NOW: &str = "2026-01-01T12:00:00Z";

    fn at(kind: Builtin, rule: &str, now: &str) -> bool {
        builtin(kind, rule, &request_at("/", now)).0
    }

    #[test]
    fn date_is_strict_at_both_ends() {
        let d = Builtin::Date;
        assert!(!at(d, r#"{"start":"2026-01-01T12:00:00Z"}"#, NOW));
        assert!(at(d, r#"{"start":"2026-01-01T11:59:59.999Z"}"#, NOW));
        assert!(!at(d, r#"{"end":"2026-01-01T12:00:00Z"}"#, NOW));
        assert!(at(d, r#"{"end":"2026-01-01T12:00:00.001Z"}"#, NOW));
        assert!(at(
            d,
            r#"{"start":"2025-01-01T00:00:00Z","end":"2027-01-01T00:00:00Z"}"#,
            NOW
        ));
        assert!(!at(
            d,
            r#"{"start":"2026-01-01T12:00:00Z","end":"2026-01-01T12:00:00Z"}"#,
            NOW
        ));
        assert!(at(d, r#"{}"#, NOW));
        assert!(at(d, r#"{"start":"","end":null}"#, NOW));
        assert!(!at(d, r#"{"start":"not a date"}"#, NOW));
        assert!(!at(d, r#"{"end":"not a date"}"#, NOW));
        // Sub-millisecond precision of the clock is ignored, like JavaScript `Date`.
        assert!(!at(
            d,
            r#"{"start":"2026-01-01T12:00:00Z"}"#,
            "2026-01-01T12:00:00.000900Z"
        ));
    }

    #[test]
    fn cron_is_inclusive_at_both_ends() {
        let c = Builtin::Cron;
        assert!(at(c, r#"{"start":"2026-01-01T12:00:00Z"}"#, NOW));
        assert!(!at(c, r#"{"start":"2026-01-01T12:00:00.001Z"}"#, NOW));
        assert!(at(c, r#"{"end":"2026-01-01T12:00:00Z"}"#, NOW));
        assert!(!at(c, r#"{"end":"2026-01-01T11:59:59.999Z"}"#, NOW));
        assert!(at(
            c,
            r#"{"start":"2026-01-01T12:00:00Z","end":"2026-01-01T12:00:00Z"}"#,
            NOW
        ));
        assert!(at(c, r#"{}"#, NOW));
        assert!(!at(c, r#"{"start":"garbage"}"#, NOW));
        assert!(!at(c, r#"{"end":"garbage","start":"2020-01-01"}"#, NOW));
    }

    #[test]
    fn time_is_a_vary_facet_only_when_a_bound_is_set() {
        let (_, e) = builtin(
            Builtin::Date,
            r#"{"start":"2020-01-01"}"#,
            &request_at("/", NOW),
        );
        assert_eq!(e.varies, vec!["time"]);
        let (_, e) = builtin(Builtin::Cron, r#"{}"#, &request_at("/", NOW));
        assert!(e.varies.is_empty());
    }
}
