//! The resolution state machine a host drives: `next()` hands out rounds of loader calls,
//! `provide()` takes their results, and the last `next()` returns the page.

use super::config::ResolveConfig;
use super::engine::{PendingCall, Resolver, merged_reference, section_props, variants_of};
use super::keys;
use super::layout_cache::LayoutCache;
use super::loader_props;
use super::node::{CallId, Node};
use super::origins::relativize;
use super::page::{PAGE_BUFFER_START, ResolvedPage, ResolvedSection};
use super::page_cache::{FirstPass, PageCache};
use crate::content::Snapshot;
use crate::effects::{Effects, ResolveErrorEvent};
use crate::errors::{ErrorCode, HasErrorCode};
use crate::host::{Host, NoHost};
use crate::loader_cache::{Freshness, LoaderCache, LoaderKey, Lookup, Ticket};
use crate::matchers::{Experiment, ExperimentAssignment, Overrides, Segment};
use crate::request::Request;
use crate::value::{Array, Key, Object, Value, intern};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

/// A loader the host must run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoaderCall {
    /// Identifies the call in [`Resolution::provide`].
    pub id: CallId,
    /// The registered loader key.
    pub key: String,
    /// Fully resolved props, with the page's path, URL and query injected.
    pub props: Value,
    /// A stale-while-revalidate refresh: the page already has the cached value; the answer
    /// only refreshes the loader cache.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refresh: bool,
}

/// What the host must do next.
#[derive(Debug, Serialize)]
#[serde(tag = "step", content = "value", rename_all = "camelCase")]
pub enum Step {
    /// Run these loaders (concurrently), `provide` every result, then call `next` again.
    NeedLoaders(Vec<LoaderCall>),
    /// Resolution is complete.
    Done(Box<ResolvedPage>),
}

impl Step {
    /// The room a buffer for a step's JSON starts with: most pages fit without growing it.
    pub const BUFFER_CAPACITY: usize = PAGE_BUFFER_START;

    /// The step as JSON bytes, its serde form: `{"step":"needLoaders","value":[calls]}` or
    /// `{"step":"done","value":<page>}`, the page written by [`ResolvedPage::to_json_bytes`].
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Step::BUFFER_CAPACITY);
        self.write_json(&mut out);
        out
    }

    /// Appends what [`Step::to_json_bytes`] returns to `out` (a binding writing straight into
    /// the buffer it hands its host).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Step::Done(page) => {
                // The page is written straight after the prefix, not copied behind it.
                out.extend_from_slice(br#"{"step":"done","value":"#);
                page.write_json(out);
                out.push(b'}');
            }
            // Writing loader calls to a Vec cannot fail: their keys are strings.
            Step::NeedLoaders(_) => {
                let start = out.len();
                if serde_json::to_writer(&mut *out, self).is_err() {
                    out.truncate(start);
                }
            }
        }
    }
}

/// A host's answer to one loader call, as JSON: `{"id", "value"}` or `{"id", "error"}` (an
/// answer with neither is `null`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoaderAnswer {
    /// The call answered.
    pub id: CallId,
    /// Its result.
    #[serde(default)]
    pub value: Option<Value>,
    /// Why it failed.
    #[serde(default)]
    pub error: Option<String>,
}

impl LoaderAnswer {
    /// The result [`Resolution::provide`] takes: the error when there is one, else the value.
    pub fn into_result(self) -> Result<Value, String> {
        match self.error {
            Some(message) => Err(message),
            None => Ok(self.value.unwrap_or(Value::Null)),
        }
    }
}

/// A host drove a resolution out of order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolutionMisuse {
    /// `provide` for a call that was never handed out.
    #[error("no loader call {0} is waiting for an answer")]
    UnknownCall(CallId),
    /// `provide` for a call answered before.
    #[error("loader call {0} was already answered")]
    AlreadyAnswered(CallId),
    /// `next` or `provide` after the page was done.
    #[error("the resolution is finished: its page was already returned")]
    Finished,
}

impl HasErrorCode for ResolutionMisuse {
    fn code(&self) -> ErrorCode {
        match self {
            ResolutionMisuse::UnknownCall(_) => ErrorCode::UnknownCall,
            ResolutionMisuse::AlreadyAnswered(_) => ErrorCode::AlreadyAnswered,
            ResolutionMisuse::Finished => ErrorCode::Finished,
        }
    }
}

/// Per-request inputs besides the request itself.
#[derive(Debug, Default, Clone)]
pub struct RequestOptions {
    /// The request renders a draft or a preview overlay: the layout and page caches are
    /// neither read nor written.
    pub bypass_caches: bool,
    /// Resolve the site's not-found page whatever the path (a host rendering its own not-found
    /// screen); no page when the site has none.
    pub not_found_page: bool,
}

#[derive(Debug)]
enum CallState {
    Waiting,
    Asked,
    Answered(Value),
}

/// Where a call's answer goes in the loader cache.
#[derive(Debug)]
struct CacheSlot {
    key: LoaderKey,
    ticket: Ticket,
    freshness: Freshness,
}

#[derive(Debug)]
struct Call {
    key: String,
    props: Node,
    state: CallState,
    /// Set while a miss or a refresh may be stored in the loader cache.
    slot: Option<CacheSlot>,
    /// A stale refresh was handed out: its answer only refreshes the cache.
    refreshing: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    node: Node,
    lazy: bool,
    global: bool,
    /// Layout block to store the output under (a cache miss).
    layout: Option<String>,
    /// The sections `node` makes once it is a value, when the page cache keeps the entry: shared
    /// by the copies of the cached pass.
    sections: SectionsMemo,
}

impl Entry {
    fn new(node: Node, lazy: bool, global: bool, layout: Option<String>) -> Entry {
        Entry {
            node,
            lazy,
            global,
            layout,
            sections: SectionsMemo::default(),
        }
    }
}

/// The sections a resolved entry makes (its items that are registered sections, their props
/// converted and relativized, with room for their JSON) and the warnings making them recorded.
/// Only an entry the page cache keeps has a memo, computed once when its node is already a
/// value, so a page served from the cache neither converts nor writes the same content again
/// on every request; an entry whose node changes, or that no cache keeps, has none (keeping
/// would only cost it).
#[derive(Debug, Clone, Default)]
struct SectionsMemo(Option<Arc<OnceLock<EntrySections>>>);

#[derive(Debug, Clone)]
struct EntrySections {
    sections: Vec<ResolvedSection>,
    warnings: Vec<String>,
}

impl EntrySections {
    /// The sections `value` makes for a page of `config`.
    fn of(config: &ResolveConfig, value: Option<Value>) -> EntrySections {
        let items = match value {
            Some(Value::Array(a)) => Array::into_items(a),
            Some(v) => vec![v],
            None => Vec::new(),
        };
        let mut effects = Effects::default();
        let sections = items
            .into_iter()
            .filter_map(|item| section_of(config, &mut effects, item))
            .map(|section| ResolvedSection {
                props: relativize(&section.props, &config.production_origins),
                ..section
            })
            .collect();
        EntrySections {
            sections,
            warnings: effects.warnings,
        }
    }

    /// The sections with room for their props' JSON: written once, then copied by every page
    /// made from the memo.
    fn kept(self) -> EntrySections {
        EntrySections {
            sections: self
                .sections
                .into_iter()
                .map(|section| ResolvedSection {
                    props: section.props.with_json_room(),
                    ..section
                })
                .collect(),
            warnings: self.warnings,
        }
    }
}

struct PageInfo {
    name: String,
    pattern: String,
    params: BTreeMap<String, String>,
    /// The page is the site's not-found page (it answers 404).
    not_found: bool,
}

/// One request's resolution. Owns everything it needs, so a host can keep it across awaits.
pub struct Resolution {
    snapshot: Arc<Snapshot>,
    config: Arc<ResolveConfig>,
    request: Request,
    caches: Arc<Caches>,
    target: Target,
    entries: Vec<Entry>,
    seo: Option<Node>,
    calls: Vec<Call>,
    effects: Effects,
    segment: Segment,
    /// `effects.errors` already told to the host's `onResolveError`.
    reported_errors: usize,
    done: bool,
}

/// What a resolution produces.
enum Target {
    /// The page serving the request's path (`None`: no page matched); `layout` says whether
    /// the shared layout cache is read and written.
    Page {
        info: Option<PageInfo>,
        layout: bool,
    },
    /// One value: a block, a section or props (previews, render, invoke).
    Value,
}

impl Resolution {
    /// Runs the synchronous pass for the page serving `request`'s path (or takes it from the
    /// page cache).
    pub(crate) fn for_page(
        snapshot: Arc<Snapshot>,
        config: Arc<ResolveConfig>,
        request: Request,
        caches: &Arc<Caches>,
        options: RequestOptions,
        host: &dyn Host,
    ) -> Resolution {
        let overrides = Overrides::from_request(&request);
        let mut segment = Segment::from_request(&request);
        let use_caches = !options.bypass_caches;
        // A forced variant must neither be served from nor leak into the shared layout cache.
        let uses_layout = use_caches && overrides.is_empty();
        let layout_cache = uses_layout.then_some(&caches.layout);
        let not_found = snapshot.not_found_page();
        let is_not_found = |name: &str| not_found.is_some_and(|(n, _)| n == name);
        let routed = if options.not_found_page {
            None
        } else {
            snapshot.routes().find(request.path())
        };
        let found = match routed {
            Some(m) => Some(PageInfo {
                name: m.name.to_string(),
                pattern: m.pattern.to_string(),
                params: m.params,
                not_found: is_not_found(m.name),
            }),
            // No page serves the path: the site's not-found page does, when it has one.
            None => not_found.map(|(name, path)| PageInfo {
                name: name.to_string(),
                pattern: path.to_string(),
                params: BTreeMap::new(),
                not_found: true,
            }),
        };
        let mut pass = FirstPass {
            entries: Vec::new(),
            seo: None,
            calls: Vec::new(),
            effects: Effects::default(),
        };
        if let Some(page) = &found {
            // The page cache only serves requests that force nothing and carry no adapter.
            let cacheable = use_caches && overrides.is_empty() && host.feature_flags().is_none();
            let cache_key = || format!("{}\u{0}{:?}", page.name, page.params);
            let cached = cacheable
                .then(|| {
                    caches
                        .pages
                        .get(snapshot.revision(), &cache_key(), &request)
                })
                .flatten();
            pass = match cached {
                Some(hit) => (*hit).clone(),
                None => {
                    let mut pass = first_pass(
                        &snapshot,
                        &config,
                        &request,
                        page,
                        &overrides,
                        host,
                        &mut segment,
                        layout_cache,
                    );
                    if cacheable && PageCache::keeps(&pass) {
                        for entry in &mut pass.entries {
                            entry.sections = SectionsMemo(Some(Arc::default()));
                        }
                        caches
                            .pages
                            .put(snapshot.revision(), cache_key(), &request, &pass);
                    }
                    pass
                }
            };
        }
        if let Some(cache) = layout_cache {
            // Layout sections stored since this pass was made (or cached) are taken as they are.
            for entry in &mut pass.entries {
                let hit = entry.layout.as_deref().and_then(|block| {
                    cache.get(snapshot.revision(), block, request.device(), request.now)
                });
                if let Some(hit) = hit {
                    *entry = Entry::new(Node::Value(hit), entry.lazy, entry.global, None);
                    pass.effects.vary("device");
                }
            }
        }
        let target = Target::Page {
            info: found,
            layout: uses_layout,
        };
        Resolution::new(snapshot, config, request, caches, target, pass, segment)
            .reporting_first_pass(host)
    }

    /// Resolves one value — a saved block, a section or a props object — against `snapshot`
    /// for `request` (previews, `/platform/render`, invoke props). Never cached. The page it
    /// finishes with has no page block; its `value` is the resolved value and `sections` holds
    /// it when it is a registered section.
    pub(crate) fn for_value(
        snapshot: Arc<Snapshot>,
        config: Arc<ResolveConfig>,
        request: Request,
        value: &Value,
        caches: &Arc<Caches>,
        host: &dyn Host,
    ) -> Resolution {
        let overrides = Overrides::from_request(&request);
        let mut segment = Segment::from_request(&request);
        let mut effects = Effects::default();
        let params = BTreeMap::new();
        let mut resolver = Resolver::new(
            &snapshot,
            &config,
            &request,
            &params,
            &overrides,
            host,
            &mut segment,
            &mut effects,
        );
        let (node, lazy) = resolver.resolve_section(&intern(SINGLE_VALUE_BLOCK), &[], value);
        let calls = std::mem::take(&mut resolver.calls);
        let pass = FirstPass {
            entries: vec![Entry::new(node, lazy, false, None)],
            seo: None,
            calls,
            effects,
        };
        Resolution::new(
            snapshot,
            config,
            request,
            caches,
            Target::Value,
            pass,
            segment,
        )
        .reporting_first_pass(host)
    }

    /// A resolution waiting for the loaders of its first pass.
    fn new(
        snapshot: Arc<Snapshot>,
        config: Arc<ResolveConfig>,
        request: Request,
        caches: &Arc<Caches>,
        target: Target,
        pass: FirstPass,
        segment: Segment,
    ) -> Resolution {
        let used = used_calls(&pass);
        Resolution {
            snapshot,
            config,
            request,
            caches: caches.clone(),
            target,
            entries: pass.entries,
            seo: pass.seo,
            calls: pending_calls(pass.calls, used),
            effects: pass.effects,
            segment,
            reported_errors: 0,
            done: false,
        }
    }

    /// The next round of loaders whose props are complete, or the finished page. Fresh loader
    /// cache hits are answered here and never handed out; stale hits answer the page at once
    /// and are handed out as `refresh` calls. Every call of a round must be answered with
    /// [`Resolution::provide`] before calling `next` again; a call left unanswered counts as a
    /// failed loader. Errors recorded so far go to the host's `onResolveError`.
    #[allow(clippy::should_implement_trait)] // a state machine step, not an iterator
    pub fn next(&mut self, host: &dyn Host) -> Result<Step, ResolutionMisuse> {
        if self.done {
            return Err(ResolutionMisuse::Finished);
        }
        let step = self.step();
        self.report_errors(&step, host);
        Ok(step)
    }

    /// The visitor's arm of `experiment` (`resolveExperimentVariant`, called by a loader of this
    /// resolution): sticky through the page's `platform_segment` cookie, which the finished page
    /// sets. `None` for an experiment without arms; after the page was returned, an error.
    pub fn assign_experiment(
        &mut self,
        experiment: &Experiment,
    ) -> Result<Option<ExperimentAssignment>, ResolutionMisuse> {
        if self.done {
            return Err(ResolutionMisuse::Finished);
        }
        Ok(self.segment.assign(experiment))
    }

    /// The result of loader call `id`: its value, or an error message (the value becomes
    /// `null` — or the loader cache's stale value when one may still be served —, an
    /// `onResolveError` effect is recorded and the page is marked degraded). Misuse is an
    /// error: a call never handed out, answered twice, or after the page was done.
    pub fn provide(
        &mut self,
        id: CallId,
        result: Result<Value, String>,
    ) -> Result<(), ResolutionMisuse> {
        if self.done {
            return Err(ResolutionMisuse::Finished);
        }
        let call = self
            .calls
            .get(id)
            .ok_or(ResolutionMisuse::UnknownCall(id))?;
        match call.state {
            CallState::Asked => {}
            CallState::Answered(_) if call.refreshing => {}
            CallState::Answered(_) => return Err(ResolutionMisuse::AlreadyAnswered(id)),
            CallState::Waiting => return Err(ResolutionMisuse::UnknownCall(id)),
        }
        self.answer(id, result);
        Ok(())
    }

    /// Drives the whole resolution with a synchronous loader function and no host callbacks.
    pub fn run(self, loader: impl FnMut(&LoaderCall) -> Result<Value, String>) -> ResolvedPage {
        self.run_with(&NoHost, loader)
    }

    /// Drives the whole resolution with a synchronous loader function and `host`'s callbacks.
    pub fn run_with(
        mut self,
        host: &dyn Host,
        mut loader: impl FnMut(&LoaderCall) -> Result<Value, String>,
    ) -> ResolvedPage {
        loop {
            let step = self.step();
            self.report_errors(&step, host);
            match step {
                Step::NeedLoaders(calls) => {
                    for call in &calls {
                        let result = loader(call);
                        self.answer(call.id, result);
                    }
                }
                Step::Done(page) => return *page,
            }
        }
    }

    /// The resolution once the host was told of its synchronous pass's errors.
    fn reporting_first_pass(mut self, host: &dyn Host) -> Resolution {
        tell_errors(host, &self.effects.errors, &mut self.reported_errors);
        self
    }

    /// Tells the host of errors recorded since the last report (a finished page holds them
    /// all).
    fn report_errors(&mut self, step: &Step, host: &dyn Host) {
        let errors = match step {
            Step::Done(page) => &page.effects.errors,
            Step::NeedLoaders(_) => &self.effects.errors,
        };
        tell_errors(host, errors, &mut self.reported_errors);
    }

    /// The request's instant in milliseconds, the loader cache's clock.
    fn now_ms(&self) -> u64 {
        u64::try_from(self.request.now.timestamp_millis()).unwrap_or(0)
    }

    /// One step of the state machine (the caller checked it is not done).
    fn step(&mut self) -> Step {
        for call in &mut self.calls {
            call.refreshing = false;
            if matches!(call.state, CallState::Asked) {
                call.state = CallState::Answered(Value::Null);
                self.effects.error(
                    &call.key,
                    "Commerce loader",
                    "the host did not answer this loader",
                );
                self.effects.degraded = true;
            }
        }
        let now_ms = self.now_ms();
        let mut round = Vec::new();
        // A cache hit answers a call at once and may complete the props of later calls.
        let mut progressed = true;
        while progressed {
            progressed = false;
            for id in 0..self.calls.len() {
                if !matches!(self.calls[id].state, CallState::Waiting) {
                    continue;
                }
                let Some(props) = self.calls[id]
                    .props
                    .materialize(&|dep| answered(&self.calls, dep))
                else {
                    continue;
                };
                let props = loader_props::inject(props.unwrap_or(Value::Null), &self.request);
                let call = &mut self.calls[id];
                let cached = self.config.cached_loaders.get(&call.key).map(|freshness| {
                    let key = LoaderKey::new(&call.key, &props);
                    let lookup = self.caches.loaders.lookup(&key, now_ms);
                    (key, *freshness, lookup)
                });
                let refresh = match cached {
                    None => {
                        call.state = CallState::Asked;
                        false
                    }
                    Some((_, _, Lookup::Hit(value))) => {
                        call.state = CallState::Answered(value);
                        progressed = true;
                        continue;
                    }
                    Some((key, freshness, Lookup::Stale { value, refresh })) => {
                        call.state = CallState::Answered(value);
                        progressed = true;
                        let Some(ticket) = refresh else { continue };
                        call.slot = Some(CacheSlot {
                            key,
                            ticket,
                            freshness,
                        });
                        call.refreshing = true;
                        true
                    }
                    Some((key, freshness, Lookup::Miss(ticket))) => {
                        call.state = CallState::Asked;
                        call.slot = Some(CacheSlot {
                            key,
                            ticket,
                            freshness,
                        });
                        false
                    }
                };
                round.push(LoaderCall {
                    id,
                    key: call.key.clone(),
                    props,
                    refresh,
                });
            }
        }
        if round.is_empty() {
            self.done = true;
            Step::Done(Box::new(self.assemble()))
        } else {
            Step::NeedLoaders(round)
        }
    }

    /// Records the answer of a call handed out by [`Resolution::step`].
    fn answer(&mut self, id: CallId, result: Result<Value, String>) {
        let now_ms = self.now_ms();
        let cache: &LoaderCache = &self.caches.loaders;
        let Some(call) = self.calls.get_mut(id) else {
            return;
        };
        let slot = call.slot.take();
        if call.refreshing {
            // The page already has the stale value: the answer only refreshes the cache.
            call.refreshing = false;
            if let Some(slot) = slot {
                match result {
                    Ok(value) => {
                        cache.store(&slot.key, value, slot.freshness, slot.ticket, now_ms);
                    }
                    Err(message) => {
                        cache.fail(&slot.key, slot.ticket, now_ms);
                        self.effects.warn(format!(
                            "{}: refresh failed, the cached value was served: {message}",
                            call.key
                        ));
                    }
                }
            }
            return;
        }
        let value = match result {
            Ok(value) => {
                if let Some(slot) = slot {
                    cache.store(
                        &slot.key,
                        value.clone(),
                        slot.freshness,
                        slot.ticket,
                        now_ms,
                    );
                }
                value
            }
            Err(message) => match slot.and_then(|s| cache.fail(&s.key, s.ticket, now_ms)) {
                Some(stale) => {
                    self.effects.warn(format!(
                        "{}: the loader failed, a stale cached value was served: {message}",
                        call.key
                    ));
                    stale
                }
                None => {
                    self.effects.error(&call.key, "Commerce loader", message);
                    self.effects.degraded = true;
                    Value::Null
                }
            },
        };
        call.state = CallState::Answered(value);
    }

    fn assemble(&mut self) -> ResolvedPage {
        let calls = &self.calls;
        let result = |id: CallId| answered(calls, id).or(Some(Value::Null));
        let eager = self.request.is_eager();
        let device = self.request.device();
        let mut globals: Vec<ResolvedSection> = Vec::new();
        let mut sections: Vec<ResolvedSection> = Vec::new();
        let (page, layout_cache) = match &self.target {
            Target::Page { info, layout } => (info.as_ref(), layout.then_some(&self.caches.layout)),
            Target::Value => (None, None),
        };
        let mut single_value = None;
        // The entries go now, so what they built is held only by the values made from it
        // (which the sections' props are then made from in place).
        for Entry {
            node,
            lazy,
            global,
            layout,
            sections: memo,
        } in std::mem::take(&mut self.entries)
        {
            let value = node.materialize(&result).flatten();
            let made_once = matches!(node, Node::Value(_));
            drop(node);
            if matches!(self.target, Target::Value) {
                single_value = Some(value.clone().unwrap_or(Value::Null));
            }
            // A page cut at its bound holds `null` past it: never a layout section to share.
            if let (Some(block), Some(cache), Some(v), None) =
                (&layout, layout_cache, &value, &self.effects.cut)
            {
                cache.put(
                    self.snapshot.revision(),
                    block,
                    device,
                    self.request.now,
                    v.clone(),
                );
            }
            let made = match memo.0 {
                Some(memo) if made_once => memo
                    .get_or_init(|| EntrySections::of(&self.config, value).kept())
                    .clone(),
                _ => EntrySections::of(&self.config, value),
            };
            for warning in made.warnings {
                self.effects.warn(warning);
            }
            for section in made.sections {
                let section = ResolvedSection {
                    deferred: self.config.async_rendering && lazy && !eager,
                    ..section
                };
                if global {
                    globals.push(section)
                } else {
                    sections.push(section)
                }
            }
        }
        let mut seen: HashSet<String> = sections.iter().map(|s| s.component.clone()).collect();
        globals.retain(|g| seen.insert(g.component.clone()));
        globals.extend(sections);
        let origins = &self.config.production_origins;
        let seo = self
            .seo
            .as_ref()
            .and_then(|n| n.materialize(&result).flatten())
            .map(|v| relativize(&v, origins));
        let mut effects = std::mem::take(&mut self.effects);
        if let Some(cookie) = self.segment.set_cookie() {
            effects.set_cookies.push(cookie);
        }
        ResolvedPage {
            page: page.map(|p| p.name.clone()),
            path: page.map(|p| p.pattern.clone()),
            params: page.map(|p| p.params.clone()).unwrap_or_default(),
            not_found: page.is_some_and(|p| p.not_found),
            sections: globals,
            seo,
            effects,
            revision: self.snapshot.revision().to_string(),
            value: single_value.map(|v| relativize(&v, origins)),
        }
    }
}

/// A page-level item as a section: an object whose type is a registered section.
fn section_of(
    config: &ResolveConfig,
    effects: &mut Effects,
    item: Value,
) -> Option<ResolvedSection> {
    let Value::Object(object) = item else {
        return None;
    };
    let Some(rt) = object.resolve_type() else {
        effects.warn("a page section without __resolveType was dropped");
        return None;
    };
    if !config.sections.contains(rt) {
        effects.warn(format!("no component registered for {rt}; section dropped"));
        return None;
    }
    Some(ResolvedSection {
        component: rt.to_string(),
        props: section_props(object, &config.sections),
        deferred: false,
    })
}

/// Tells the host of `errors` past the `reported` first ones.
fn tell_errors(host: &dyn Host, errors: &[ResolveErrorEvent], reported: &mut usize) {
    for event in errors.iter().skip(*reported) {
        host.on_resolve_error(event);
    }
    *reported = errors.len();
}

/// The calls of a first pass, waiting to be handed out. A call nothing refers to any more (its
/// section came from a cache) is never handed to the host.
fn pending_calls(calls: Vec<PendingCall>, used: Vec<bool>) -> Vec<Call> {
    calls
        .into_iter()
        .zip(used)
        .map(|(PendingCall { key, props }, used)| Call {
            key,
            props,
            state: if used {
                CallState::Waiting
            } else {
                CallState::Answered(Value::Null)
            },
            slot: None,
            refreshing: false,
        })
        .collect()
}

/// Which calls the entries and SEO still refer to, directly or through other calls' props
/// (a call's props only refer to calls made before it).
fn used_calls(pass: &FirstPass) -> Vec<bool> {
    let mut used = vec![false; pass.calls.len()];
    for entry in &pass.entries {
        entry.node.mark_calls(&mut used);
    }
    if let Some(seo) = &pass.seo {
        seo.mark_calls(&mut used);
    }
    for id in (0..pass.calls.len()).rev() {
        if used[id] {
            pass.calls[id].props.mark_calls(&mut used);
        }
    }
    used
}

/// The caches a runtime shares between requests; all of them follow the content.
#[derive(Debug, Default)]
pub(crate) struct Caches {
    pub layout: LayoutCache,
    /// Layout sections after their section loaders (`section_loaders::LayoutOutputs`).
    pub layout_outputs: Arc<LayoutCache>,
    pub pages: PageCache,
    pub loaders: LoaderCache,
}

impl Caches {
    /// Forgets everything derived from earlier content (every swap, every purge).
    pub fn clear(&self) {
        self.layout.clear();
        self.layout_outputs.clear();
        self.pages.clear();
        self.loaders.clear();
    }
}

/// The synchronous pass over one page: globals, sections and SEO.
#[allow(clippy::too_many_arguments)]
fn first_pass(
    snapshot: &Snapshot,
    config: &ResolveConfig,
    request: &Request,
    page: &PageInfo,
    overrides: &Overrides,
    host: &dyn Host,
    segment: &mut Segment,
    layout_cache: Option<&LayoutCache>,
) -> FirstPass {
    let mut effects = Effects::default();
    let mut resolver = Resolver::new(
        snapshot,
        config,
        request,
        &page.params,
        overrides,
        host,
        segment,
        &mut effects,
    );
    let mut raw = Vec::new();
    if config.resolve_globals {
        raw.extend(globals(snapshot));
    }
    // Routes point at blocks; a missing one would contribute no sections and no SEO.
    let block = snapshot.block(&page.name).unwrap_or(&Value::Null);
    let page_key = intern(&page.name);
    let page_start = raw.len();
    raw.extend(sections_list(
        snapshot,
        &mut resolver,
        &page_key,
        block.get("sections").unwrap_or(&Value::Null),
    ));
    let entries = raw
        .iter()
        .enumerate()
        .map(|(i, section)| section_entry(&mut resolver, section, i < page_start, layout_cache))
        .collect();
    let seo = block
        .get("seo")
        .map(|raw| resolver.resolve_seo(&page_key, raw));
    let calls = std::mem::take(&mut resolver.calls);
    FirstPass {
        entries,
        seo,
        calls,
        effects,
    }
}

fn answered(calls: &[Call], id: CallId) -> Option<Value> {
    match &calls.get(id)?.state {
        CallState::Answered(v) => Some(v.clone()),
        _ => None,
    }
}

/// A page-level item before resolution, with where it lives in its block (for override ids).
pub(crate) struct RawSection {
    pub block: Key,
    pub path: Vec<String>,
    pub value: Value,
}

impl RawSection {
    fn path(&self) -> Vec<&str> {
        self.path.iter().map(String::as_str).collect()
    }
}

/// The Site block's theme, global sections and page sections (`site`, else `Site`).
pub(crate) fn globals(snapshot: &Snapshot) -> Vec<RawSection> {
    let (name, site) = match (snapshot.block("site"), snapshot.block("Site")) {
        (Some(s), _) => ("site", s),
        (None, Some(s)) => ("Site", s),
        (None, None) => return Vec::new(),
    };
    let block = intern(name);
    let mut raw = Vec::new();
    if let Some(theme) = site.get("theme").filter(|t| !t.is_null()) {
        raw.push(RawSection {
            block: block.clone(),
            path: vec!["theme".into()],
            value: theme.clone(),
        });
    }
    for field in ["global", "pageSections"] {
        let items = site
            .get(field)
            .and_then(Value::as_array)
            .unwrap_or_default();
        raw.extend(items.iter().enumerate().map(|(i, value)| RawSection {
            block: block.clone(),
            path: vec![field.into(), i.to_string()],
            value: value.clone(),
        }));
    }
    raw
}

/// The block name single-value resolutions are addressed by (override ids, error events).
const SINGLE_VALUE_BLOCK: &str = "__sitefile_value";

/// How many flags, wrappers, named blocks and `resolved` values a page's `sections` is followed
/// through to reach its list.
const SECTIONS_HOPS: usize = 20;

/// Picks which variants of a flag a walk over raw content follows: resolution follows the one
/// a request chooses, `sitefile check` every one.
pub(crate) trait VariantChooser {
    /// The chosen variants, as (index, unresolved value).
    type Chosen: IntoIterator<Item = (usize, Value)>;

    /// The variants of flag `flag`, at `path` inside block `block`, to follow.
    fn choose(&mut self, block: &Key, path: &[&str], flag: &Object) -> Self::Chosen;
}

impl VariantChooser for Resolver<'_> {
    type Chosen = Option<(usize, Value)>;

    fn choose(&mut self, block: &Key, path: &[&str], flag: &Object) -> Self::Chosen {
        self.choose_in(block, path, flag)
    }
}

/// Follows every variant of every flag (`sitefile check`: content lost on any request). A
/// flag met again at the same place with the same content is not followed twice: what it
/// leads to is already listed, and flags nested through saved blocks would otherwise branch
/// exponentially.
#[derive(Default)]
pub(crate) struct EveryVariant {
    followed: HashMap<(Key, String), Vec<Value>>,
}

impl VariantChooser for EveryVariant {
    type Chosen = Vec<(usize, Value)>;

    fn choose(&mut self, block: &Key, path: &[&str], flag: &Object) -> Self::Chosen {
        let flag_value = Value::object(flag.entries().to_vec());
        let seen = self
            .followed
            .entry((block.clone(), path.join(".")))
            .or_default();
        if seen.contains(&flag_value) {
            return Vec::new();
        }
        seen.push(flag_value);
        variants_of(flag)
            .map(|(_, variants)| variants)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i, v.get("value")?.clone())))
            .collect()
    }
}

/// The raw list of page `page`'s `sections`: a list as it is; a flag or a `{variants}` wrapper
/// gives the values `chooser` picks, a named block its content, `resolved` its `data`, followed
/// until a list appears. Anything else is a page without sections.
pub(crate) fn sections_list(
    snapshot: &Snapshot,
    chooser: &mut impl VariantChooser,
    page: &Key,
    sections: &Value,
) -> Vec<RawSection> {
    let mut out = Vec::new();
    follow_sections(
        snapshot,
        chooser,
        page.clone(),
        vec!["sections".into()],
        sections.clone(),
        SECTIONS_HOPS,
        &mut out,
    );
    out
}

/// [`sections_list`] from `value`, at `path` inside `block`, with `hops` left.
fn follow_sections(
    snapshot: &Snapshot,
    chooser: &mut impl VariantChooser,
    mut block: Key,
    mut path: Vec<String>,
    mut value: Value,
    hops: usize,
    out: &mut Vec<RawSection>,
) {
    for hop in 0..hops {
        if let Some(items) = value.as_array() {
            out.extend(items.iter().enumerate().map(|(i, item)| RawSection {
                block: block.clone(),
                path: path.iter().cloned().chain([i.to_string()]).collect(),
                value: item.clone(),
            }));
            return;
        }
        let Some(o) = value.as_object() else { return };
        let rt = o.resolve_type();
        let flag = match rt {
            Some(rt) => keys::is_flag(rt),
            None => o.get("variants").and_then(Value::as_array).is_some(),
        };
        if flag {
            let segments: Vec<&str> = path.iter().map(String::as_str).collect();
            for (i, chosen) in chooser.choose(&block, &segments, o) {
                let mut path = path.clone();
                path.extend(["variants".into(), i.to_string(), "value".into()]);
                let left = hops - hop - 1;
                follow_sections(snapshot, chooser, block.clone(), path, chosen, left, out);
            }
            return;
        }
        let (next, next_block) = match rt {
            Some(keys::RESOLVED) => (o.get("data").cloned().unwrap_or_default(), None),
            Some(name) => match snapshot.block(name) {
                Some(saved) => (merged_reference(saved, o), Some(intern(name))),
                None => return,
            },
            None => return,
        };
        match next_block {
            Some(name) => {
                block = name;
                path.clear();
            }
            None => path.push("data".into()),
        }
        value = next;
    }
}

/// One raw section resolved (or served from the layout cache).
fn section_entry(
    resolver: &mut Resolver<'_>,
    raw: &RawSection,
    global: bool,
    layout_cache: Option<&LayoutCache>,
) -> Entry {
    let layout = layout_cache.and_then(|cache| {
        let block = layout_block(
            resolver.snapshot,
            &resolver.config.layout_sections,
            &raw.value,
        )?;
        let request = resolver.request;
        // Layout output is kept per device class, so the page varies on it either way.
        resolver.effects.vary("device");
        Some(
            match cache.get(
                resolver.snapshot.revision(),
                block,
                request.device(),
                request.now,
            ) {
                Some(hit) => Err(hit),
                None => Ok(block.to_string()),
            },
        )
    });
    if let Some(Err(hit)) = layout {
        return Entry::new(Node::Value(hit), false, global, None);
    }
    let (node, lazy) = resolver.resolve_page_section(&raw.block, &raw.path(), &raw.value);
    Entry::new(node, lazy, global, layout.and_then(Result::ok))
}

/// The saved block a raw page section names, when it reaches a layout section within five
/// named-block hops.
fn layout_block<'v>(
    snapshot: &Snapshot,
    layout: &HashSet<String>,
    raw: &'v Value,
) -> Option<&'v str> {
    if layout.is_empty() {
        return None;
    }
    let name = raw.resolve_type()?;
    let mut current = name;
    for _ in 0..5 {
        let block = snapshot.block(current)?;
        let rt = block.resolve_type()?;
        if layout.contains(rt) {
            return Some(name);
        }
        current = rt;
    }
    None
}
