//! Arguments in, results out: C pointers to Rust references and owned strings, with the
//! boundary's own statuses (NULL, invalid UTF-8).

use crate::status::{Failure, Outcome, sitefile_status};
use sitefile_core::ErrorCode;
use std::ffi::{CStr, c_char};

/// A required NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Outcome<&'a str> {
    if p.is_null() {
        return Err(Failure::new(
            sitefile_status::NullArgument,
            format!("{what} is NULL"),
        ));
    }
    // SAFETY: non-NULL, and the caller promises a NUL-terminated string living for 'a.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|e| {
        Failure::new(
            sitefile_status::InvalidUtf8,
            format!("{what} is not valid UTF-8: {e}"),
        )
    })
}

/// A required byte buffer argument of `len` bytes.
///
/// # Safety
/// `p` is NULL or readable for `len` bytes that live for `'a`.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Outcome<&'a [u8]> {
    if p.is_null() {
        return Err(Failure::new(
            sitefile_status::NullArgument,
            format!("{what} is NULL"),
        ));
    }
    // SAFETY: non-NULL, and the caller promises `len` readable bytes living for 'a.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// An optional byte buffer argument of `len` bytes: NULL is `None`.
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn optional_bytes<'a>(
    p: *const u8,
    len: usize,
    what: &str,
) -> Outcome<Option<&'a [u8]>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise, forwarded.
    unsafe { bytes(p, len, what) }.map(Some)
}

/// An optional string argument: NULL is `None`.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn optional_text<'a>(p: *const c_char, what: &str) -> Outcome<Option<&'a str>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded from the caller.
    unsafe { text(p, what) }.map(Some)
}

/// A required out-parameter, set to NULL before anything else happens.
///
/// # Safety
/// `p` is NULL or valid for writes of a pointer, for `'a`.
pub(crate) unsafe fn out<'a, T>(p: *mut *mut T, what: &str) -> Outcome<&'a mut *mut T> {
    // SAFETY: the caller promises a NULL or writable pointer.
    let Some(slot) = (unsafe { p.as_mut() }) else {
        return Err(Failure::new(
            sitefile_status::NullArgument,
            format!("{what} is NULL"),
        ));
    };
    *slot = std::ptr::null_mut();
    Ok(slot)
}

/// A required handle argument.
///
/// # Safety
/// `p` is NULL or a live handle of type `T` that no other thread mutates for `'a`.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> Outcome<&'a T> {
    // SAFETY: the caller promises NULL or a live handle.
    unsafe { p.as_ref() }
        .ok_or_else(|| Failure::new(sitefile_status::NullArgument, format!("{what} is NULL")))
}

/// A required handle argument used mutably.
///
/// # Safety
/// `p` is NULL or a live handle of type `T` that nothing else uses for `'a`.
pub(crate) unsafe fn handle_mut<'a, T>(p: *mut T, what: &str) -> Outcome<&'a mut T> {
    // SAFETY: the caller promises NULL or a live, unshared handle.
    unsafe { p.as_mut() }
        .ok_or_else(|| Failure::new(sitefile_status::NullArgument, format!("{what} is NULL")))
}

/// A JSON argument read as `T`; bad JSON, or JSON of another shape, is `INVALID_JSON` naming
/// `what`.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(json: &str, what: &str) -> Outcome<T> {
    serde_json::from_str(json)
        .map_err(|e| Failure::code(ErrorCode::InvalidJson, format!("invalid {what}: {e}")))
}

/// A required out-parameter holding a count, set to 0 before anything else happens.
///
/// # Safety
/// `p` is NULL or valid for writes of a `usize`, for `'a`.
pub(crate) unsafe fn count_out<'a>(p: *mut usize, what: &str) -> Outcome<&'a mut usize> {
    // SAFETY: the caller promises a NULL or writable pointer.
    let Some(slot) = (unsafe { p.as_mut() }) else {
        return Err(Failure::new(
            sitefile_status::NullArgument,
            format!("{what} is NULL"),
        ));
    };
    *slot = 0;
    Ok(slot)
}
