//! API key tools: the value is returned once; a key never mints a wider key.

use serde::Deserialize;
use serde_json::{Value, json};

use super::input::{listing, parse, text};
use super::{ToolCtx, ToolDef};
use crate::auth::Permissions;
use crate::clock::iso;
use crate::crypto::{generate_api_key, hash_api_key};
use crate::error::ApiError;
use crate::storage::ApiKeyRecord;

/// Longest key lifetime: ten years, in seconds.
const MAX_EXPIRES_IN: f64 = 315_360_000.0;

/// `API_KEY_CREATE`.
pub const CREATE: ToolDef = ToolDef {
    name: "API_KEY_CREATE",
    description: "Create an API key for this organization; the value is returned only here.",
    input_schema: || {
        json!({ "type": "object", "required": ["name"], "properties": {
            "name": { "type": "string", "minLength": 1, "maxLength": 64 },
            "permissions": { "type": "object", "additionalProperties": { "type": "array", "items": { "type": "string" } } },
            "expiresIn": { "type": "integer", "minimum": 1, "maximum": MAX_EXPIRES_IN } } })
    },
};
/// `API_KEY_LIST`.
pub const LIST: ToolDef = ToolDef {
    name: "API_KEY_LIST",
    description: "List this organization's API keys (never their values).",
    input_schema: || json!({ "type": "object", "properties": {} }),
};
/// `API_KEY_DELETE`.
pub const DELETE: ToolDef = ToolDef {
    name: "API_KEY_DELETE",
    description: "Revoke an API key at once (only keys whose permissions the caller holds).",
    input_schema: || json!({ "type": "object", "required": ["keyId"], "properties": { "keyId": { "type": "string" } } }),
};

fn key_json(k: &ApiKeyRecord) -> Value {
    json!({
        "id": k.id,
        "name": k.name,
        "permissions": k.permissions,
        "expiresAt": k.expires_at.map(iso),
        "createdAt": iso(k.created_at),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreateInput {
    name: String,
    #[serde(default)]
    permissions: Permissions,
    expires_in: Option<Value>,
}

pub(super) async fn create(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let input: CreateInput = parse(input)?;
    text("name", &input.name, 64)?;
    let expires_in = match input.expires_in {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            let secs = n.as_f64().unwrap_or(-1.0);
            if !(1.0..=MAX_EXPIRES_IN).contains(&secs) || secs.fract() != 0.0 {
                return Err(ApiError::BadRequest(
                    "expiresIn must be a whole number of seconds from 1 to 315360000".into(),
                ));
            }
            Some(secs as i64)
        }
        Some(_) => {
            return Err(ApiError::BadRequest(
                "expiresIn must be a number of seconds, not a string".into(),
            ));
        }
    };
    if !ctx.principal.permissions.contains(&input.permissions) {
        return Err(ApiError::Forbidden(
            "a key cannot grant permissions its creator does not hold".into(),
        ));
    }
    let value = generate_api_key();
    let now = ctx.state.config.clock.now_ms();
    let record = ApiKeyRecord {
        id: uuid::Uuid::new_v4().to_string(),
        org_id: ctx.principal.org.id.clone(),
        member_id: ctx.principal.member_id.clone(),
        name: input.name,
        key_hash: hash_api_key(&value),
        permissions: input.permissions,
        // A key never outlives the key that minted it.
        expires_at: match (expires_in.map(|s| now + s * 1000), ctx.principal.expires_at) {
            (Some(asked), Some(minter)) => Some(asked.min(minter)),
            (asked, minter) => asked.or(minter),
        },
        created_at: now,
    };
    ctx.state.store.insert_api_key(&record).await?;
    let mut out = key_json(&record);
    out["key"] = json!(value);
    Ok(out)
}

pub(super) async fn list(ctx: &ToolCtx<'_>, _input: Value) -> Result<Value, ApiError> {
    let keys = ctx.state.store.list_api_keys(&ctx.principal.org.id).await?;
    let total = keys.len() as i64;
    Ok(listing(keys.iter().map(key_json).collect(), total, 0))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeleteInput {
    key_id: String,
}

pub(super) async fn delete(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let DeleteInput { key_id } = parse(input)?;
    let org_id = &ctx.principal.org.id;
    let target = ctx
        .state
        .store
        .list_api_keys(org_id)
        .await?
        .into_iter()
        .find(|k| k.id == key_id)
        .ok_or_else(|| ApiError::NotFound(format!("API key not found: {key_id}")))?;
    if !ctx.principal.permissions.contains(&target.permissions) {
        return Err(ApiError::Forbidden(
            "a key cannot revoke a key with permissions it does not hold".into(),
        ));
    }
    if !ctx
        .state
        .store
        .delete_api_key(&ctx.principal.org.id, &key_id)
        .await?
    {
        return Err(ApiError::NotFound(format!("API key not found: {key_id}")));
    }
    Ok(json!({ "success": true, "keyId": key_id }))
}
