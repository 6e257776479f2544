//! Turning a stored connection into an upstream target: credentials decrypted just in time.

use std::time::Duration;

use super::upstream::{Target, upstream_headers};
use crate::error::ApiError;
use crate::state::AppState;
use crate::storage::Connection;

/// The upstream target of `connection`; decryption happens here and nowhere else.
pub fn target_for(
    state: &AppState,
    connection: &Connection,
    request_id: &str,
) -> Result<Target, ApiError> {
    let unusable = || {
        tracing::error!(connection.id = %connection.id, "connection credentials could not be decrypted");
        ApiError::Unavailable("connection credentials are unusable".into())
    };
    let token = connection
        .token_enc
        .as_deref()
        .map(|enc| {
            state
                .vault
                .decrypt(enc, &format!("connections:{}:token", connection.id))
                .map_err(|_| unusable())
                .and_then(|b| String::from_utf8(b).map_err(|_| unusable()))
        })
        .transpose()?;
    let custom: Vec<(String, String)> = connection
        .headers_enc
        .as_deref()
        .map(|enc| {
            state
                .vault
                .decrypt(enc, &format!("connections:{}:headers", connection.id))
                .map_err(|_| unusable())
                .and_then(|b| serde_json::from_slice(&b).map_err(|_| unusable()))
        })
        .transpose()?
        .unwrap_or_default();
    Ok(Target {
        connection_id: connection.id.clone(),
        revision: connection.updated_at,
        url: connection.url.clone(),
        headers: upstream_headers(token.as_deref(), &custom, request_id),
        tool_timeout: Duration::from_millis(connection.tool_timeout_ms.max(1) as u64),
        caller: None,
        session: None,
        relay: None,
        envelope: None,
    })
}
