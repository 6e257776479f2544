//! `POST /api/:org/tools/<TOOL>`: the tool's input as the JSON body, its output as the
//! response body.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::auth::authenticate;
use crate::error::ApiError;
use crate::http::parse_json;
use crate::state::AppState;

/// The REST tool endpoint: 401 without a valid key, 403 for another organization's key
/// or a missing permission, 404 for an unknown tool, 400 for bad input.
pub async fn rest_tool(
    State(state): State<AppState>,
    Path((org, tool)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let body = body?;
    let principal = authenticate(&state, &headers, None).await?.required()?;
    principal.require_org(&org)?;
    let input = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        parse_json(&body)?
    };
    if !input.is_object() {
        return Err(ApiError::BadRequest(
            "the tool input must be a JSON object".into(),
        ));
    }
    Ok(Json(
        super::execute(&state, &principal, &tool, input, "rest").await?,
    ))
}
