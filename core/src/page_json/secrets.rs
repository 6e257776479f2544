//! Secret-shaped values, which page JSON never carries.
//!
//! The reference drops a resolved `Secret` (an object holding only a `get` function) and an
//! unresolved secret block. Our resolution decrypts a `website/loaders/secret.ts` block into
//! its plain text, a string like any other, so the texts the content's secrets decrypt to are
//! collected once per snapshot and any string equal to one is secret-shaped. Also
//! secret-shaped: an object whose `__resolveType` names a secret (ASCII case ignored), and an
//! encrypted credential (`{"encrypted": "<hex>"}`, maybe with a `name`).

use crate::config::SecretKey;
use crate::content::Snapshot;
use crate::resolve::SECRET_RESOLVE_TYPE;
use crate::value::{Object, RESOLVE_TYPE, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// The plain texts the encrypted secrets of one snapshot decrypt to (empty texts left out).
#[derive(Default)]
pub(crate) struct SecretTexts(HashSet<Arc<str>>);

impl std::fmt::Debug for SecretTexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretTexts({} texts)", self.0.len())
    }
}

impl SecretTexts {
    /// The texts of every secret block in `snapshot` that `key` decrypts; none without a key.
    pub(crate) fn of(snapshot: &Snapshot, key: Option<&SecretKey>) -> SecretTexts {
        let mut texts = HashSet::new();
        if let Some(key) = key {
            for (_, block) in snapshot.blocks() {
                collect(block, key, &mut texts);
            }
        }
        SecretTexts(texts)
    }
}

fn collect(value: &Value, key: &SecretKey, out: &mut HashSet<Arc<str>>) {
    // A secret block has a `__resolveType`, so it lies only under dynamic values.
    if !value.is_dynamic() {
        return;
    }
    match value {
        Value::Array(a) => a.items().iter().for_each(|v| collect(v, key, out)),
        Value::Object(o) => {
            if o.resolve_type() == Some(SECRET_RESOLVE_TYPE)
                && let Some(text) = o
                    .get("encrypted")
                    .and_then(Value::as_str)
                    .and_then(|ct| key.decrypt_hex(ct))
                    .filter(|t| !t.is_empty())
            {
                out.insert(Arc::from(text));
            }
            o.entries().iter().for_each(|(_, v)| collect(v, key, out));
        }
        _ => {}
    }
}

/// An encrypted credential: a string `encrypted`, beside at most `name` and `__resolveType`.
fn is_credential(o: &Object) -> bool {
    o.get("encrypted").and_then(Value::as_str).is_some()
        && o.entries()
            .iter()
            .all(|(k, _)| matches!(&**k, "encrypted" | "name" | RESOLVE_TYPE))
}

fn is_secret(value: &Value, texts: &SecretTexts) -> bool {
    match value {
        Value::String(s) => texts.0.contains(s),
        Value::Object(o) => {
            is_credential(o)
                || o.resolve_type()
                    .is_some_and(|rt| rt.to_ascii_lowercase().contains("secret"))
        }
        _ => false,
    }
}

/// `value` without its secret-shaped values, as `JSON.stringify` drops what a replacer
/// refuses: an object loses the entry, an array holds `null` in its place. Unchanged parts are
/// shared, not copied; `None`: nothing changed.
pub(crate) fn without_secrets(value: &Value, texts: &SecretTexts) -> Option<Value> {
    match value {
        Value::Array(a) => {
            let mut out: Option<Vec<Value>> = None;
            for (i, item) in a.items().iter().enumerate() {
                let replaced = match is_secret(item, texts) {
                    true => Some(Value::Null),
                    false => without_secrets(item, texts),
                };
                if let Some(v) = replaced {
                    out.get_or_insert_with(|| a.items().to_vec())[i] = v;
                }
            }
            out.map(Value::array)
        }
        Value::Object(o) => {
            let mut changed = false;
            let mut out = Vec::with_capacity(o.len());
            for (k, v) in o.entries() {
                if is_secret(v, texts) {
                    changed = true;
                    continue;
                }
                match without_secrets(v, texts) {
                    Some(v) => {
                        changed = true;
                        out.push((k.clone(), v));
                    }
                    None => out.push((k.clone(), v.clone())),
                }
            }
            changed.then(|| Value::object(out))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(s: &str) -> Value {
        Value::from_json_str(s).unwrap()
    }

    #[test]
    fn secret_shapes_are_dropped_and_the_rest_is_shared() {
        let texts = SecretTexts(HashSet::from([Arc::from("p4ss")]));
        let value = json(
            r#"{"a":"p4ss","b":[1,"p4ss",{"__resolveType":"website/loaders/Secret.ts"}],
                "c":{"encrypted":"00ff","name":"k"},"d":{"encrypted":"x","other":1},"e":"ok"}"#,
        );
        let out = without_secrets(&value, &texts).unwrap();
        assert_eq!(
            out,
            json(r#"{"b":[1,null,null],"d":{"encrypted":"x","other":1},"e":"ok"}"#)
        );
        assert_eq!(without_secrets(&json(r#"{"x":[1,"y"]}"#), &texts), None);
    }
}
