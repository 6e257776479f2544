//! The C ABI of sitefile (`include/sitefile.h`): conversion and ownership over the core's
//! `Site`, nothing else.
//!
//! Conventions (see the header's comments and decisions CABI-1 to CABI-5 and CABI-8):
//! - every fallible call returns a [`sitefile_status`] and writes its results through
//!   out-parameters, which it sets to NULL first; on failure `sitefile_last_error()` holds a
//!   readable message;
//! - strings the library returns are NUL-terminated UTF-8 owned by the caller and freed only
//!   with [`sitefile_string_free`]; every handle has a `*_free` where NULL is a no-op;
//! - every entry point stops panics at the boundary (`SITEFILE_STATUS_PANIC`);
//! - host callbacks ([`sitefile_host`]) are C function pointers with a `void *user_data`,
//!   called synchronously during `sitefile_resolve_begin` and bridged to the core's `Host`.

// A C boundary is unsafe by nature: `extern "C"` entry points take raw pointers from the host.
// Every `unsafe` block says why it holds (`clippy::undocumented_unsafe_blocks`), and every
// exported function's `# Safety` section says what the caller must give it.
#![allow(unsafe_code)]

mod admin;
mod args;
mod draft;
mod edge;
mod exchange;
mod host;
mod page_json;
mod resolution;
mod response;
mod section_loaders;
mod site;
mod status;
mod strings;

pub use admin::{
    sitefile_admin, sitefile_admin_apply_reload, sitefile_admin_begin,
    sitefile_admin_finish_invoke, sitefile_admin_finish_preview, sitefile_admin_finish_purge,
    sitefile_admin_free, sitefile_admin_job, sitefile_admin_kind, sitefile_admin_kind_of,
    sitefile_admin_resolve_preview, sitefile_admin_response,
};
pub use draft::{
    sitefile_page_draft, sitefile_page_draft_begin, sitefile_page_draft_fetch,
    sitefile_page_draft_free, sitefile_page_draft_provide, sitefile_resolve_page_draft_begin,
};
pub use edge::{
    sitefile_edge_after_origin, sitefile_edge_plan, sitefile_edge_plan_free,
    sitefile_edge_plan_json, sitefile_edge_plan_new, sitefile_edge_stored_copy,
};
pub use exchange::{
    sitefile_edge_exchange, sitefile_edge_exchange_answer,
    sitefile_edge_exchange_followed_flight_landed, sitefile_edge_exchange_free,
    sitefile_edge_exchange_new, sitefile_edge_exchange_next, sitefile_edge_exchange_take_refresh,
};
pub use host::{
    sitefile_answer, sitefile_answer_bool, sitefile_answer_error, sitefile_answer_json,
    sitefile_answer_string, sitefile_host, sitefile_host_fn, sitefile_host_free, sitefile_host_new,
    sitefile_host_register_matcher, sitefile_host_set_dangling_reference,
    sitefile_host_set_feature_flags, sitefile_matcher_fn,
};
pub use page_json::{
    sitefile_page_json, sitefile_page_json_begin, sitefile_page_json_free, sitefile_page_json_job,
    sitefile_page_json_kind, sitefile_page_json_kind_of, sitefile_page_json_provide_draft,
    sitefile_page_json_resolve, sitefile_page_json_response,
};
pub use resolution::{
    sitefile_resolution, sitefile_resolution_free, sitefile_resolution_next,
    sitefile_resolution_page_json_response, sitefile_resolution_page_json_sections,
    sitefile_resolution_provide, sitefile_resolve_begin, sitefile_resolve_draft_begin,
    sitefile_resolve_value_begin,
};
pub use response::{
    sitefile_response, sitefile_response_body, sitefile_response_free, sitefile_response_headers,
    sitefile_response_status,
};
pub use section_loaders::{
    sitefile_section_loaders, sitefile_section_loaders_begin, sitefile_section_loaders_context,
    sitefile_section_loaders_free, sitefile_section_loaders_next, sitefile_section_loaders_provide,
};
pub use site::{
    sitefile_site, sitefile_site_block, sitefile_site_block_count,
    sitefile_site_edge_cache_entries, sitefile_site_edge_flights_in_air, sitefile_site_free,
    sitefile_site_from_bundle, sitefile_site_from_content, sitefile_site_from_dir,
    sitefile_site_loader_cache_entries, sitefile_site_purge, sitefile_site_purge_loaders,
    sitefile_site_reload, sitefile_site_reload_with_hook, sitefile_site_revision,
    sitefile_site_set_schema,
};
pub use status::sitefile_status;

use std::ffi::{c_char, c_int};

/// The major version of the library this header was generated from.
pub const SITEFILE_VERSION_MAJOR: u32 = 0;
/// The minor version of the library this header was generated from.
pub const SITEFILE_VERSION_MINOR: u32 = 1;
/// The patch version of the library this header was generated from.
pub const SITEFILE_VERSION_PATCH: u32 = 0;

/// The version of the loaded library, `"MAJOR.MINOR.PATCH"` (static; never free it). Compare
/// it with the `SITEFILE_VERSION_*` macros to detect a header/library mismatch.
#[unsafe(no_mangle)]
pub extern "C" fn sitefile_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The message of the last failed `sitefile_` call on this thread, or `""` after a call
/// returning a status that succeeded (the `*_free` calls leave it as it is). Never NULL. Owned
/// by the library: valid until the next `sitefile_` call on this thread; copy it to keep it.
#[unsafe(no_mangle)]
pub extern "C" fn sitefile_last_error() -> *const c_char {
    status::last_error()
}

/// The stable name of a status value (`"OK"`, `"INVALID_JSON"`, ..., `"PANIC"`), or
/// `"UNKNOWN"` for a value that is none of them. Static; never free it.
#[unsafe(no_mangle)]
pub extern "C" fn sitefile_status_name(status: c_int) -> *const c_char {
    sitefile_status::ALL
        .iter()
        .find(|s| **s as c_int == status)
        .map_or("UNKNOWN\0", |s| s.name())
        .as_ptr()
        .cast()
}

/// The length in bytes of a string the library handed over to be freed with
/// `sitefile_string_free` (its bytes before the NUL), without scanning it: what `strlen`
/// answers, at once, however long the string (a page runs to tens of KB). 0 for NULL. Not for
/// the strings the library keeps (`sitefile_version`, `sitefile_status_name`,
/// `sitefile_last_error`, `sitefile_response_headers`).
///
/// # Safety
/// `s` is NULL or a string a `sitefile_` call wrote to an out-parameter for the caller to free
/// with `sitefile_string_free`, not freed since.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_string_len(s: *const c_char) -> usize {
    if s.is_null() {
        return 0;
    }
    // SAFETY: the caller passes a string the library returned (made by `strings`), not freed.
    unsafe { strings::len(s) }
}

/// Frees a string the library handed over through an out-parameter (a step, a page, a
/// response, a revision, a block, ...). NULL is a no-op. Never pass a string the library did
/// not hand over, one it keeps (`sitefile_version`, `sitefile_status_name`,
/// `sitefile_last_error`, `sitefile_response_headers`), or one already freed.
///
/// # Safety
/// `s` is NULL or a string a `sitefile_` call wrote to an out-parameter for the caller to free,
/// not freed since.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    status::guard_void(|| {
        // SAFETY: the caller passes a string the library returned (every one is made by
        // `strings`), not freed since.
        unsafe { strings::free(s) };
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn the_version_macros_match_the_crate_version() {
        let major: u32 = env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap();
        let minor: u32 = env!("CARGO_PKG_VERSION_MINOR").parse().unwrap();
        let patch: u32 = env!("CARGO_PKG_VERSION_PATCH").parse().unwrap();
        assert_eq!(
            (
                SITEFILE_VERSION_MAJOR,
                SITEFILE_VERSION_MINOR,
                SITEFILE_VERSION_PATCH
            ),
            (major, minor, patch)
        );
        // SAFETY: sitefile_version returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(sitefile_version()) };
        assert_eq!(
            version.to_str().unwrap(),
            format!("{major}.{minor}.{patch}")
        );
    }

    #[test]
    fn status_names_cover_unknown_values() {
        let name = |v| {
            // SAFETY: sitefile_status_name returns static NUL-terminated strings.
            unsafe { CStr::from_ptr(sitefile_status_name(v)) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name(0), "OK");
        assert_eq!(name(9), "FINISHED");
        assert_eq!(name(102), "PANIC");
        assert_eq!(name(-1), "UNKNOWN");
    }
}
