//! Content parsed in one sharing scope keeps one copy of each distinct string, array and object:
//! real content repeats itself (a product card, a style object, an image URL used in many
//! blocks), so a loaded site holds a fraction of the allocations its JSON names. Values are
//! immutable, so sharing is invisible to every reader; only memory and cache locality change.
//! Decision CONTENT-12; figures in `benches/README.md` (`memory`).
//!
//! A scope is one load: a whole directory (read one file at a time through
//! [`crate::content::read_blocks`], so a load's peak is one file's text), a bundle, a reload
//! body, or one lazily parsed bundle block. A container is compared by its children's
//! identities, which is exact because its children were shared first. Nothing in resolution
//! keys on a content value's address except the nested-section conversion, which keys on it
//! so that a shared subtree is converted once.

use super::Value;
use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The distinct values of the scope open on this thread.
#[derive(Default)]
struct Shared {
    strings: FxHashSet<Arc<str>>,
    /// Containers by the hash of their children's identities (see [`identity_hash`]). Of two
    /// different containers with one hash (rare), the first is kept and the second is not
    /// shared.
    containers: FxHashMap<u64, Value>,
}

thread_local! {
    static SCOPE: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

/// Runs `parse` with a sharing scope open on this thread: every content value it parses shares
/// one copy with its equals. A scope already open (an outer load) is used as it is, so a whole
/// directory or bundle shares across its blocks; the scope's table is dropped when the
/// outermost one ends, so nothing outlives the load but the values themselves.
pub(crate) fn sharing<R>(parse: impl FnOnce() -> R) -> R {
    let opened = SCOPE.with(|scope| {
        let mut scope = scope.borrow_mut();
        let open = scope.is_none();
        if open {
            *scope = Some(Shared::default());
        }
        open
    });
    /// Closes the scope this call opened, even when `parse` unwinds.
    struct Close(bool);
    impl Drop for Close {
        fn drop(&mut self) {
            if self.0 {
                SCOPE.with(|scope| scope.borrow_mut().take());
            }
        }
    }
    let _close = Close(opened);
    parse()
}

/// The scope's copy of `text`, or `None` when `text` is new (then recorded as the copy) or no
/// scope is open.
pub(super) fn shared_string(text: &str) -> Option<Arc<str>> {
    SCOPE.with(|scope| {
        let mut scope = scope.borrow_mut();
        scope.as_mut()?.strings.get(text).cloned()
    })
}

/// Records `text` as the scope's copy of its contents.
pub(super) fn record_string(text: &Arc<str>) {
    SCOPE.with(|scope| {
        if let Some(shared) = scope.borrow_mut().as_mut() {
            shared.strings.insert(text.clone());
        }
    });
}

/// The scope's copy of a container just parsed, or the container itself (then recorded as the
/// copy). Its children were parsed in the same scope, so equal children are the same
/// allocation and comparing identities compares contents.
pub(super) fn shared_container(value: Value) -> Value {
    SCOPE.with(|scope| {
        let mut scope = scope.borrow_mut();
        let Some(shared) = scope.as_mut() else {
            return value;
        };
        match shared.containers.entry(identity_hash(&value)) {
            Entry::Occupied(copy) if same_container(copy.get(), &value) => copy.get().clone(),
            Entry::Occupied(_) => value,
            Entry::Vacant(slot) => slot.insert(value).clone(),
        }
    })
}

/// A hash of a container's children by identity: strings and containers by address, scalars by
/// value, object keys by text.
fn identity_hash(value: &Value) -> u64 {
    let mut h = FxHasher::default();
    match value {
        Value::Array(a) => {
            0u8.hash(&mut h);
            for item in a.items.iter() {
                hash_identity(item, &mut h);
            }
        }
        Value::Object(o) => {
            1u8.hash(&mut h);
            for (k, v) in o.entries.iter() {
                k.hash(&mut h);
                hash_identity(v, &mut h);
            }
        }
        other => hash_identity(other, &mut h),
    }
    h.finish()
}

fn hash_identity(value: &Value, h: &mut FxHasher) {
    match value {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => b.hash(h),
        Value::Number(n) => n.hash(h),
        Value::String(s) => Arc::as_ptr(s).cast::<u8>().hash(h),
        Value::Array(a) => Arc::as_ptr(a).hash(h),
        Value::Object(o) => Arc::as_ptr(o).hash(h),
    }
}

/// Whether two containers hold the same children, by identity.
fn same_container(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(a), Value::Array(b)) => same_items(&a.items, &b.items),
        (Value::Object(a), Value::Object(b)) => {
            a.entries.len() == b.entries.len()
                && a.entries
                    .iter()
                    .zip(b.entries.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => false,
    }
}

fn same_items(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Arc::ptr_eq(x, y),
        (Value::Array(x), Value::Array(y)) => Arc::ptr_eq(x, y),
        (Value::Object(x), Value::Object(y)) => Arc::ptr_eq(x, y),
        (Value::Array(_) | Value::Object(_) | Value::String(_), _) => false,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::sharing;
    use crate::value::Value;
    use std::sync::Arc;

    /// Parses each file as content inside one scope, as a directory load does.
    fn load(files: &[(&str, &str)]) -> Vec<Value> {
        sharing(|| {
            files
                .iter()
                .map(|(_, body)| Value::from_content_slice(body.as_bytes()).unwrap())
                .collect()
        })
    }

    fn string_at<'a>(v: &'a Value, key: &str) -> &'a Arc<str> {
        match v.get(key) {
            Some(Value::String(s)) => s,
            other => panic!("{key}: {other:?}"),
        }
    }

    fn object_at<'a>(v: &'a Value, key: &str) -> &'a Arc<crate::value::Object> {
        match v.get(key) {
            Some(Value::Object(o)) => o,
            other => panic!("{key}: {other:?}"),
        }
    }

    #[test]
    fn equal_strings_and_containers_of_one_load_share_one_copy_across_files() {
        let card = r#"{"image":"https://cdn.example/a.png","alt":"A","sizes":[1,2]}"#;
        let blocks = load(&[
            ("a.json", &format!(r#"{{"card":{card},"title":"Same"}}"#)),
            (
                "b.json",
                &format!(r#"{{"card":{card},"title":"Same","other":{{"alt":"B"}}}}"#),
            ),
        ]);
        let (a, b) = (&blocks[0], &blocks[1]);
        assert!(Arc::ptr_eq(string_at(a, "title"), string_at(b, "title")));
        assert!(Arc::ptr_eq(object_at(a, "card"), object_at(b, "card")));
        // Different contents stay apart, and each reads as written.
        assert!(!Arc::ptr_eq(object_at(a, "card"), object_at(b, "other")));
        assert_eq!(b.get("other").unwrap().to_json_string(), r#"{"alt":"B"}"#);
        assert_eq!(a.get("card").unwrap().to_json_string(), card);
    }

    #[test]
    fn containers_that_differ_only_in_a_scalar_or_a_key_are_not_shared() {
        let blocks = load(&[(
            "a.json",
            r#"{"x":{"n":1},"y":{"n":1.0},"z":{"m":1},"w":{"n":1}}"#,
        )]);
        let a = &blocks[0];
        assert!(Arc::ptr_eq(object_at(a, "x"), object_at(a, "w")));
        assert!(
            !Arc::ptr_eq(object_at(a, "x"), object_at(a, "y")),
            "1 and 1.0 are written differently"
        );
        assert!(!Arc::ptr_eq(object_at(a, "x"), object_at(a, "z")));
        assert_eq!(
            a.to_json_string(),
            r#"{"x":{"n":1},"y":{"n":1.0},"z":{"m":1},"w":{"n":1}}"#
        );
    }

    #[test]
    fn nothing_is_shared_between_two_loads() {
        let first = load(&[("a.json", r#"{"title":"Same"}"#)]);
        let second = load(&[("a.json", r#"{"title":"Same"}"#)]);
        assert!(!Arc::ptr_eq(
            string_at(&first[0], "title"),
            string_at(&second[0], "title")
        ));
        assert!(
            super::SCOPE.with(|scope| scope.borrow().is_none()),
            "the table is dropped"
        );
    }
}
