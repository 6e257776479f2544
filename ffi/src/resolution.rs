//! `sitefile_resolution`: one page resolution, driven one call per loader round.

use crate::args::{handle, handle_mut, optional_text, out, text};
use crate::host::{CHost, optional_host, sitefile_host};
use crate::response::sitefile_response;
use crate::site::sitefile_site;
use crate::status::{Failure, Outcome, guard, guard_void, sitefile_status};
use crate::strings::{json_string, written};
use chrono::Utc;
use sitefile_core::{
    ErrorCode, Host, LoaderAnswer, NoHost, PageJsonFinish, Request, RequestForm, Resolution,
    ResolutionMisuse, Site, Step, Value, sections_from_json,
};
use std::ffi::c_char;

/// One page resolution. Not thread-safe: use it from one thread at a time (it may move
/// between threads between calls). It keeps what it needs of its site, so it stays valid after
/// `sitefile_site_free`. Free it with `sitefile_resolution_free`.
#[allow(non_camel_case_types)]
pub struct sitefile_resolution {
    resolution: Resolution,
    /// The page JSON job it finishes (`sitefile_page_json_resolve`), if any.
    page_json: PageJsonFinish,
}

impl sitefile_resolution {
    /// The C handle of a started resolution.
    pub(crate) fn boxed(resolution: Resolution) -> *mut sitefile_resolution {
        sitefile_resolution::boxed_with(resolution, PageJsonFinish::None)
    }

    /// The C handle of a started resolution that finishes `page_json`.
    pub(crate) fn boxed_with(
        resolution: Resolution,
        page_json: PageJsonFinish,
    ) -> *mut sitefile_resolution {
        Box::into_raw(Box::new(sitefile_resolution {
            resolution,
            page_json,
        }))
    }
}

/// A request from its JSON form (`RequestForm`); a bad one is `INVALID_REQUEST`. Without
/// `"now"` the request happens at the system clock's instant, as a Node host's does.
pub(crate) fn request_of(json: &str) -> Outcome<Request> {
    RequestForm::from_json(json)
        .and_then(|mut form| {
            form.now.get_or_insert_with(Utc::now);
            form.into_request()
        })
        .map_err(|e| Failure::of(&e))
}

/// Begins resolving the page for a request (`request_json`: `{"url", "method"?, "headers"?:
/// [[name, value]...], "cookies"?: [[name, value]...], "now"?: RFC 3339, "seed"?, "draws"?}`;
/// without `"now"` the request happens at the system clock's instant; `"seed"` (default 0) seeds
/// the request's random source, and `"draws"`, numbers in [0, 1), are what that source returns
/// first, in order, before its seeded draws: `"draws": [0.4]` puts a visitor's first
/// `random.ts` roll at 0.4, and a draw outside [0, 1) is `SITEFILE_STATUS_INVALID_REQUEST`). On success `*out_resolution` is the resolution, driven with `sitefile_resolution_next` and
/// `sitefile_resolution_provide` and freed with `sitefile_resolution_free`. A request that is
/// not JSON, or not of this shape, is `SITEFILE_STATUS_INVALID_REQUEST`. `host` (NULL: no
/// callbacks) answers the page's custom matchers, feature flags and dangling references: its
/// callbacks are called synchronously on this thread, during this call only.
///
/// # Safety
/// `site` is NULL or a live site; `request_json` is NULL or a NUL-terminated string; `host` is
/// NULL or a live host nothing registers on during the call; `out_resolution` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolve_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        begin(
            site,
            request_json,
            host,
            out_resolution,
            |site, request, host| Ok(site.resolve_page(request, host)),
        )
    }
}

/// Begins resolving one value for a request, like a page (`request_json` and `host` as for
/// `sitefile_resolve_begin`): `value_json` is a saved block (`{"__resolveType": "<name>"}`), a
/// section or a props object. Driven and freed as a page resolution; its `done` value is the
/// resolved value. A value that is not JSON is `SITEFILE_STATUS_INVALID_JSON`.
///
/// # Safety
/// As `sitefile_resolve_begin`; `value_json` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolve_value_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    value_json: *const c_char,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        begin(
            site,
            request_json,
            host,
            out_resolution,
            |site, request, host| {
                let value = value_of(value_json, "value_json")?;
                Ok(site.resolve_value(request, &value, host))
            },
        )
    }
}

/// Begins resolving the page for a request (`request_json` and `host` as for
/// `sitefile_resolve_begin`) with draft blocks laid over the content (`draft_json`: a JSON
/// object of blocks, `null` deletes one): seen by this resolution only, never cached. Driven
/// and freed as a page resolution. A draft that is not JSON is `SITEFILE_STATUS_INVALID_JSON`,
/// not an object `SITEFILE_STATUS_INVALID_CONTENT`.
///
/// # Safety
/// As `sitefile_resolve_begin`; `draft_json` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolve_draft_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    draft_json: *const c_char,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        begin(
            site,
            request_json,
            host,
            out_resolution,
            |site, request, host| {
                let draft = value_of(draft_json, "draft_json")?;
                let Some(blocks) = draft.as_object() else {
                    return Err(Failure::code(
                        ErrorCode::InvalidContent,
                        "the draft is not a JSON object of blocks",
                    ));
                };
                Ok(site.resolve_page_in_draft(request, blocks.entries(), host))
            },
        )
    }
}

/// The shared part of the `*_provide` calls: reads the answer — the failure `error` when it
/// is given, else the value `value_json` (none: `null`; not JSON: `INVALID_JSON`) — and hands
/// it to `provide` for call `id` of the handle `h` (`what` names it when NULL).
///
/// # Safety
/// `h` is NULL or a live handle no other thread is using; `value_json` and `error` are NULL or
/// NUL-terminated strings.
pub(crate) unsafe fn provide_to<T>(
    h: *mut T,
    what: &str,
    id: usize,
    value_json: *const c_char,
    error: *const c_char,
    provide: impl FnOnce(&mut T, usize, Result<Value, String>) -> Result<(), ResolutionMisuse>,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (h, value, error) = unsafe {
            (
                handle_mut(h, what)?,
                optional_text(value_json, "value_json")?,
                optional_text(error, "error")?,
            )
        };
        let value = match (error, value) {
            (None, Some(json)) => Some(Value::from_json_str(json).map_err(|e| Failure::of(&e))?),
            _ => None,
        };
        let answer = LoaderAnswer {
            id,
            value,
            error: error.map(str::to_string),
        };
        provide(h, id, answer.into_result()).map_err(|e| Failure::of(&e))
    })
}

/// A required JSON argument as a core value; text that is not JSON is `INVALID_JSON`.
///
/// # Safety
/// As [`text`].
unsafe fn value_of(p: *const c_char, what: &str) -> Outcome<Value> {
    // SAFETY: forwarded from the caller.
    let json = unsafe { text(p, what)? };
    Value::from_json_str(json).map_err(|e| Failure::of(&e))
}

/// The shared part of the `sitefile_resolve_*_begin` calls: reads the arguments, then starts
/// the resolution `start` makes with the host's callbacks (or none).
///
/// # Safety
/// As `sitefile_resolve_begin`.
pub(crate) unsafe fn begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
    start: impl FnOnce(&Site, Request, &dyn Host) -> Outcome<Resolution>,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_resolution, site, request, host) = unsafe {
            (
                out(out_resolution, "out_resolution")?,
                handle(site, "site")?,
                text(request_json, "request_json")?,
                optional_host(host),
            )
        };
        let request = request_of(request)?;
        let resolution = match host {
            Some(host) => start(&site.site, request, &CHost::new(host))?,
            None => start(&site.site, request, &NoHost)?,
        };
        *out_resolution = sitefile_resolution::boxed(resolution);
        Ok(())
    })
}

/// Runs the resolution as far as it can go and returns the next step as JSON in `*out_json`
/// (free with `sitefile_string_free`): `{"step":"needLoaders","value":[{"id","key","props"},
/// ...]}` — run those loaders, answer each with `sitefile_resolution_provide`, then call this
/// again — or `{"step":"done","value":<page>}` with the page and its effects (every error
/// recorded on the way — failed loaders, failing matchers and hooks — is in
/// `effects.errors`). After `done` the call is `SITEFILE_STATUS_FINISHED`.
///
/// # Safety
/// `res` is NULL or a live resolution no other thread is using; `out_json` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolution_next(
    res: *mut sitefile_resolution,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, res) =
            unsafe { (out(out_json, "out_json")?, handle_mut(res, "resolution")?) };
        let step = res.resolution.next(&NoHost).map_err(|e| Failure::of(&e))?;
        *out_json = written(Step::BUFFER_CAPACITY, |buffer| step.write_json(buffer));
        if let Step::Done(page) = step {
            res.page_json.page_resolved(page);
        }
        Ok(())
    })
}

/// Answers loader call `id` of the current round: with `error` (a message; the loader failed)
/// when it is not NULL, else with `value_json` (the loader's result as JSON; NULL is `null`).
/// An id never handed out is `SITEFILE_STATUS_UNKNOWN_CALL`, one answered before
/// `SITEFILE_STATUS_ALREADY_ANSWERED`, after `done` `SITEFILE_STATUS_FINISHED`.
///
/// # Safety
/// `res` is NULL or a live resolution no other thread is using; `value_json` and `error` are
/// NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolution_provide(
    res: *mut sitefile_resolution,
    id: usize,
    value_json: *const c_char,
    error: *const c_char,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        provide_to(
            res,
            "resolution",
            id,
            value_json,
            error,
            |res, id, answer| res.resolution.provide(id, answer),
        )
    }
}

/// The indexes of the finished page's sections whose props the page JSON body writes (the
/// sections whose section loaders, and `renderJson` projections, the host runs), as a JSON
/// array. Only for a resolution from `sitefile_page_json_resolve` that returned its page;
/// otherwise `SITEFILE_STATUS_INVALID_REQUEST`. Free the JSON with `sitefile_string_free`.
///
/// # Safety
/// `res` is NULL or a live resolution no other thread is using; `out_json` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolution_page_json_sections(
    res: *const sitefile_resolution,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, res) = unsafe { (out(out_json, "out_json")?, handle(res, "resolution")?) };
        let written = res.page_json.written_sections().ok_or_else(not_page_json)?;
        *out_json = json_string(&written)?;
        Ok(())
    })
}

/// The response of a page JSON resolution (`sitefile_page_json_resolve`) once it returned its
/// page; `sections_json` (NULL: as resolved) are the page's sections after their section
/// loaders ran, as the page has them. Finishes the job: a second call, or a resolution that is
/// not page JSON or not done, is `SITEFILE_STATUS_INVALID_REQUEST`.
///
/// # Safety
/// `res` is NULL or a live resolution no other thread is using; `sections_json` is NULL or
/// NUL-terminated; `out_response` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolution_page_json_response(
    res: *mut sitefile_resolution,
    sections_json: *const c_char,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, res, sections) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(res, "resolution")?,
                optional_text(sections_json, "sections_json")?,
            )
        };
        let sections = sections
            .map(|s| sections_from_json(s).map_err(|e| Failure::of(&e)))
            .transpose()?;
        // Not done yet, or not page JSON: left as it was.
        let response = res.page_json.finish(sections).ok_or_else(not_page_json)?;
        *out_response = sitefile_response::of_page_json(response)?;
        Ok(())
    })
}

/// The failure of a page JSON call on a resolution with no finished page JSON job.
fn not_page_json() -> Failure {
    Failure::code(
        ErrorCode::InvalidRequest,
        "not a finished page JSON resolution (sitefile_page_json_resolve, driven to its page)",
    )
}

/// Frees a resolution, finished or not. NULL is a no-op.
///
/// # Safety
/// `res` is NULL or a resolution from `sitefile_resolve_begin`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolution_free(res: *mut sitefile_resolution) {
    if res.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from Box::into_raw in sitefile_resolve_begin,
        // not freed before.
        drop(unsafe { Box::from_raw(res) });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolution_may_move_between_threads_and_a_site_is_shared() {
        fn send<T: Send>() {}
        fn send_sync<T: Send + Sync>() {}
        send::<sitefile_resolution>();
        send_sync::<sitefile_site>();
    }
}
