//! Errors thrown to JS: an `Error` whose `code` is the core's stable code, or `PANIC`.

use sitefile_core::{ErrorCode, HasErrorCode};

/// The `code` of a thrown JS error: a core [`ErrorCode`]'s text, or `PANIC`.
pub struct Code(&'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

// napi-derive recognises a fallible export by the literal `Result` in its signature, so the
// exports spell it out; this alias is for the helpers.
pub(crate) type JsResult<T> = Result<T, napi::Error<Code>>;

pub(crate) fn fail(code: ErrorCode, message: impl std::fmt::Display) -> napi::Error<Code> {
    napi::Error::new(Code(code.as_str()), message.to_string())
}

pub(crate) fn thrown(error: &dyn HasErrorCode) -> napi::Error<Code> {
    fail(error.code(), error)
}

/// Runs `f`, turning a panic into a thrown `Error` with code `PANIC`. (napi-derive's own
/// `catch_unwind` needs unwind-safe captures, which `&mut self` and the site's locks are not;
/// nothing here is left half-updated by a panic that JS could observe, so the assertion holds.)
pub(crate) fn guarded<T>(f: impl FnOnce() -> JsResult<T>) -> JsResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("panic in the sitefile addon");
        Err(napi::Error::new(
            Code("PANIC"),
            format!("sitefile addon panicked: {message}"),
        ))
    })
}
