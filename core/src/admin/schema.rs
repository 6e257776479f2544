//! The schema resource (`GET /live/_meta`): the host's generated document, checked once, with
//! its ETag.

use crate::errors::{ErrorCode, HasErrorCode};
use crate::value::{ParseError, Value};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Why a schema document was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SchemaError {
    /// Not JSON (or nested too deep).
    #[error(transparent)]
    Json(#[from] ParseError),
    /// JSON of the wrong shape.
    #[error("the schema document must be an object with `schema` and `manifest` objects: {0}")]
    Shape(&'static str),
}

impl HasErrorCode for SchemaError {
    fn code(&self) -> ErrorCode {
        match self {
            SchemaError::Json(_) => ErrorCode::InvalidJson,
            SchemaError::Shape(_) => ErrorCode::InvalidContent,
        }
    }
}

/// A schema document ready to serve: the body bytes and the ETag, computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    body: Arc<[u8]>,
    etag: String,
}

impl Schema {
    /// Checks a generated meta document (`{"schema": {...}, "manifest": {...}, ...}`). A missing
    /// `manifest.blocks.sections` is added as `{}`; the ETag (`"meta-<hex>"`) is a SHA-256 of
    /// the document's canonical JSON, so key order and whitespace do not change it; the body
    /// echoes it in `etag`.
    pub fn from_json(bytes: &[u8]) -> Result<Schema, SchemaError> {
        let parsed = Value::from_slice(bytes)?;
        let Json::Object(mut doc) = Json::from(&parsed) else {
            return Err(SchemaError::Shape("not an object"));
        };
        if !doc.get("schema").is_some_and(Json::is_object) {
            return Err(SchemaError::Shape("`schema` is missing"));
        }
        let Some(Json::Object(manifest)) = doc.get_mut("manifest") else {
            return Err(SchemaError::Shape("`manifest` is missing"));
        };
        let blocks = manifest
            .entry("blocks")
            .or_insert_with(|| Json::Object(Map::new()));
        let Json::Object(blocks) = blocks else {
            return Err(SchemaError::Shape("`manifest.blocks` is not an object"));
        };
        blocks
            .entry("sections")
            .or_insert_with(|| Json::Object(Map::new()));
        doc.remove("etag");
        let canonical = Value::from(Json::Object(doc.clone())).to_canonical_string();
        let etag = format!("\"meta-{}\"", &hex::encode(Sha256::digest(canonical))[..32]);
        doc.insert("etag".into(), Json::String(etag.clone()));
        let body = serde_json::to_vec(&doc).map_err(|e| ParseError(e.to_string()))?;
        Ok(Schema {
            body: body.into(),
            etag,
        })
    }

    /// The response body (shared: serving it copies nothing).
    pub fn body(&self) -> &Arc<[u8]> {
        &self.body
    }

    /// The `ETag` header value (quoted).
    pub fn etag(&self) -> &str {
        &self.etag
    }
}
