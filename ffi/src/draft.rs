//! `sitefile_page_draft`: what rendering a page request's draft needs (spec "Draft preview
//! mode") — nothing, the draft the core keeps, or a fetch the host performs and hands back.

use crate::args::{handle, handle_mut, optional_bytes, out, text};
use crate::host::sitefile_host;
use crate::resolution::{begin, request_of, sitefile_resolution};
use crate::site::sitefile_site;
use crate::status::{guard, guard_void, sitefile_status};
use crate::strings::json_string;
use sitefile_core::{DraftSource, Site};
use std::ffi::c_char;
use std::sync::Arc;

/// The draft of one page request. Not thread-safe: use it from one thread at a time. It keeps
/// what it needs of its site, so it stays valid after `sitefile_site_free`. Free it with
/// `sitefile_page_draft_free`.
#[allow(non_camel_case_types)]
pub struct sitefile_page_draft {
    site: Arc<Site>,
    source: DraftSource,
}

/// What rendering the draft of a page request (`request_json`, the request form of
/// `sitefile_resolve_begin`) needs, in `*out_draft` (freed with `sitefile_page_draft_free`):
/// published content unless its host may preview (`PLATFORM_ALLOWED_PREVIEW_HOSTS` or the Site
/// block's `previewHosts`) and it names a draft (`?__draft=`, the `__platform_draft` cookie, or
/// the `x-platform-draft` header when `trust_forwarded_header`, set only behind a front that
/// strips client copies of it) that `PLATFORM_PREVIEW_API_DOMAINS` admits. Then read
/// `sitefile_page_draft_fetch`, perform that fetch, hand the body to
/// `sitefile_page_draft_provide`, and resolve with `sitefile_resolve_page_draft_begin`.
///
/// # Safety
/// `site` is NULL or a live site; `request_json` is NULL or NUL-terminated; `out_draft` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_draft_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    trust_forwarded_header: bool,
    out_draft: *mut *mut sitefile_page_draft,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_draft, site, request) = unsafe {
            (
                out(out_draft, "out_draft")?,
                handle(site, "site")?,
                text(request_json, "request_json")?,
            )
        };
        let request = request_of(request)?;
        let source = site.site.page_draft(&request, trust_forwarded_header);
        *out_draft = Box::into_raw(Box::new(sitefile_page_draft {
            site: site.site.clone(),
            source,
        }));
        Ok(())
    })
}

/// The fetch to perform for the draft as JSON in `*out_json` (`{"url", "timeoutMs",
/// "maxBytes"}`; free with `sitefile_string_free`), or NULL (still `SITEFILE_STATUS_OK`) when
/// there is none: no draft, or the core has it. Fetch `url` bypassing every cache and following
/// no redirect, within `timeoutMs` and `maxBytes`.
///
/// # Safety
/// `draft` is NULL or a live draft; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_draft_fetch(
    draft: *const sitefile_page_draft,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, draft) = unsafe { (out(out_json, "out_json")?, handle(draft, "draft")?) };
        if let DraftSource::Fetch(fetch) = &draft.source {
            *out_json = json_string(fetch)?;
        }
        Ok(())
    })
}

/// The answer to the draft's fetch: the body read (`body_len` bytes), or `body` NULL when the
/// fetch failed, answered other than 2xx, or passed its timeout or size cap (the page is then
/// the published one). The core keeps a draft it was handed for the next requests. Nothing
/// happens when there was no fetch to perform.
///
/// # Safety
/// `draft` is NULL or a live draft no other thread is using; `body` is NULL or readable for
/// `body_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_draft_provide(
    draft: *mut sitefile_page_draft,
    body: *const u8,
    body_len: usize,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let draft = unsafe { handle_mut(draft, "draft")? };
        // SAFETY: the caller's promise, forwarded.
        let body = unsafe { optional_bytes(body, body_len, "body")? };
        if let DraftSource::Fetch(fetch) = &draft.source {
            draft.source = draft.site.draft_fetched(fetch, body);
        }
        Ok(())
    })
}

/// Begins resolving the page for a request (`request_json` and `host` as for
/// `sitefile_resolve_begin`) over `draft` when the core has it (seen by this resolution only,
/// never cached), else over the published content. Driven and freed as a page resolution.
///
/// # Safety
/// As `sitefile_resolve_begin`; `draft` is NULL or a live draft.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_resolve_page_draft_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    draft: *const sitefile_page_draft,
    host: *const sitefile_host,
    out_resolution: *mut *mut sitefile_resolution,
) -> sitefile_status {
    // SAFETY: the caller's promises (the draft's included, read in the closure), forwarded.
    unsafe {
        begin(
            site,
            request_json,
            host,
            out_resolution,
            |site, request, host| {
                let draft = handle(draft, "draft")?;
                Ok(match &draft.source {
                    DraftSource::Ready(ready) => {
                        site.resolve_page_in_draft(request, ready.blocks(), host)
                    }
                    _ => site.resolve_page(request, host),
                })
            },
        )
    }
}

/// Frees a page request's draft. NULL is a no-op.
///
/// # Safety
/// `draft` is NULL or a draft from `sitefile_page_draft_begin`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_page_draft_free(draft: *mut sitefile_page_draft) {
    if draft.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `sitefile_page_draft_begin`, not freed before.
        drop(unsafe { Box::from_raw(draft) });
    });
}
