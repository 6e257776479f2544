//! A resolved section's props as components receive them: the sections nested in them in the
//! `{"Component", "props"}` shape.

use super::registry::KeyRegistry;
use crate::value::{Array, Key, Object, RESOLVE_TYPE, Value, intern};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The props of resolved section `section` as components receive them: every entry but
/// `__resolveType`, with the sections nested in them in the reference's
/// `{"Component": <section key>, "props": {...}}` shape (`normalizeNestedSections`).
pub(crate) fn section_props(section: Arc<Object>, sections: &KeyRegistry) -> Value {
    NestSections {
        sections,
        done: FxHashMap::default(),
        component: intern("Component"),
        props: intern("props"),
    }
    .props(section)
}

/// Turns every object whose `__resolveType` is a registered section into
/// `{"Component": <key>, "props": {...}}`, at any depth: in lists, plain objects, objects of
/// other types (kept as they are) and other nested sections' props. Parts without a
/// `__resolveType` beneath them are kept as they are; a subtree shared by several parents
/// (a named block used twice) is converted once and stays shared; only such shared containers
/// are remembered by address. A container nothing else holds (most of what a resolution just
/// built, since the resolution drops its partly resolved entries first) is converted in its
/// own storage, not copied (decision RESOLVE-16).
struct NestSections<'a> {
    sections: &'a KeyRegistry,
    /// Converted shared containers, by the address of the original.
    done: FxHashMap<usize, Value>,
    /// The keys of the nested shape.
    component: Key,
    props: Key,
}

impl NestSections<'_> {
    fn props(&mut self, section: Arc<Object>) -> Value {
        Value::object(
            Object::into_entries(section)
                .into_iter()
                .filter(|(k, _)| &**k != RESOLVE_TYPE)
                .map(|(k, v)| (k, self.value(v)))
                .collect(),
        )
    }

    fn value(&mut self, value: Value) -> Value {
        let (address, shared) = match &value {
            _ if !value.is_dynamic() => return value,
            Value::Array(a) => (Arc::as_ptr(a) as usize, Arc::strong_count(a) > 1),
            Value::Object(o) => (Arc::as_ptr(o) as usize, Arc::strong_count(o) > 1),
            _ => return value,
        };
        // Only a shared container can be met again.
        if shared && let Some(done) = self.done.get(&address) {
            return done.clone();
        }
        let converted = match value {
            Value::Array(a) => Value::array(
                Array::into_items(a)
                    .into_iter()
                    .map(|v| self.value(v))
                    .collect(),
            ),
            Value::Object(o) => match o.resolve_type().filter(|rt| self.sections.contains(rt)) {
                Some(rt) => Value::object(vec![
                    (self.component.clone(), Value::string(rt)),
                    (self.props.clone(), self.props(o)),
                ]),
                None => Value::object(
                    Object::into_entries(o)
                        .into_iter()
                        .map(|(k, v)| (k, self.value(v)))
                        .collect(),
                ),
            },
            other => other,
        };
        if shared {
            self.done.insert(address, converted.clone());
        }
        converted
    }
}
