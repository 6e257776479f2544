//! OAuth 2.0 Protected Resource Metadata (RFC 9728) for the MCP endpoints.
//!
//! The document is served for any MCP path without a lookup, so it reveals nothing about
//! which organizations or connections exist. Bearer tokens are API keys minted with
//! `API_KEY_CREATE`, or access tokens of the configured authorization server, which the
//! document then names in `authorization_servers`.

use axum::Json;
use axum::extract::State;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::state::AppState;

/// The well-known suffix and prefix.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// `GET <resource path>/.well-known/oauth-protected-resource`.
pub async fn protected_resource(State(state): State<AppState>, uri: Uri) -> Response {
    let path = uri.path().strip_suffix(WELL_KNOWN).unwrap_or(uri.path());
    document(&state, path)
}

/// `GET /.well-known/oauth-protected-resource/<resource path>` (RFC 9728 §3.1 form).
pub async fn protected_resource_prefixed(State(state): State<AppState>, uri: Uri) -> Response {
    let path = uri.path().strip_prefix(WELL_KNOWN).unwrap_or(uri.path());
    document(&state, path)
}

fn document(state: &AppState, path: &str) -> Response {
    let mut document = json!({
        "resource": format!("{}{path}", state.config.public_url),
        "bearer_methods_supported": ["header"],
        "resource_name": "sitefile workspace MCP endpoint",
    });
    if let Some(oauth) = &state.oauth {
        document["authorization_servers"] = json!([oauth.issuer()]);
        document["scopes_supported"] = json!(oauth.scopes());
    }
    Json(document).into_response()
}
