//! `AUDIT_LOG_LIST`: the organization's recent tool invocations.

use serde::Deserialize;
use serde_json::{Value, json};

use super::input::{DEFAULT_LIMIT, MAX_LIMIT, parse};
use super::{ToolCtx, ToolDef};
use crate::clock::iso;
use crate::error::ApiError;

/// `AUDIT_LOG_LIST`.
pub const LIST: ToolDef = ToolDef {
    name: "AUDIT_LOG_LIST",
    description: "List recent tool invocations with the caller identity, newest first.",
    input_schema: || {
        json!({ "type": "object", "properties": {
        "limit": { "type": "integer", "minimum": 1, "maximum": 1000 } } })
    },
};

#[derive(Deserialize)]
struct Input {
    limit: Option<i64>,
}

pub(super) async fn list(ctx: &ToolCtx<'_>, input: Value) -> Result<Value, ApiError> {
    let Input { limit } = parse(input)?;
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_LIMIT}"
        )));
    }
    let rows = ctx
        .state
        .store
        .list_audit(&ctx.principal.org.id, limit)
        .await?;
    let items: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut item = serde_json::to_value(r).expect("audit rows serialize");
            item["at"] = json!(iso(r.at));
            item
        })
        .collect();
    Ok(json!({ "items": items }))
}
