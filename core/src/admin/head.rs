//! The head check: what a request's method, path, query and headers decide before a host reads
//! any body byte — routing, methods, tokens, and a declared `Content-Length` over the route's
//! limit — and how much body the route reads.

use super::auth::{check_purge, check_reload};
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::route::Route;

/// What a host does with an admin request once its head is read, before reading its body.
#[derive(Debug, Clone, PartialEq)]
pub enum AdminHead {
    /// Not an admin route: the host handles the request as it would without the admin protocol.
    Pass,
    /// Send this response and read no body byte: a preflight, 405, 401 (no or a wrong token),
    /// 404 (purging disabled), or 413 (a declared `Content-Length` over the route's limit).
    Respond(AdminResponse),
    /// The route reads no body (a `GET`, `POST /_cache/purge-loaders`): hand the request over
    /// without reading one.
    WithoutBody,
    /// Read the body, at most `limit` bytes: a host stops reading once it holds more and hands
    /// over what it read (more than `limit` is answered 413).
    ReadBody {
        /// The route's body limit in bytes.
        limit: usize,
    },
}

/// An admin request whose head passed the check: its route, its CORS answer, and its body
/// limit (`None` when the route reads no body).
pub(crate) struct Admitted {
    pub(crate) route: Route,
    pub(crate) cors: Cors,
    pub(crate) limit: Option<usize>,
}

/// What the head check made of a request.
pub(crate) enum Checked {
    /// Not an admin route.
    Pass,
    /// Answered from the head.
    Respond(AdminResponse),
    /// Goes on to its route.
    Admitted(Admitted),
}

/// The head check of `request` under `config` (its body is not looked at): passed on, answered,
/// or admitted. Order: route, preflight, method, token, declared length.
pub(crate) fn check(config: &AdminConfig, request: &AdminRequest) -> Checked {
    let Some(route) = Route::parse(&request.path) else {
        return Checked::Pass;
    };
    if route == Route::SpeculationRules && config.speculation_rules.is_none() {
        return Checked::Pass;
    }
    let cors = Cors::for_request(request);
    if request.is("OPTIONS") {
        let mut response = AdminResponse::empty(204, &cors);
        response.set_header("Allow", &route.allow());
        return Checked::Respond(response);
    }
    if !route.methods().iter().any(|m| request.is(m)) {
        let allow = route.allow();
        let error = AdminError::new(
            AdminErrorCode::MethodNotAllowed,
            format!("Method {} is not allowed here; use {allow}", request.method),
        );
        let mut response = error.into_response(&cors);
        response.set_header("Allow", &allow);
        return Checked::Respond(response);
    }
    let authorized = match route {
        Route::Sitefile if request.is("POST") => check_reload(config, request),
        Route::Purge | Route::PurgeLoaders => check_purge(config, request),
        _ => Ok(()),
    };
    if let Err(error) = authorized {
        let unauthorized = error.code == AdminErrorCode::Unauthorized;
        let mut response = error.into_response(&cors);
        if unauthorized && matches!(route, Route::Purge | Route::PurgeLoaders) {
            response.set_header("WWW-Authenticate", "Bearer");
        }
        return Checked::Respond(response);
    }
    let limit = body_limit(&route, config, request);
    if let (Some(limit), Some(declared)) = (limit, declared_length(request))
        && declared > limit as u64
    {
        let error = AdminError::new(
            AdminErrorCode::BodyTooLarge,
            format!("The body is larger than {limit} bytes (Content-Length: {declared})"),
        );
        return Checked::Respond(error.into_response(&cors));
    }
    Checked::Admitted(Admitted { route, cors, limit })
}

/// What the head of `request` decides (see [`AdminHead`]); its body is not looked at.
pub fn head(config: &AdminConfig, request: &AdminRequest) -> AdminHead {
    match check(config, request) {
        Checked::Pass => AdminHead::Pass,
        Checked::Respond(response) => AdminHead::Respond(response),
        Checked::Admitted(Admitted { limit: None, .. }) => AdminHead::WithoutBody,
        Checked::Admitted(Admitted {
            limit: Some(limit), ..
        }) => AdminHead::ReadBody { limit },
    }
}

/// The body limit of `route` for the request's method: the reload limit for `POST /.sitefile`,
/// the general limit for the other routes that read a body, `None` for those that read none.
fn body_limit(route: &Route, config: &AdminConfig, request: &AdminRequest) -> Option<usize> {
    match route {
        Route::Sitefile if request.is("POST") => Some(config.reload_max_bytes),
        Route::Preview(_) | Route::Render if request.is("POST") => Some(config.max_body_bytes),
        Route::Invoke(_) | Route::InvokeBatch | Route::Purge => Some(config.max_body_bytes),
        _ => None,
    }
}

/// The largest body length `Content-Length` declares (a list, or the header repeated, counts
/// its largest number); `None` without one that reads as a number.
fn declared_length(request: &AdminRequest) -> Option<u64> {
    request
        .header_values("content-length")
        .flat_map(|value| value.split(','))
        .filter_map(|n| n.trim().parse::<u64>().ok())
        .max()
}
