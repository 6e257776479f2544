//! The status every fallible call returns, and the thread's last error message.

use sitefile_core::{ErrorCode, HasErrorCode};
use std::cell::RefCell;
use std::ffi::{CString, c_char};

/// The result of a fallible call. `SITEFILE_STATUS_OK` is 0; the values 1 to 99 mirror the
/// core's stable error codes (the same codes as Node's `error.code` and the server's JSON
/// errors); 100 and up are the C boundary's own. Values never change once released.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum sitefile_status {
    /// The call succeeded.
    Ok = 0,
    /// A JSON text could not be parsed, or is nested too deeply (`INVALID_JSON`).
    InvalidJson = 1,
    /// Valid JSON of the wrong shape (`INVALID_CONTENT`).
    InvalidContent = 2,
    /// A request could not be built, or a time is out of range (`INVALID_REQUEST`).
    InvalidRequest = 3,
    /// A setup option or configuration variable holds an unusable value (`INVALID_CONFIG`).
    InvalidConfig = 4,
    /// No content was found where the host pointed (`NOT_FOUND`).
    NotFound = 5,
    /// Reading content failed for a reason other than its absence (`IO`).
    Io = 6,
    /// `provide` for a loader call that was never handed out (`UNKNOWN_CALL`).
    UnknownCall = 7,
    /// `provide` for a loader call answered before (`ALREADY_ANSWERED`).
    AlreadyAnswered = 8,
    /// `next` or `provide` after the resolution returned its page (`FINISHED`).
    Finished = 9,
    /// The host's hook refused a reload before the swap (`HOOK_FAILED`).
    HookFailed = 10,
    /// A required pointer argument was NULL.
    NullArgument = 100,
    /// A string argument was not valid UTF-8.
    InvalidUtf8 = 101,
    /// The library panicked; the call had no effect a caller can rely on. Report it as a bug.
    Panic = 102,
}

impl sitefile_status {
    /// Every status, in value order.
    pub(crate) const ALL: [sitefile_status; 14] = [
        sitefile_status::Ok,
        sitefile_status::InvalidJson,
        sitefile_status::InvalidContent,
        sitefile_status::InvalidRequest,
        sitefile_status::InvalidConfig,
        sitefile_status::NotFound,
        sitefile_status::Io,
        sitefile_status::UnknownCall,
        sitefile_status::AlreadyAnswered,
        sitefile_status::Finished,
        sitefile_status::HookFailed,
        sitefile_status::NullArgument,
        sitefile_status::InvalidUtf8,
        sitefile_status::Panic,
    ];

    /// The status of a core error code.
    pub fn of(code: ErrorCode) -> sitefile_status {
        match code {
            ErrorCode::InvalidJson => sitefile_status::InvalidJson,
            ErrorCode::InvalidContent => sitefile_status::InvalidContent,
            ErrorCode::InvalidRequest => sitefile_status::InvalidRequest,
            ErrorCode::InvalidConfig => sitefile_status::InvalidConfig,
            ErrorCode::NotFound => sitefile_status::NotFound,
            ErrorCode::Io => sitefile_status::Io,
            ErrorCode::UnknownCall => sitefile_status::UnknownCall,
            ErrorCode::AlreadyAnswered => sitefile_status::AlreadyAnswered,
            ErrorCode::Finished => sitefile_status::Finished,
            ErrorCode::HookFailed => sitefile_status::HookFailed,
        }
    }

    /// The status's stable name (a core code's text, or the boundary's own), NUL-terminated.
    pub fn name(self) -> &'static str {
        match self {
            sitefile_status::Ok => "OK\0",
            sitefile_status::InvalidJson => "INVALID_JSON\0",
            sitefile_status::InvalidContent => "INVALID_CONTENT\0",
            sitefile_status::InvalidRequest => "INVALID_REQUEST\0",
            sitefile_status::InvalidConfig => "INVALID_CONFIG\0",
            sitefile_status::NotFound => "NOT_FOUND\0",
            sitefile_status::Io => "IO\0",
            sitefile_status::UnknownCall => "UNKNOWN_CALL\0",
            sitefile_status::AlreadyAnswered => "ALREADY_ANSWERED\0",
            sitefile_status::Finished => "FINISHED\0",
            sitefile_status::HookFailed => "HOOK_FAILED\0",
            sitefile_status::NullArgument => "NULL_ARGUMENT\0",
            sitefile_status::InvalidUtf8 => "INVALID_UTF8\0",
            sitefile_status::Panic => "PANIC\0",
        }
    }
}

/// A failed call: its status and a readable message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: sitefile_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: sitefile_status, message: impl std::fmt::Display) -> Failure {
        Failure {
            status,
            message: message.to_string(),
        }
    }

    /// A core error: its code's status and its message.
    pub(crate) fn of(error: &dyn HasErrorCode) -> Failure {
        Failure::new(sitefile_status::of(error.code()), error)
    }

    pub(crate) fn code(code: ErrorCode, message: impl std::fmt::Display) -> Failure {
        Failure::new(sitefile_status::of(code), message)
    }
}

pub(crate) type Outcome<T> = Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // A message never holds NUL in practice; if one did, it would cut the C string short.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// The thread's last error message: valid until the next `sitefile_` call on this thread.
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    format!("sitefile panicked: {message}")
}

/// Runs one entry point: clears the thread's last error, stops a panic at the boundary
/// (`SITEFILE_STATUS_PANIC`), and records the message of a failure.
pub(crate) fn guard(f: impl FnOnce() -> Outcome<()>) -> sitefile_status {
    set_last_error("");
    // Nothing a caller can observe is left half-updated by a panic: a site's content swaps
    // atomically, and a resolution that panicked is only freed or asked again (the core then
    // answers for it), so asserting unwind safety holds.
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
            Err(Failure::new(
                sitefile_status::Panic,
                panic_message(&*payload),
            ))
        });
    match result {
        Ok(()) => sitefile_status::Ok,
        Err(failure) => {
            set_last_error(&failure.message);
            failure.status
        }
    }
}

/// Runs an infallible entry point (a `*_free`), stopping a panic at the boundary. It leaves
/// the thread's last error as it is, unless it panics (then the panic is the last error).
pub(crate) fn guard_void(f: impl FnOnce()) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        set_last_error(&panic_message(&*payload));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::ffi::CStr;

    #[test]
    fn every_core_code_has_a_status_named_by_its_text() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            let status = sitefile_status::of(code);
            assert_eq!(status.name().trim_end_matches('\0'), code.as_str());
            assert!((1..100).contains(&(status as i32)));
            assert!(seen.insert(status));
        }
        let names: HashSet<&str> = sitefile_status::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), sitefile_status::ALL.len());
        assert!(
            sitefile_status::ALL
                .iter()
                .all(|s| s.name().ends_with('\0'))
        );
    }

    #[test]
    fn a_panic_stops_at_the_boundary_with_its_message() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, sitefile_status::Panic);
        // SAFETY: last_error returns the thread's live, NUL-terminated message.
        let message = unsafe { CStr::from_ptr(last_error()) };
        assert_eq!(message.to_str().unwrap(), "sitefile panicked: boom");
        assert_eq!(guard(|| Ok(())), sitefile_status::Ok);
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(last_error()) }.to_bytes(), b"");
    }

    #[test]
    fn a_free_keeps_the_last_error_and_stops_its_own_panic() {
        assert_eq!(
            guard(|| Err(Failure::new(sitefile_status::NotFound, "gone"))),
            sitefile_status::NotFound
        );
        guard_void(|| {});
        // SAFETY: last_error returns the thread's live, NUL-terminated message.
        assert_eq!(unsafe { CStr::from_ptr(last_error()) }.to_bytes(), b"gone");
        guard_void(|| panic!("in a free"));
        // SAFETY: as above.
        let message = unsafe { CStr::from_ptr(last_error()) };
        assert_eq!(message.to_str().unwrap(), "sitefile panicked: in a free");
    }
}
