//! The workspace API routes.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::error::{ApiError, StorageFailure};
use crate::http::BODY_LIMIT_BYTES;
use crate::mcp;
use crate::pilot;
use crate::state::AppState;
use crate::tools;

/// The workspace API as an axum router (mounted by `sitefile serve`, or served alone by
/// `sitefile workspace serve`).
pub fn router(state: AppState) -> Router {
    let well_known = "/.well-known/oauth-protected-resource";
    Router::new()
        .route(
            "/api/{org}/tools/{tool}",
            post(tools::rest_tool).fallback(method_not_allowed),
        )
        .route(
            "/api/{org}/pilot/threads/{thread_id}/messages",
            post(pilot::post_message).fallback(method_not_allowed),
        )
        .route(
            "/api/{org}/pilot/threads/{thread_id}/stream",
            get(pilot::stream).fallback(method_not_allowed),
        )
        .route(
            &format!("/api/{{org}}/mcp/{{connection_id}}{well_known}"),
            get(mcp::protected_resource),
        )
        .route(
            &format!("/api/{{org}}/mcp/gateway/{{virtual_mcp_id}}{well_known}"),
            get(mcp::protected_resource),
        )
        .route(
            &format!("/mcp/{{connection_id}}{well_known}"),
            get(mcp::protected_resource),
        )
        .route(
            &format!("{well_known}/{{*resource}}"),
            get(mcp::protected_resource_prefixed),
        )
        .merge(mcp_endpoints(&state))
        .fallback(|| async { ApiError::NotFound("Not Found".into()) })
        .layer(middleware::from_fn(reject_unreadable_paths))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            log_storage_failures,
        ))
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .with_state(state)
}

/// The MCP endpoints, each behind the DNS-rebinding guard ([`mcp::guard_host`]).
fn mcp_endpoints(state: &AppState) -> Router<AppState> {
    Router::new()
        .route(
            "/api/{org}/mcp/self",
            post(mcp::self_mcp).fallback(mcp::method_not_allowed),
        )
        .route(
            "/api/{org}/mcp/gateway/{virtual_mcp_id}",
            post(mcp::gateway).fallback(mcp::method_not_allowed),
        )
        .route(
            "/api/{org}/mcp/{connection_id}",
            post(mcp::proxy)
                .get(mcp::listen)
                .delete(mcp::end_session)
                .fallback(mcp::session_method_not_allowed),
        )
        .route(
            "/mcp/{connection_id}",
            post(mcp::legacy_proxy)
                .get(mcp::legacy_listen)
                .delete(mcp::legacy_end_session)
                .fallback(mcp::session_method_not_allowed)
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    mcp::legacy_deprecation,
                )),
        )
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            mcp::guard_host,
        ))
}

/// 405 on a REST route for a method it does not take, in the one error body.
async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

/// A path whose parameters would decode to a NUL character, or to bytes that are not UTF-8,
/// names nothing: 404 in the one error body before any handler (and so any storage lookup, or
/// the path extractor's own plain-text refusal) sees it.
async fn reject_unreadable_paths(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8();
    if path.contains("%00") || decoded.is_err() {
        return ApiError::NotFound("Not Found".into()).into_response();
    }
    next.run(request).await
}

/// Logs a storage failure an answer carries, naming the database it happened on (the answer
/// itself says only "internal error").
async fn log_storage_failures(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let response = next.run(request).await;
    if let Some(StorageFailure(detail)) = response.extensions().get::<StorageFailure>() {
        tracing::error!(database = %state.store.location(), %detail, "storage error");
    }
    response
}
