//! The host callbacks of one `advance` call: JS functions the core calls synchronously.

use napi::bindgen_prelude::{FnArgs, Function, Unknown};
use napi_derive::napi;
use sitefile_core::{FeatureFlagAdapter, Host, MatcherContext, ResolveErrorEvent, Value};
use std::cell::OnceCell;

/// The host callbacks of one `advance` call: JS functions, called synchronously on this thread.
/// A callback fails by throwing an object; the failure's message is the thrown value's
/// `String()` (so a plain `Error` reads `"Error: <message>"`; the package throws an `Error`
/// whose `toString` is its message).
#[napi(object, object_to_js = false)]
pub struct HostCallbacks<'a> {
    /// `(key, ruleJson, contextJson) => boolean`: a custom matcher's answer.
    pub matcher: Option<Function<'a, FnArgs<(String, String, String)>, bool>>,
    /// `isFeatureEnabled(key)` of the feature-flag adapter.
    pub is_feature_enabled: Option<Function<'a, String, bool>>,
    /// `getFeatureFlagVariant(key)` of the feature-flag adapter.
    pub get_feature_flag_variant: Option<Function<'a, String, Option<String>>>,
    /// `onDanglingReference(resolveType)`: the value's JSON text (`undefined`: `null`).
    pub on_dangling_reference: Option<Function<'a, String, Option<String>>>,
    /// `onResolveError(eventJson)`, told of each error as it is recorded.
    pub on_resolve_error: Option<Function<'a, String, Unknown<'a>>>,
}

pub(crate) struct JsHost<'h, 'a> {
    callbacks: &'h HostCallbacks<'a>,
    /// The matcher context's JSON, written once per call.
    context: OnceCell<String>,
}

impl<'h, 'a> JsHost<'h, 'a> {
    /// The host over one call's callbacks.
    pub(crate) fn new(callbacks: &'h HostCallbacks<'a>) -> JsHost<'h, 'a> {
        JsHost {
            callbacks,
            context: OnceCell::new(),
        }
    }
}

fn js_error(error: napi::Error) -> String {
    error.reason.clone()
}

impl Host for JsHost<'_, '_> {
    fn custom_matcher(
        &self,
        key: &str,
        rule: &Value,
        context: &MatcherContext<'_>,
    ) -> Result<bool, String> {
        let Some(matcher) = &self.callbacks.matcher else {
            return Err(format!("no custom matcher is registered for {key}"));
        };
        let context = self
            .context
            .get_or_init(|| serde_json::to_string(context).unwrap_or_else(|_| "{}".into()));
        matcher
            .call((key.to_string(), rule.to_json_string(), context.clone()).into())
            .map_err(js_error)
    }

    fn feature_flags(&self) -> Option<&dyn FeatureFlagAdapter> {
        (self.callbacks.is_feature_enabled.is_some()
            || self.callbacks.get_feature_flag_variant.is_some())
        .then_some(self as &dyn FeatureFlagAdapter)
    }

    fn on_dangling_reference(&self, resolve_type: &str) -> Option<Result<Value, String>> {
        let hook = self.callbacks.on_dangling_reference.as_ref()?;
        Some(match hook.call(resolve_type.to_string()) {
            Ok(Some(json)) => Value::from_json_str(&json).map_err(|e| e.to_string()),
            Ok(None) => Ok(Value::Null),
            Err(e) => Err(js_error(e)),
        })
    }

    fn on_resolve_error(&self, event: &ResolveErrorEvent) {
        if let Some(hook) = &self.callbacks.on_resolve_error
            && let Ok(json) = serde_json::to_string(event)
        {
            // The hook only observes; the error is in `effects.errors` either way.
            let _ = hook.call(json);
        }
    }
}

impl FeatureFlagAdapter for JsHost<'_, '_> {
    fn is_feature_enabled(&self, key: &str) -> Result<bool, String> {
        match &self.callbacks.is_feature_enabled {
            Some(f) => f.call(key.to_string()).map_err(js_error),
            None => Err("the feature-flag adapter has no isFeatureEnabled".into()),
        }
    }

    fn feature_flag_variant(&self, key: &str) -> Result<Option<String>, String> {
        match &self.callbacks.get_feature_flag_variant {
            Some(f) => f.call(key.to_string()).map_err(js_error),
            None => Err("the feature-flag adapter has no getFeatureFlagVariant".into()),
        }
    }
}
