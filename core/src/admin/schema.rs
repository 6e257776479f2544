//! The schema resource (`GET /live/_meta`): the host's generated document, checked once, with
//! its ETag.

use crate::errors::{ErrorCode, HasErrorCode};
use crate::value::{ParseError, Value};
use base64::Engine;
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

/// A custom matcher made selectable in the editor (`registerMatcherSchema`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MatcherSchema {
    /// The matcher's key (`site/matchers/vip.ts`).
    pub key: String,
    /// Its name in the editor.
    pub title: String,
    /// The group it is listed under.
    pub namespace: String,
    /// A JSON Schema object giving its settings a form; absent: an object with no settings.
    #[serde(default)]
    pub props_schema: Option<Json>,
}

impl MatcherSchema {
    /// The matcher's definition: its props schema (or an empty object schema) titled, with its
    /// namespace.
    fn definition(&self) -> Json {
        let mut definition = match &self.props_schema {
            Some(Json::Object(schema)) => schema.clone(),
            _ => Map::from_iter([("type".to_string(), Json::from("object"))]),
        };
        definition.insert("title".into(), Json::from(self.title.as_str()));
        definition.insert("namespace".into(), Json::from(self.namespace.as_str()));
        Json::Object(definition)
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
        Schema::composed(bytes, &[])
    }

    /// [`Schema::from_json`] with custom matchers added: each under `manifest.blocks.matchers`
    /// as `{"$ref": "#/definitions/<base64 of the key>"}`, with its definition in
    /// `schema.definitions` (a matcher the document already has is left as it is).
    pub fn composed(bytes: &[u8], matchers: &[MatcherSchema]) -> Result<Schema, SchemaError> {
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
        let mut definitions_added = Vec::new();
        if !matchers.is_empty() {
            let Json::Object(listed) = blocks
                .entry("matchers")
                .or_insert_with(|| Json::Object(Map::new()))
            else {
                return Err(SchemaError::Shape(
                    "`manifest.blocks.matchers` is not an object",
                ));
            };
            for matcher in matchers {
                if listed.contains_key(&matcher.key) {
                    continue;
                }
                let id = base64::engine::general_purpose::STANDARD.encode(&matcher.key);
                listed.insert(
                    matcher.key.clone(),
                    serde_json::json!({ "$ref": format!("#/definitions/{id}") }),
                );
                definitions_added.push((id, matcher.definition()));
            }
        }
        if !definitions_added.is_empty() {
            let Some(Json::Object(schema)) = doc.get_mut("schema") else {
                return Err(SchemaError::Shape("`schema` is missing"));
            };
            let Json::Object(definitions) = schema
                .entry("definitions")
                .or_insert_with(|| Json::Object(Map::new()))
            else {
                return Err(SchemaError::Shape("`schema.definitions` is not an object"));
            };
            definitions.extend(definitions_added);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn custom_matchers_are_listed_with_their_definitions() {
        let doc = json!({"schema": {"definitions": {}}, "manifest": {"blocks": {}}}).to_string();
        let vip = MatcherSchema {
            key: "site/matchers/vip.ts".into(),
            title: "VIP".into(),
            namespace: "site".into(),
            props_schema: Some(
                json!({"type": "object", "properties": {"tier": {"type": "string"}}}),
            ),
        };
        let plain = MatcherSchema {
            key: "site/matchers/plain.ts".into(),
            title: "Plain".into(),
            namespace: "site".into(),
            props_schema: None,
        };
        let schema = Schema::composed(doc.as_bytes(), &[vip, plain]).unwrap();
        let body: Json = serde_json::from_slice(schema.body()).unwrap();
        let id = base64::engine::general_purpose::STANDARD.encode("site/matchers/vip.ts");
        assert_eq!(
            body["manifest"]["blocks"]["matchers"]["site/matchers/vip.ts"],
            json!({"$ref": format!("#/definitions/{id}")})
        );
        let definition = &body["schema"]["definitions"][&id];
        assert_eq!(definition["title"], "VIP");
        assert_eq!(definition["namespace"], "site");
        assert_eq!(definition["properties"]["tier"]["type"], "string");
        let plain_id = base64::engine::general_purpose::STANDARD.encode("site/matchers/plain.ts");
        assert_eq!(body["schema"]["definitions"][&plain_id]["type"], "object");
        assert_ne!(
            schema.etag(),
            Schema::from_json(doc.as_bytes()).unwrap().etag(),
            "the matchers are part of what the ETag covers"
        );
    }
}
