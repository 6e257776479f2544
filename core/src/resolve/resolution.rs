//! The resolution state machine a host drives: `next()` hands out rounds of loader calls,
//! `provide()` takes their results, and the last `next()` returns the page.

use super::config::ResolveConfig;
use super::engine::{PendingCall, Resolver};
use super::layout_cache::LayoutCache;
use super::loader_props;
use super::node::{CallId, Node};
use super::origins::relativize;
use super::page::{ResolvedPage, ResolvedSection};
use super::page_cache::{FirstPass, PageCache};
use crate::content::Snapshot;
use crate::effects::Effects;
use crate::matchers::{FeatureFlagAdapter, Overrides, Segment};
use crate::request::Request;
use crate::value::{Key, RESOLVE_TYPE, Value, intern};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// A loader the host must run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoaderCall {
    /// Identifies the call in [`Resolution::provide`].
    pub id: CallId,
    /// The registered loader key.
    pub key: String,
    /// Fully resolved props, with the page's path, URL and query injected.
    pub props: Value,
}

/// What the host must do next.
#[derive(Debug)]
pub enum Step {
    /// Run these loaders (concurrently), `provide` every result, then call `next` again.
    NeedLoaders(Vec<LoaderCall>),
    /// Resolution is complete.
    Done(Box<ResolvedPage>),
}

/// Per-request inputs besides the request itself.
#[derive(Default, Clone)]
pub struct RequestOptions {
    /// The feature-flag adapter for this request (`isFeatureEnabled`, `getFeatureFlagVariant`).
    pub feature_flags: Option<Arc<dyn FeatureFlagAdapter + Send + Sync>>,
    /// The request renders a draft or a preview overlay: the layout and page caches are
    /// neither read nor written.
    pub bypass_caches: bool,
}

#[derive(Debug)]
enum CallState {
    Waiting,
    Asked,
    Answered(Value),
}

#[derive(Debug)]
struct Call {
    key: String,
    props: Node,
    state: CallState,
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    node: Node,
    lazy: bool,
    global: bool,
    /// Layout block to store the output under (a cache miss).
    layout: Option<String>,
}

struct PageInfo {
    name: String,
    pattern: String,
    params: BTreeMap<String, String>,
}

/// One request's resolution. Owns everything it needs, so a host can keep it across awaits.
pub struct Resolution {
    snapshot: Arc<Snapshot>,
    config: Arc<ResolveConfig>,
    request: Request,
    layout_cache: Option<Arc<LayoutCache>>,
    page: Option<PageInfo>,
    entries: Vec<Entry>,
    seo: Option<Node>,
    calls: Vec<Call>,
    effects: Effects,
    segment: Segment,
}

impl Resolution {
    /// Runs the synchronous pass for the page serving `request`'s path (or takes it from the
    /// page cache).
    pub(crate) fn for_page(
        snapshot: Arc<Snapshot>,
        config: Arc<ResolveConfig>,
        request: Request,
        caches: &Caches,
        options: RequestOptions,
    ) -> Resolution {
        let overrides = Overrides::from_request(&request);
        let mut segment = Segment::from_request(&request);
        let use_caches = !options.bypass_caches;
        let layout_cache = use_caches.then(|| caches.layout.clone());
        let found = snapshot.routes().find(request.path()).map(|m| PageInfo {
            name: m.name.to_string(),
            pattern: m.pattern.to_string(),
            params: m.params,
        });
        let mut pass = FirstPass {
            entries: Vec::new(),
            seo: None,
            calls: Vec::new(),
            effects: Effects::default(),
        };
        if let Some(page) = &found {
            // The page cache only serves requests that force nothing and carry no adapter.
            let cacheable = use_caches && overrides.is_empty() && options.feature_flags.is_none();
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
                    let pass = first_pass(
                        &snapshot,
                        &config,
                        &request,
                        page,
                        &overrides,
                        &options,
                        &mut segment,
                        layout_cache.as_deref(),
                    );
                    if cacheable {
                        caches
                            .pages
                            .put(snapshot.revision(), cache_key(), &request, &pass);
                    }
                    pass
                }
            };
        }
        if let Some(cache) = &layout_cache {
            // Layout sections stored since this pass was made (or cached) are taken as they are.
            for entry in &mut pass.entries {
                let hit = entry.layout.as_deref().and_then(|block| {
                    cache.get(snapshot.revision(), block, request.device(), request.now)
                });
                if let Some(hit) = hit {
                    entry.node = Node::Value(hit);
                    entry.layout = None;
                }
            }
        }
        let used = used_calls(&pass);
        Resolution {
            snapshot,
            config,
            request,
            layout_cache,
            page: found,
            entries: pass.entries,
            seo: pass.seo,
            calls: pass
                .calls
                .into_iter()
                .zip(used)
                .map(|(PendingCall { key, props }, used)| Call {
                    key,
                    props,
                    // A call nothing refers to any more (its section came from a cache) is
                    // never handed to the host.
                    state: if used {
                        CallState::Waiting
                    } else {
                        CallState::Answered(Value::Null)
                    },
                })
                .collect(),
            effects: pass.effects,
            segment,
        }
    }

    /// The next round of loaders whose props are complete, or the finished page. Every call of
    /// a round must be answered with [`Resolution::provide`] before calling `next` again; a call
    /// left unanswered counts as a failed loader.
    #[allow(clippy::should_implement_trait)] // a state machine step, not an iterator
    pub fn next(&mut self) -> Step {
        for call in &mut self.calls {
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
        let mut round = Vec::new();
        for id in 0..self.calls.len() {
            if !matches!(self.calls[id].state, CallState::Waiting) {
                continue;
            }
            let props = self.calls[id]
                .props
                .materialize(&|dep| answered(&self.calls, dep));
            if let Some(props) = props {
                let props = loader_props::inject(props.unwrap_or(Value::Null), &self.request);
                self.calls[id].state = CallState::Asked;
                round.push(LoaderCall {
                    id,
                    key: self.calls[id].key.clone(),
                    props,
                });
            }
        }
        if round.is_empty() {
            Step::Done(Box::new(self.assemble()))
        } else {
            Step::NeedLoaders(round)
        }
    }

    /// The result of loader call `id`: its value, or an error message (the value becomes
    /// `null`, an `onResolveError` effect is recorded and the page is marked degraded).
    pub fn provide(&mut self, id: CallId, result: Result<Value, String>) {
        let Some(call) = self.calls.get_mut(id) else {
            return;
        };
        let value = match result {
            Ok(v) => v,
            Err(message) => {
                self.effects.error(&call.key, "Commerce loader", message);
                self.effects.degraded = true;
                Value::Null
            }
        };
        call.state = CallState::Answered(value);
    }

    /// Drives the whole resolution with a synchronous loader function.
    pub fn run(
        mut self,
        mut loader: impl FnMut(&LoaderCall) -> Result<Value, String>,
    ) -> ResolvedPage {
        loop {
            match self.next() {
                Step::NeedLoaders(calls) => {
                    for call in &calls {
                        let result = loader(call);
                        self.provide(call.id, result);
                    }
                }
                Step::Done(page) => return *page,
            }
        }
    }

    fn assemble(&mut self) -> ResolvedPage {
        let calls = &self.calls;
        let result = |id: CallId| answered(calls, id).or(Some(Value::Null));
        let bot = self.request.is_bot();
        let device = self.request.device();
        let mut globals: Vec<ResolvedSection> = Vec::new();
        let mut sections: Vec<ResolvedSection> = Vec::new();
        for entry in &self.entries {
            let value = entry.node.materialize(&result).flatten();
            if let (Some(block), Some(cache), Some(v)) = (&entry.layout, &self.layout_cache, &value)
            {
                cache.put(
                    self.snapshot.revision(),
                    block,
                    device,
                    self.request.now,
                    v.clone(),
                );
            }
            let items = match value {
                Some(Value::Array(a)) => a.items().to_vec(),
                Some(v) => vec![v],
                None => Vec::new(),
            };
            for item in items {
                let Some(section) = section_of(&self.config, &mut self.effects, &item) else {
                    continue;
                };
                let section = ResolvedSection {
                    deferred: self.config.async_rendering && entry.lazy && !bot,
                    ..section
                };
                if entry.global {
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
        for section in &mut globals {
            section.props = relativize(&section.props, origins);
        }
        let seo = self
            .seo
            .as_ref()
            .and_then(|n| n.materialize(&result).flatten())
            .map(|v| relativize(&v, origins));
        let mut effects = std::mem::take(&mut self.effects);
        if let Some(cookie) = self.segment.set_cookie() {
            effects.set_cookies.push(cookie);
        }
        let page = self.page.as_ref();
        ResolvedPage {
            page: page.map(|p| p.name.clone()),
            path: page.map(|p| p.pattern.clone()),
            params: page.map(|p| p.params.clone()).unwrap_or_default(),
            sections: globals,
            seo,
            effects,
            revision: self.snapshot.revision().to_string(),
        }
    }
}

/// A page-level item as a section: an object whose type is a registered section.
fn section_of(
    config: &ResolveConfig,
    effects: &mut Effects,
    item: &Value,
) -> Option<ResolvedSection> {
    let object = item.as_object()?;
    let Some(rt) = object.resolve_type() else {
        effects.warn("a page section without __resolveType was dropped");
        return None;
    };
    if !config.sections.contains(rt) {
        effects.warn(format!("no component registered for {rt}; section dropped"));
        return None;
    }
    let props: Vec<(Key, Value)> = object
        .entries()
        .iter()
        .filter(|(k, _)| &**k != RESOLVE_TYPE)
        .cloned()
        .collect();
    Some(ResolvedSection {
        component: rt.to_string(),
        props: Value::object(props),
        deferred: false,
    })
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

/// The caches a runtime shares between requests.
#[derive(Debug, Default)]
pub(crate) struct Caches {
    pub layout: Arc<LayoutCache>,
    pub pages: PageCache,
}

/// The synchronous pass over one page: globals, sections and SEO.
#[allow(clippy::too_many_arguments)]
fn first_pass(
    snapshot: &Snapshot,
    config: &ResolveConfig,
    request: &Request,
    page: &PageInfo,
    overrides: &Overrides,
    options: &RequestOptions,
    segment: &mut Segment,
    layout_cache: Option<&LayoutCache>,
) -> FirstPass {
    let mut effects = Effects::default();
    let flags = options
        .feature_flags
        .as_deref()
        .map(|f| f as &dyn FeatureFlagAdapter);
    let mut resolver = Resolver::new(
        snapshot,
        config,
        request,
        &page.params,
        overrides,
        flags,
        segment,
        &mut effects,
    );
    let mut entries = Vec::new();
    if config.resolve_globals {
        entries.extend(globals(&mut resolver));
    }
    let block = snapshot.block(&page.name).expect("routes point at blocks");
    let page_key = intern(&page.name);
    entries.extend(page_sections(
        &mut resolver,
        &page_key,
        block.get("sections").unwrap_or(&Value::Null),
        layout_cache,
    ));
    let seo = block
        .get("seo")
        .map(|raw| resolver.resolve_in(&page_key, &["seo"], raw));
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

/// The Site block's theme, global sections and page sections, resolved like page sections.
fn globals(resolver: &mut Resolver<'_>) -> Vec<Entry> {
    let snapshot = resolver.snapshot;
    let (name, site) = match (snapshot.block("site"), snapshot.block("Site")) {
        (Some(s), _) => ("site", s),
        (None, Some(s)) => ("Site", s),
        (None, None) => return Vec::new(),
    };
    let key = intern(name);
    let mut raw: Vec<(String, &Value)> = Vec::new();
    if let Some(theme) = site.get("theme").filter(|t| !t.is_null()) {
        raw.push(("theme".to_string(), theme));
    }
    for field in ["global", "pageSections"] {
        if let Some(items) = site.get(field).and_then(Value::as_array) {
            raw.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("{field}.{i}"), v)),
            );
        }
    }
    raw.into_iter()
        .map(|(path, value)| {
            let segments: Vec<&str> = path.split('.').collect();
            resolver.saw_lazy = false;
            let node = resolver.resolve_in(&key, &segments, value);
            Entry {
                node,
                lazy: resolver.saw_lazy,
                global: true,
                layout: None,
            }
        })
        .collect()
}

/// The page's `sections`: a list, or a flag (or `{variants}` wrapper) choosing a whole list.
fn page_sections(
    resolver: &mut Resolver<'_>,
    page: &Key,
    sections: &Value,
    layout_cache: Option<&LayoutCache>,
) -> Vec<Entry> {
    let Some(list) = sections.as_array() else {
        let raw = match sections.as_object() {
            Some(o) if o.resolve_type().is_none() && o.get("variants").is_some() => {
                let mut entries = vec![(
                    intern(RESOLVE_TYPE),
                    Value::string("website/flags/multivariate.ts"),
                )];
                entries.extend(o.entries().iter().cloned());
                Value::object(entries)
            }
            _ => sections.clone(),
        };
        resolver.saw_lazy = false;
        let node = resolver.resolve_in(page, &["sections"], &raw);
        return vec![Entry {
            node,
            lazy: resolver.saw_lazy,
            global: false,
            layout: None,
        }];
    };
    let revision = layout_cache.map(|_| resolver.snapshot.revision().to_string());
    let device = resolver.request.device();
    let now = resolver.request.now;
    list.iter()
        .enumerate()
        .map(|(i, raw)| {
            let layout = layout_cache
                .zip(revision.as_deref())
                .and_then(|(cache, revision)| {
                    let block =
                        layout_block(resolver.snapshot, &resolver.config.layout_sections, raw)?;
                    Some(match cache.get(revision, block, device, now) {
                        Some(hit) => Err(hit),
                        None => Ok(block.to_string()),
                    })
                });
            if let Some(Err(hit)) = layout {
                return Entry {
                    node: Node::Value(hit),
                    lazy: false,
                    global: false,
                    layout: None,
                };
            }
            resolver.saw_lazy = false;
            let index = i.to_string();
            let node = resolver.resolve_in(page, &["sections", &index], raw);
            Entry {
                node,
                lazy: resolver.saw_lazy,
                global: false,
                layout: layout.and_then(Result::ok),
            }
        })
        .collect()
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
