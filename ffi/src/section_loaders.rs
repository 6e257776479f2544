//! `sitefile_section_loaders`: the section loaders of a resolved page's sections, driven one
//! call per round like a page resolution.

use crate::args::{handle, handle_mut, out, parse_json, text};
use crate::resolution::{provide_to, request_of};
use crate::site::sitefile_site;
use crate::status::{Failure, guard, guard_void, sitefile_status};
use crate::strings::json_string;
use sitefile_core::{SectionLoaderRun, sections_from_json};
use std::ffi::c_char;

/// One run of section loaders. Not thread-safe: use it from one thread at a time (it may move
/// between threads between calls). It keeps what it needs of its site, so it stays valid
/// after `sitefile_site_free`. Free it with `sitefile_section_loaders_free`.
#[allow(non_camel_case_types)]
pub struct sitefile_section_loaders {
    run: SectionLoaderRun,
}

/// Begins running the section loaders of a page's sections (`sections_json`: the sections as
/// the finished page has them, `[{"component", "props"?, "deferred"?}, ...]`) for a request
/// (`request_json`, the request form of `sitefile_resolve_begin`); `with_loaders_json` is a
/// JSON array of the section keys whose module exports a loader. Sections that are not JSON
/// are `SITEFILE_STATUS_INVALID_JSON`, as are keys that are not an array of strings. On success
/// `*out_run` is driven with `sitefile_section_loaders_next` and
/// `sitefile_section_loaders_provide` and freed with `sitefile_section_loaders_free`.
///
/// # Safety
/// `site` is NULL or a live site; the strings are NULL or NUL-terminated; `out_run` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_section_loaders_begin(
    site: *const sitefile_site,
    request_json: *const c_char,
    sections_json: *const c_char,
    with_loaders_json: *const c_char,
    out_run: *mut *mut sitefile_section_loaders,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_run, site, request, sections, with_loaders) = unsafe {
            (
                out(out_run, "out_run")?,
                handle(site, "site")?,
                text(request_json, "request_json")?,
                text(sections_json, "sections_json")?,
                text(with_loaders_json, "with_loaders_json")?,
            )
        };
        let request = request_of(request)?;
        let sections = sections_from_json(sections).map_err(|e| Failure::of(&e))?;
        let with_loaders = parse_json(with_loaders, "section keys with loaders")?;
        let run = site
            .site
            .run_section_loaders(&request, sections, with_loaders);
        *out_run = Box::into_raw(Box::new(sitefile_section_loaders { run }));
        Ok(())
    })
}

/// Runs the section loaders as far as they can go and returns the next step as JSON in
/// `*out_json` (free with `sitefile_string_free`): `{"step":"needLoaders","value":[{"id",
/// "key","props"}, ...]}` (a call's `key` is the section key) — run those loaders, answer each
/// with `sitefile_section_loaders_provide`, then call this again — or `{"step":"done",
/// "value":{"sections", "effects"}}`. After `done` the call is `SITEFILE_STATUS_FINISHED`.
///
/// # Safety
/// `run` is NULL or a live run no other thread is using; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_section_loaders_next(
    run: *mut sitefile_section_loaders,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, run) = unsafe { (out(out_json, "out_json")?, handle_mut(run, "run")?) };
        let step = run.run.next().map_err(|e| Failure::of(&e))?;
        *out_json = json_string(&step)?;
        Ok(())
    })
}

/// The third argument every section loader of this run gets, as JSON in `*out_json` (free
/// with `sitefile_string_free`): `{"device": "mobile" | "tablet" | "desktop"}`, what the
/// reference passes as `ctx` to `loader(props, request, ctx)`.
///
/// # Safety
/// `run` is NULL or a live run no other thread is using; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_section_loaders_context(
    run: *const sitefile_section_loaders,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, run) = unsafe { (out(out_json, "out_json")?, handle(run, "run")?) };
        *out_json = json_string(&run.run.context())?;
        Ok(())
    })
}

/// Answers section loader call `id` of the current round: with `error` (a message; the loader
/// failed and the section keeps its props) when it is not NULL, else with `value_json` (the
/// section's new props as JSON; NULL is `null`). An id never handed out is
/// `SITEFILE_STATUS_UNKNOWN_CALL`, one answered before `SITEFILE_STATUS_ALREADY_ANSWERED`,
/// after `done` `SITEFILE_STATUS_FINISHED`.
///
/// # Safety
/// `run` is NULL or a live run no other thread is using; `value_json` and `error` are NULL or
/// NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_section_loaders_provide(
    run: *mut sitefile_section_loaders,
    id: usize,
    value_json: *const c_char,
    error: *const c_char,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        provide_to(run, "run", id, value_json, error, |run, id, answer| {
            run.run.provide(id, answer)
        })
    }
}

/// Frees a run of section loaders, finished or not. NULL is a no-op.
///
/// # Safety
/// `run` is NULL or a run from `sitefile_section_loaders_begin`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_section_loaders_free(run: *mut sitefile_section_loaders) {
    if run.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `sitefile_section_loaders_begin`, not freed
        // before.
        drop(unsafe { Box::from_raw(run) });
    });
}
