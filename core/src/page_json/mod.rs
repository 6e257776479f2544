//! Page JSON: a page URL with `?renderJson` or `?asJson` answers the resolved page as JSON
//! (reference §5.10). The edge asks after admin routes, purges and content redirects, before
//! `proxyHandler`, assets and the cache; a redirect of the path wins, so the question may also
//! come first.
//!
//! Core recognises the request ([`PageJsonOutcome`]): a preflight is answered at once; for a
//! `GET` the host resolves the page like any other and hands it back to
//! [`PageJsonJob::finish`], which builds the body, headers, `ETag`, 304 and 404. What only the
//! host can know — a section module exporting `renderJson = false`, or a `renderJson`
//! projection function — comes back with the page: the dropped keys as data, projections
//! applied to the props before finishing.

mod as_json;
mod cors;
mod finish;
mod job;
mod recognize;
mod render_json;
mod secrets;

#[cfg(feature = "internals")]
pub use cors::{PAGE_JSON_ALLOW_HEADERS, PAGE_JSON_ALLOW_METHODS};
pub use finish::PageJsonFinish;
pub(crate) use job::PageJsonFacts;
#[cfg(feature = "internals")]
pub use job::RENDER_JSON_CACHE_CONTROL;
pub use job::{PageJsonJob, PageJsonOutcome, PageJsonResponse};
#[cfg(feature = "internals")]
pub use recognize::{AS_JSON_PARAM, PageJsonKind, RENDER_JSON_PARAM, SECTION_PARAM};
pub(crate) use secrets::SecretTexts;

use crate::edge::{RedirectTable, WorkerOptions};
use crate::request::Request;
use recognize::{Asked, recognize};
use std::sync::Arc;

/// What page JSON does with `request` under `options`; `None`: it is not page JSON (not asked
/// for, its option off, a method other than `GET` and `OPTIONS`, or a path `redirects` moves).
/// `facts` is called only when a page must be resolved.
pub(crate) fn outcome(
    request: &Request,
    options: &WorkerOptions,
    redirects: &RedirectTable,
    facts: impl FnOnce() -> Arc<PageJsonFacts>,
) -> Option<PageJsonOutcome> {
    let asked = recognize(request, options)?;
    if redirects.lookup(request.url()).is_some() {
        return None;
    }
    let cors = cors::cors_headers(&options.page_json_cors, request.header("origin"));
    Some(match asked {
        Asked::Preflight => PageJsonOutcome::Respond(PageJsonResponse::preflight(&cors)),
        Asked::Page {
            kind,
            section: Some(None),
        } => PageJsonOutcome::Respond(PageJsonResponse::not_found(kind, &cors)),
        Asked::Page { kind, section } => {
            let if_none_match = request
                .headers()
                .iter()
                .filter(|(n, _)| n == "if-none-match")
                .map(|(_, v)| v.clone())
                .collect();
            let url = request.url();
            let target = match url.query() {
                Some(q) => format!("{}?{q}", url.path()),
                None => url.path().to_string(),
            };
            PageJsonOutcome::Resolve(PageJsonJob::new(
                kind,
                section.flatten(),
                if_none_match,
                cors,
                target,
                facts(),
            ))
        }
    })
}
