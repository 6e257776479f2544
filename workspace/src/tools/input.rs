//! Parsing tool inputs into typed values with 400s that say what is wrong.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::ApiError;

/// Largest page size of any listing.
pub const MAX_LIMIT: i64 = 1000;
/// Page size when none is given.
pub const DEFAULT_LIMIT: i64 = 100;

/// Deserializes a tool input.
pub fn parse<T: DeserializeOwned>(input: Value) -> Result<T, ApiError> {
    serde_json::from_value(input).map_err(|e| ApiError::BadRequest(format!("Invalid input: {e}")))
}

/// `{ "id": string }`.
#[derive(Deserialize)]
pub struct ById {
    /// The id.
    pub id: String,
}

/// Page parameters: `limit` 1..=1000 (default 100), `offset` ≥ 0.
#[derive(Deserialize, Default)]
pub struct Page {
    limit: Option<i64>,
    offset: Option<i64>,
}

impl Page {
    /// Checked `(limit, offset)`.
    pub fn bounds(&self) -> Result<(i64, i64), ApiError> {
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        let offset = self.offset.unwrap_or(0);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(ApiError::BadRequest(format!(
                "limit must be between 1 and {MAX_LIMIT}"
            )));
        }
        if offset < 0 {
            return Err(ApiError::BadRequest("offset must be 0 or more".into()));
        }
        Ok((limit, offset))
    }
}

/// A listing response: `{ items, totalCount, hasMore }`.
pub fn listing(items: Vec<Value>, total: i64, offset: i64) -> Value {
    let has_more = offset + (items.len() as i64) < total;
    json!({ "items": items, "totalCount": total, "hasMore": has_more })
}

/// Checks a required, non-empty text of at most `max` characters.
pub fn text(name: &str, value: &str, max: usize) -> Result<(), ApiError> {
    if value.trim().is_empty() || value.chars().count() > max {
        return Err(ApiError::BadRequest(format!(
            "{name} must be 1 to {max} characters"
        )));
    }
    Ok(())
}
