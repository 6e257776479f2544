//! Loader cache keys: the loader key plus the canonical JSON of its resolved props.

use crate::value::Value;
use std::sync::Arc;

/// `<loader key>::<canonical props>`; props compare by content, not key order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoaderKey(Arc<str>);

impl LoaderKey {
    /// The key of a loader called with `props`.
    pub fn new(loader: &str, props: &Value) -> LoaderKey {
        let mut out = Vec::with_capacity(loader.len() + 64);
        out.extend_from_slice(loader.as_bytes());
        out.extend_from_slice(b"::");
        props.write_canonical(&mut out);
        LoaderKey(Arc::from(String::from_utf8_lossy(&out).as_ref()))
    }

    /// The key text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn shared(&self) -> Arc<str> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn props_order_does_not_matter() {
        let a = Value::from_json_str(r#"{"a":1,"b":{"y":2,"x":[1,2]}}"#).unwrap();
        let b = Value::from_json_str(r#"{"b":{"x":[1,2],"y":2},"a":1}"#).unwrap();
        let c = Value::from_json_str(r#"{"b":{"x":[2,1],"y":2},"a":1}"#).unwrap();
        assert_eq!(LoaderKey::new("l.ts", &a), LoaderKey::new("l.ts", &b));
        assert_ne!(
            LoaderKey::new("l.ts", &a),
            LoaderKey::new("l.ts", &c),
            "array order matters"
        );
        assert_ne!(LoaderKey::new("l.ts", &a), LoaderKey::new("m.ts", &a));
        assert_eq!(LoaderKey::new("l.ts", &Value::Null).as_str(), "l.ts::null");
    }
}
