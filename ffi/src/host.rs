//! `sitefile_host`: the C host's callbacks (custom matchers, the feature-flag adapter, the
//! dangling-reference hook), bridged to the core's `Host` trait. Conversion only: what a
//! callback's answer means is the core's business.

use crate::args::{handle_mut, optional_text, out, text};
use crate::status::{Failure, guard, guard_void, sitefile_status};
use sitefile_core::{FeatureFlagAdapter, Host, MatcherContext, Snapshot, Value};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

/// A custom matcher: called with the matcher's `key`, its rule as JSON (`rule_json`, merged
/// with a saved matcher's settings), the request as the matcher context JSON (`context_json`:
/// `{"url", "path", "userAgent", "cookies": {name: value}, "headers": {name: value}}`) and the
/// `user_data` it was registered with. It answers exactly once through `answer`:
/// `sitefile_answer_bool` (whether the rule matches) or `sitefile_answer_error` (it failed: the
/// rule counts as false and the page's `effects.errors` names the key and the message). The
/// strings and `answer` are valid only during the call.
#[allow(non_camel_case_types)]
pub type sitefile_matcher_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        key: *const c_char,
        rule_json: *const c_char,
        context_json: *const c_char,
        answer: *mut sitefile_answer,
    ),
>;

/// A feature-flag or dangling-reference callback: called with one string argument (a flag key,
/// or the `__resolveType` of a dangling reference) and the `user_data` it was set with. It
/// answers exactly once through `answer` (which answer it gives is written on the setter). The
/// string and `answer` are valid only during the call.
#[allow(non_camel_case_types)]
pub type sitefile_host_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, arg: *const c_char, answer: *mut sitefile_answer),
>;

/// A C function with the `user_data` registered with it.
#[derive(Clone, Copy)]
struct Callback<F> {
    f: F,
    user_data: *mut c_void,
}

/// The host's callbacks. Configure it (register matchers, set the adapter and the hook) from
/// one thread; once configured it is only read, so any number of threads may pass it to
/// `sitefile_resolve_begin` at once — provided its callbacks may run on those threads with
/// their `user_data`. Never register on a host while a call using it runs. A host is read only
/// during `sitefile_resolve_begin`: it (and its `user_data`) may be freed once that call has
/// returned, even while resolutions begun with it go on. Free it with `sitefile_host_free`.
#[allow(non_camel_case_types)]
#[derive(Default)]
pub struct sitefile_host {
    matchers: HashMap<String, Callback<MatcherFn>>,
    is_feature_enabled: Option<Callback<HostFn>>,
    feature_flag_variant: Option<Callback<HostFn>>,
    dangling_reference: Option<Callback<HostFn>>,
}

type MatcherFn = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    *const c_char,
    *const c_char,
    *mut sitefile_answer,
);
type HostFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut sitefile_answer);

/// What a callback answered.
enum Given {
    Bool(bool),
    Text(Option<String>),
    Json(Value),
    Error(String),
}

impl Given {
    fn kind(&self) -> &'static str {
        match self {
            Given::Bool(_) => "a bool",
            Given::Text(_) => "a string",
            Given::Json(_) => "JSON",
            Given::Error(_) => "an error",
        }
    }
}

/// The answer slot of one callback call, filled by one `sitefile_answer_*` call. Valid only
/// during the callback it is passed to, on that callback's thread; never free it.
#[allow(non_camel_case_types)]
pub struct sitefile_answer {
    given: Option<Given>,
}

/// Creates an empty host: no matchers, no feature-flag adapter, no dangling-reference hook.
/// On success `*out_host` is the host, freed with `sitefile_host_free`.
///
/// # Safety
/// `out_host` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_host_new(out_host: *mut *mut sitefile_host) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promise, forwarded.
        let out_host = unsafe { out(out_host, "out_host")? };
        *out_host = Box::into_raw(Box::default());
        Ok(())
    })
}

/// Frees a host. NULL is a no-op. No call using it may be running.
///
/// # Safety
/// `host` is NULL or a host from `sitefile_host_new`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_host_free(host: *mut sitefile_host) {
    if host.is_null() {
        return;
    }
    guard_void(|| {
        // SAFETY: the caller passes a pointer from Box::into_raw in sitefile_host_new, not
        // freed before.
        drop(unsafe { Box::from_raw(host) });
    });
}

/// Registers `matcher` as the custom matcher `key` (`registerMatcher`), called with
/// `user_data`; a later registration of the same key replaces it. The site's setup must list
/// the key in `customMatchers` for its rules to reach the host; a key listed there with no
/// matcher on the host fails (false, reported in `effects.errors`).
///
/// # Safety
/// `host` is NULL or a live host no call is using; `key` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_host_register_matcher(
    host: *mut sitefile_host,
    key: *const c_char,
    matcher: sitefile_matcher_fn,
    user_data: *mut c_void,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promises, forwarded.
        let (host, key) = unsafe { (handle_mut(host, "host")?, text(key, "key")?) };
        let f = matcher
            .ok_or_else(|| Failure::new(sitefile_status::NullArgument, "matcher is NULL"))?;
        host.matchers
            .insert(key.to_string(), Callback { f, user_data });
        Ok(())
    })
}

/// Sets the feature-flag adapter (`isFeatureEnabled` / `getFeatureFlagVariant`) of the site
/// setup's `featureFlagMatcher`, both called with `user_data`; replaces an earlier one.
/// `is_feature_enabled(user_data, flag_key, answer)` answers `sitefile_answer_bool`;
/// `feature_flag_variant(user_data, flag_key, answer)` answers `sitefile_answer_string` (NULL:
/// no variant) and may be NULL (a rule naming a variant then fails). Either may answer
/// `sitefile_answer_error`: the rule counts as false and the failure is reported.
///
/// # Safety
/// `host` is NULL or a live host no call is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_host_set_feature_flags(
    host: *mut sitefile_host,
    is_feature_enabled: sitefile_host_fn,
    feature_flag_variant: sitefile_host_fn,
    user_data: *mut c_void,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promise, forwarded.
        let host = unsafe { handle_mut(host, "host")? };
        let enabled = is_feature_enabled.ok_or_else(|| {
            Failure::new(sitefile_status::NullArgument, "is_feature_enabled is NULL")
        })?;
        host.is_feature_enabled = Some(Callback {
            f: enabled,
            user_data,
        });
        host.feature_flag_variant = feature_flag_variant.map(|f| Callback { f, user_data });
        Ok(())
    })
}

/// Sets the dangling-reference hook (`onDanglingReference`), called with `user_data` and the
/// `__resolveType` of a loader or action key nothing registered; replaces an earlier one. It
/// answers `sitefile_answer_json` (the value the reference resolves to) or
/// `sitefile_answer_error` (the value is `null` and the failure is reported). Without a hook a
/// dangling reference is `null` with a warning.
///
/// # Safety
/// `host` is NULL or a live host no call is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_host_set_dangling_reference(
    host: *mut sitefile_host,
    on_dangling_reference: sitefile_host_fn,
    user_data: *mut c_void,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promise, forwarded.
        let host = unsafe { handle_mut(host, "host")? };
        let f = on_dangling_reference.ok_or_else(|| {
            Failure::new(
                sitefile_status::NullArgument,
                "on_dangling_reference is NULL",
            )
        })?;
        host.dangling_reference = Some(Callback { f, user_data });
        Ok(())
    })
}

/// Fills `answer` once: a second answer is `SITEFILE_STATUS_ALREADY_ANSWERED` and changes
/// nothing.
///
/// # Safety
/// `answer` is NULL or the live answer of a running callback.
unsafe fn give(
    answer: *mut sitefile_answer,
    given: impl FnOnce() -> crate::status::Outcome<Given>,
) -> sitefile_status {
    guard(|| {
        // SAFETY: the caller's promise, forwarded.
        let answer = unsafe { handle_mut(answer, "answer")? };
        if let Some(earlier) = &answer.given {
            return Err(Failure::new(
                sitefile_status::AlreadyAnswered,
                format!("the callback already answered ({})", earlier.kind()),
            ));
        }
        answer.given = Some(given()?);
        Ok(())
    })
}

/// Answers a custom matcher (whether its rule matches) or `is_feature_enabled`.
///
/// # Safety
/// `answer` is NULL or the `answer` argument of a running callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_answer_bool(
    answer: *mut sitefile_answer,
    value: bool,
) -> sitefile_status {
    // SAFETY: the caller's promise, forwarded.
    unsafe { give(answer, || Ok(Given::Bool(value))) }
}

/// Answers `feature_flag_variant`: the visitor's variant, or NULL for none. The string is
/// copied.
///
/// # Safety
/// `answer` is NULL or the `answer` argument of a running callback; `value` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_answer_string(
    answer: *mut sitefile_answer,
    value: *const c_char,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        give(answer, || {
            Ok(Given::Text(
                optional_text(value, "value")?.map(str::to_string),
            ))
        })
    }
}

/// Answers the dangling-reference hook: the value as JSON (copied). JSON that does not parse
/// is `SITEFILE_STATUS_INVALID_JSON` and answers nothing.
///
/// # Safety
/// `answer` is NULL or the `answer` argument of a running callback; `json` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_answer_json(
    answer: *mut sitefile_answer,
    json: *const c_char,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        give(answer, || {
            let json = text(json, "json")?;
            Value::from_json_str(json)
                .map(Given::Json)
                .map_err(|e| Failure::of(&e))
        })
    }
}

/// Answers any callback with a failure and its message (copied): a matcher or the adapter
/// then counts as false, a dangling reference as `null`, and the page's `effects.errors`
/// carries the message.
///
/// # Safety
/// `answer` is NULL or the `answer` argument of a running callback; `message` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sitefile_answer_error(
    answer: *mut sitefile_answer,
    message: *const c_char,
) -> sitefile_status {
    // SAFETY: the caller's promises, forwarded.
    unsafe {
        give(answer, || {
            Ok(Given::Error(text(message, "message")?.to_string()))
        })
    }
}

/// A C string argument for a callback.
fn c_arg(s: &str, what: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("the {what} holds a NUL byte"))
}

/// The Fast Deploy hook of a reload as the core calls it, over `hook` (NULL: none) and its
/// `user_data`: `hook` gets the new revision before it serves and answers
/// `sitefile_answer_bool` (whether it wrote the snapshot to the key-value store: the reload
/// response's `kvWritten`) or `sitefile_answer_error` (the reload is refused, `HOOK_FAILED`,
/// and the content keeps serving). Without a hook `kvWritten` is false.
pub(crate) fn swap_hook(
    hook: sitefile_host_fn,
    user_data: *mut c_void,
) -> impl FnMut(&Arc<Snapshot>) -> Result<bool, String> {
    move |snapshot| match hook {
        None => Ok(false),
        Some(f) => expect(
            CHost::call(&Callback { f, user_data }, snapshot.revision(), "revision"),
            "a bool",
            |g| match g {
                Given::Bool(written) => Some(written),
                _ => None,
            },
        ),
    }
}

/// The core's view of a C host during one call. It mirrors the Node crate's `JsHost`: the
/// matcher context's JSON is written once per call, and a missing function fails with the same
/// message.
pub(crate) struct CHost<'h> {
    host: &'h sitefile_host,
    /// The matcher context's JSON, written once per call.
    context: OnceCell<CString>,
}

impl<'h> CHost<'h> {
    pub(crate) fn new(host: &'h sitefile_host) -> CHost<'h> {
        CHost {
            host,
            context: OnceCell::new(),
        }
    }

    /// Calls a one-string callback and returns what it answered.
    fn call(callback: &Callback<HostFn>, arg: &str, what: &str) -> Result<Given, String> {
        let arg = c_arg(arg, what)?;
        let mut answer = sitefile_answer { given: None };
        // SAFETY: a function the host registered, with its user_data; the string and the answer
        // live for the call.
        unsafe { (callback.f)(callback.user_data, arg.as_ptr(), &mut answer) };
        answer
            .given
            .ok_or_else(|| "the callback gave no answer".to_string())
    }
}

/// What a callback answered, as the core's `Result`: an error answer is the failure, an answer
/// of another kind than `want` is one too.
fn expect<T>(
    given: Result<Given, String>,
    want: &str,
    f: impl FnOnce(Given) -> Option<T>,
) -> Result<T, String> {
    match given? {
        Given::Error(message) => Err(message),
        other => {
            let kind = other.kind();
            f(other).ok_or_else(|| format!("the callback answered {kind}, not {want}"))
        }
    }
}

impl Host for CHost<'_> {
    fn custom_matcher(
        &self,
        key: &str,
        rule: &Value,
        context: &MatcherContext<'_>,
    ) -> Result<bool, String> {
        let Some(matcher) = self.host.matchers.get(key) else {
            return Err(format!("no custom matcher is registered for {key}"));
        };
        let context = match self.context.get() {
            Some(context) => context,
            None => {
                let json = serde_json::to_string(context).map_err(|e| e.to_string())?;
                let _ = self.context.set(c_arg(&json, "matcher context")?);
                self.context.get().expect("just set")
            }
        };
        let (key_c, rule) = (
            c_arg(key, "matcher key")?,
            c_arg(&rule.to_json_string(), "rule")?,
        );
        let mut answer = sitefile_answer { given: None };
        // SAFETY: a function the host registered, with its user_data; the strings and the
        // answer live for the call.
        unsafe {
            (matcher.f)(
                matcher.user_data,
                key_c.as_ptr(),
                rule.as_ptr(),
                context.as_ptr(),
                &mut answer,
            )
        };
        let given = answer
            .given
            .ok_or_else(|| format!("the custom matcher {key} gave no answer"));
        expect(given, "a bool", |g| match g {
            Given::Bool(b) => Some(b),
            _ => None,
        })
    }

    fn feature_flags(&self) -> Option<&dyn FeatureFlagAdapter> {
        self.host
            .is_feature_enabled
            .is_some()
            .then_some(self as &dyn FeatureFlagAdapter)
    }

    fn on_dangling_reference(&self, resolve_type: &str) -> Option<Result<Value, String>> {
        let hook = self.host.dangling_reference.as_ref()?;
        Some(expect(
            CHost::call(hook, resolve_type, "resolve type"),
            "JSON",
            |g| match g {
                Given::Json(v) => Some(v),
                _ => None,
            },
        ))
    }
}

impl FeatureFlagAdapter for CHost<'_> {
    fn is_feature_enabled(&self, key: &str) -> Result<bool, String> {
        let Some(f) = &self.host.is_feature_enabled else {
            return Err("the feature-flag adapter has no isFeatureEnabled".into());
        };
        expect(CHost::call(f, key, "flag key"), "a bool", |g| match g {
            Given::Bool(b) => Some(b),
            _ => None,
        })
    }

    fn feature_flag_variant(&self, key: &str) -> Result<Option<String>, String> {
        let Some(f) = &self.host.feature_flag_variant else {
            return Err("the feature-flag adapter has no getFeatureFlagVariant".into());
        };
        expect(CHost::call(f, key, "flag key"), "a string", |g| match g {
            Given::Text(t) => Some(t),
            _ => None,
        })
    }
}

/// The host of an optional host argument.
///
/// # Safety
/// `p` is NULL or a live host no call is registering on for `'a`.
pub(crate) unsafe fn optional_host<'a>(p: *const sitefile_host) -> Option<&'a sitefile_host> {
    // SAFETY: the caller's promise.
    unsafe { p.as_ref() }
}
