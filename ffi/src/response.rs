//! `sitefile_response`: an HTTP response the library wrote (an admin route's answer).

use crate::args::handle;
use crate::status::{Failure, Outcome, guard_void};
use sitefile_core::{AdminResponse, ErrorCode, PageJsonResponse};
use std::ffi::{CString, c_char};
use std::sync::Arc;

/// A finished HTTP response: status, headers and body. Read it from any thread; free it with
/// `sitefile_response_free`. What its accessors return lives as long as the response.
#[allow(non_camel_case_types)]
pub struct sitefile_response {
    status: u16,
    /// `[[name, value], ...]` in order (a name may repeat: `Set-Cookie`).
    headers: CString,
    /// Shared with the core: a content or schema body is not copied.
    body: Arc<[u8]>,
}

impl sitefile_response {
    /// The C handle of a core response.
    pub(crate) fn boxed(response: AdminResponse) -> Outcome<*mut sitefile_response> {
        let headers = serde_json::to_vec(&response.headers)
            .map_err(|e| Failure::code(ErrorCode::InvalidContent, e))?;
        let headers = CString::new(headers).map_err(|_| {
            Failure::code(ErrorCode::InvalidContent, "a NUL byte in a response header")
        })?;
        Ok(Box::into_raw(Box::new(sitefile_response {
            status: response.status,
            headers,
            body: response.body,
        })))
    }

    /// The C handle of a page JSON response.
    pub(crate) fn of_page_json(response: PageJsonResponse) -> Outcome<*mut sitefile_response> {
        sitefile_response::boxed(AdminResponse {
            status: response.status,
            headers: response.headers,
            body: response.body.into(),
        })
    }
}

/// The response's HTTP status; 0 for NULL.
///
/// # Safety
/// `response` is NULL or a live response.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_response_status(response: *const sitefile_response) -> u16 {
    // SAFETY: the caller's promise, forwarded.
    unsafe { handle(response, "response") }.map_or(0, |r| r.status)
}

/// The response's headers as JSON, `[[name, value], ...]` in order (a name may repeat); NULL
/// for a NULL response. Owned by the response: never free it.
///
/// # Safety
/// `response` is NULL or a live response.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_response_headers(
    response: *const sitefile_response,
) -> *const c_char {
    // SAFETY: the caller's promise, forwarded.
    unsafe { handle(response, "response") }.map_or(std::ptr::null(), |r| r.headers.as_ptr())
}

/// The response's body: its bytes (not NUL-terminated; may hold any byte) and, through
/// `out_len` when it is not NULL, their count (0 for 204 and 304). NULL for a NULL response.
/// Owned by the response: never free it.
///
/// # Safety
/// `response` is NULL or a live response; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_response_body(
    response: *const sitefile_response,
    out_len: *mut usize,
) -> *const u8 {
    // SAFETY: the caller's promises, forwarded.
    let (response, out_len) = unsafe { (handle(response, "response").ok(), out_len.as_mut()) };
    if let Some(len) = out_len {
        *len = response.map_or(0, |r| r.body.len());
    }
    response.map_or(std::ptr::null(), |r| r.body.as_ptr())
}

/// Frees a response. NULL is a no-op.
///
/// # Safety
/// `response` is NULL or a response from this library, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_response_free(response: *mut sitefile_response) {
    if response.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from `boxed` (Box::into_raw), not freed before.
        drop(unsafe { Box::from_raw(response) });
    });
}
