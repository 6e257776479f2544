//! The entry point: a request in, an outcome out.

use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::head::{Admitted, Checked, check};
use super::invoke::{self, InvokeJob};
use super::meta::meta;
use super::preview::{self, PreviewJob};
use super::purge::{self, PurgeJob};
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::route::Route;
use super::site::AdminSite;
use super::sitefile::{self, ReloadJob};
use chrono::{DateTime, Utc};

/// What the host does with an admin request.
#[derive(Debug, Clone, PartialEq)]
pub enum AdminOutcome {
    /// Not an admin route: the host handles the request as it would without the admin protocol.
    Pass,
    /// Send this response.
    Respond(AdminResponse),
    /// An authorized reload: send what [`ReloadJob::apply`] (with the Fast Deploy hook) or
    /// [`ReloadJob::apply_in_memory`] answers.
    Reload(ReloadJob),
    /// Delete [`PurgeJob::keys`] from the edge cache storage, then send [`PurgeJob::finish`].
    Purge(PurgeJob),
    /// Resolve and render the job's target, then send [`PreviewJob::finish`].
    Preview(PreviewJob),
    /// Run the job's calls, then send [`InvokeJob::finish`].
    Invoke(InvokeJob),
}

/// Handles one admin request against `site` at `now` (the time a reload records). Every
/// response carries CORS headers. The request's head is checked first, as [`head`](super::head)
/// checks it: `OPTIONS` on an admin route is answered 204, a method the route does not take is
/// 405 with `Allow`, a missing or wrong token 401, a declared `Content-Length` over the route's
/// limit 413.
pub fn handle<S: AdminSite + ?Sized>(
    site: &S,
    config: &AdminConfig,
    request: &AdminRequest,
    now: DateTime<Utc>,
) -> AdminOutcome {
    let (route, cors) = match check(config, request) {
        Checked::Pass => return AdminOutcome::Pass,
        Checked::Respond(response) => return AdminOutcome::Respond(response),
        Checked::Admitted(Admitted { route, cors, .. }) => (route, cors),
    };
    let outcome = match &route {
        Route::Meta => meta(site, request, &cors).map(AdminOutcome::Respond),
        Route::Sitefile if request.is("GET") => {
            Ok(AdminOutcome::Respond(sitefile::read(site, request, &cors)))
        }
        Route::Sitefile => sitefile::reload(config, request, now, &cors).map(AdminOutcome::Reload),
        Route::PreviewShell => Ok(AdminOutcome::Respond(preview::shell(config, &cors))),
        Route::Preview(target) => {
            preview::parse(Some(target), &site.snapshot(), config, request, &cors)
                .map(AdminOutcome::Preview)
        }
        Route::Render => preview::parse(None, &site.snapshot(), config, request, &cors)
            .map(AdminOutcome::Preview),
        Route::Invoke(key) => {
            invoke::parse(Some(key), config, request, &cors).map(AdminOutcome::Invoke)
        }
        Route::InvokeBatch => invoke::parse(None, config, request, &cors).map(AdminOutcome::Invoke),
        Route::Liveness => Ok(AdminOutcome::Respond(AdminResponse::text(200, "OK", &cors))),
        Route::Purge => purge::purge(site, config, request, &cors).map(AdminOutcome::Purge),
        Route::PurgeLoaders => Ok(AdminOutcome::Respond(purge::purge_loaders(site, &cors))),
        Route::SpeculationRules => Ok(AdminOutcome::Respond(AdminResponse::speculation_rules(
            config.speculation_rules.as_deref().unwrap_or_default(),
            request.is("HEAD"),
            &cors,
        ))),
    };
    outcome.unwrap_or_else(|error| AdminOutcome::Respond(error.into_response(&cors)))
}

/// The answer of an admin handler called for a path no admin route takes (a host mounted it on
/// its own path): 404 `UNKNOWN_ROUTE`, with CORS.
pub fn unknown_route(request: &AdminRequest) -> AdminResponse {
    AdminError::new(
        AdminErrorCode::UnknownRoute,
        format!("Unknown admin route: {}", request.path),
    )
    .into_response(&Cors::for_request(request))
}
