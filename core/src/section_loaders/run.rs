//! One run of the section loaders over a page's sections, driven like a resolution: `next`
//! hands out a round of calls, `provide` takes their answers.

use super::LayoutOutputs;
use crate::device::Device;
use crate::effects::{Effects, ResolveErrorEvent};
use crate::resolve::{
    CallId, LoaderCall, PAGE_PATH, PAGE_URL, ResolutionMisuse, ResolveConfig, ResolvedSection,
};
use crate::value::{Key, Value, intern};
use serde::Serialize;
use std::collections::HashSet;
use std::sync::Arc;

/// Rounds past the first: how deep nested sections have their loaders run.
pub const MAX_NESTING: usize = 8;

/// The `onResolveError` context of a failed section loader.
const CONTEXT: &str = "Section loader";
/// The keys of a nested section.
const COMPONENT: &str = "Component";
const PROPS: &str = "props";

/// What the host must do next.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "step", content = "value", rename_all = "camelCase")]
pub enum SectionStep {
    /// Run these section loaders (the call's `key` is the section key), `provide` every
    /// answer, then call `next` again.
    NeedLoaders(Vec<LoaderCall>),
    /// Every loader ran.
    Done(SectionsDone),
}

/// The sections with their loaders' props, and what failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
// The name the npm package has always given it.
#[cfg_attr(feature = "ts", ts(rename = "SectionLoadersResult"))]
pub struct SectionsDone {
    /// The sections, in order, each with the props its loader returned (its own when the loader
    /// failed).
    #[cfg_attr(
        feature = "ts",
        ts(as = "Vec<crate::resolve::SectionJson<'static, false>>")
    )]
    pub sections: Vec<ResolvedSection>,
    /// `errors` (one per failed loader) and `degraded` (a loader of a section that is not a
    /// layout section failed: a host keeps the page out of shared caches, as the edge does when
    /// it reads `X-Platform-Degraded: true`).
    pub effects: Effects,
}

/// What every section loader of a run gets as its third argument (`loader(props, request,
/// ctx)`, as in the reference): the request's device class (`{"device": "mobile"}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "SectionLoaderContext"))]
pub struct SectionContext {
    /// The request's device class.
    pub device: Device,
}

/// Where a call's answer goes: a top-level section, or a nested section inside one (the path of
/// keys and list indexes from the section's props to the nested section).
#[derive(Debug, Clone)]
struct Target {
    section: usize,
    path: Vec<Step>,
}

#[derive(Debug, Clone)]
enum Step {
    Key(Key),
    Index(usize),
}

#[derive(Debug)]
struct Call {
    target: Target,
    component: String,
    answer: Option<Result<Value, String>>,
}

/// The section loaders of one page.
pub struct SectionLoaderRun {
    sections: Vec<ResolvedSection>,
    with_loaders: HashSet<String>,
    config: Arc<ResolveConfig>,
    url: String,
    path: String,
    context: SectionContext,
    calls: Vec<Call>,
    /// The calls of the round handed out last.
    round: std::ops::Range<CallId>,
    /// Targets whose loaders the next round calls.
    queued: Vec<Target>,
    depth: usize,
    effects: Effects,
    done: bool,
    /// Layout sections' outputs shared across pages (none for a run that keeps none).
    layout: Option<LayoutOutputs>,
}

impl SectionLoaderRun {
    /// A run over `sections` for a request for `url` (with path `path`): sections whose
    /// registered key (`config.sections`) is in `with_loaders` have their loader called; a
    /// failure of a layout section's loader (`config.layout_sections`) or of a non-critical one
    /// (`config.non_critical_sections`) does not degrade the page.
    /// With `layout`, a layout section whose output is kept there is served from it, its loaders
    /// not called, and the others' outputs are kept when the run ends.
    pub(crate) fn new(
        sections: Vec<ResolvedSection>,
        with_loaders: HashSet<String>,
        config: Arc<ResolveConfig>,
        (url, path): (&str, &str),
        context: SectionContext,
        layout: Option<LayoutOutputs>,
    ) -> SectionLoaderRun {
        let mut run = SectionLoaderRun {
            sections,
            with_loaders,
            config,
            url: url.to_string(),
            path: path.to_string(),
            context,
            calls: Vec::new(),
            round: 0..0,
            queued: Vec::new(),
            depth: 0,
            effects: Effects::default(),
            done: false,
            layout,
        };
        for index in 0..run.sections.len() {
            let target = Target {
                section: index,
                path: Vec::new(),
            };
            let queued = run.queued.len();
            if run.has_loader(&run.sections[index].component) {
                run.queued.push(target);
            } else {
                run.queue_nested(&target);
            }
            if run.queued.len() > queued {
                run.serve_kept_layout(index, queued);
            }
        }
        run
    }

    /// The third argument every section loader of this run gets.
    pub fn context(&self) -> SectionContext {
        self.context
    }

    /// Serves layout section `index` from the kept outputs when one is fresh, dropping the
    /// loader calls queued for it (from `queued` on).
    fn serve_kept_layout(&mut self, index: usize, queued: usize) {
        let section = &self.sections[index];
        if !self.config.layout_sections.contains(&section.component) {
            return;
        }
        let Some(layout) = self.layout.as_mut() else {
            return;
        };
        if let Some(props) = layout.cached(index, section) {
            self.sections[index].props = props;
            self.queued.truncate(queued);
        }
    }

    /// The next round of calls, or the finished sections once none is left. Every call of the
    /// round before must have been answered.
    // `next` as in `Resolution::next`, which hosts drive the same way; not an iterator (it fails).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<SectionStep, ResolutionMisuse> {
        if self.done {
            return Err(ResolutionMisuse::Finished);
        }
        if let Some(id) = self
            .round
            .clone()
            .find(|&id| self.calls[id].answer.is_none())
        {
            // Asking again before the round is answered hands nothing new out.
            return Err(ResolutionMisuse::UnknownCall(id));
        }
        self.apply_round();
        if self.depth > MAX_NESTING && !self.queued.is_empty() {
            self.queued.clear();
            self.effects.warn(format!(
                "section loaders returned sections nested more than {MAX_NESTING} rounds deep; \
                 theirs did not run"
            ));
        }
        if self.queued.is_empty() {
            self.done = true;
            if let Some(layout) = self.layout.take() {
                layout.keep(&self.sections);
            }
            return Ok(SectionStep::Done(SectionsDone {
                sections: std::mem::take(&mut self.sections),
                effects: std::mem::take(&mut self.effects),
            }));
        }
        self.depth += 1;
        let start = self.calls.len();
        let mut handed = Vec::new();
        for target in std::mem::take(&mut self.queued) {
            let Some((component, props)) = self.section_at(&target) else {
                continue;
            };
            handed.push(LoaderCall {
                id: self.calls.len(),
                key: component.clone(),
                props: self.with_page(props),
                refresh: false,
            });
            self.calls.push(Call {
                target,
                component,
                answer: None,
            });
        }
        self.round = start..self.calls.len();
        Ok(SectionStep::NeedLoaders(handed))
    }

    /// The answer to call `id`: the loader's value (the section's new props) or why it failed.
    pub fn provide(
        &mut self,
        id: CallId,
        result: Result<Value, String>,
    ) -> Result<(), ResolutionMisuse> {
        if self.done {
            return Err(ResolutionMisuse::Finished);
        }
        if !self.round.contains(&id) {
            return Err(ResolutionMisuse::UnknownCall(id));
        }
        let call = &mut self.calls[id];
        if call.answer.is_some() {
            return Err(ResolutionMisuse::AlreadyAnswered(id));
        }
        call.answer = Some(result);
        Ok(())
    }

    /// Writes the answered round into the sections and queues the nested sections they hold.
    fn apply_round(&mut self) {
        for id in self.round.clone() {
            let Some(answer) = self.calls[id].answer.take() else {
                continue;
            };
            let target = self.calls[id].target.clone();
            match answer {
                Ok(props) => self.set_props(&target, props),
                Err(message) => {
                    if let Some(layout) = self.layout.as_mut() {
                        layout.failed(target.section);
                    }
                    let component = self.calls[id].component.clone();
                    if !self.config.layout_sections.contains(&component)
                        && !self.config.non_critical_sections.contains(&component)
                    {
                        self.effects.degraded = true;
                    }
                    self.effects.errors.push(ResolveErrorEvent {
                        resolve_type: component,
                        context: CONTEXT.to_string(),
                        message,
                    });
                }
            }
            self.queue_nested(&target);
        }
        self.round = self.calls.len()..self.calls.len();
    }

    /// The loader's props: the section's, with the page's URL and path unless it has them.
    fn with_page(&self, props: Value) -> Value {
        let Some(object) = props.as_object() else {
            return props;
        };
        let mut entries = object.entries().to_vec();
        for (key, value) in [(PAGE_URL, &self.url), (PAGE_PATH, &self.path)] {
            if object.get(key).is_none() {
                entries.push((intern(key), Value::string(value)));
            }
        }
        Value::object(entries)
    }

    /// The component and props at `target`.
    fn section_at(&self, target: &Target) -> Option<(String, Value)> {
        let section = self.sections.get(target.section)?;
        if target.path.is_empty() {
            return Some((section.component.clone(), section.props.clone()));
        }
        let nested = walk(&section.props, &target.path)?;
        let component = nested.get(COMPONENT)?.as_str()?.to_string();
        Some((component, nested.get(PROPS)?.clone()))
    }

    fn set_props(&mut self, target: &Target, props: Value) {
        let Some(section) = self.sections.get_mut(target.section) else {
            return;
        };
        if target.path.is_empty() {
            section.props = props;
            return;
        }
        let mut path = target.path.clone();
        path.push(Step::Key(intern(PROPS)));
        section.props = replaced(&section.props, &path, props);
    }

    /// Queues the nested sections with loaders found in the props at `target`.
    fn queue_nested(&mut self, target: &Target) {
        let Some(section) = self.sections.get(target.section) else {
            return;
        };
        let props = if target.path.is_empty() {
            Some(&section.props)
        } else {
            walk(&section.props, &target.path).and_then(|n| n.get(PROPS))
        };
        // A handle on the props (values share their storage), so the scan may record warnings.
        let Some(props) = props.cloned() else {
            return;
        };
        let mut base = target.path.clone();
        if !target.path.is_empty() {
            base.push(Step::Key(intern(PROPS)));
        }
        let mut found = Vec::new();
        self.scan(&props, &base, 0, &mut found);
        self.queued.extend(found.into_iter().map(|path| Target {
            section: target.section,
            path,
        }));
    }

    /// Collects into `found` the paths of the nested sections with a loader in `props` (at
    /// `base`), directly or in lists, looking through nested sections without one.
    fn scan(&mut self, props: &Value, base: &[Step], levels: usize, found: &mut Vec<Vec<Step>>) {
        let Some(object) = props.as_object() else {
            return;
        };
        for (key, value) in object.entries() {
            let mut at = base.to_vec();
            at.push(Step::Key(key.clone()));
            let items: Vec<(Option<usize>, &Value)> = match value.as_array() {
                Some(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (Some(i), v))
                    .collect(),
                None => vec![(None, value)],
            };
            for (index, item) in items {
                let Some(component) = nested_component(item) else {
                    continue;
                };
                let mut item_at = at.clone();
                item_at.extend(index.map(Step::Index));
                if self.has_loader(component) {
                    found.push(item_at);
                } else if levels < MAX_NESTING {
                    item_at.push(Step::Key(intern(PROPS)));
                    if let Some(inner) = item.get(PROPS) {
                        self.scan(inner, &item_at, levels + 1, found);
                    }
                } else {
                    self.effects.warn(format!(
                        "nested sections deeper than {MAX_NESTING} levels under {component}: \
                         their section loaders did not run"
                    ));
                }
            }
        }
    }

    /// Whether the section `component` names (with or without `.tsx`) has a loader.
    fn has_loader(&self, component: &str) -> bool {
        let key = self.config.sections.lookup(component).unwrap_or(component);
        self.with_loaders.contains(key)
    }
}

/// The component of `value` when it is a nested section (`{"Component": <key>, "props":
/// {...}}`).
fn nested_component(value: &Value) -> Option<&str> {
    value.get(PROPS)?.as_object()?;
    value.get(COMPONENT)?.as_str()
}

/// The value at `path` under `value`.
fn walk<'v>(value: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(key) => v.get(key),
        Step::Index(index) => v.as_array()?.get(*index),
    })
}

/// `value` with the value at `path` replaced by `new` (containers on the path rebuilt).
fn replaced(value: &Value, path: &[Step], new: Value) -> Value {
    let Some((step, rest)) = path.split_first() else {
        return new;
    };
    match step {
        Step::Key(key) => match value.as_object() {
            Some(object) => Value::object(
                object
                    .entries()
                    .iter()
                    .map(|(k, v)| match k == key {
                        true => (k.clone(), replaced(v, rest, new.clone())),
                        false => (k.clone(), v.clone()),
                    })
                    .collect(),
            ),
            None => value.clone(),
        },
        Step::Index(index) => match value.as_array() {
            Some(items) => Value::array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match i == *index {
                        true => replaced(v, rest, new.clone()),
                        false => v.clone(),
                    })
                    .collect(),
            ),
            None => value.clone(),
        },
    }
}
