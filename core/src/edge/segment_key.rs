//! The site's `buildSegment` result: the part of visitor identity that changes a page.

use crate::value::Value;
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
            && self.custom.values().all(|v| custom_part("", v).is_none())
    }

    /// The stable text of the segment: `[device]|auth|sc=<channel>|r=<region>|f=<sorted flags>|<custom>`,
    /// custom fields by name (`true` → name, arrays sorted and joined with `,`, empty ones skipped).
    pub fn hash(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(d) = &self.device {
            parts.push(d.clone());
        }
        if self.logged_in {
            parts.push("auth".into());
        }
        if let Some(sc) = &self.sales_channel {
            parts.push(format!("sc={sc}"));
        }
        if let Some(r) = &self.region_id {
            parts.push(format!("r={r}"));
        }
        if !self.flags.is_empty() {
            let mut flags = self.flags.clone();
            flags.sort();
            parts.push(format!("f={}", flags.join(",")));
        }
        parts.extend(self.custom.iter().filter_map(|(k, v)| custom_part(k, v)));
        parts.join("|")
    }
}

fn custom_part(name: &str, v: &Value) -> Option<String> {
    match v {
        Value::Null | Value::Bool(false) => None,
        Value::Bool(true) => Some(name.to_string()),
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(format!("{name}={s}")),
        Value::Array(a) if a.items().is_empty() => None,
        Value::Array(a) => {
            let mut items: Vec<String> = a
                .items()
                .iter()
                .map(|i| {
                    i.as_str()
                        .map_or_else(|| i.to_json_string(), str::to_string)
                })
                .collect();
            items.sort();
            Some(format!("{name}={}", items.join(",")))
        }
        other => Some(format!("{name}={}", other.to_canonical_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_format() {
        let v = Value::from_json_str(
            r#"{"device":"mobile","loggedIn":false,"salesChannel":"2","regionId":"R1","flags":["b","a"],
                "vip":true,"tags":["z","y"],"empty":"","off":false,"none":[],"tier":3}"#,
        )
        .unwrap();
        let s = SegmentKey::from_value(&v);
        assert_eq!(s.hash(), "mobile|sc=2|r=R1|f=a,b|tags=y,z|tier=3|vip");
        assert!(!s.is_device_only());
        let d = SegmentKey::from_value(
            &Value::from_json_str(r#"{"device":"tablet","x":false}"#).unwrap(),
        );
        assert!(d.is_device_only());
        assert_eq!(d.hash(), "tablet");
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
}
