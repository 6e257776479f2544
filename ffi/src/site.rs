//! `sitefile_site`: one site — its content, setup and reloads.

use crate::args::{bytes, count_out, handle, optional_text, out, parse_json, text};
use crate::host::{sitefile_host_fn, swap_hook};
use crate::status::{Failure, Outcome, guard, guard_void, sitefile_status};
use crate::strings::{json_string, owned_string};
use chrono::{DateTime, Utc};
use sitefile_core::{ErrorCode, MatcherSchema, Schema, Site, SiteSetup};
use std::ffi::{c_char, c_void};
use std::path::Path;
use std::sync::Arc;

/// One site: its content and setup. Thread-safe: any number of threads may use one site at
/// once (resolve, reload, read), and a reload swaps the content atomically — a resolution sees
/// the old or the new revision, never a mix. Free it with `sitefile_site_free` once no call on
/// it is running; resolutions begun from it stay valid after it is freed.
#[allow(non_camel_case_types)]
pub struct sitefile_site {
    pub(crate) site: Arc<Site>,
}

/// The setup from its JSON text; NULL is the default setup (`{}`).
fn setup_of(json: Option<&str>) -> Outcome<SiteSetup> {
    SiteSetup::from_json(json.unwrap_or("{}")).map_err(|e| Failure::of(&e))
}

fn boxed(site: Site) -> *mut sitefile_site {
    Box::into_raw(Box::new(sitefile_site {
        site: Arc::new(site),
    }))
}

/// A new site serving the content map (bundle) `bundle`.
fn from_bundle_bytes(bundle: Vec<u8>, setup: Option<&str>) -> Outcome<*mut sitefile_site> {
    let snapshot = sitefile_core::load_bundle(bundle).map_err(|e| Failure::of(&e))?;
    let site = Site::new(snapshot, setup_of(setup)?).map_err(|e| Failure::of(&e))?;
    Ok(boxed(site))
}

/// Creates a site from a site directory (`.platform/blocks/`, `blocks/`, a directory of block
/// files, or `.platform/blocks.gen.json`) with `setup_json` (the setup's JSON form; NULL for
/// the default setup). On success `*out_site` is the new site, freed with `sitefile_site_free`.
///
/// # Safety
/// `dir` and `setup_json` are NULL or NUL-terminated strings; `out_site` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_from_dir(
    dir: *const c_char,
    setup_json: *const c_char,
    out_site: *mut *mut sitefile_site,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_site, dir, setup) = unsafe {
            (
                out(out_site, "out_site")?,
                text(dir, "dir")?,
                optional_text(setup_json, "setup_json")?,
            )
        };
        let loaded = sitefile_site_dir::load(Path::new(dir)).map_err(|e| Failure::of(&e))?;
        let site = Site::new(loaded.snapshot, setup_of(setup)?).map_err(|e| Failure::of(&e))?;
        *out_site = boxed(site);
        Ok(())
    })
}

/// Creates a site serving a content map (`content_json`: a JSON object of blocks) with
/// `setup_json` (NULL for the default setup). On success `*out_site` is the new site, freed with
/// `sitefile_site_free`.
///
/// # Safety
/// `content_json` and `setup_json` are NULL or NUL-terminated strings; `out_site` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_from_content(
    content_json: *const c_char,
    setup_json: *const c_char,
    out_site: *mut *mut sitefile_site,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_site, content, setup) = unsafe {
            (
                out(out_site, "out_site")?,
                text(content_json, "content_json")?,
                optional_text(setup_json, "setup_json")?,
            )
        };
        *out_site = from_bundle_bytes(content.as_bytes().to_vec(), setup)?;
        Ok(())
    })
}

/// Creates a site from a bundle in memory: `bundle_len` bytes of a `blocks.gen.json` (what
/// `sitefile bundle` writes; a JSON object of blocks), e.g. embedded in the host's binary or
/// mapped from a file, with `setup_json` (NULL for the default setup). The bytes are copied; the
/// caller keeps them. On success `*out_site` is the new site, freed with `sitefile_site_free`.
///
/// # Safety
/// `bundle` is NULL or readable for `bundle_len` bytes; `setup_json` is NULL or a
/// NUL-terminated string; `out_site` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_from_bundle(
    bundle: *const u8,
    bundle_len: usize,
    setup_json: *const c_char,
    out_site: *mut *mut sitefile_site,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_site, bundle, setup) = unsafe {
            (
                out(out_site, "out_site")?,
                bytes(bundle, bundle_len, "bundle")?,
                optional_text(setup_json, "setup_json")?,
            )
        };
        *out_site = from_bundle_bytes(bundle.to_vec(), setup)?;
        Ok(())
    })
}

/// Frees a site. NULL is a no-op. No call on the site may be running.
///
/// # Safety
/// `site` is NULL or a site from `sitefile_site_from_*`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_free(site: *mut sitefile_site) {
    if site.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `boxed` (Box::into_raw), not freed before.
        drop(unsafe { Box::from_raw(site) });
    });
}

/// Applies a reload body (`body_len` bytes of JSON: a delta `{"blocks": {...}}` or a full
/// content map) at `now_ms` (milliseconds since the Unix epoch, the time the reload records).
/// On success `*out_json` is the reload response as JSON (free with `sitefile_string_free`).
/// A refused body changes nothing: the previous content keeps serving. The same as
/// `sitefile_site_reload_with_hook` without a hook (`kvWritten: false`).
///
/// # Safety
/// `site` is NULL or a live site; `body` is NULL or readable for `body_len` bytes; `out_json`
/// is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_reload(
    site: *const sitefile_site,
    body: *const u8,
    body_len: usize,
    now_ms: i64,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        sitefile_site_reload_with_hook(
            site,
            body,
            body_len,
            now_ms,
            None,
            std::ptr::null_mut(),
            out_json,
        )
    }
}

/// Applies a reload body as `sitefile_site_reload` does, with the Fast Deploy hook: under the
/// site's single-writer lock, before the new content serves, `hook` (NULL: none) is called on
/// this thread with `user_data` and the new revision. It answers `sitefile_answer_bool`
/// (whether it wrote the snapshot to the deployment's key-value store: the response's
/// `kvWritten`) or `sitefile_answer_error`, which refuses the reload
/// (`SITEFILE_STATUS_HOOK_FAILED`, the content unchanged). Only one reload of a site runs its
/// hook at a time.
///
/// # Safety
/// As `sitefile_site_reload`; `hook`, when not NULL, may be called with `user_data` during the
/// call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_reload_with_hook(
    site: *const sitefile_site,
    body: *const u8,
    body_len: usize,
    now_ms: i64,
    hook: sitefile_host_fn,
    user_data: *mut c_void,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, site, body) = unsafe {
            (
                out(out_json, "out_json")?,
                handle(site, "site")?,
                bytes(body, body_len, "body")?,
            )
        };
        let now = instant(now_ms)?;
        let response = site
            .site
            .reload_with(body, now, &mut swap_hook(hook, user_data))
            .map_err(|e| Failure::of(&e))?;
        *out_json = json_string(&response)?;
        Ok(())
    })
}

/// An instant from milliseconds since the Unix epoch.
pub(crate) fn instant(ms: i64) -> Outcome<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp_millis(ms).ok_or_else(|| {
        Failure::code(
            ErrorCode::InvalidRequest,
            format!("the time {ms} is out of range"),
        )
    })
}

/// The content revision serving now: on success `*out_revision` is a string (free with
/// `sitefile_string_free`).
///
/// # Safety
/// `site` is NULL or a live site; `out_revision` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_revision(
    site: *const sitefile_site,
    out_revision: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_revision, site) =
            unsafe { (out(out_revision, "out_revision")?, handle(site, "site")?) };
        *out_revision = owned_string(site.site.revision().as_bytes())?;
        Ok(())
    })
}

/// One block of the content as JSON: on success `*out_json` is the block (free with
/// `sitefile_string_free`), or NULL when the content has no block by that name (still
/// `SITEFILE_STATUS_OK`).
///
/// # Safety
/// `site` is NULL or a live site; `name` is NULL or a NUL-terminated string; `out_json` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_block(
    site: *const sitefile_site,
    name: *const c_char,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, site, name) = unsafe {
            (
                out(out_json, "out_json")?,
                handle(site, "site")?,
                text(name, "name")?,
            )
        };
        if let Some(block) = site.site.snapshot().block(name) {
            *out_json = json_string(block)?;
        }
        Ok(())
    })
}

/// The shared part of the count calls: `*out_count` is what `of` reads from the site.
///
/// # Safety
/// `site` is NULL or a live site; `out_count` is NULL or writable.
unsafe fn count(
    site: *const sitefile_site,
    out_count: *mut usize,
    of: impl FnOnce(&Site) -> usize,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_count, site) =
            unsafe { (count_out(out_count, "out_count")?, handle(site, "site")?) };
        *out_count = of(&site.site);
        Ok(())
    })
}

/// How many blocks the content serving now has: on success `*out_count` is the count.
///
/// # Safety
/// `site` is NULL or a live site; `out_count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_block_count(
    site: *const sitefile_site,
    out_count: *mut usize,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe { count(site, out_count, |site| site.snapshot().len()) }
}

/// How many entries the site's loader cache holds now: on success `*out_count` is the count.
///
/// # Safety
/// `site` is NULL or a live site; `out_count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_loader_cache_entries(
    site: *const sitefile_site,
    out_count: *mut usize,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        count(site, out_count, |site| {
            site.runtime().loader_cache().stats().entries
        })
    }
}

/// How many stored edge keys a purge can reach (the purge index's entries): on success
/// `*out_count` is the count.
///
/// # Safety
/// `site` is NULL or a live site; `out_count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_edge_cache_entries(
    site: *const sitefile_site,
    out_count: *mut usize,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe { count(site, out_count, |site| site.purge_index().len()) }
}

/// How many origin requests lead a flight of collapsed misses now (see
/// `sitefile_edge_exchange_new`): on success `*out_count` is the count.
///
/// # Safety
/// `site` is NULL or a live site; `out_count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_edge_flights_in_air(
    site: *const sitefile_site,
    out_count: *mut usize,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe { count(site, out_count, |site| site.edge_flights_in_air()) }
}

/// Purges a target (`/path` or `/path?query`) from the edge: on success `*out_json` is the
/// stored keys the host deletes from its edge cache, as a JSON array of strings (free with
/// `sitefile_string_free`); they leave the purge index.
///
/// # Safety
/// `site` is NULL or a live site; `target` is NULL or a NUL-terminated string; `out_json` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_purge(
    site: *const sitefile_site,
    target: *const c_char,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, site, target) = unsafe {
            (
                out(out_json, "out_json")?,
                handle(site, "site")?,
                text(target, "target")?,
            )
        };
        *out_json = json_string(&site.site.purge(target))?;
        Ok(())
    })
}

/// Empties the site's loader cache (what `/_cache/purge-loaders` does).
///
/// # Safety
/// `site` is NULL or a live site.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_purge_loaders(
    site: *const sitefile_site,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promise, forwarded.
        let site = unsafe { handle(site, "site")? };
        site.site.purge_loaders();
        Ok(())
    })
}

/// Sets the schema `/live/_meta` serves: `schema_json`, the generated meta document, with the
/// custom matchers made selectable (`matchers_json`, NULL: none — `[{"key", "title",
/// "namespace", "propsSchema"?}]`); replaces an earlier one. A schema that is not JSON is
/// `SITEFILE_STATUS_INVALID_JSON`, one that is not a meta document
/// `SITEFILE_STATUS_INVALID_CONTENT`, matchers of the wrong shape
/// `SITEFILE_STATUS_INVALID_CONFIG`.
///
/// # Safety
/// `site` is NULL or a live site; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_site_set_schema(
    site: *const sitefile_site,
    schema_json: *const c_char,
    matchers_json: *const c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (site, schema, matchers) = unsafe {
            (
                handle(site, "site")?,
                text(schema_json, "schema_json")?,
                optional_text(matchers_json, "matchers_json")?,
            )
        };
        let matchers: Vec<MatcherSchema> = match matchers {
            Some(m) => parse_json(m, "matcher schemas")
                .map_err(|f| Failure::code(ErrorCode::InvalidConfig, f.message))?,
            None => Vec::new(),
        };
        let schema = Schema::composed(schema.as_bytes(), &matchers).map_err(|e| Failure::of(&e))?;
        site.site.set_schema(schema);
        Ok(())
    })
}
