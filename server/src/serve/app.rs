//! The router: every request goes to one handler, which asks the core what the request is — an
//! admin route, page JSON, or a page — and moves bytes. With an origin, pages go through the
//! edge cache to it, loaders and previews run there; without one, this server answers pages
//! itself with a built-in HTML view.

use super::draft;
use super::edge::Edge;
use super::error::ServeErrorCode;
use super::fast_deploy::FastDeploy;
use super::header_text;
use super::origin::{self, OriginRequest, Reply};
use super::page_view;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use http_body_util::BodyExt;
use sitefile_core::{
    AdminHead, AdminOutcome, AdminRequest, AdminResponse, Device, InvokeResult, NoHost,
    PageJsonOutcome, Request, Resolution, ResolutionMisuse, ResolvedPage, Site, Step, Value,
};
use sitefile_workspace::cli::{Workspace, owns_path};
use sitefile_workspace::http::is_body_timeout;
use std::sync::Arc;
use tower::ServiceExt as _;

/// Why previews and renders are not available: this server has nothing that renders sections.
const NO_RENDERER: &str =
    "Previews and renders need the site's renderer; this server runs without an origin";

/// What every request sees: the site, the edge in front of the origin when there is one, and
/// Fast Deploy's store when it is on.
#[derive(Clone)]
pub struct App {
    site: Arc<Site>,
    edge: Option<Arc<Edge>>,
    fast_deploy: Option<Arc<FastDeploy>>,
    /// The client page JSON fetches drafts with (none: drafts cannot be fetched).
    drafts: Option<reqwest::Client>,
}

/// The router of a site, in front of `edge`'s origin when there is one, writing reloads to
/// `fast_deploy`'s store when it is on; with `workspace`, its API beside the site.
pub fn router(
    site: Arc<Site>,
    edge: Option<Arc<Edge>>,
    fast_deploy: Option<Arc<FastDeploy>>,
    workspace: Option<&Workspace>,
) -> Router {
    let drafts = draft::client(site.outbound_user_agent(None));
    let site = Router::new().fallback(handle).with_state(App {
        site,
        edge,
        fast_deploy,
        drafts,
    });
    let Some(workspace) = workspace else {
        return site;
    };
    // The workspace API's paths go to its router, with its own limits and 404s; every other
    // path is the site's.
    let api = workspace.router();
    Router::new().fallback(move |request: HttpRequest| {
        let (api, site) = (api.clone(), site.clone());
        async move {
            let to = if owns_path(request.uri().path()) {
                api
            } else {
                site
            };
            to.oneshot(request).await.into_response()
        }
    })
}

async fn handle(State(app): State<App>, request: HttpRequest) -> Response {
    let (parts, body) = request.into_parts();
    let site = &app.site;
    // A page's body is only read to send it on to the origin.
    let limit = match &app.edge {
        Some(_) => origin::MAX_BODY_BYTES,
        None => 0,
    };
    // The core decides from the head whether an admin request is refused (token, method, a
    // declared length over the limit) before any body byte is read, and how much body it reads.
    let head = sitefile_core::is_admin_route(parts.uri.path()).then(|| admin_head(&parts));
    let (admin_request, body) = match head.as_ref().map(|head| site.admin_head(head)) {
        Some(AdminHead::Respond(response)) => return core_response(response),
        Some(AdminHead::WithoutBody) => (head, Ok(Vec::new())),
        Some(AdminHead::ReadBody { limit }) => (head, read_limited(body, limit).await),
        Some(AdminHead::Pass) | None => (None, read_limited(body, limit).await),
    };
    let body = match body {
        Ok(body) => body,
        Err(response) => return response,
    };
    if let Some(request) = admin_request
        && let Some(response) = admin(&app, &parts, request, &body).await
    {
        return response;
    }
    // Without an origin this server answers pages itself, and its view may be asked to look as
    // another device (`?deviceHint=mobile`, as previews are).
    let device_hint = match &app.edge {
        Some(_) => None,
        None => device_hint(&parts),
    };
    let request = match core_request(&parts, device_hint) {
        Ok(request) => request,
        Err(message) => return ServeErrorCode::InvalidRequest.respond(&message),
    };
    if let Some(outcome) = site.page_json(&request) {
        return page_json(&app, request, outcome).await;
    }
    if let Some(edge) = &app.edge {
        if body.len() > limit {
            return ServeErrorCode::BodyTooLarge.respond(&format!(
                "request bodies sent on to the origin are at most {limit} bytes"
            ));
        }
        return match edge.handle(&request, onward(&parts, body)).await {
            Ok(reply) => {
                let mut response = Response::new(reply.body);
                *response.status_mut() = status_code(reply.status);
                *response.headers_mut() = reply.headers;
                response
            }
            Err(why) => {
                let mut response = ServeErrorCode::OriginUnavailable.respond(&why);
                response
                    .headers_mut()
                    .insert("cache-control", HeaderValue::from_static("no-store"));
                response
            }
        };
    }
    if !matches!(parts.method, Method::GET | Method::HEAD) {
        let mut response = ServeErrorCode::MethodNotAllowed.respond(&format!(
            "{} is not served here; pages take GET and HEAD",
            parts.method
        ));
        response
            .headers_mut()
            .insert("allow", HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let device = Device::from_user_agent(request.user_agent());
    let (page, loaders_not_run) = match resolve(&app, app.site.resolve_page(request, &NoHost)).await
    {
        Ok(resolved) => resolved,
        Err(misuse) => return resolution_failed(&misuse),
    };
    let status = if page.page.is_none() || page.not_found {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::OK
    };
    let snapshot = app.site.snapshot();
    let mut routes: Vec<_> = snapshot.routes().routes().iter().map(|r| &**r).collect();
    routes.sort_by(|a, b| a.pattern.cmp(&b.pattern));
    let view = page_view::View {
        routes: &routes,
        device_hint,
        device,
        loaders_not_run: &loaders_not_run,
    };
    let html = page_view::render(&page, parts.uri.path(), &view);
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

/// Drives `resolution` to its page. Each round's loaders run on the origin as one batch; without
/// an origin no loader runs: each call answers `null`, as `sitefile resolve`'s do, and its key
/// is returned beside the page (once each, in the order asked).
async fn resolve(
    app: &App,
    mut resolution: Resolution,
) -> Result<(ResolvedPage, Vec<String>), ResolutionMisuse> {
    let mut not_run: Vec<String> = Vec::new();
    loop {
        let calls = match resolution.next(&NoHost)? {
            Step::Done(page) => return Ok((*page, not_run)),
            Step::NeedLoaders(calls) => calls,
        };
        let results = match &app.edge {
            Some(edge) => edge.origin().run_loaders(&calls).await,
            None => calls
                .iter()
                .map(|call| {
                    if !not_run.contains(&call.key) {
                        not_run.push(call.key.clone());
                    }
                    Ok(Value::Null)
                })
                .collect(),
        };
        for (call, result) in calls.iter().zip(results) {
            resolution.provide(call.id, result)?;
        }
    }
}

/// The answer when this server drove a resolution out of order (a bug of its own).
fn resolution_failed(misuse: &ResolutionMisuse) -> Response {
    ServeErrorCode::ResolutionFailed.respond(&misuse.to_string())
}

/// The request to send on to the origin: the visitor's, as it came.
fn onward(parts: &Parts, body: Vec<u8>) -> OriginRequest {
    OriginRequest {
        method: parts.method.clone(),
        target: parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string(),
        host: parts
            .headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .map(str::to_string),
        headers: header_text::pairs(&parts.headers),
        body: Bytes::from(body),
    }
}

/// The core's request for `parts`: the URL from the `Host` header (loopback when absent), the
/// headers (a `Cookie` header's cookies with them), the wall clock and a random seed.
/// The device `?deviceHint=` names (`mobile`, `tablet`, `desktop`), if any.
fn device_hint(parts: &Parts) -> Option<Device> {
    url::form_urlencoded::parse(parts.uri.query()?.as_bytes())
        .find(|(name, _)| name == "deviceHint")
        .and_then(|(_, value)| Device::from_name(&value))
}

/// The core's request for this HTTP request; with `device_hint`, its user agent is a typical
/// one of that device instead of the client's.
fn core_request(parts: &Parts, device_hint: Option<Device>) -> Result<Request, String> {
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
        if device_hint.is_some() && name == "user-agent" {
            continue;
        }
        request = request.with_header(name.as_str(), &header_text::read(value));
    }
    if let Some(device) = device_hint {
        request = request.with_header("user-agent", device.typical_user_agent());
    }
    // The thread's CSPRNG (seeded from the OS, reseeded by `rand`): no system call per request.
    Ok(request.with_now(Utc::now()).with_seed(rand::random()))
}

/// Page JSON: answered at once, or the page resolved (over the draft the core asks to fetch,
/// on a preview host) and handed back to the core.
async fn page_json(app: &App, request: Request, outcome: PageJsonOutcome) -> Response {
    match outcome {
        PageJsonOutcome::Respond(response) => {
            http_response(response.status, &response.headers, response.body.to_vec())
        }
        PageJsonOutcome::Resolve(mut job) => {
            if let Some(fetch) = job.draft_fetch() {
                let body = draft::fetch(app.drafts.as_ref(), fetch).await;
                app.site.page_json_draft_fetched(&mut job, body.as_deref());
            }
            // This server knows no section modules: none leaves the JSON and none has a loader.
            let resolution = app.site.resolve_page_json(&job, request, &NoHost);
            let page = match resolve(app, resolution).await {
                Ok((page, _)) => page,
                Err(misuse) => return resolution_failed(&misuse),
            };
            let response = job.finish(&page, &[]);
            http_response(response.status, &response.headers, response.body.to_vec())
        }
    }
}

/// The admin protocol's view of a request's head (no body yet).
fn admin_head(parts: &Parts) -> AdminRequest {
    AdminRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers: header_text::pairs(&parts.headers),
        body: Vec::new(),
    }
}

/// An admin request whose head the core admitted, with its body read up to the route's limit
/// (one byte past it tells the core it is too large): the core's outcome carried out —
/// previews, renders and invokes by the origin when there is one, purges in the edge's store —;
/// `None` when the core passes it on.
async fn admin(
    app: &App,
    parts: &Parts,
    mut request: AdminRequest,
    body: &[u8],
) -> Option<Response> {
    request.body = body.to_vec();
    let site = &app.site;
    let response = match site.handle_admin(&request, Utc::now()) {
        AdminOutcome::Pass => return None,
        AdminOutcome::Respond(response) => response,
        AdminOutcome::Reload(job) => match &app.fast_deploy {
            None => job.apply_in_memory(site.as_ref()),
            Some(fast_deploy) => {
                // The core runs the hook under its writer lock, synchronously: the write to
                // the store runs on a blocking thread that waits for it.
                let (site, fast_deploy) = (site.clone(), fast_deploy.clone());
                let runtime = tokio::runtime::Handle::current();
                let applied = tokio::task::spawn_blocking(move || {
                    job.apply(site.as_ref(), &mut |snapshot| {
                        runtime.block_on(fast_deploy.write(snapshot)).map(|()| true)
                    })
                })
                .await;
                match applied {
                    Ok(response) => response,
                    Err(e) => {
                        return Some(ServeErrorCode::ReloadFailed.respond(&e.to_string()));
                    }
                }
            }
        },
        AdminOutcome::Purge(job) => {
            if let Some(edge) = &app.edge {
                edge.purge(job.keys(), job.targets()).await;
            }
            job.finish()
        }
        AdminOutcome::Preview(job) => match &app.edge {
            // The origin renders: the request goes to it as it came.
            Some(edge) => match edge.origin().forward(&onward(parts, body.to_vec())).await {
                Ok(reply) => return Some(reply_response(reply)),
                Err(why) => job.unavailable(&format!("the origin could not render it: {why}")),
            },
            None => job.unavailable(NO_RENDERER),
        },
        AdminOutcome::Invoke(job) => {
            let results = match &app.edge {
                Some(edge) => match edge.origin().invoke(&job.calls).await {
                    Ok(results) => results,
                    Err(why) => job
                        .calls
                        .iter()
                        .map(|_| InvokeResult::Failed {
                            message: why.clone(),
                            stack: None,
                        })
                        .collect(),
                },
                // This server has no loaders or actions of its own.
                None => job.calls.iter().map(|_| InvokeResult::Unknown).collect(),
            };
            job.finish(results, Vec::new())
        }
    };
    Some(core_response(response))
}

/// The HTTP response of the core's admin response.
fn core_response(response: AdminResponse) -> Response {
    http_response(response.status, &response.headers, response.body.to_vec())
}

/// Reads `body` until it holds more than `limit` bytes (the core answers 413 then) or ends;
/// a body that stops arriving is 408, one that cannot be read 400.
async fn read_limited(mut body: Body, limit: usize) -> Result<Vec<u8>, Response> {
    // The declared length, once (within the limit): no doubling of a large body's buffer.
    let declared = usize::try_from(http_body::Body::size_hint(&body).lower()).unwrap_or(usize::MAX);
    let mut read = Vec::with_capacity(declared.min(limit.saturating_add(1)));
    while read.len() <= limit {
        match body.frame().await {
            None => break,
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    read.extend_from_slice(data);
                }
            }
            Some(Err(e)) if is_body_timeout(&e) => {
                return Err(
                    ServeErrorCode::BodyTimeout.respond("the request body stopped arriving")
                );
            }
            Some(Err(e)) => {
                let message = format!("the request body could not be read: {e}");
                return Err(ServeErrorCode::InvalidBody.respond(&message));
            }
        }
    }
    Ok(read)
}

/// A response read whole (the origin's or the edge's).
fn reply_response(reply: Reply) -> Response {
    let mut response = http_response(reply.status, &reply.headers, Vec::new());
    *response.body_mut() = Body::from(reply.body);
    response
}

/// A response from the core's status, headers and body.
fn http_response(status: u16, headers: &[(String, String)], body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(Bytes::from(body)));
    response.headers_mut().reserve(headers.len());
    *response.status_mut() = status_code(status);
    for (name, value) in headers {
        if let Some((name, value)) = header_text::header(name, value) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// The HTTP status of a code the core or the origin gave (a code HTTP has no room for is a
/// server error).
fn status_code(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
