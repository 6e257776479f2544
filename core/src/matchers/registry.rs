//! The matcher registry: built-ins, legacy aliases, custom matchers, flag bridges and the editor
//! schemas of custom matchers.

use super::builtins::{BUILTINS, Builtin};
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// Editor schema of a custom matcher (`registerMatcherSchema`), served with the site schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatcherSchema {
    /// The matcher key content uses as `__resolveType`.
    pub key: String,
    /// The name shown in the editor.
    pub title: String,
    /// The group it is listed under.
    pub namespace: String,
    /// A JSON Schema object that gives the matcher's settings a form.
    #[serde(
        rename = "propsSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub props_schema: Option<Value>,
}

/// What a key evaluates with.
#[derive(Clone)]
pub(crate) enum Entry {
    Builtin(Builtin),
    /// Registered by the host: [`Host::custom_matcher`](crate::host::Host::custom_matcher)
    /// evaluates it.
    Custom,
    FeatureFlag,
}

/// The matchers a site can use. `Default` registers the built-ins and the legacy aliases only.
#[derive(Clone)]
pub struct MatcherRegistry {
    entries: HashMap<String, Entry>,
    schemas: Vec<MatcherSchema>,
}

impl Default for MatcherRegistry {
    fn default() -> MatcherRegistry {
        MatcherRegistry {
            entries: BUILTINS
                .iter()
                .map(|(key, builtin)| (key.to_string(), Entry::Builtin(*builtin)))
                .collect(),
            schemas: Vec::new(),
        }
    }
}

impl fmt::Debug for MatcherRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        keys.sort_unstable();
        f.debug_struct("MatcherRegistry")
            .field("keys", &keys)
            .field("schemas", &self.schemas)
            .finish()
    }
}

impl MatcherRegistry {
    /// A registry with the built-ins only.
    pub fn new() -> MatcherRegistry {
        MatcherRegistry::default()
    }

    /// Registers a custom matcher key (`registerMatcher`); the host evaluates its rules through
    /// [`Host::custom_matcher`](crate::host::Host::custom_matcher). It replaces a built-in or an
    /// earlier registration with the same key.
    pub fn register(&mut self, key: &str) {
        self.entries.insert(key.to_string(), Entry::Custom);
    }

    /// Records the editor schema of a matcher; a schema with the same key is replaced.
    pub fn register_schema(&mut self, schema: MatcherSchema) {
        match self.schemas.iter_mut().find(|s| s.key == schema.key) {
            Some(existing) => *existing = schema,
            None => self.schemas.push(schema),
        }
    }

    /// The registered editor schemas, in registration order.
    pub fn schemas(&self) -> &[MatcherSchema] {
        &self.schemas
    }

    /// Whether `key` names a matcher: a built-in, a legacy alias or a registration.
    pub fn is_matcher(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Registers a feature-flag bridge under `key` (e.g. `posthog/matchers/featureFlag.ts`). Its
    /// rules take `flagKey` and `variant`; the request's
    /// [`FeatureFlagAdapter`](crate::host::FeatureFlagAdapter) answers them.
    pub fn register_feature_flag_bridge(&mut self, key: &str) {
        self.entries.insert(key.to_string(), Entry::FeatureFlag);
    }

    /// What `key` evaluates with.
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchers::keys;

    #[test]
    fn builtins_aliases_and_registrations() {
        let mut r = MatcherRegistry::new();
        for key in [
            keys::ALWAYS,
            keys::NEGATE,
            keys::LIVE_DEVICE,
            keys::LIVE_DATE,
        ] {
            assert!(r.is_matcher(key), "{key}");
        }
        assert!(!r.is_matcher("$live/matchers/MatchCron.ts"));
        assert!(!r.is_matcher("site/matchers/vip.ts"));
        r.register("site/matchers/vip.ts");
        r.register_feature_flag_bridge("posthog/matchers/featureFlag.ts");
        assert!(r.is_matcher("site/matchers/vip.ts"));
        assert!(r.is_matcher("posthog/matchers/featureFlag.ts"));
        r.register(keys::HOST);
        assert!(matches!(r.entry(keys::HOST), Some(Entry::Custom)));
        assert!(format!("{r:?}").contains("site/matchers/vip.ts"));
    }

    #[test]
    fn schemas_serialize_with_spec_names_and_replace_by_key() {
        let mut r = MatcherRegistry::default();
        let schema = MatcherSchema {
            key: "site/matchers/vip.ts".into(),
            title: "VIP".into(),
            namespace: "site".into(),
            props_schema: None,
        };
        r.register_schema(schema.clone());
        r.register_schema(MatcherSchema {
            props_schema: Some(Value::from_json_str(r#"{"type":"object"}"#).unwrap()),
            ..schema
        });
        assert_eq!(r.schemas().len(), 1);
        assert_eq!(
            serde_json::to_string(&r.schemas()[0]).unwrap(),
            r#"{"key":"site/matchers/vip.ts","title":"VIP","namespace":"site","propsSchema":{"type":"object"}}"#
        );
        let bare: MatcherSchema =
            serde_json::from_str(r#"{"key":"k","title":"t","namespace":"n"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&bare).unwrap(),
            r#"{"key":"k","title":"t","namespace":"n"}"#
        );
    }
}
