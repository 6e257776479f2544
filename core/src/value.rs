//! The JSON value of content: immutable, cheap to clone, sharing subtrees by `Arc`.
//!
//! Resolution hands out subtrees of the content unchanged wherever no `__resolveType` lies
//! beneath them, so a resolved page mostly points into the snapshot instead of copying it.
//! Every array and object records at construction whether anything under it needs
//! resolving (`is_dynamic`), which makes that decision O(1) per node.
//!
//! A large static container of content (parsed by [`Value::from_content_slice`]; never a value
//! parsed once per request, such as a loader result) also has room for its own compact JSON,
//! filled the first time a page is written with [`Json`] in splice mode and copied as it is
//! from then on, so unchanged content is escaped once per snapshot instead of once per request.
//! The room is on the value itself, so it works just as well when a request bypasses the page
//! and layout caches.
//! A long string of content gets the same room, kept beside the value by the string's address
//! (see [`LONG_STRINGS`]): such strings often sit in objects that resolution rebuilds.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::{Arc, LazyLock, OnceLock, PoisonError, RwLock};

pub use serde_json::Number;
pub(crate) use sharing::sharing;

mod sharing;

/// The key every resolvable object carries.
pub const RESOLVE_TYPE: &str = "__resolveType";

/// Deepest nesting accepted when parsing content.
pub const MAX_PARSE_DEPTH: usize = 128;

/// An object key; keys are interned while parsing so repeated names share one allocation.
pub type Key = Arc<str>;

/// Fewest JSON values a static container of content must hold to keep its own compact
/// JSON once written (measured; decision CONTENT-13).
const SPLICE_MIN_NODES: u32 = 16;

/// Fewest bytes a string of content must hold to keep its own JSON once written (measured;
/// decision CONTENT-13).
const SPLICE_MIN_STRING: usize = 1024;

/// Where a large static container of content keeps its compact JSON, filled on first use: `None`
/// for every other container. The inner `None` records a write that failed (never expected),
/// after which the container is written as usual. Every container pays this one pointer; the
/// box itself is allocated at parse time, only for containers with room.
type JsonCache = Option<Box<OnceLock<Option<sonic_rs::OwnedLazyValue>>>>;

/// A JSON value.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// Any JSON number.
    Number(Number),
    /// A string.
    String(Arc<str>),
    /// An array.
    Array(Arc<Array>),
    /// An object, keys in document order.
    Object(Arc<Object>),
}

/// The items of an array value.
#[derive(Debug)]
pub struct Array {
    items: Box<[Value]>,
    dynamic: bool,
    nodes: u32,
    json: JsonCache,
}

/// The entries of an object value, in document order, keys unique.
#[derive(Debug)]
pub struct Object {
    entries: Box<[(Key, Value)]>,
    dynamic: bool,
    nodes: u32,
    json: JsonCache,
}

// Equality is the JSON's: whether the compact text has been kept yet does not count.
impl PartialEq for Array {
    fn eq(&self, other: &Array) -> bool {
        self.items == other.items
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.entries == other.entries
    }
}

impl Array {
    /// The items.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// The items of `array`, taken out when nothing else holds it (no copy), copied otherwise.
    pub(crate) fn into_items(array: Arc<Array>) -> Vec<Value> {
        match Arc::try_unwrap(array) {
            Ok(array) => array.items.into_vec(),
            Err(shared) => shared.items.to_vec(),
        }
    }

    fn new(items: Vec<Value>, content: bool) -> Array {
        let dynamic = items.iter().any(Value::is_dynamic);
        let nodes = count_nodes(items.iter());
        Array {
            items: items.into_boxed_slice(),
            dynamic,
            nodes,
            json: json_cache(content, dynamic, nodes),
        }
    }
}

impl Object {
    /// Builds an object; a repeated key keeps its first position and its last value.
    pub fn from_entries(entries: Vec<(Key, Value)>) -> Object {
        Object::new(entries, false)
    }

    fn new(mut entries: Vec<(Key, Value)>, content: bool) -> Object {
        if entries.len() > 1 {
            dedupe_keys(&mut entries);
        }
        let dynamic = entries.iter().any(|(k, v)| {
            v.is_dynamic() || (&**k == RESOLVE_TYPE && v.as_str().is_some_and(|s| !s.is_empty()))
        });
        let nodes = count_nodes(entries.iter().map(|(_, v)| v));
        Object {
            entries: entries.into_boxed_slice(),
            dynamic,
            nodes,
            json: json_cache(content, dynamic, nodes),
        }
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| v)
    }

    /// The entries in document order.
    pub fn entries(&self) -> &[(Key, Value)] {
        &self.entries
    }

    /// The entries of `object`, taken out when nothing else holds it (no copy), copied
    /// otherwise.
    pub(crate) fn into_entries(object: Arc<Object>) -> Vec<(Key, Value)> {
        match Arc::try_unwrap(object) {
            Ok(object) => object.entries.into_vec(),
            Err(shared) => shared.entries.to_vec(),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the object has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The non-empty `__resolveType` string of this object, if any.
    pub fn resolve_type(&self) -> Option<&str> {
        match self.get(RESOLVE_TYPE) {
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            _ => None,
        }
    }
}

/// Room for the compact JSON of a container of content, static and holding at least
/// [`SPLICE_MIN_NODES`] values. Containers built while resolving or parsed by
/// [`Value::from_slice`] (loader results, request bodies) get none: they are written once.
fn json_cache(content: bool, dynamic: bool, nodes: u32) -> JsonCache {
    (content && !dynamic && nodes >= SPLICE_MIN_NODES).then(Box::default)
}

/// One for the container plus the nodes of its children, saturating.
fn count_nodes<'v>(children: impl Iterator<Item = &'v Value>) -> u32 {
    children.fold(1u32, |n, v| n.saturating_add(v.nodes()))
}

fn dedupe_keys(entries: &mut Vec<(Key, Value)>) {
    let has_dup = if entries.len() <= 16 {
        entries
            .iter()
            .enumerate()
            .any(|(i, (k, _))| entries[..i].iter().any(|(k2, _)| k2 == k))
    } else {
        let mut seen = rustc_hash::FxHashSet::default();
        seen.reserve(entries.len());
        !entries.iter().all(|(k, _)| seen.insert(&**k))
    };
    if !has_dup {
        return;
    }
    // Last occurrence wins, in the position of the first (as JSON.parse does).
    let mut out: Vec<(Key, Value)> = Vec::with_capacity(entries.len());
    let mut index: std::collections::HashMap<Key, usize> = std::collections::HashMap::new();
    for (k, v) in entries.drain(..) {
        match index.get(&k) {
            Some(&at) => out[at].1 = v,
            None => {
                index.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    *entries = out;
}

impl Value {
    /// This value with room for its compact JSON, as large static containers of content have:
    /// for a value a cache keeps and page after page writes (the sections of a cached page).
    /// Only the top container is rebuilt (its children are shared); anything else, or a
    /// container too small or dynamic for room, comes back as it is.
    pub(crate) fn with_json_room(self) -> Value {
        match self {
            Value::Object(o) if o.json.is_none() && !o.dynamic && o.nodes >= SPLICE_MIN_NODES => {
                Value::Object(Arc::new(Object::new(Object::into_entries(o), true)))
            }
            Value::Array(a) if a.json.is_none() && !a.dynamic && a.nodes >= SPLICE_MIN_NODES => {
                Value::Array(Arc::new(Array::new(Array::into_items(a), true)))
            }
            other => other,
        }
    }

    /// An object value from entries.
    pub fn object(entries: Vec<(Key, Value)>) -> Value {
        Value::Object(Arc::new(Object::from_entries(entries)))
    }

    /// An array value from items.
    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(Arc::new(Array::new(items, false)))
    }

    /// A string value.
    pub fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    /// Whether a `__resolveType` lies anywhere in this value.
    pub fn is_dynamic(&self) -> bool {
        match self {
            Value::Array(a) => a.dynamic,
            Value::Object(o) => o.dynamic,
            _ => false,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(&a.items),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// What kind of JSON value this is, with its article, for messages (`a string`).
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// JavaScript truthiness: `false`, `null`, `0`, `NaN` and `""` are falsy.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
            Value::String(s) => !s.is_empty(),
            _ => true,
        }
    }

    /// `self[key]` on an object, `None` otherwise.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|o| o.get(key))
    }

    /// The non-empty `__resolveType` of an object value.
    pub fn resolve_type(&self) -> Option<&str> {
        self.as_object().and_then(Object::resolve_type)
    }

    /// Parses JSON bytes, interning object keys; nesting deeper than [`MAX_PARSE_DEPTH`] is an error.
    /// The containers are plain: this is for values used once (loader results, request bodies,
    /// props), which keeping their JSON would only slow down. Content goes through
    /// [`Value::from_content_slice`].
    pub fn from_slice(bytes: &[u8]) -> Result<Value, ParseError> {
        DEPTH.with(|d| d.set(0));
        sonic_rs::from_slice::<Value>(bytes).map_err(|e| ParseError(e.to_string()))
    }

    /// Parses a block of content (a directory file, a bundle line, a reload body whose values
    /// become blocks) as [`Value::from_slice`] does, except that its large static containers get
    /// room for their compact JSON: content is written by request after request, so it is
    /// escaped once per snapshot. Only the content module parses this way.
    /// Equal strings and containers share one copy within the call, and across every call
    /// inside one [`sharing`] scope (a whole load).
    pub(crate) fn from_content_slice(bytes: &[u8]) -> Result<Value, ParseError> {
        DEPTH.with(|d| d.set(0));
        sharing(|| sonic_rs::from_slice::<ContentValue>(bytes))
            .map(|v| v.0)
            .map_err(|e| ParseError(e.to_string()))
    }

    /// Parses a JSON string.
    pub fn from_json_str(s: &str) -> Result<Value, ParseError> {
        Value::from_slice(s.as_bytes())
    }

    /// Compact JSON text, keys in document order.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".into())
    }

    /// Writes canonical JSON (keys sorted by code point at every level, no whitespace).
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Value::String(s) => write_json_string(s, out),
            Value::Array(a) => {
                out.push(b'[');
                for (i, v) in a.items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    v.write_canonical(out);
                }
                out.push(b']');
            }
            Value::Object(o) => {
                let mut entries: Vec<&(Key, Value)> = o.entries.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                out.push(b'{');
                for (i, (k, v)) in entries.into_iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_json_string(k, out);
                    out.push(b':');
                    v.write_canonical(out);
                }
                out.push(b'}');
            }
        }
    }

    /// How many JSON values this one is made of, counting a subtree shared by several parents
    /// once per parent (what serialising it writes); saturates at `u32::MAX`. O(1).
    pub fn nodes(&self) -> u32 {
        match self {
            Value::Array(a) => a.nodes,
            Value::Object(o) => o.nodes,
            _ => 1,
        }
    }

    /// Canonical JSON as a string.
    pub fn to_canonical_string(&self) -> String {
        let mut out = Vec::new();
        self.write_canonical(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// An estimate of the bytes this value holds on the heap, counting shared subtrees once per reference.
    pub fn heap_size(&self) -> usize {
        match self {
            Value::String(s) => s.len() + 16,
            Value::Array(a) => {
                32 + a.items.len() * size_of::<Value>()
                    + a.items.iter().map(Value::heap_size).sum::<usize>()
            }
            Value::Object(o) => {
                32 + o.entries.len() * size_of::<(Key, Value)>()
                    + o.entries.iter().map(|(_, v)| v.heap_size()).sum::<usize>()
            }
            _ => 0,
        }
    }
}

/// Writes `s` as a JSON string literal.
pub fn write_json_string(s: &str, out: &mut Vec<u8>) {
    // serde_json's escaping is the reference; writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
impl Value {
    /// Whether this is a container with room for its compact JSON (for tests).
    pub(crate) fn has_json_room(&self) -> bool {
        match self {
            Value::Array(a) => a.json.is_some(),
            Value::Object(o) => o.json.is_some(),
            _ => false,
        }
    }
}

/// A JSON text that could not be parsed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid JSON: {0}")]
pub struct ParseError(pub String);

impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n),
            serde_json::Value::String(s) => Value::String(Arc::from(s)),
            serde_json::Value::Array(a) => Value::array(a.into_iter().map(Value::from).collect()),
            serde_json::Value::Object(o) => Value::object(
                o.into_iter()
                    .map(|(k, v)| (intern(&k), Value::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<&Value> for serde_json::Value {
    fn from(v: &Value) -> serde_json::Value {
        match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Array(a) => serde_json::Value::Array(a.items.iter().map(Into::into).collect()),
            Value::Object(o) => serde_json::Value::Object(
                o.entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.into()))
                    .collect(),
            ),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::string(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Number(Number::from(i))
    }
}

const INTERN_MAX_LEN: usize = 48;
const INTERN_MAX_ENTRIES: usize = 1 << 16;

thread_local! {
    static KEYS: RefCell<rustc_hash::FxHashSet<Arc<str>>> = RefCell::new(rustc_hash::FxHashSet::default());
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Returns the shared `Arc<str>` for a short key, so equal keys share one allocation.
pub fn intern(key: &str) -> Key {
    if key.len() > INTERN_MAX_LEN {
        return Arc::from(key);
    }
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        if let Some(k) = keys.get(key) {
            return k.clone();
        }
        let k: Arc<str> = Arc::from(key);
        if keys.len() < INTERN_MAX_ENTRIES {
            keys.insert(k.clone());
        }
        k
    })
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Json::<false>(self).serialize(s)
    }
}

/// How a value is written. `Json::<false>` is the plain serialisation, right for every
/// serializer (it is what `impl Serialize for Value` does). `Json::<true>` writes each large
/// static container of content from its kept compact JSON (filling it the first time), as
/// a sonic-rs raw value: only a sonic-rs serializer writes that as JSON, so splice mode is for
/// [`sonic_rs::to_vec`] and nothing else (`ResolvedPage::to_json_bytes`).
pub(crate) struct Json<'a, const SPLICE: bool>(pub(crate) &'a Value);

impl<const SPLICE: bool> Serialize for Json<'_, SPLICE> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(v) => {
                if let Some(kept) = self.kept_string(v)
                    && let Some(raw) = kept.json.get_or_init(|| compact_json(self.0))
                {
                    return raw.serialize(s);
                }
                s.serialize_str(v)
            }
            Value::Array(a) => {
                if let Some(raw) = self.kept(&a.json) {
                    return raw.serialize(s);
                }
                let mut seq = s.serialize_seq(Some(a.items.len()))?;
                for v in a.items.iter() {
                    seq.serialize_element(&Json::<SPLICE>(v))?;
                }
                seq.end()
            }
            Value::Object(o) => {
                if let Some(raw) = self.kept(&o.json) {
                    return raw.serialize(s);
                }
                let mut map = s.serialize_map(Some(o.entries.len()))?;
                for (k, v) in o.entries.iter() {
                    map.serialize_entry(&**k, &Json::<SPLICE>(v))?;
                }
                map.end()
            }
        }
    }
}

impl<const SPLICE: bool> Json<'_, SPLICE> {
    /// In splice mode, the compact JSON of this container if it keeps one, written now if it
    /// was not yet. It is written plainly: containers nested in it keep nothing of their own
    /// unless a page writes them apart from it.
    fn kept<'c>(&self, cache: &'c JsonCache) -> Option<&'c sonic_rs::OwnedLazyValue> {
        if !SPLICE {
            return None;
        }
        cache
            .as_deref()?
            .get_or_init(|| compact_json(self.0))
            .as_ref()
    }

    /// In splice mode, the entry of `text` if it is a long string of content (see
    /// [`LONG_STRINGS`]).
    fn kept_string(&self, text: &Arc<str>) -> Option<Arc<KeptString>> {
        if !SPLICE || text.len() < SPLICE_MIN_STRING {
            return None;
        }
        LONG_STRINGS
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .by_address
            .get(&address(text))
            .cloned()
    }
}

/// The compact JSON of `value` as a sonic-rs raw value; `None` if writing it failed (never
/// expected).
fn compact_json(value: &Value) -> Option<sonic_rs::OwnedLazyValue> {
    let text = sonic_rs::to_string(&Json::<false>(value)).ok()?;
    sonic_rs::from_str(&text).ok()
}

/// A long string of content with room for its JSON, filled the first time a page writes it
/// in splice mode (the inner `None`, as for containers, records a write that failed).
#[derive(Debug)]
struct KeptString {
    text: Arc<str>,
    json: OnceLock<Option<sonic_rs::OwnedLazyValue>>,
}

/// Every long string of content parsed (at least [`SPLICE_MIN_STRING`] bytes), by the address
/// of its text. A string has no room of its own (`Value::String` is a plain `Arc<str>`), and the
/// objects holding one are rebuilt by every resolution when something beside it resolves, so
/// its room is kept here. An entry holds its text, so while it lasts no other string can live
/// at that address: a string found here is that very string (an equal string from a loader or a
/// request body is simply not found). The table is process-wide rather than per snapshot
/// because a page does not know its snapshot, and blocks are shared between snapshots and
/// parsed lazily.
static LONG_STRINGS: LazyLock<RwLock<LongStrings>> = LazyLock::new(RwLock::default);

/// Fewest entries [`LONG_STRINGS`] holds before it drops strings nothing else holds.
const LONG_STRINGS_SWEEP_MIN: usize = 1024;

/// The entries of [`LONG_STRINGS`].
#[derive(Debug, Default)]
struct LongStrings {
    by_address: rustc_hash::FxHashMap<usize, Arc<KeptString>>,
    /// Entries left by the last sweep.
    swept: usize,
}

impl LongStrings {
    /// Registers a long string of content. Once the entries have doubled since the last sweep,
    /// those whose text only the entry still holds (content replaced, pages written and dropped)
    /// are dropped, so what old content leaves here never outgrows what live content holds.
    fn register(&mut self, text: &Arc<str>) {
        let kept = KeptString {
            text: text.clone(),
            json: OnceLock::new(),
        };
        self.by_address.insert(address(text), Arc::new(kept));
        if self.by_address.len() >= (2 * self.swept).max(LONG_STRINGS_SWEEP_MIN) {
            self.sweep();
        }
    }

    /// Drops the entries whose text only the table holds, and the table's room when none is
    /// left.
    fn sweep(&mut self) {
        self.by_address
            .retain(|_, kept| Arc::strong_count(&kept.text) > 1);
        if self.by_address.is_empty() {
            self.by_address = Default::default();
        }
        self.swept = self.by_address.len();
    }
}

/// Held last by a site: when the site is dropped, after its content, the long strings that
/// content alone held leave [`LONG_STRINGS`] at once (a host that frees its site gets their
/// memory back, and a leak checker sees nothing left) rather than at the next sweep.
#[derive(Debug)]
pub(crate) struct LongStringsRelease;

impl Drop for LongStringsRelease {
    fn drop(&mut self) {
        release_long_strings();
    }
}

/// Lets go at once of the long strings only [`LONG_STRINGS`] still holds: after a site is
/// dropped, and after a refused reload (whose body may hold strings of tens of MiB that would
/// otherwise wait for the next sweep, one more per refusal).
pub(crate) fn release_long_strings() {
    LONG_STRINGS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .sweep();
}

/// Where a string's text lives.
fn address(text: &Arc<str>) -> usize {
    Arc::as_ptr(text).cast::<u8>() as usize
}

/// Builds values; `CONTENT` gives large static containers room for their JSON
/// ([`Value::from_content_slice`]).
struct ValueVisitor<const CONTENT: bool>;

/// A string value. A string of content is the sharing scope's copy (see [`sharing`]); a long
/// one is registered to keep its JSON once written.
fn string_of<const CONTENT: bool>(text: &str) -> Value {
    if !CONTENT {
        return Value::String(Arc::from(text));
    }
    if let Some(copy) = sharing::shared_string(text) {
        return Value::String(copy);
    }
    let text: Arc<str> = Arc::from(text);
    sharing::record_string(&text);
    if text.len() >= SPLICE_MIN_STRING {
        LONG_STRINGS
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .register(&text);
    }
    Value::String(text)
}

/// A container value; one of content is the sharing scope's copy (see [`sharing`]).
fn container_of<const CONTENT: bool>(value: Value) -> Value {
    if CONTENT {
        sharing::shared_container(value)
    } else {
        value
    }
}

/// A value parsed as content.
struct ContentValue(Value);

impl<'de> Deserialize<'de> for ContentValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ContentValue, D::Error> {
        d.deserialize_any(ValueVisitor::<true>).map(ContentValue)
    }
}

impl<'de, const CONTENT: bool> de::DeserializeSeed<'de> for ValueVisitor<CONTENT> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

struct DepthGuard;

impl DepthGuard {
    fn enter<E: de::Error>() -> Result<DepthGuard, E> {
        DEPTH.with(|d| {
            let n = d.get() + 1;
            if n > MAX_PARSE_DEPTH {
                return Err(E::custom(format!(
                    "nesting deeper than {MAX_PARSE_DEPTH} levels"
                )));
            }
            d.set(n);
            Ok(DepthGuard)
        })
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

impl<'de, const CONTENT: bool> Visitor<'de> for ValueVisitor<CONTENT> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(i.into()))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(u.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(string_of::<CONTENT>(s))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(string_of::<CONTENT>(&s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let _guard = DepthGuard::enter()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(v) = seq.next_element_seed(ValueVisitor::<CONTENT>)? {
            items.push(v);
        }
        Ok(container_of::<CONTENT>(Value::Array(Arc::new(Array::new(
            items, CONTENT,
        )))))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let _guard = DepthGuard::enter()?;
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(k) = map.next_key::<KeySeed>()? {
            let v = map.next_value_seed(ValueVisitor::<CONTENT>)?;
            entries.push((k.0, v));
        }
        Ok(container_of::<CONTENT>(Value::Object(Arc::new(
            Object::new(entries, CONTENT),
        ))))
    }
}

struct KeySeed(Key);

impl<'de> Deserialize<'de> for KeySeed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeySeed, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeySeed;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E>(self, s: &str) -> Result<KeySeed, E> {
                Ok(KeySeed(intern(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor::<false>)
    }
}

/// Builds an object value from `key => value` pairs.
#[macro_export]
macro_rules! obj {
    ($($k:expr => $v:expr),* $(,)?) => {
        $crate::value::Value::object(vec![$(($crate::value::intern($k), $crate::value::Value::from($v))),*])
    };
}

impl crate::errors::HasErrorCode for ParseError {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidJson
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_flags_dynamic_subtrees() {
        let v = Value::from_json_str(r#"{"a":{"b":[1,{"__resolveType":"x"}]},"c":"s"}"#).unwrap();
        assert!(v.is_dynamic());
        assert!(v.get("a").unwrap().is_dynamic());
        let plain = Value::from_json_str(r#"{"a":[1,2,{"b":null}],"__resolveType":""}"#).unwrap();
        assert!(!plain.is_dynamic());
    }

    #[test]
    fn canonical_sorts_keys_and_duplicate_keys_keep_last() {
        let v = Value::from_json_str(r#"{"b":1,"a":{"d":true,"c":[1.5,"x"]},"b":2}"#).unwrap();
        assert_eq!(
            v.to_canonical_string(),
            r#"{"a":{"c":[1.5,"x"],"d":true},"b":2}"#
        );
        assert_eq!(
            v.to_json_string(),
            r#"{"b":2,"a":{"d":true,"c":[1.5,"x"]}}"#
        );
    }

    fn kept(v: &Value) -> Option<bool> {
        let cache = match v {
            Value::Array(a) => &a.json,
            Value::Object(o) => &o.json,
            _ => return None,
        };
        cache
            .as_deref()
            .map(|c| c.get().is_some_and(Option::is_some))
    }

    #[test]
    fn only_content_has_room_for_its_json() {
        let items = (0..40).map(|i| format!(r#""s{i}""#)).collect::<Vec<_>>();
        let text = format!(r#"{{"list":[{}],"n":1}}"#, items.join(","));
        // The ordinary ways, which loader results, request bodies and props go through.
        let plain = Value::from_json_str(&text).unwrap();
        assert_eq!(kept(&plain), None, "from_json_str");
        assert_eq!(
            kept(plain.get("list").unwrap()),
            None,
            "nested, from_json_str"
        );
        let from_serde: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(kept(from_serde.get("list").unwrap()), None, "serde_json");
        let from_sonic: Value = sonic_rs::from_str(&text).unwrap();
        assert_eq!(kept(from_sonic.get("list").unwrap()), None, "sonic_rs");
        // The content entry point (the content module's tests cover files, bundles, reloads).
        let content = Value::from_content_slice(text.as_bytes()).unwrap();
        assert_eq!(kept(&content), Some(false), "from_content_slice");
        assert_eq!(kept(content.get("list").unwrap()), Some(false));
        assert_eq!(content, plain, "the same JSON either way");
    }

    #[test]
    fn large_static_content_containers_keep_their_json_once_spliced() {
        fn shared<T: Send + Sync>() {}
        shared::<Value>();
        let items = (0..70)
            .map(|i| format!(r#""\u00e9{i}\n""#))
            .collect::<Vec<_>>();
        let text = format!(r#"{{"big":[{}],"small":[1,2],"t":"x"}}"#, items.join(","));
        let v = Value::from_content_slice(text.as_bytes()).unwrap();
        let big = v.get("big").unwrap();
        assert_eq!(kept(big), Some(false), "room, not yet filled");
        assert_eq!(kept(v.get("small").unwrap()), None, "too small");
        assert_eq!(
            kept(&v),
            Some(false),
            "the whole value is large and static too"
        );
        let built = Value::object(vec![(intern("big"), big.clone())]);
        assert_eq!(
            kept(&Value::array(vec![big.clone(); 2])),
            None,
            "built, not parsed"
        );

        // Splicing fills the outermost kept container reached; nested ones stay empty.
        let plain = serde_json::to_vec(&built).unwrap();
        assert_eq!(sonic_rs::to_vec(&Json::<true>(&built)).unwrap(), plain);
        assert_eq!(kept(big), Some(true));
        assert_eq!(sonic_rs::to_vec(&Json::<true>(&built)).unwrap(), plain);
        assert_eq!(
            serde_json::to_vec(&built).unwrap(),
            plain,
            "plain ignores the kept JSON"
        );
        assert_eq!(
            sonic_rs::to_vec(&Json::<true>(&v)).unwrap(),
            serde_json::to_vec(&v).unwrap()
        );
        assert_eq!(kept(&v), Some(true));

        let dynamic = format!(r#"[{},{{"__resolveType":"x"}}]"#, items.join(","));
        assert_eq!(
            kept(&Value::from_content_slice(dynamic.as_bytes()).unwrap()),
            None,
            "dynamic"
        );
    }

    /// Whether a string has room for its JSON, and whether that is filled.
    fn kept_string(v: &Value) -> Option<bool> {
        let Value::String(text) = v else {
            return None;
        };
        let kept = Json::<true>(v).kept_string(text)?;
        Some(kept.json.get().is_some_and(Option::is_some))
    }

    #[test]
    fn long_content_strings_keep_their_json_once_spliced() {
        let long = format!(
            "<p class=\"a\">\u{e9}\n\u{2028}{}</p>",
            "x".repeat(SPLICE_MIN_STRING)
        );
        let text = serde_json::json!({"html": long, "short": "s", "page": {"__resolveType": "x"}})
            .to_string();
        let content = Value::from_content_slice(text.as_bytes()).unwrap();
        assert!(
            content.is_dynamic(),
            "its object is rebuilt by every resolution"
        );
        let html = content.get("html").unwrap();
        assert_eq!(kept_string(html), Some(false), "room, not yet filled");
        assert_eq!(
            kept_string(content.get("short").unwrap()),
            None,
            "too short"
        );
        let plain = Value::from_json_str(&text).unwrap();
        assert_eq!(kept_string(plain.get("html").unwrap()), None, "not content");
        assert_eq!(
            kept_string(&Value::string(&long)),
            None,
            "an equal string is not the content's"
        );

        // Rebuilt around the content's string, as resolution does.
        let built = Value::object(vec![(intern("html"), html.clone())]);
        let expected = serde_json::to_vec(&built).unwrap();
        assert_eq!(sonic_rs::to_vec(&Json::<false>(&built)).unwrap(), expected);
        assert_eq!(kept_string(html), Some(false), "plain writes keep nothing");
        assert_eq!(sonic_rs::to_vec(&Json::<true>(&built)).unwrap(), expected);
        assert_eq!(kept_string(html), Some(true));
        assert_eq!(
            sonic_rs::to_vec(&Json::<true>(&built)).unwrap(),
            expected,
            "copied from the kept JSON"
        );
    }

    #[test]
    fn long_strings_nothing_else_holds_are_let_go() {
        let batch = |tag: usize| {
            let items: Vec<String> = (0..LONG_STRINGS_SWEEP_MIN)
                .map(|i| format!(r#""{tag} {i} {}""#, "x".repeat(SPLICE_MIN_STRING)))
                .collect();
            Value::from_content_slice(format!("[{}]", items.join(",")).as_bytes()).unwrap()
        };
        let held = batch(0);
        let first = held.as_array().unwrap()[0].clone();
        let Value::String(text) = batch(1).as_array().unwrap()[0].clone() else {
            unreachable!("a string")
        };
        let dropped = Arc::downgrade(&text);
        drop(text);
        // Registering as many again as are held sweeps, whatever other tests hold.
        for tag in 2..12 {
            if dropped.upgrade().is_none() {
                break;
            }
            drop(batch(tag));
        }
        assert!(
            dropped.upgrade().is_none(),
            "no longer held by the registry"
        );
        assert_eq!(kept_string(&first), Some(false), "still held by content");
    }

    #[test]
    fn rejects_absurd_nesting_without_overflow() {
        let deep = "[".repeat(100_000);
        assert!(Value::from_json_str(&deep).is_err());
        let ok = format!("{}{}", "[".repeat(120), "]".repeat(120));
        assert!(Value::from_json_str(&ok).is_ok());
    }
}
