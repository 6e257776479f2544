//! `sitefile_edge_plan`: the edge's decision for one request, then the decision once the origin
//! answered and how to serve a stored copy — the core's edge forms as JSON.

use crate::args::{handle, optional_text, out, parse_json, text};
use crate::resolution::request_of;
use crate::site::sitefile_site;
use crate::status::{Failure, Outcome, guard, guard_void, sitefile_status};
use crate::strings::json_string;
use sitefile_core::{EdgeHints, EdgePlan, OriginAnswer, OriginOutcome, Request, Site};
use std::ffi::c_char;
use std::sync::Arc;

/// The edge plan of one request. Read it from any number of threads at once; it keeps what it
/// needs of its site, so it stays valid after `sitefile_site_free`. Free it with
/// `sitefile_edge_plan_free`.
#[allow(non_camel_case_types)]
pub struct sitefile_edge_plan {
    site: Arc<Site>,
    plan: EdgePlan,
}

/// The site, request and hints of an edge call (`sitefile_edge_plan_new`,
/// `sitefile_edge_exchange_new`): the request form of `sitefile_resolve_begin`, and hints that
/// are NULL (none) or `{"segment"?, "profile"?, "nonce"?}`.
///
/// # Safety
/// `site` is NULL or a live site; the strings are NULL or NUL-terminated.
pub(crate) unsafe fn edge_request<'a>(
    site: *const sitefile_site,
    request_json: *const c_char,
    hints_json: *const c_char,
) -> Outcome<(&'a sitefile_site, Request, EdgeHints)> {
    // SAFETY: the caller's promises, forwarded.
    let (site, request, hints) = unsafe {
        (
            handle(site, "site")?,
            text(request_json, "request_json")?,
            optional_text(hints_json, "hints_json")?,
        )
    };
    let hints = hints.map_or(Ok(EdgeHints::default()), |h| parse_json(h, "edge hints"))?;
    Ok((site, request_of(request)?, hints))
}

/// Plans a request at the edge (`request_json`: the request form of `sitefile_resolve_begin`)
/// with the answers of the site's own functions (`hints_json`, NULL: none — `{"segment"?: what
/// buildSegment returned, "profile"?: what detectProfile returned, "nonce"?: [16 random
/// bytes]}`). An unknown profile is `SITEFILE_STATUS_INVALID_CONFIG`. On success `*out_plan`
/// is freed with `sitefile_edge_plan_free`.
///
/// # Safety
/// `site` is NULL or a live site; the strings are NULL or NUL-terminated; `out_plan` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_plan_new(
    site: *const sitefile_site,
    request_json: *const c_char,
    hints_json: *const c_char,
    out_plan: *mut *mut sitefile_edge_plan,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_plan, (site, request, hints)) = unsafe {
            (
                out(out_plan, "out_plan")?,
                edge_request(site, request_json, hints_json)?,
            )
        };
        let plan = site
            .site
            .edge_plan_with(&request, &hints)
            .map_err(|e| Failure::of(&e))?;
        *out_plan = Box::into_raw(Box::new(sitefile_edge_plan {
            site: site.site.clone(),
            plan,
        }));
        Ok(())
    })
}

/// The plan as JSON: `{"action": "redirect"|"asset"|"bypass"|"cache", "status", "key",
/// "profile", "cacheable", "reason", "draft", "headers": [[name, value]...], "originHeaders":
/// [[name, value]...]}`. Free it with `sitefile_string_free`.
///
/// # Safety
/// `plan` is NULL or a live plan; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_plan_json(
    plan: *const sitefile_edge_plan,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, plan) = unsafe { (out(out_json, "out_json")?, handle(plan, "plan")?) };
        *out_json = json_string(&plan.plan)?;
        Ok(())
    })
}

/// The decision once the origin answered (`origin_json`: `{"status", "headers": [[name,
/// value]...]}`): the response headers (the plan's merged with the origin's), `originStatus`,
/// `storeHeaders` (null: do not store), `storeMaxAge` (seconds the stored copy may be served)
/// and `evict` (stored keys to delete). A stored key is recorded for purges. Free the JSON with
/// `sitefile_string_free`. An origin header that is not a valid HTTP field (a name that is not
/// an HTTP token; a value holding CR, LF, NUL or another control character but tab, which could
/// split the visitor's response) is refused as malformed: `SITEFILE_STATUS_INVALID_JSON`, the
/// last error naming the header, nothing recorded; answer the visitor 502 Bad Gateway, as a
/// proxy does for an invalid upstream response.
///
/// # Safety
/// `plan` is NULL or a live plan; `origin_json` is NULL or NUL-terminated; `out_json` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_after_origin(
    plan: *const sitefile_edge_plan,
    origin_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, plan, origin) = unsafe {
            (
                out(out_json, "out_json")?,
                handle(plan, "plan")?,
                text(origin_json, "origin_json")?,
            )
        };
        let origin: OriginAnswer = parse_json(origin, "origin answer")?;
        *out_json = json_string(&plan.site.after_origin(&plan.plan, &origin))?;
        Ok(())
    })
}

/// How to serve a stored copy of the plan's key that is `age_secs` old: `{"state":
/// "HIT"|"STALE"|"STALE-ERROR"|"MISS", "headers": [[name, value]...]}`. Before asking the origin
/// pass `asked_origin` false (then `origin_json` is ignored). Once the origin was asked, pass
/// `asked_origin` true and its answer (`{"status", "headers"}`), or NULL when it could not be
/// reached: a failed origin (a 5xx or 429, no answer, a degraded page) within the profile's
/// stale-if-error window is `STALE-ERROR`. Its headers are read as by
/// `sitefile_edge_after_origin` (an invalid field is `SITEFILE_STATUS_INVALID_JSON`). Free the
/// JSON with `sitefile_string_free`.
///
/// # Safety
/// `plan` is NULL or a live plan; `origin_json` is NULL or NUL-terminated; `out_json` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_stored_copy(
    plan: *const sitefile_edge_plan,
    age_secs: u64,
    asked_origin: bool,
    origin_json: *const c_char,
    out_json: *mut *mut c_char,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (out_json, plan, origin) = unsafe {
            (
                out(out_json, "out_json")?,
                handle(plan, "plan")?,
                optional_text(origin_json, "origin_json")?,
            )
        };
        let outcome = match (asked_origin, origin) {
            (false, _) => None,
            (true, Some(o)) => Some(parse_json::<OriginAnswer>(o, "origin answer")?.outcome()),
            (true, None) => Some(OriginOutcome {
                status: None,
                degraded: false,
            }),
        };
        *out_json = json_string(
            &plan
                .site
                .stored_copy(&plan.plan, age_secs, outcome.as_ref()),
        )?;
        Ok(())
    })
}

/// Frees a plan. NULL is a no-op.
///
/// # Safety
/// `plan` is NULL or a plan from `sitefile_edge_plan_new`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_edge_plan_free(plan: *mut sitefile_edge_plan) {
    if plan.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `sitefile_edge_plan_new`, not freed before.
        drop(unsafe { Box::from_raw(plan) });
    });
}
