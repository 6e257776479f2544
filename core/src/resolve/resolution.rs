//! The resolution state machine a host drives: `next()` hands out rounds of loader calls,
//! `provide()` takes their results, and the last `next()` returns the page.

use super::caches::Caches;
use super::config::ResolveConfig;
use super::engine::{PendingCall, Resolver};
use super::entry::{Entry, EntrySections, SectionsMemo};
use super::first_pass::{FirstPass, PageInfo, first_pass};
use super::loader_props;
use super::node::{CallId, Node};
use super::origins::relativize;
use super::page::{ResolvedPage, ResolvedSection};
use super::page_cache::PageCache;
use super::steps::{LoaderCall, Step};
use crate::content::Snapshot;
use crate::effects::{Effects, ResolveErrorEvent};
use crate::errors::{ErrorCode, HasErrorCode};
use crate::host::{Host, NoHost};
use crate::loader_cache::{Freshness, LoaderCache, LoaderKey, Lookup, Ticket};
use crate::matchers::{Experiment, ExperimentAssignment, Overrides, Segment};
use crate::request::Request;
use crate::value::{Value, intern};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

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

fn answered(calls: &[Call], id: CallId) -> Option<Value> {
    match &calls.get(id)?.state {
        CallState::Answered(v) => Some(v.clone()),
        _ => None,
    }
}

/// The block name single-value resolutions are addressed by (override ids, error events).
const SINGLE_VALUE_BLOCK: &str = "__sitefile_value";
