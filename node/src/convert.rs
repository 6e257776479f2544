//! Conversions between the addon's JS-facing forms and the core's: JSON text in and out, header
//! lists, request forms, instants, and JSON text as a one-byte JS string. Every binding module
//! converts through here.

#[cfg(not(target_family = "wasm"))]
mod latin1;

use crate::error::{JsResult, fail, thrown};
use chrono::{DateTime, Utc};
use napi::{Env, JsString};
use sitefile_core::{ErrorCode, Request, RequestForm};

/// A value of `T` from JSON text; `what` names it in the error.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> JsResult<T> {
    serde_json::from_str(text)
        .map_err(|e| fail(ErrorCode::InvalidJson, format!("invalid {what}: {e}")))
}

/// A value as JSON text.
pub(crate) fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> JsResult<String> {
    serde_json::to_string(value).map_err(|e| fail(ErrorCode::InvalidContent, e))
}

/// Alternating names and values as pairs; an odd list is refused.
pub(crate) fn header_pairs(flat: Vec<String>) -> JsResult<Vec<(String, String)>> {
    if !flat.len().is_multiple_of(2) {
        return Err(fail(
            ErrorCode::InvalidRequest,
            "headers must alternate names and values",
        ));
    }
    let mut pairs = Vec::with_capacity(flat.len() / 2);
    let mut items = flat.into_iter();
    while let (Some(name), Some(value)) = (items.next(), items.next()) {
        pairs.push((name, value));
    }
    Ok(pairs)
}

/// Pairs as alternating names and values.
pub(crate) fn flat_headers(pairs: &[(String, String)]) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|(n, v)| [n.clone(), v.clone()])
        .collect()
}

/// A request from its JSON form (`RequestForm`).
pub(crate) fn request_of(form: &str) -> JsResult<Request> {
    RequestForm::from_json(form)
        .and_then(RequestForm::into_request)
        .map_err(|e| thrown(&e))
}

/// An instant from JS milliseconds since the epoch; not finite or out of range is refused.
pub(crate) fn instant(ms: f64) -> JsResult<DateTime<Utc>> {
    if !ms.is_finite() {
        return Err(fail(
            ErrorCode::InvalidRequest,
            "the time is not a finite number",
        ));
    }
    DateTime::from_timestamp_millis(ms as i64).ok_or_else(|| {
        fail(
            ErrorCode::InvalidRequest,
            format!("the time {ms} is out of range"),
        )
    })
}

/// JSON text (UTF-8) as a JS string. Natively a one-byte (Latin-1) string (`latin1`), which V8
/// copies as is and parses faster; on the WebAssembly engine the UTF-8 itself, which emnapi
/// decodes with `TextDecoder` (its Latin-1 strings are built a byte at a time, about 20× slower
/// for a page).
pub(crate) fn js_json<'env>(env: &'env Env, utf8: &[u8]) -> JsResult<JsString<'env>> {
    #[cfg(not(target_family = "wasm"))]
    let made = env.create_string_latin1(latin1::latin1_json(utf8));
    #[cfg(target_family = "wasm")]
    let made = env
        .create_string(std::str::from_utf8(utf8).map_err(|e| fail(ErrorCode::InvalidContent, e))?);
    made.map_err(|e| fail(ErrorCode::InvalidContent, e))
}
