//! The site's `buildSegment` result: the part of visitor identity that changes a page.

use crate::value::Value;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use std::collections::BTreeMap;

/// What `buildSegment(request)` returned. Its hash replaces the device part of the cache key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SegmentKey {
    /// Device class, if the site keys by it.
    pub device: Option<String>,
    /// A logged-in visitor: the edge never caches their pages.
    pub logged_in: bool,
    /// Sales channel.
    pub sales_channel: Option<String>,
    /// Region id; back-filled from the visitor's region code when geography is keyed.
    pub region_id: Option<String>,
    /// Active feature flags.
    pub flags: Vec<String>,
    /// Custom fields, sorted by name.
    pub custom: BTreeMap<String, Value>,
}

impl SegmentKey {
    /// Reads a segment from JSON (`{device, loggedIn, salesChannel, regionId, flags, ...custom}`).
    pub fn from_value(v: &Value) -> SegmentKey {
        let text = |v: &Value| match v {
            Value::String(s) if !s.is_empty() => Some(s.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let mut seg = SegmentKey::default();
        let Some(obj) = v.as_object() else {
            return seg;
        };
        for (k, v) in obj.entries() {
            match &**k {
                "device" => seg.device = text(v),
                "loggedIn" => seg.logged_in = v.is_truthy(),
                "salesChannel" => seg.sales_channel = text(v),
                "regionId" => seg.region_id = text(v),
                "flags" => {
                    seg.flags = v
                        .as_array()
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(text)
                        .collect()
                }
                other => {
                    seg.custom.insert(other.to_string(), v.clone());
                }
            }
        }
        seg
    }

    /// Whether only the device (or nothing) is set: no login, channel, region, flags or custom field.
    pub fn is_device_only(&self) -> bool {
        !self.logged_in
            && self.sales_channel.is_none()
            && self.region_id.is_none()
            && self.flags.is_empty()
            && self.custom.values().all(is_empty_custom)
    }

    /// The stable text of the segment, one `|`-separated part per field present:
    /// `d=<device>|auth|sc=<channel>|r=<region>|f=<sorted flags>|c.<name>...` with custom fields
    /// by name: `true` → `c.<name>`, a string → `c.<name>=<text>`, an array → `c.<name>[]=<sorted
    /// items joined by ,>` (non-string items as `~<JSON>`), anything else → `c.<name>~=<JSON>`;
    /// `false`, `null`, `""` and `[]` are left out. Every name and value is escaped (`%`, `|`,
    /// `,`, `=`, `[`, `]`, `~` percent-encoded), so distinct segments never share a text:
    /// `{salesChannel: "1|r=RJ"}` is `sc=1%7Cr%3DRJ`, not `sc=1|r=RJ`.
    pub fn hash(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(d) = &self.device {
            parts.push(format!("d={}", esc(d)));
        }
        if self.logged_in {
            parts.push("auth".into());
        }
        if let Some(sc) = &self.sales_channel {
            parts.push(format!("sc={}", esc(sc)));
        }
        if let Some(r) = &self.region_id {
            parts.push(format!("r={}", esc(r)));
        }
        if !self.flags.is_empty() {
            let mut flags: Vec<String> = self.flags.iter().map(|f| esc(f)).collect();
            flags.sort();
            parts.push(format!("f={}", flags.join(",")));
        }
        parts.extend(self.custom.iter().filter_map(|(k, v)| custom_part(k, v)));
        parts.join("|")
    }
}

/// Characters escaped in segment names and values: the separators of [`SegmentKey::hash`].
const SEGMENT_ESCAPES: &AsciiSet = &CONTROLS
    .add(b'%')
    .add(b'|')
    .add(b',')
    .add(b'=')
    .add(b'[')
    .add(b']')
    .add(b'~');

fn esc(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT_ESCAPES).to_string()
}

fn is_empty_custom(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.items().is_empty(),
        _ => false,
    }
}

fn custom_part(name: &str, v: &Value) -> Option<String> {
    if is_empty_custom(v) {
        return None;
    }
    let name = esc(name);
    Some(match v {
        Value::Bool(true) => format!("c.{name}"),
        Value::String(s) => format!("c.{name}={}", esc(s)),
        Value::Array(a) => {
            let mut items: Vec<String> = a
                .items()
                .iter()
                .map(|i| match i.as_str() {
                    Some(s) => esc(s),
                    None => format!("~{}", esc(&i.to_canonical_string())),
                })
                .collect();
            items.sort();
            format!("c.{name}[]={}", items.join(","))
        }
        other => format!("c.{name}~={}", esc(&other.to_canonical_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hash_format() {
        let v = Value::from_json_str(
            r#"{"device":"mobile","loggedIn":false,"salesChannel":"2","regionId":"R1","flags":["b","a"],
                "vip":true,"tags":["z","y"],"empty":"","off":false,"none":[],"tier":3}"#,
        )
        .unwrap();
        let s = SegmentKey::from_value(&v);
        assert_eq!(
            s.hash(),
            "d=mobile|sc=2|r=R1|f=a,b|c.tags[]=y,z|c.tier~=3|c.vip"
        );
        assert!(!s.is_device_only());
        let d = SegmentKey::from_value(
            &Value::from_json_str(r#"{"device":"tablet","x":false}"#).unwrap(),
        );
        assert!(d.is_device_only());
        assert_eq!(d.hash(), "d=tablet");
    }

    fn seg(json: &str) -> SegmentKey {
        SegmentKey::from_value(&Value::from_json_str(json).unwrap())
    }

    #[test]
    fn separators_inside_values_cannot_forge_other_fields() {
        let pairs = [
            (
                r#"{"salesChannel":"1|r=RJ"}"#,
                r#"{"salesChannel":"1","regionId":"RJ"}"#,
            ),
            (r#"{"device":"auth"}"#, r#"{"loggedIn":true}"#),
            (r#"{"sc":"2"}"#, r#"{"salesChannel":"2"}"#),
            (r#"{"vip":true}"#, r#"{"vip":"vip"}"#),
            (r#"{"tags":["a","b"]}"#, r#"{"tags":"a,b"}"#),
            (r#"{"tags":["a"]}"#, r#"{"tags":"a"}"#),
            (r#"{"tier":3}"#, r#"{"tier":"3"}"#),
            (r#"{"a":"1|b=2"}"#, r#"{"a":"1","b":"2"}"#),
            (r#"{"flags":["a,b"]}"#, r#"{"flags":["a","b"]}"#),
        ];
        for (a, b) in pairs {
            assert_ne!(seg(a).hash(), seg(b).hash(), "{a} vs {b}");
        }
    }

    #[test]
    fn custom_field_changes_hash() {
        let a = SegmentKey::from_value(
            &Value::from_json_str(r#"{"device":"desktop","plan":"gold"}"#).unwrap(),
        );
        let b = SegmentKey::from_value(
            &Value::from_json_str(r#"{"device":"desktop","plan":"silver"}"#).unwrap(),
        );
        assert_ne!(a.hash(), b.hash());
        assert!(
            SegmentKey::from_value(&Value::from_json_str(r#"{"loggedIn":true}"#).unwrap())
                .logged_in
        );
        assert_eq!(SegmentKey::from_value(&Value::Null), SegmentKey::default());
    }

    /// A segment reduced to what it means: empty custom values dropped, lists sorted.
    fn meaning(s: &SegmentKey) -> String {
        let mut flags = s.flags.clone();
        flags.sort();
        let custom: Vec<String> = s
            .custom
            .iter()
            .filter(|(_, v)| !is_empty_custom(v))
            .map(|(k, v)| {
                let v = match v {
                    Value::Array(a) => {
                        let mut items: Vec<String> =
                            a.items().iter().map(|i| i.to_canonical_string()).collect();
                        items.sort();
                        format!("array{items:?}")
                    }
                    other => other.to_canonical_string(),
                };
                format!("{k:?}:{v}")
            })
            .collect();
        format!(
            "{:?}|{}|{:?}|{:?}|{flags:?}|{custom:?}",
            s.device, s.logged_in, s.sales_channel, s.region_id
        )
    }

    fn text() -> impl Strategy<Value = String> {
        "[ab|=,%c.~\\[\\]]{1,4}"
    }

    fn custom_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            text().prop_map(|s| Value::string(&s)),
            Just(Value::Bool(true)),
            Just(Value::Bool(false)),
            (0i64..3).prop_map(|n| Value::from(serde_json::json!(n))),
            proptest::collection::vec(text(), 0..3).prop_map(|v| Value::from(serde_json::json!(v))),
        ]
    }

    fn segment() -> impl Strategy<Value = SegmentKey> {
        (
            proptest::option::of(text()),
            any::<bool>(),
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::collection::vec(text(), 0..3),
            proptest::collection::btree_map(text(), custom_value(), 0..3),
        )
            .prop_map(|(device, logged_in, sc, r, flags, custom)| SegmentKey {
                device,
                logged_in,
                sales_channel: sc,
                region_id: r,
                flags,
                custom,
            })
    }

    proptest! {
        #[test]
        fn distinct_segments_get_distinct_keys(a in segment(), b in segment()) {
            if meaning(&a) != meaning(&b) {
                prop_assert_ne!(a.hash(), b.hash());
            } else {
                prop_assert_eq!(a.hash(), b.hash());
            }
        }
    }
}
