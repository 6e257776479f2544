//! `sitefile_page_json`: a `?renderJson` / `?asJson` request — answered by the core at once,
//! or a page resolution whose finished page the core turns into the response.

use crate::args::{handle, handle_mut, optional_bytes, optional_text, out, parse_json, text};
use crate::host::{CHost, optional_host, sitefile_host};
use crate::resolution::{request_of, sitefile_resolution};
use crate::response::sitefile_response;
use crate::site::sitefile_site;
use crate::status::{Failure, Outcome, guard, guard_void, sitefile_status};
use crate::strings::json_string;
use sitefile_core::{ErrorCode, NoHost, PageJsonFinish, PageJsonOutcome, Request, Site};
use std::ffi::c_char;
use std::sync::Arc;

/// What a page JSON request needs, and which call finishes it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum sitefile_page_json_kind {
    /// No page JSON request: what `sitefile_page_json_kind_of(NULL)` returns (as for a request
    /// that is not page JSON, whose `sitefile_page_json_begin` gives NULL), never the kind of a
    /// live request. Nothing to finish.
    None = -1,
    /// Answered without resolving (a preflight, a `__section` that is not an index):
    /// `sitefile_page_json_response`.
    Respond = 0,
    /// The page to resolve: `sitefile_page_json_resolve`, drive the resolution, then
    /// `sitefile_resolution_page_json_response`.
    Resolve = 1,
}

/// One page JSON request (`?renderJson`, `?asJson`). Not thread-safe: use it from one thread
/// at a time. It keeps what it needs of its site, so it stays valid after
/// `sitefile_site_free`. Finished once; free it with `sitefile_page_json_free`.
#[allow(non_camel_case_types)]
pub struct sitefile_page_json {
    site: Arc<Site>,
    request: Request,
    kind: sitefile_page_json_kind,
    /// `None` once finished.
    outcome: Option<PageJsonOutcome>,
}

impl sitefile_page_json {
    /// The outcome, taken when the request is of `kind` (`what` names the call in the
    /// message): another kind is `INVALID_REQUEST`, a finished request `FINISHED`.
    fn take(&mut self, kind: sitefile_page_json_kind, what: &str) -> Outcome<PageJsonOutcome> {
        if self.kind != kind {
            return Err(Failure::code(
                ErrorCode::InvalidRequest,
                format!(
                    "{what} does not finish a page JSON request of kind {:?}",
                    self.kind
                ),
            ));
        }
        self.outcome.take().ok_or_else(|| {
            Failure::code(
                ErrorCode::Finished,
                format!("{what}: this page JSON request was already finished"),
            )
        })
    }
}

/// Whether a request (`request_json`, the request form of `sitefile_resolve_begin`) is page
/// JSON and what to do: on success `*out_page_json` is the request, freed with
/// `sitefile_page_json_free`, or NULL (still `SITEFILE_STATUS_OK`) when it is not page JSON
/// (then plan it for the edge). Ask after the admin routes.
///
/// # Safety
/// `site` is NULL or a live site; `request_json` is NULL or NUL-terminated; `out_page_json` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    out_page_json: *mut *mut sitefile_page_json,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_page_json, site, request) = unsafe {
            (
                out(out_page_json, "out_page_json")?,
                handle(site, "site")?,
                text(request_json, "request_json")?,
            )
        };
        let request = request_of(request)?;
        if let Some(outcome) = site.site.page_json(&request) {
            let kind = match outcome {
                PageJsonOutcome::Respond(_) => sitefile_page_json_kind::Respond,
                PageJsonOutcome::Resolve(_) => sitefile_page_json_kind::Resolve,
            };
            *out_page_json = Box::into_raw(Box::new(sitefile_page_json {
                site: site.site.clone(),
                request,
                kind,
                outcome: Some(outcome),
            }));
        }
        Ok(())
    })
}

/// What the request needs, and so which call finishes it; `SITEFILE_PAGE_JSON_KIND_NONE` (-1,
/// no kind of a live request) for NULL.
///
/// # Safety
/// `page_json` is NULL or a live page JSON request.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_kind_of(
    page_json: *const sitefile_page_json,
) -> sitefile_page_json_kind {
    // SAFETY: the caller's promise, forwarded.
    unsafe { handle(page_json, "page_json") }.map_or(sitefile_page_json_kind::None, |p| p.kind)
}

/// The job of a `SITEFILE_PAGE_JSON_KIND_RESOLVE` request as JSON (`{"kind": "renderJson" |
/// "asJson", "section": <index> | null, "draftFetch": {"url", "timeoutMs", "maxBytes"}}`,
/// `draftFetch` only while a draft is to be fetched: see `sitefile_page_json_provide_draft`); NULL (still `SITEFILE_STATUS_OK`) for the other
/// kind or once finished. Free it with `sitefile_string_free`.
///
/// # Safety
/// `page_json` is NULL or a live page JSON request; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_job(
    page_json: *const sitefile_page_json,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, page_json) =
            unsafe { (out(out_json, "out_json")?, handle(page_json, "page_json")?) };
        if let Some(PageJsonOutcome::Resolve(job)) = &page_json.outcome {
            *out_json = json_string(job)?;
        }
        Ok(())
    })
}

/// The answer to the job's `draftFetch` (spec "Draft preview mode"): fetch its `url` bypassing
/// every cache and following no redirect (the core admitted this URL, not where it points),
/// within `timeoutMs` and `maxBytes`, before `sitefile_page_json_resolve`, and
/// pass the body read (`body_len` bytes), or `body` NULL when the fetch failed, answered other
/// than 2xx, or passed its timeout or size cap (the published page is answered then). The core
/// keeps the draft for the next requests. Nothing happens when the job fetches nothing.
///
/// # Safety
/// `page_json` is NULL or a live page JSON request; `body` is NULL or readable for `body_len`
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_provide_draft(
    page_json: *mut sitefile_page_json,
    body: *const u8,
    body_len: usize,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let page_json = unsafe { handle_mut(page_json, "page_json")? };
        // SAFETY: the caller's promise, forwarded.
        let body = unsafe { optional_bytes(body, body_len, "body")? };
        if let Some(PageJsonOutcome::Resolve(job)) = &mut page_json.outcome {
            page_json.site.page_json_draft_fetched(job, body);
        }
        Ok(())
    })
}

/// The response of a `SITEFILE_PAGE_JSON_KIND_RESPOND` request. Finishes it; the other kind is
/// `SITEFILE_STATUS_INVALID_REQUEST`, a second call `SITEFILE_STATUS_FINISHED`.
///
/// # Safety
/// `page_json` is NULL or a live page JSON request; `out_response` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_response(
    page_json: *mut sitefile_page_json,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, page_json) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(page_json, "page_json")?,
            )
        };
        if let PageJsonOutcome::Respond(response) = page_json.take(
            sitefile_page_json_kind::Respond,
            "sitefile_page_json_response",
        )? {
            *out_response = sitefile_response::of_page_json(response)?;
        }
        Ok(())
    })
}

/// Begins resolving the page of a `SITEFILE_PAGE_JSON_KIND_RESOLVE` request with `host`'s
/// callbacks (NULL: none), as `sitefile_resolve_begin` does; `dropped_json` (NULL: none) is a
/// JSON array of the section keys whose module exports `renderJson = false`. Drive the
/// resolution to its page, then read `sitefile_resolution_page_json_sections` and finish with
/// `sitefile_resolution_page_json_response`. Finishes this request (the resolution carries
/// the job on); the other kind is `SITEFILE_STATUS_INVALID_REQUEST`. On success
/// `*out_resolution` is freed with `sitefile_resolution_free`.
///
/// # Safety
/// `page_json` is NULL or a live page JSON request; `dropped_json` is NULL or NUL-terminated;
/// `host` is NULL or a live host nothing registers on during the call; `out_resolution` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_resolve(
    page_json: *mut sitefile_page_json,
    dropped_json: *const c_char,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_resolution, page_json, dropped, host) = unsafe {
            (
                out(out_resolution, "out_resolution")?,
                handle_mut(page_json, "page_json")?,
                optional_text(dropped_json, "dropped_json")?,
                optional_host(host),
            )
        };
        let dropped: Vec<String> =
            dropped.map_or(Ok(Vec::new()), |d| parse_json(d, "dropped sections"))?;
        let PageJsonOutcome::Resolve(job) = page_json.take(
            sitefile_page_json_kind::Resolve,
            "sitefile_page_json_resolve",
        )?
        else {
            return Ok(());
        };
        let request = page_json.request.clone();
        let site = &page_json.site;
        let resolution = match host {
            Some(host) => site.resolve_page_json(&job, request, &CHost::new(host)),
            None => site.resolve_page_json(&job, request, &NoHost),
        };
        *out_resolution =
            sitefile_resolution::boxed_with(resolution, PageJsonFinish::pending(job, dropped));
        Ok(())
    })
}

/// Frees a page JSON request, finished or not. NULL is a no-op.
///
/// # Safety
/// `page_json` is NULL or a request from `sitefile_page_json_begin`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_json_free(page_json: *mut sitefile_page_json) {
    if page_json.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `sitefile_page_json_begin`, not freed before.
        drop(unsafe { Box::from_raw(page_json) });
    });
}
