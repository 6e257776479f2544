//! The sticky A/B state: decisions of `random.ts` rules, kept in the `platform_segment` cookie.
//!
//! Cookie value: `base64(encodeURIComponent(JSON))` of
//! `{"active":[names drawn true],"inactiveDrawn":[names drawn false],"pct":{name:fingerprint}}`
//! (plus `"exp":{key:variantId}` when experiment assignments are present), names sorted. The
//! fingerprint is `round(traffic*100)` clamped to 0..=100; an entry without one (`-1`, written
//! by older runtimes) is honoured whatever the traffic. A fingerprint that no longer matches
//! re-rolls the visitor once.

use crate::request::{RandomSource, Request};
use crate::uri::{URI_COMPONENT, decode_uri_component};
use crate::value::{Value, write_json_string};
use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};
use percent_encoding::utf8_percent_encode;

/// Name of the sticky A/B cookie.
pub const SEGMENT_COOKIE: &str = "platform_segment";

/// Attributes of the cookie: one year, readable by analytics scripts (no `HttpOnly`).
const COOKIE_ATTRIBUTES: &str = "Path=/; Max-Age=31536000; SameSite=Lax";

/// Longest cookie value parsed; a longer one is treated as absent.
const MAX_COOKIE_LEN: usize = 8192;

/// `atob` accepts values with or without padding.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One recorded decision.
#[derive(Debug, Clone, PartialEq)]
struct Flag {
    name: String,
    value: Decision,
    /// The traffic fingerprint it was decided under; `-1` = unknown (always honoured).
    pct: i64,
}

#[derive(Debug, Clone, PartialEq)]
enum Decision {
    /// A `random.ts` draw.
    Drawn(bool),
    /// An experiment's arm (`sdk/experiments`).
    Variant(String),
}

/// The sticky A/B state of one request: decisions parsed from the incoming `platform_segment`
/// cookie, updated by this request's decisions. It also carries the request's random stream
/// (a copy of [`Request::random`]), so every draw of one resolution comes from one sequence.
#[derive(Debug, Clone)]
pub struct Segment {
    incoming: Option<String>,
    stored: Vec<Flag>,
    decided: Vec<Flag>,
    random: RandomSource,
}

impl Segment {
    /// Reads the request's `platform_segment` cookie; a malformed cookie counts as empty.
    pub fn from_request(req: &Request) -> Segment {
        let incoming = req.cookie(SEGMENT_COOKIE).map(str::to_string);
        Segment {
            stored: incoming.as_deref().map(parse).unwrap_or_default(),
            incoming,
            decided: Vec::new(),
            random: req.random.clone(),
        }
    }

    /// The full `Set-Cookie` value when this request decided something and the merged cookie
    /// (this request's decisions win per name) differs from the incoming one.
    pub fn set_cookie(&self) -> Option<String> {
        if self.decided.is_empty() {
            return None;
        }
        let value = serialize(&self.merged());
        (self.incoming.as_deref() != Some(value.as_str()))
            .then(|| format!("{SEGMENT_COOKIE}={value}; {COOKIE_ATTRIBUTES}"))
    }

    /// The cohort part of the edge cache key: every decision held (the cookie's, overlaid by this
    /// request's) as `name:1|0|<variant>:<pct>`, sorted by name, joined by `,`; `None` when there
    /// are no decisions.
    pub fn cache_token(&self) -> Option<String> {
        let flags = self.merged();
        if flags.is_empty() {
            return None;
        }
        let parts: Vec<String> = flags
            .iter()
            .map(|f| {
                let value = match &f.value {
                    Decision::Drawn(true) => "1",
                    Decision::Drawn(false) => "0",
                    Decision::Variant(v) => v,
                };
                format!("{}:{value}:{}", f.name, f.pct)
            })
            .collect();
        Some(parts.join(","))
    }

    /// The sticky decision for `name` under the fingerprint of `traffic`: one already made this
    /// request, else the cookie's when its fingerprint matches (or is `-1`), else a fresh draw.
    pub(crate) fn decide(&mut self, name: &str, traffic: f64) -> bool {
        let pct = traffic_to_pct(traffic);
        let earlier = self.decided.iter().find(|f| f.name == name && f.pct == pct);
        if let Some(Flag {
            value: Decision::Drawn(value),
            ..
        }) = earlier
        {
            return *value;
        }
        let stored = self.stored.iter().find(|f| f.name == name);
        let value = match stored {
            Some(Flag {
                value: Decision::Drawn(v),
                pct: p,
                ..
            }) if *p == -1 || *p == pct => *v,
            _ => self.draw() < traffic,
        };
        self.decided.push(Flag {
            name: name.to_string(),
            value: Decision::Drawn(value),
            pct,
        });
        value
    }

    /// The experiment arm the incoming cookie holds for `name`, when it was assigned under the
    /// fingerprint `pct` (or an unknown one).
    pub(super) fn stored_variant(&self, name: &str, pct: i64) -> Option<&str> {
        self.stored.iter().find_map(|f| match &f.value {
            Decision::Variant(id) if f.name == name && (f.pct == -1 || f.pct == pct) => Some(&**id),
            _ => None,
        })
    }

    /// The experiment arm this request assigned for `name` under the fingerprint `pct`.
    pub(super) fn decided_variant(&self, name: &str, pct: i64) -> Option<&str> {
        self.decided.iter().rev().find_map(|f| match &f.value {
            Decision::Variant(id) if f.name == name && f.pct == pct => Some(&**id),
            _ => None,
        })
    }

    /// Keeps this request's assignment of arm `id` for experiment `name` in the cookie.
    pub(super) fn record_variant(&mut self, name: &str, id: &str, pct: i64) {
        self.decided.push(Flag {
            name: name.to_string(),
            value: Decision::Variant(id.to_string()),
            pct,
        });
    }

    /// The next number of the request's random stream, in `[0, 1)`.
    pub(crate) fn draw(&mut self) -> f64 {
        self.random.next_f64()
    }

    /// Stored decisions not decided again, plus this request's (the last per name), by name.
    fn merged(&self) -> Vec<&Flag> {
        let mut out: Vec<&Flag> = Vec::with_capacity(self.stored.len() + self.decided.len());
        for (i, f) in self.decided.iter().enumerate() {
            if !self.decided[i + 1..]
                .iter()
                .any(|later| later.name == f.name)
            {
                out.push(f);
            }
        }
        for f in &self.stored {
            if !out.iter().any(|o| o.name == f.name) {
                out.push(f);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// `round(traffic * 100)`, clamped: non-finite or `<= 0` → 0, `>= 1` → 100.
fn traffic_to_pct(traffic: f64) -> i64 {
    if !traffic.is_finite() || traffic <= 0.0 {
        0
    } else if traffic >= 1.0 {
        100
    } else {
        // JavaScript `Math.round`: halves round up.
        (traffic * 100.0 + 0.5).floor() as i64
    }
}

fn serialize(flags: &[&Flag]) -> String {
    let mut json = Vec::with_capacity(64);
    let names = |json: &mut Vec<u8>, want: bool| {
        let mut first = true;
        for f in flags.iter().filter(|f| f.value == Decision::Drawn(want)) {
            if !std::mem::take(&mut first) {
                json.push(b',');
            }
            write_json_string(&f.name, json);
        }
    };
    json.extend_from_slice(b"{\"active\":[");
    names(&mut json, true);
    json.extend_from_slice(b"],\"inactiveDrawn\":[");
    names(&mut json, false);
    json.extend_from_slice(b"],\"pct\":{");
    for (i, f) in flags.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        write_json_string(&f.name, &mut json);
        json.push(b':');
        json.extend_from_slice(f.pct.to_string().as_bytes());
    }
    json.push(b'}');
    let variants: Vec<(&str, &str)> = flags
        .iter()
        .filter_map(|f| match &f.value {
            Decision::Variant(v) => Some((f.name.as_str(), v.as_str())),
            Decision::Drawn(_) => None,
        })
        .collect();
    if !variants.is_empty() {
        json.extend_from_slice(b",\"exp\":{");
        for (i, (name, variant)) in variants.into_iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            write_json_string(name, &mut json);
            json.push(b':');
            write_json_string(variant, &mut json);
        }
        json.push(b'}');
    }
    json.push(b'}');
    let text = String::from_utf8_lossy(&json);
    let encoded = utf8_percent_encode(&text, URI_COMPONENT).to_string();
    general_purpose::STANDARD.encode(encoded)
}

/// Parses a cookie value; anything malformed yields no decisions. Entries whose fingerprint is
/// present but not an integer are dropped (they re-roll).
fn parse(raw: &str) -> Vec<Flag> {
    if raw.len() > MAX_COOKIE_LEN {
        return Vec::new();
    }
    let Some(json) = LENIENT_BASE64
        .decode(raw.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| decode_uri_component(&text))
        .and_then(|text| Value::from_json_str(&text).ok())
    else {
        return Vec::new();
    };
    let pct_of = |name: &str| -> Option<i64> {
        match json.get("pct").and_then(|p| p.get(name)) {
            None => Some(-1),
            Some(v) => v
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                .map(|f| f as i64),
        }
    };
    let mut flags = Vec::new();
    let names = |key: &str| {
        json.get(key)
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
    };
    for (key, drawn) in [("active", true), ("inactiveDrawn", false)] {
        for name in names(key) {
            if let Some(pct) = pct_of(name) {
                flags.push(Flag {
                    name: name.to_string(),
                    value: Decision::Drawn(drawn),
                    pct,
                });
            }
        }
    }
    if let Some(exp) = json.get("exp").and_then(Value::as_object) {
        for (name, variant) in exp.entries() {
            if let (Some(variant), Some(pct)) = (variant.as_str(), pct_of(name)) {
                flags.push(Flag {
                    name: name.to_string(),
                    value: Decision::Variant(variant.to_string()),
                    pct,
                });
            }
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchers::test_support::request;

    /// The reference's example value (`HeroTest` true at 50%).
    const EXAMPLE: &str = "JTdCJTIyYWN0aXZlJTIyJTNBJTVCJTIySGVyb1Rlc3QlMjIlNUQlMkMlMjJpbmFjdGl2ZURyYXduJTIyJTNBJTVCJTVEJTJDJTIycGN0JTIyJTNBJTdCJTIySGVyb1Rlc3QlMjIlM0E1MCU3RCU3RA==";

    fn segment(cookie: &str) -> Segment {
        Segment::from_request(&request("/").with_cookie(SEGMENT_COOKIE, cookie))
    }

    fn flag(name: &str, value: bool, pct: i64) -> Flag {
        Flag {
            name: name.into(),
            value: Decision::Drawn(value),
            pct,
        }
    }

    #[test]
    fn reference_example_round_trips_under_our_cookie_name() {
        let seg = segment(EXAMPLE);
        assert_eq!(seg.stored, vec![flag("HeroTest", true, 50)]);
        assert_eq!(serialize(&seg.merged()), EXAMPLE);
        assert_eq!(seg.cache_token().as_deref(), Some("HeroTest:1:50"));
        // Re-deciding the same way writes nothing: the value would be identical.
        let mut seg = seg;
        assert!(seg.decide("HeroTest", 0.5));
        assert_eq!(seg.set_cookie(), None);
        // Through a real Cookie header too.
        let via_header = Segment::from_request(
            &request("/").with_header("cookie", &format!("a=1; platform_segment={EXAMPLE}")),
        );
        assert_eq!(via_header.stored, vec![flag("HeroTest", true, 50)]);
    }

    #[test]
    fn serializes_sorted_with_exact_attributes() {
        let mut seg = segment("");
        seg.decided = vec![
            flag("b", false, 30),
            flag("a", true, 100),
            flag("c", true, 0),
        ];
        let cookie = seg.set_cookie().unwrap();
        let (value, attributes) = cookie
            .strip_prefix("platform_segment=")
            .unwrap()
            .split_once("; ")
            .unwrap();
        assert_eq!(attributes, "Path=/; Max-Age=31536000; SameSite=Lax");
        assert!(!value.contains('%'), "raw base64");
        let text = decode_uri_component(
            &String::from_utf8(general_purpose::STANDARD.decode(value).unwrap()).unwrap(),
        )
        .unwrap();
        assert_eq!(
            text,
            r#"{"active":["a","c"],"inactiveDrawn":["b"],"pct":{"a":100,"b":30,"c":0}}"#
        );
        assert_eq!(seg.cache_token().as_deref(), Some("a:1:100,b:0:30,c:1:0"));
        assert_eq!(
            parse(value),
            vec![
                flag("a", true, 100),
                flag("c", true, 0),
                flag("b", false, 30)
            ]
        );
    }

    #[test]
    fn names_are_json_and_uri_escaped() {
        let mut seg = segment("");
        seg.decided = vec![flag("Hero \"Test\" ção", true, 50)];
        let cookie = seg.set_cookie().unwrap();
        let value = cookie["platform_segment=".len()..]
            .split(';')
            .next()
            .unwrap();
        assert_eq!(parse(value), vec![flag("Hero \"Test\" ção", true, 50)]);
    }

    #[test]
    fn malformed_cookies_are_empty() {
        let not_json = general_purpose::STANDARD.encode("%7Bnope");
        let bad_escape = general_purpose::STANDARD.encode("%E0%A4%A");
        let not_object = general_purpose::STANDARD.encode("%5B1%5D");
        for raw in [
            "",
            "!!!",
            "bm90IGpzb24=",
            &not_json,
            &bad_escape,
            &not_object,
        ] {
            let seg = segment(raw);
            assert!(seg.stored.is_empty(), "{raw}");
            assert_eq!(seg.cache_token(), None);
        }
        assert!(segment(&"A".repeat(MAX_COOKIE_LEN + 4)).stored.is_empty());
        let weird = general_purpose::STANDARD
            .encode(r#"{"active":["a",3,null],"inactiveDrawn":"x","pct":{"a":"50"}}"#);
        assert!(
            segment(&weird).stored.is_empty(),
            "non-integer pct drops the entry"
        );
    }

    #[test]
    fn missing_pct_is_minus_one_and_honoured() {
        let classic = general_purpose::STANDARD.encode(
            utf8_percent_encode(r#"{"active":["X"],"inactiveDrawn":["Y"]}"#, URI_COMPONENT)
                .to_string(),
        );
        let mut seg = segment(&classic);
        assert_eq!(seg.stored, vec![flag("X", true, -1), flag("Y", false, -1)]);
        // Honoured for any traffic; no draw happens.
        assert!(seg.decide("X", 0.0));
        assert!(!seg.decide("Y", 1.0));
        assert_eq!(
            seg.random.clone().next_f64(),
            request("/").random.clone().next_f64()
        );
        // Recorded under the current fingerprint, so the cookie is rewritten with it.
        assert_eq!(seg.cache_token().as_deref(), Some("X:1:0,Y:0:100"));
        assert!(seg.set_cookie().is_some());
        // Padding is optional, like `atob`.
        assert_eq!(segment(classic.trim_end_matches('=')).stored.len(), 2);
    }

    #[test]
    fn stale_fingerprint_rerolls_once() {
        let mut seg = segment(EXAMPLE); // HeroTest true at 50
        // Traffic now 0: fingerprint 0 ≠ 50 → re-roll → 0 traffic draws false.
        assert!(!seg.decide("HeroTest", 0.0));
        let cookie = seg.set_cookie().unwrap();
        let value = cookie["platform_segment=".len()..]
            .split(';')
            .next()
            .unwrap();
        let mut next = segment(value);
        assert_eq!(next.stored, vec![flag("HeroTest", false, 0)]);
        assert!(!next.decide("HeroTest", 0.0));
        assert_eq!(next.set_cookie(), None, "sticks after the re-roll");
    }

    #[test]
    fn decisions_in_one_request_are_reused() {
        let mut seg = segment("");
        let first = seg.decide("T", 0.5);
        for _ in 0..10 {
            assert_eq!(seg.decide("T", 0.5), first);
        }
        assert_eq!(seg.decided.len(), 1);
    }

    #[test]
    fn experiment_assignments_survive() {
        let json =
            r#"{"active":["A"],"inactiveDrawn":[],"pct":{"A":50,"plp":123},"exp":{"plp":"b"}}"#;
        let raw =
            general_purpose::STANDARD.encode(utf8_percent_encode(json, URI_COMPONENT).to_string());
        let mut seg = segment(&raw);
        assert_eq!(seg.cache_token().as_deref(), Some("A:1:50,plp:b:123"));
        assert!(
            !seg.decide("plp", 0.0),
            "an assignment is not a boolean: re-rolled"
        );
        assert!(seg.decide("A", 0.5));
        let seg2 = segment(&raw);
        assert_eq!(serialize(&seg2.merged()), raw);
    }

    #[test]
    fn traffic_fingerprints() {
        assert_eq!(traffic_to_pct(0.5), 50);
        assert_eq!(traffic_to_pct(0.004), 0);
        assert_eq!(traffic_to_pct(0.0), 0);
        assert_eq!(traffic_to_pct(-1.0), 0);
        assert_eq!(traffic_to_pct(1.0), 100);
        assert_eq!(traffic_to_pct(50.0), 100);
        assert_eq!(traffic_to_pct(f64::NAN), 0);
        assert_eq!(traffic_to_pct(0.125), 13);
    }

    #[test]
    fn no_decision_no_cookie() {
        let seg = segment(EXAMPLE);
        assert_eq!(seg.set_cookie(), None);
        assert_eq!(segment("").set_cookie(), None);
        assert_eq!(segment("").cache_token(), None);
    }
}
