//! One block of a snapshot: its JSON, parsed at load or on first use, and its digest.

use super::revision::{block_digest, source_digest};
use crate::pages::PAGE_RESOLVE_TYPE;
use crate::value::Value;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// The key of the location matcher, whose presence in content changes the edge cache key.
const LOCATION_MATCHER: &str = "website/matchers/location.ts";

/// A block. A block read from a canonical bundle keeps its bytes and is parsed the first time
/// someone reads it; its digest, and whether it uses the location matcher, are computed on
/// first need and shared by every later snapshot that keeps the block unchanged.
#[derive(Debug)]
pub struct Block {
    value: OnceLock<Value>,
    raw: Option<(Arc<Vec<u8>>, Range<usize>)>,
    error: OnceLock<String>,
    digest: OnceLock<[u8; 32]>,
    uses_location: OnceLock<bool>,
    resolve_type: OnceLock<Option<String>>,
}

impl Block {
    /// A block holding `value`.
    pub fn new(value: Value) -> Block {
        Block {
            value: OnceLock::from(value),
            raw: None,
            error: OnceLock::new(),
            digest: OnceLock::new(),
            uses_location: OnceLock::new(),
            resolve_type: OnceLock::new(),
        }
    }

    /// A block whose JSON is `source[range]`, parsed on first read.
    pub(crate) fn lazy(source: Arc<Vec<u8>>, range: Range<usize>) -> Block {
        Block {
            value: OnceLock::new(),
            raw: Some((source, range)),
            error: OnceLock::new(),
            digest: OnceLock::new(),
            uses_location: OnceLock::new(),
            resolve_type: OnceLock::new(),
        }
    }

    /// The block's JSON. A lazy block whose bytes turn out not to be JSON reads as `null`
    /// (see [`Block::parse_error`]).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let raw = self.raw_bytes().unwrap_or_default();
            Value::from_content_slice(raw).unwrap_or_else(|e| {
                let _ = self.error.set(e.0);
                Value::Null
            })
        })
    }

    /// Why a lazy block's bytes are not JSON (parses the block if needed).
    pub fn parse_error(&self) -> Option<&str> {
        self.value();
        self.error.get().map(String::as_str)
    }

    /// The SHA-256 of the block's canonical JSON. A lazy block whose bytes are already
    /// canonical (as a bundle `write_bundle` wrote) is digested from its bytes, unparsed.
    pub fn digest(&self) -> &[u8; 32] {
        self.digest.get_or_init(|| {
            self.raw_bytes()
                .and_then(source_digest)
                .unwrap_or_else(|| block_digest(self.value()))
        })
    }

    fn raw_bytes(&self) -> Option<&[u8]> {
        self.raw
            .as_ref()
            .map(|(source, range)| &source[range.clone()])
    }

    /// The routable path of this block if it is a page block (see [`crate::pages::page_path`]),
    /// answered without parsing a lazy block.
    pub(crate) fn page_path(&self, name: &str) -> Option<String> {
        let Some(raw) = self.raw_bytes().filter(|_| self.value.get().is_none()) else {
            return crate::pages::page_path(name, self.value()).map(str::to_string);
        };
        let field = |key: &str| sonic_rs::get_from_slice(raw, [key]).ok();
        let is_page = name.starts_with("pages-")
            || (memchr::memmem::find(raw, PAGE_RESOLVE_TYPE.as_bytes()).is_some()
                && field("__resolveType")
                    .and_then(|v| serde_json::from_str::<String>(v.as_raw_str()).ok())
                    .as_deref()
                    == Some(PAGE_RESOLVE_TYPE));
        if !is_page {
            return None;
        }
        let path: String = serde_json::from_str(field("path")?.as_raw_str()).ok()?;
        let sections = field("sections")?;
        let truthy = !matches!(sections.as_raw_str(), "null" | "false" | "0" | "\"\"");
        (!path.is_empty() && truthy).then_some(path)
    }

    /// Whether this block says it is the site's not-found page (`"notFound": true`; see
    /// [`crate::pages::is_not_found_page`]), answered without parsing a lazy block.
    pub(crate) fn is_not_found_page(&self) -> bool {
        match self.raw_bytes().filter(|_| self.value.get().is_none()) {
            Some(raw) => sonic_rs::get_from_slice(raw, [crate::pages::NOT_FOUND_FIELD])
                .is_ok_and(|v| v.as_raw_str() == "true"),
            None => crate::pages::is_not_found_page(self.value()),
        }
    }

    /// The block's own `__resolveType`, answered without parsing a lazy block.
    pub(crate) fn resolve_type(&self) -> Option<&str> {
        self.resolve_type
            .get_or_init(
                || match self.raw_bytes().filter(|_| self.value.get().is_none()) {
                    Some(raw) => sonic_rs::get_from_slice(raw, [crate::value::RESOLVE_TYPE])
                        .ok()
                        .and_then(|v| serde_json::from_str::<String>(v.as_raw_str()).ok()),
                    None => self.value().resolve_type().map(str::to_string),
                },
            )
            .as_deref()
    }

    /// Whether the block uses the location matcher (the edge then keys pages by region).
    pub(crate) fn uses_location(&self) -> bool {
        *self
            .uses_location
            .get_or_init(|| self.mentions(LOCATION_MATCHER))
    }

    /// Whether `needle` is the `__resolveType` of some object in the block. A lazy block is
    /// parsed only when its bytes contain the needle at all.
    fn mentions(&self, needle: &str) -> bool {
        if self.value.get().is_none()
            && let Some(raw) = self.raw_bytes()
            && memchr::memmem::find(raw, needle.as_bytes()).is_none()
        {
            return false;
        }
        mentions(self.value(), needle)
    }
}

/// Whether `needle` appears as a `__resolveType` anywhere in `value`.
fn mentions(value: &Value, needle: &str) -> bool {
    if !value.is_dynamic() {
        return false;
    }
    match value {
        Value::Object(o) => {
            o.resolve_type() == Some(needle) || o.entries().iter().any(|(_, v)| mentions(v, needle))
        }
        Value::Array(a) => a.items().iter().any(|v| mentions(v, needle)),
        _ => false,
    }
}
