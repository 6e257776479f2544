//! The router: every request goes to one handler, which asks the core what the request is — an
//! admin route, page JSON, or a page — and moves bytes.

use super::page_view;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use http_body_util::BodyExt;
use sitefile_core::admin::{AdminOutcome, AdminRequest, InvokeResult};
use sitefile_core::page_json::PageJsonOutcome;
use sitefile_core::resolve::ResolvedPage;
use sitefile_core::{NoHost, Request, Site};
use std::sync::Arc;

/// Why previews and renders are not available: this server has nothing that renders sections.
const NO_RENDERER: &str =
    "Previews and renders need the site's renderer; this server runs without an origin";

/// The router of a site.
pub fn router(site: Arc<Site>) -> Router {
    Router::new().fallback(handle).with_state(site)
}

async fn handle(State(site): State<Arc<Site>>, request: HttpRequest) -> Response {
    let (parts, body) = request.into_parts();
    if sitefile_core::admin::is_admin_route(parts.uri.path())
        && let Some(response) = admin(&site, &parts, body).await
    {
        return response;
    }
    let request = match core_request(&parts) {
        Ok(request) => request,
        Err(message) => return json_error(StatusCode::BAD_REQUEST, "invalid_request", &message),
    };
    if let Some(outcome) = site.page_json(&request) {
        return page_json(&site, request, outcome);
    }
    if !matches!(parts.method, Method::GET | Method::HEAD) {
        let mut response = json_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            &format!(
                "{} is not served here; pages take GET and HEAD",
                parts.method
            ),
        );
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let page = resolve(&site, request);
    let status = if page.page.is_some() {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    let html = page_view::render(&page, parts.uri.path());
    (
        status,
        [
            ("content-type", "text/html; charset=utf-8"),
            ("cache-control", "no-store"),
        ],
        html,
    )
        .into_response()
}

/// Resolves the page for `request`. Without an origin no loader can run: each call fails with
/// that reason, so the page is marked degraded and says why.
fn resolve(site: &Site, request: Request) -> ResolvedPage {
    site.resolve_page(request, &NoHost).run(|call| {
        Err(format!(
            "no origin is configured to run the loader {}",
            call.key
        ))
    })
}

/// The core's request for `parts`: the URL from the `Host` header (loopback when absent), the
/// headers (a `Cookie` header's cookies with them), the wall clock and a random seed.
fn core_request(parts: &Parts) -> Result<Request, String> {
    let host = parts
        .headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = Request::new(&format!("http://{host}{target}"))
        .map_err(|e| e.to_string())?
        .with_method(parts.method.as_str());
    for (name, value) in &parts.headers {
        let value = value
            .to_str()
            .map_err(|_| format!("the {name} header is not visible ASCII"))?;
        request = request.with_header(name.as_str(), value);
    }
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed).map_err(|e| format!("no random source: {e}"))?;
    Ok(request
        .with_now(Utc::now())
        .with_seed(u64::from_le_bytes(seed)))
}

/// Page JSON: answered at once, or the page resolved and handed back to the core.
fn page_json(site: &Site, request: Request, outcome: PageJsonOutcome) -> Response {
    match outcome {
        PageJsonOutcome::Respond(response) => {
            http_response(response.status, &response.headers, response.body.to_vec())
        }
        PageJsonOutcome::Resolve(job) => {
            // This server knows no section modules: none leaves the JSON and none has a loader.
            let page = resolve(site, request);
            let response = job.finish(&page, &[]);
            http_response(response.status, &response.headers, response.body.to_vec())
        }
    }
}

/// An admin request: its body read up to the route's limit (one byte past it tells the core it
/// is too large), then the core's outcome carried out; `None` when the core passes it on.
async fn admin(site: &Site, parts: &Parts, body: Body) -> Option<Response> {
    let limit = site.admin_config().body_limit(parts.uri.path());
    let body = match read_limited(body, limit).await {
        Ok(body) => body,
        Err(message) => {
            return Some(json_error(
                StatusCode::BAD_REQUEST,
                "invalid_body",
                &message,
            ));
        }
    };
    let request = AdminRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers: header_pairs(&parts.headers),
        body,
    };
    let response = match site.handle_admin(&request, Utc::now()) {
        AdminOutcome::Pass => return None,
        AdminOutcome::Respond(response) => response,
        AdminOutcome::Reload(job) => job.apply_in_memory(site),
        // No edge storage yet: the purge index names nothing stored here.
        AdminOutcome::Purge(job) => job.finish(),
        AdminOutcome::Preview(job) => job.unavailable(NO_RENDERER),
        AdminOutcome::Invoke(job) => {
            // This server has no loaders or actions of its own.
            let results = job.calls.iter().map(|_| InvokeResult::Unknown).collect();
            job.finish(results, Vec::new())
        }
    };
    Some(http_response(
        response.status,
        &response.headers,
        response.body.to_vec(),
    ))
}

/// Reads `body` until it holds more than `limit` bytes (the core answers 413 then) or ends.
async fn read_limited(mut body: Body, limit: usize) -> Result<Vec<u8>, String> {
    let mut read = Vec::new();
    while read.len() <= limit {
        match body.frame().await {
            None => break,
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    read.extend_from_slice(data);
                }
            }
            Some(Err(e)) => return Err(format!("the request body could not be read: {e}")),
        }
    }
    Ok(read)
}

fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|(n, v)| Some((n.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect()
}

/// A response from the core's status, headers and body.
fn http_response(status: u16, headers: &[(String, String)], body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(Bytes::from(body)));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// A JSON error of this server's own (`{"error": {"code", "message"}}`, the admin protocol's
/// shape).
fn json_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}
