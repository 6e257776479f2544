//! The napi-rs addon of the `sitefile` npm package: conversion and I/O over the core's [`Site`].
//!
//! Two classes: [`NativeSite`] (one site: content, setup, reload) and [`NativeResolution`] (one
//! page resolution, driven one napi call per loader round). Everything crosses as JSON text in
//! the core's serde forms; the TypeScript side runs loaders and custom matchers. Every error
//! thrown to JS is an `Error` whose `code` is the core's stable code (`INVALID_JSON`, ...), and
//! a Rust panic becomes such an error (code `PANIC`) rather than aborting the process.

#![deny(clippy::unwrap_used, clippy::expect_used)]
// `HostCallbacks` spells its function types out: the typings are generated from them, and the
// lint fires inside the code napi-derive generates for the fields, where no local allow reaches.
#![allow(clippy::type_complexity)]

use chrono::{DateTime, Utc};
use napi::bindgen_prelude::{FnArgs, Function, Unknown};
use napi_derive::napi;
use serde::Deserialize;
use sitefile_core::edge::WorkerOptions;
use sitefile_core::resolve::{CallId, KeyRegistry, Resolution, ResolveConfig, Step};
use sitefile_core::{
    ErrorCode, FeatureFlagAdapter, HasErrorCode, Host, MatcherContext, Request, ResolveErrorEvent,
    Site, SiteSetup, Value,
};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The `code` of a thrown JS error: a core [`ErrorCode`]'s text, or `PANIC`.
pub struct Code(&'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

// napi-derive recognises a fallible export by the literal `Result` in its signature, so the
// exports spell it out; this alias is for the helpers.
type JsResult<T> = Result<T, napi::Error<Code>>;

fn fail(code: ErrorCode, message: impl std::fmt::Display) -> napi::Error<Code> {
    napi::Error::new(Code(code.as_str()), message.to_string())
}

fn thrown(error: &dyn HasErrorCode) -> napi::Error<Code> {
    fail(error.code(), error)
}

/// Runs `f`, turning a panic into a thrown `Error` with code `PANIC`. (napi-derive's own
/// `catch_unwind` needs unwind-safe captures, which `&mut self` and the site's locks are not;
/// nothing here is left half-updated by a panic that JS could observe, so the assertion holds.)
fn guarded<T>(f: impl FnOnce() -> JsResult<T>) -> JsResult<T> {
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

fn instant(ms: f64) -> JsResult<DateTime<Utc>> {
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

/// The setup a site is created with, in the JSON the TypeScript `createSiteSetup` writes.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SetupJson {
    /// Section modules (`./sections/<path>.tsx`) or keys; absent: every `/sections/` key.
    sections: Option<Vec<String>>,
    /// The registered loader keys (the JS functions live on the JS side).
    #[serde(default)]
    loaders: Vec<String>,
    /// Keys of custom matchers (`registerMatcher`).
    #[serde(default)]
    custom_matchers: Vec<String>,
    /// The feature-flag bridge's matcher key (`<flag_vendor>/matchers/featureFlag.ts`).
    feature_flag_matcher: Option<String>,
    #[serde(default)]
    production_origins: Vec<String>,
    #[serde(default)]
    layout_sections: Vec<String>,
    #[serde(default)]
    async_rendering: bool,
    resolve_globals: Option<bool>,
    /// Environment variables (`NODE_ENV`, `PLATFORM_*`, ...).
    #[serde(default)]
    env: HashMap<String, String>,
    /// `createDecoWorkerEntry` options in their JSON spelling.
    options: Option<serde_json::Value>,
}

fn site_setup(setup_json: &str) -> JsResult<SiteSetup> {
    let setup: SetupJson = serde_json::from_str(setup_json)
        .map_err(|e| fail(ErrorCode::InvalidConfig, format!("invalid setup: {e}")))?;
    let mut resolve = ResolveConfig::by_convention();
    if let Some(sections) = &setup.sections {
        let mut registry = KeyRegistry::default();
        for module in sections {
            registry.register_section_module(module);
        }
        resolve.sections = registry;
    }
    let mut loaders = KeyRegistry::default();
    for key in &setup.loaders {
        loaders.register(key);
    }
    resolve.loaders = loaders;
    for key in &setup.custom_matchers {
        resolve.matchers.register(key);
    }
    if let Some(key) = &setup.feature_flag_matcher {
        resolve.matchers.register_feature_flag_bridge(key);
    }
    let origins: Vec<&str> = setup
        .production_origins
        .iter()
        .map(String::as_str)
        .collect();
    resolve = resolve.with_production_origins(&origins);
    resolve.layout_sections = setup.layout_sections.iter().cloned().collect();
    resolve.async_rendering = setup.async_rendering;
    resolve.resolve_globals = setup.resolve_globals.unwrap_or(true);
    let worker = match &setup.options {
        Some(options) => WorkerOptions::from_json(options).map_err(|e| thrown(&e))?,
        None => WorkerOptions::default(),
    };
    Ok(SiteSetup::new(resolve, worker, setup.env))
}

/// One site: its content, setup and the resolutions started from it.
#[napi]
pub struct NativeSite {
    site: Arc<Site>,
}

#[napi]
impl NativeSite {
    /// A site read from a site directory (`.platform/blocks/`, `blocks/`, a directory of block
    /// files, or `.platform/blocks.gen.json`), set up with `setup` (JSON). `overlay`, when
    /// given, is a content map (JSON) laid over the directory's blocks as a delta.
    #[napi(factory)]
    pub fn from_dir(
        dir: String,
        setup: String,
        overlay: Option<String>,
    ) -> Result<NativeSite, napi::Error<Code>> {
        guarded(|| {
            let loaded = sitefile_site_dir::load(Path::new(&dir)).map_err(|e| thrown(&e))?;
            let site = Site::new(loaded.snapshot, site_setup(&setup)?).map_err(|e| thrown(&e))?;
            if let Some(blocks) = overlay {
                // The delta form of a reload is exactly "these blocks over the current ones".
                let body = format!("{{\"blocks\":{blocks}}}");
                site.reload(body.as_bytes(), DateTime::<Utc>::UNIX_EPOCH)
                    .map_err(|e| thrown(&e))?;
            }
            Ok(NativeSite {
                site: Arc::new(site),
            })
        })
    }

    /// A site serving a content map (a JSON object of blocks), set up with `setup` (JSON).
    #[napi(factory)]
    pub fn from_content(content: String, setup: String) -> Result<NativeSite, napi::Error<Code>> {
        guarded(|| {
            let snapshot = sitefile_core::content::load_bundle(content.into_bytes())
                .map_err(|e| thrown(&e))?;
            let site = Site::new(snapshot, site_setup(&setup)?).map_err(|e| thrown(&e))?;
            Ok(NativeSite {
                site: Arc::new(site),
            })
        })
    }

    /// The content revision serving now.
    #[napi(getter)]
    pub fn revision(&self) -> String {
        self.site.revision()
    }

    /// Applies a reload body (delta or full, JSON text) at `nowMs` (milliseconds since the
    /// epoch); returns the reload response as JSON text. A refused body leaves the content
    /// serving.
    #[napi]
    pub fn reload(&self, body: String, now_ms: f64) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let now = instant(now_ms)?;
            let response = self
                .site
                .reload(body.as_bytes(), now)
                .map_err(|e| thrown(&e))?;
            serde_json::to_string(&response).map_err(|e| fail(ErrorCode::InvalidContent, e))
        })
    }

    /// Starts resolving the page for a request (JSON: `{url, method?, headers?: [[name,
    /// value]...], cookies?: [[name, value]...], nowMs?, seed?}`); the first
    /// `NativeResolution.advance` runs the synchronous pass. A bad request throws
    /// `INVALID_REQUEST` here.
    #[napi]
    pub fn resolve(&self, request: String) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            Ok(NativeResolution {
                site: self.site.clone(),
                state: State::Ready(Box::new(request_of(&request)?)),
            })
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RequestJson {
    url: String,
    method: Option<String>,
    #[serde(default)]
    headers: Vec<(String, String)>,
    #[serde(default)]
    cookies: Vec<(String, String)>,
    now_ms: Option<f64>,
    seed: Option<u64>,
}

fn request_of(json: &str) -> JsResult<Request> {
    let form: RequestJson = serde_json::from_str(json)
        .map_err(|e| fail(ErrorCode::InvalidRequest, format!("invalid request: {e}")))?;
    let mut request = Request::new(&form.url).map_err(|e| thrown(&e))?;
    if let Some(method) = &form.method {
        request = request.with_method(method);
    }
    for (name, value) in &form.headers {
        request = request.with_header(name, value);
    }
    for (name, value) in &form.cookies {
        request = request.with_cookie(name, value);
    }
    if let Some(ms) = form.now_ms {
        request = request.with_now(instant(ms)?);
    }
    if let Some(seed) = form.seed {
        request = request.with_seed(seed);
    }
    Ok(request)
}

enum State {
    /// Not started: the first `advance` runs the synchronous pass.
    Ready(Box<Request>),
    Running(Box<Resolution>),
    /// Between states, or after a panic.
    Gone,
}

/// The host callbacks of one `advance` call: JS functions, called synchronously on this thread.
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

struct JsHost<'h, 'a> {
    callbacks: &'h HostCallbacks<'a>,
    /// The matcher context's JSON, written once per call.
    context: OnceCell<String>,
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

/// One loader's answer: `{id, value}` or `{id, error}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    id: CallId,
    #[serde(default)]
    value: Option<Value>,
    error: Option<String>,
}

/// One page resolution, driven one call per loader round.
#[napi]
pub struct NativeResolution {
    site: Arc<Site>,
    state: State,
}

#[napi]
impl NativeResolution {
    /// Provides the previous round's answers (JSON: `[{id, value} | {id, error}]`; `null` on
    /// the first call) and returns the next step as JSON text: `{"step": "needLoaders",
    /// "value": [calls]}` or `{"step": "done", "value": <page>}`. Custom matchers and the
    /// feature-flag adapter in `host` are called synchronously during the call.
    #[napi]
    pub fn advance(
        &mut self,
        answers: Option<String>,
        host: HostCallbacks,
    ) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let host = JsHost {
                callbacks: &host,
                context: OnceCell::new(),
            };
            let mut resolution = match std::mem::replace(&mut self.state, State::Gone) {
                State::Ready(request) => Box::new(self.site.resolve_page(*request, &host)),
                State::Running(resolution) => resolution,
                State::Gone => {
                    return Err(fail(
                        ErrorCode::Finished,
                        "the resolution is finished: its page was already returned",
                    ));
                }
            };
            let provided = provide_answers(&mut resolution, answers.as_deref());
            let step = provided.and_then(|()| resolution.next(&host).map_err(|e| thrown(&e)));
            let step = match step {
                Ok(step) => step,
                Err(e) => {
                    self.state = State::Running(resolution);
                    return Err(e);
                }
            };
            let text = match &step {
                Step::Done(page) => String::from_utf8(page.to_json_bytes())
                    .map_err(|e| fail(ErrorCode::InvalidContent, e))?,
                Step::NeedLoaders(_) => {
                    let text = serde_json::to_string(&step)
                        .map_err(|e| fail(ErrorCode::InvalidContent, e))?;
                    self.state = State::Running(resolution);
                    return Ok(text);
                }
            };
            Ok(format!("{{\"step\":\"done\",\"value\":{text}}}"))
        })
    }
}

fn provide_answers(resolution: &mut Resolution, answers: Option<&str>) -> JsResult<()> {
    let Some(answers) = answers else {
        return Ok(());
    };
    let answers: Vec<Answer> = serde_json::from_str(answers).map_err(|e| {
        fail(
            ErrorCode::InvalidJson,
            format!("invalid loader answers: {e}"),
        )
    })?;
    for answer in answers {
        let result = match answer.error {
            Some(message) => Err(message),
            None => Ok(answer.value.unwrap_or(Value::Null)),
        };
        resolution
            .provide(answer.id, result)
            .map_err(|e| thrown(&e))?;
    }
    Ok(())
}

/// Every stable error code the addon may throw, in the core's order, then `PANIC`.
#[napi]
pub fn error_codes() -> Vec<String> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .chain(std::iter::once("PANIC".to_string()))
        .collect()
}
