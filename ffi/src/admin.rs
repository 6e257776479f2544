//! `sitefile_admin`: the admin protocol. The site answers a request, or names the host work it
//! needs (a reload to apply, stored copies to purge, sections to render, loaders to invoke);
//! the host does that work and calls the matching `sitefile_admin_*` to finish the response.

use crate::args::{bytes, handle, handle_mut, optional_text, out, parse_json, text};
use crate::host::{CHost, optional_host, sitefile_host, sitefile_host_fn, swap_hook};
use crate::resolution::sitefile_resolution;
use crate::response::sitefile_response;
use crate::site::{instant, sitefile_site};
use crate::status::{Failure, Outcome, guard, guard_void, sitefile_status};
use crate::strings::json_string;
use chrono::{DateTime, Utc};
use sitefile_core::{
    AdminOutcome, AdminRequest, AdminResponse, ErrorCode, InvokeAnswer, InvokeResult, NoHost,
    RenderAnswer, Site,
};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// What an admin request needs from the host, and which call finishes it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum sitefile_admin_kind {
    /// No admin request: what `sitefile_admin_kind_of(NULL)` returns, never the kind of a live
    /// request. Nothing to finish.
    None = -1,
    /// Not an admin route: the host serves the request itself. Nothing to finish.
    Pass = 0,
    /// Answered: `sitefile_admin_response`.
    Respond = 1,
    /// A reload to apply: `sitefile_admin_apply_reload`.
    Reload = 2,
    /// Stored copies to delete from the host's edge cache (the job's `keys`), then
    /// `sitefile_admin_finish_purge`.
    Purge = 3,
    /// Sections to render: `sitefile_admin_resolve_preview`, render the page's sections, then
    /// `sitefile_admin_finish_preview`.
    Preview = 4,
    /// Loaders or actions to run (the job's `calls`), then `sitefile_admin_finish_invoke`.
    Invoke = 5,
}

/// One admin request in progress: what the site made of it, kept with what its job needs. Not
/// thread-safe: use it from one thread at a time. It keeps what it needs of its site, so it
/// stays valid after `sitefile_site_free`. Finished once; free it with `sitefile_admin_free`.
#[allow(non_camel_case_types)]
pub struct sitefile_admin {
    site: Arc<Site>,
    request: AdminRequest,
    now: DateTime<Utc>,
    kind: sitefile_admin_kind,
    outcome: Option<AdminOutcome>,
}

impl sitefile_admin {
    fn take(&mut self, call: &str) -> Outcome<AdminOutcome> {
        self.outcome.take().ok_or_else(|| {
            Failure::code(
                ErrorCode::Finished,
                format!("{call}: this admin request was already finished"),
            )
        })
    }

    fn wrong_kind(&mut self, call: &str, outcome: AdminOutcome) -> Failure {
        self.outcome = Some(outcome);
        Failure::code(
            ErrorCode::InvalidRequest,
            format!("{call} does not finish a {:?} admin request", self.kind),
        )
    }

    /// Finishes the request: `finish` answers the outcome it finishes and gives any other kind
    /// back, which leaves the request as it was. The response goes to `out_response`.
    fn finish(
        &mut self,
        call: &str,
        out_response: &mut *mut sitefile_response,
        finish: impl FnOnce(&Site, AdminOutcome) -> Result<AdminResponse, Box<AdminOutcome>>,
    ) -> Outcome<()> {
        let outcome = self.take(call)?;
        match finish(&self.site, outcome) {
            Ok(response) => {
                *out_response = sitefile_response::boxed(response)?;
                Ok(())
            }
            Err(other) => Err(self.wrong_kind(call, *other)),
        }
    }
}

fn kind_of(outcome: &AdminOutcome) -> sitefile_admin_kind {
    match outcome {
        AdminOutcome::Pass => sitefile_admin_kind::Pass,
        AdminOutcome::Respond(_) => sitefile_admin_kind::Respond,
        AdminOutcome::Reload(_) => sitefile_admin_kind::Reload,
        AdminOutcome::Purge(_) => sitefile_admin_kind::Purge,
        AdminOutcome::Preview(_) => sitefile_admin_kind::Preview,
        AdminOutcome::Invoke(_) => sitefile_admin_kind::Invoke,
    }
}

/// Hands an HTTP request to the site's admin protocol at `now_ms` (milliseconds since the Unix
/// epoch). `method` (`GET`, ...), `path` (percent-encoded as it arrived) and `query` (without
/// `?`; NULL or "" for none) are the request line; `headers_json` (NULL: none) its headers as
/// `[[name, value], ...]`; `body` (NULL when `body_len` is 0) its bytes. With `edge` set the
/// request is read as the edge worker serves it: only the purge routes are answered, unless
/// the site's worker options have `admin`. On success `*out_admin` says what the site made of
/// it (`sitefile_admin_kind`) and is freed with `sitefile_admin_free`.
///
/// # Safety
/// `site` is NULL or a live site; the strings are NULL or NUL-terminated; `body` is NULL or
/// readable for `body_len` bytes; `out_admin` is NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sitefile_admin_begin(
    site: *const sitefile_site,
    method: *const c_char,
    path: *const c_char,
    query: *const c_char,
    headers_json: *const c_char,
    body: *const u8,
    body_len: usize,
    now_ms: i64,
    edge: bool,
    out_admin: *mut *mut sitefile_admin,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_admin, site, method, path, query, headers) = unsafe {
            (
                out(out_admin, "out_admin")?,
                handle(site, "site")?,
                text(method, "method")?,
                text(path, "path")?,
                optional_text(query, "query")?,
                optional_text(headers_json, "headers_json")?,
            )
        };
        let body = match body_len {
            0 => Vec::new(),
            // SAFETY: the caller's promise, forwarded.
            len => unsafe { bytes(body, len, "body")? }.to_vec(),
        };
        let request = AdminRequest {
            method: method.to_string(),
            path: path.to_string(),
            query: query.unwrap_or_default().to_string(),
            headers: headers.map_or(Ok(Vec::new()), |h| parse_json(h, "headers"))?,
            body,
        };
        let now = instant(now_ms)?;
        let outcome = if edge {
            site.site.handle_edge_admin(&request, now)
        } else {
            site.site.handle_admin(&request, now)
        };
        *out_admin = Box::into_raw(Box::new(sitefile_admin {
            site: site.site.clone(),
            request,
            now,
            kind: kind_of(&outcome),
            outcome: Some(outcome),
        }));
        Ok(())
    })
}

/// What the site made of the request, and so which call finishes it; `SITEFILE_ADMIN_KIND_NONE`
/// (-1, no kind of a live request) for NULL.
///
/// # Safety
/// `admin` is NULL or a live admin request.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_kind_of(
    admin: *const sitefile_admin,
) -> sitefile_admin_kind {
    // SAFETY: the caller's promise, forwarded.
    unsafe { handle(admin, "admin") }.map_or(sitefile_admin_kind::None, |a| a.kind)
}

/// The host work of the request as JSON: for a purge `{"keys": [...]}` (the stored copies to
/// delete), for a preview `{"component", "block", "props", "path", "deviceHint", "overlay"}`, for
/// an invoke `{"shape", "calls": [{"alias", "key", "props"}], "select"}`; NULL (still
/// `SITEFILE_STATUS_OK`) for the other kinds. Free it with `sitefile_string_free`.
///
/// # Safety
/// `admin` is NULL or a live admin request; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_job(
    admin: *const sitefile_admin,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, admin) = unsafe { (out(out_json, "out_json")?, handle(admin, "admin")?) };
        *out_json = match &admin.outcome {
            Some(AdminOutcome::Purge(job)) => {
                json_string(&serde_json::json!({"keys": job.keys()}))?
            }
            Some(AdminOutcome::Preview(job)) => json_string(job)?,
            Some(AdminOutcome::Invoke(job)) => json_string(job)?,
            _ => std::ptr::null_mut(),
        };
        Ok(())
    })
}

/// The response of a `SITEFILE_ADMIN_KIND_RESPOND` request. Finishes it.
///
/// # Safety
/// `admin` is NULL or a live admin request; `out_response` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_response(
    admin: *mut sitefile_admin,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, admin) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(admin, "admin")?,
            )
        };
        admin.finish(
            "sitefile_admin_response",
            out_response,
            |_, outcome| match outcome {
                AdminOutcome::Respond(response) => Ok(response),
                other => Err(Box::new(other)),
            },
        )
    })
}

/// Applies a `SITEFILE_ADMIN_KIND_RELOAD` request and gives its response; `hook` (NULL: none) is the
/// Fast Deploy hook, as for `sitefile_site_reload_with_hook`. A refused body is a 400 response
/// and a refusing hook a 503, both with the content unchanged. Finishes the request.
///
/// # Safety
/// `admin` is NULL or a live admin request; `out_response` is NULL or writable; `hook`, when
/// not NULL, may be called with `user_data` during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_apply_reload(
    admin: *mut sitefile_admin,
    hook: sitefile_host_fn,
    user_data: *mut c_void,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, admin) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(admin, "admin")?,
            )
        };
        admin.finish(
            "sitefile_admin_apply_reload",
            out_response,
            |site, outcome| match outcome {
                AdminOutcome::Reload(job) => Ok(job.apply(site, &mut swap_hook(hook, user_data))),
                other => Err(Box::new(other)),
            },
        )
    })
}

/// The response of a `SITEFILE_ADMIN_KIND_PURGE` request, once the host deleted the job's `keys`
/// from its edge cache. Finishes it.
///
/// # Safety
/// `admin` is NULL or a live admin request; `out_response` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_finish_purge(
    admin: *mut sitefile_admin,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, admin) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(admin, "admin")?,
            )
        };
        admin.finish(
            "sitefile_admin_finish_purge",
            out_response,
            |_, outcome| match outcome {
                AdminOutcome::Purge(job) => Ok(job.finish()),
                other => Err(Box::new(other)),
            },
        )
    })
}

/// Begins resolving what a `SITEFILE_ADMIN_KIND_PREVIEW` request shows (its path, device and overlay
/// applied), with `host`'s callbacks (NULL: none): drive it like a page resolution; its page's
/// `sections` are what to render. The request stays unfinished. On success `*out_resolution`
/// is freed with `sitefile_resolution_free`.
///
/// # Safety
/// `admin` is NULL or a live admin request; `host` is NULL or a live host nothing registers on
/// during the call; `out_resolution` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_resolve_preview(
    admin: *const sitefile_admin,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_resolution, admin, host) = unsafe {
            (
                out(out_resolution, "out_resolution")?,
                handle(admin, "admin")?,
                optional_host(host),
            )
        };
        let Some(AdminOutcome::Preview(job)) = &admin.outcome else {
            return Err(Failure::code(
                ErrorCode::InvalidRequest,
                format!(
                    "sitefile_admin_resolve_preview does not take a {:?} admin request",
                    admin.kind
                ),
            ));
        };
        let resolution = match host {
            Some(host) => {
                admin
                    .site
                    .resolve_preview(job, &admin.request, admin.now, &CHost::new(host))
            }
            None => admin
                .site
                .resolve_preview(job, &admin.request, admin.now, &NoHost),
        }
        .map_err(|e| Failure::of(&e))?;
        *out_resolution = sitefile_resolution::boxed(resolution);
        Ok(())
    })
}

/// The HTML response of a `SITEFILE_ADMIN_KIND_PREVIEW` request from the host's render
/// (`render_json`: `{"sections": [{"key", "html"} | {"key", "error"}]}`, or `{"error":
/// message}` when rendering failed as a whole). Finishes it.
///
/// # Safety
/// `admin` is NULL or a live admin request; `render_json` is NULL or a NUL-terminated string;
/// `out_response` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_finish_preview(
    admin: *mut sitefile_admin,
    render_json: *const c_char,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, admin, render) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(admin, "admin")?,
                text(render_json, "render_json")?,
            )
        };
        let answer: RenderAnswer = parse_json(render, "render answer")?;
        admin.finish(
            "sitefile_admin_finish_preview",
            out_response,
            |_, outcome| match outcome {
                AdminOutcome::Preview(job) => Ok(job.finish(answer.into_result())),
                other => Err(Box::new(other)),
            },
        )
    })
}

/// The response of a `SITEFILE_ADMIN_KIND_INVOKE` request from the host's results, one per call of
/// the job in order (`results_json`: `[{"value"} | {"unknown": true} | {"error", "stack"?}]`),
/// and the headers the calls wrote (`headers_json`, NULL: none, `[[name, value], ...]`).
/// Finishes it.
///
/// # Safety
/// `admin` is NULL or a live admin request; the strings are NULL or NUL-terminated;
/// `out_response` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_finish_invoke(
    admin: *mut sitefile_admin,
    results_json: *const c_char,
    headers_json: *const c_char,
    out_response: *mut *mut sitefile_response,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_response, admin, results, headers) = unsafe {
            (
                out(out_response, "out_response")?,
                handle_mut(admin, "admin")?,
                text(results_json, "results_json")?,
                optional_text(headers_json, "headers_json")?,
            )
        };
        let answers: Vec<InvokeAnswer> = parse_json(results, "invoke results")?;
        let headers: Vec<(String, String)> =
            headers.map_or(Ok(Vec::new()), |h| parse_json(h, "headers"))?;
        let results = answers.into_iter().map(InvokeResult::from).collect();
        admin.finish(
            "sitefile_admin_finish_invoke",
            out_response,
            |_, outcome| match outcome {
                AdminOutcome::Invoke(job) => Ok(job.finish(results, headers)),
                other => Err(Box::new(other)),
            },
        )
    })
}

/// Frees an admin request, finished or not. NULL is a no-op.
///
/// # Safety
/// `admin` is NULL or an admin request from `sitefile_admin_begin`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_admin_free(admin: *mut sitefile_admin) {
    if admin.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `sitefile_admin_begin`, not freed before.
        drop(unsafe { Box::from_raw(admin) });
    });
}
