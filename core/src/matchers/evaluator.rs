//! Evaluating the rule of a flag variant: overrides, saved matcher references, stickiness and
//! dispatch to the registered matcher.

use super::BlockLookup;
use super::builtins::{self, Builtin, Inputs, RuleFields, keys};
use super::overrides::Overrides;
use super::registry::{Entry, MatcherRegistry};
use super::segment::Segment;
use crate::effects::Effects;
use crate::host::Host;
use crate::host::MatcherContext;
use crate::request::Request;
use crate::value::{Key, RESOLVE_TYPE, Value};

/// Deepest nesting of rules (`multi`, `negate` and saved-matcher hops together).
const MAX_DEPTH: usize = 32;

/// Most matcher evaluations for one variant rule, so shared saved matchers fanned out by `multi`
/// cannot make an evaluation exponential.
const MAX_STEPS: u32 = 4096;

/// `traffic` when a random rule does not set a number.
const DEFAULT_TRAFFIC: f64 = 0.5;

/// Evaluates variant rules for one request.
pub struct Evaluator<'a> {
    /// The content's blocks, for saved matcher references.
    pub blocks: &'a dyn BlockLookup,
    /// The matchers the site can use.
    pub registry: &'a MatcherRegistry,
    /// The request being resolved.
    pub request: &'a Request,
    /// Forced values from `x-platform-matchers-override`.
    pub overrides: &'a Overrides,
    /// The sticky A/B state (and the request's random stream).
    pub segment: &'a mut Segment,
    /// Where warnings and vary facets are recorded.
    pub effects: &'a mut Effects,
    /// The host's callbacks: custom matchers and the feature-flag adapter.
    pub host: &'a dyn Host,
    /// Whether the host runs with `NODE_ENV=production`.
    pub production: bool,
}

/// How an override addresses a rule; rendered only when the request carries overrides.
#[derive(Clone, Copy)]
enum RuleId<'v, 'p> {
    /// The variant's own rule: `<blockId>@<path>`, from the caller.
    Inline(&'p dyn Fn() -> String),
    /// The root of a saved matcher block (addressed by its name, never by this id).
    Saved(&'v str),
    /// A rule nested in another (`matchers.<i>` or `matcher`).
    Child {
        parent: &'p RuleId<'v, 'p>,
        key: &'static str,
        index: Option<usize>,
    },
}

impl RuleId<'_, '_> {
    fn render(&self) -> String {
        match self {
            RuleId::Inline(id) => id(),
            RuleId::Saved(name) => format!("{name}@"),
            RuleId::Child { parent, key, index } => {
                let mut id = parent.render();
                if !matches!(parent, RuleId::Saved(_)) {
                    id.push('.');
                }
                id.push_str(key);
                if let Some(i) = index {
                    id.push('.');
                    id.push_str(&i.to_string());
                }
                id
            }
        }
    }
}

/// One object of a rule being evaluated. Following a saved matcher adds the saved block as a new
/// layer below the referencing rule; a setting is read from the top-most layer that has it, so
/// the referencing rule's extra fields override the saved settings.
struct Layer<'v, 'p> {
    rule: &'v Value,
    id: RuleId<'v, 'p>,
    above: Option<&'p Layer<'v, 'p>>,
}

impl<'v> Layer<'v, '_> {
    /// The setting `key` with the id of the layer that holds it.
    fn lookup(&self, key: &str) -> Option<(&'v Value, RuleId<'v, '_>)> {
        let mut found = None;
        let mut layer = Some(self);
        while let Some(l) = layer {
            if let Some(value) = l.rule.get(key) {
                found = Some((value, l.id));
            }
            layer = l.above;
        }
        found
    }

    /// The merged rule object (what a custom matcher receives), typed `resolve_type`.
    fn merged(&self, resolve_type: &str) -> Value {
        let mut entries: Vec<(Key, Value)> = Vec::new();
        let mut layer = Some(self);
        while let Some(l) = layer {
            if let Some(object) = l.rule.as_object() {
                entries.extend(object.entries().iter().cloned());
            }
            layer = l.above;
        }
        entries.push((Key::from(RESOLVE_TYPE), Value::string(resolve_type)));
        Value::object(entries)
    }
}

impl RuleFields for Layer<'_, '_> {
    fn field(&self, key: &str) -> Option<&Value> {
        self.lookup(key).map(|(value, _)| value)
    }
}

/// The saved matchers being evaluated, innermost first (for cycle detection).
struct Active<'v, 'p> {
    name: &'v str,
    outer: Option<&'p Active<'v, 'p>>,
}

impl Active<'_, '_> {
    fn contains(&self, name: &str) -> bool {
        let mut active = Some(self);
        while let Some(a) = active {
            if a.name == name {
                return true;
            }
            active = a.outer;
        }
        false
    }
}

/// Where an evaluation is: enclosing saved matchers, nesting depth, remaining steps.
struct Walk<'v, 'p, 'b> {
    active: Option<&'p Active<'v, 'p>>,
    depth: usize,
    steps: &'b mut u32,
}

impl<'v> Walk<'v, '_, '_> {
    fn nested(&mut self) -> Walk<'v, '_, '_> {
        Walk {
            active: self.active,
            depth: self.depth + 1,
            steps: self.steps,
        }
    }
}

fn traffic(setting: Option<&Value>) -> f64 {
    setting.and_then(Value::as_f64).unwrap_or(DEFAULT_TRAFFIC)
}

impl<'a> Evaluator<'a> {
    /// The rule of one flag variant: `None` or a rule without `__resolveType` → true; forced
    /// values from overrides first (the saved name only when that block exists, then the inline
    /// id); saved matcher references (merged, recursive, bounded depth, cycle-safe); a sticky
    /// random decision when the variant's rule itself is `random.ts` (inline, or a saved block
    /// whose own type is `random.ts`) and the request forces nothing. `inline_id` yields
    /// `<blockId>@<path>` of the rule and is only called when overrides are non-empty.
    pub fn variant_rule(&mut self, rule: Option<&Value>, inline_id: &dyn Fn() -> String) -> bool {
        let Some(rule) = rule else {
            return true;
        };
        let Some(resolve_type) = rule.resolve_type() else {
            return true;
        };
        if self.overrides.is_empty()
            && let Some(traffic) = self.sticky_traffic(rule, resolve_type)
        {
            self.effects.vary("cohort");
            return self.segment.decide(resolve_type, traffic);
        }
        let mut steps = MAX_STEPS;
        let walk = Walk {
            active: None,
            depth: 0,
            steps: &mut steps,
        };
        self.evaluate(rule, RuleId::Inline(inline_id), walk)
    }

    /// The traffic of a sticky random rule: the rule is `random.ts` itself, or names a saved
    /// block whose own type is `random.ts` (its traffic is the saved block's).
    fn sticky_traffic(&self, rule: &Value, resolve_type: &str) -> Option<f64> {
        let settings = self.blocks.block(resolve_type).unwrap_or(rule);
        let builtin_random = matches!(
            self.registry.entry(keys::RANDOM),
            Some(Entry::Builtin(Builtin::Random))
        );
        (builtin_random && settings.resolve_type() == Some(keys::RANDOM))
            .then(|| traffic(settings.get("traffic")))
    }

    /// `evaluateMatcher`: one rule value (no `__resolveType` → true).
    fn evaluate<'v>(&mut self, rule: &'v Value, id: RuleId<'v, '_>, walk: Walk<'v, '_, '_>) -> bool
    where
        'a: 'v,
    {
        let Some(resolve_type) = rule.resolve_type() else {
            return true;
        };
        let layer = Layer {
            rule,
            id,
            above: None,
        };
        self.follow(&layer, resolve_type, true, walk)
    }

    /// Checks overrides, follows a saved matcher reference, or dispatches to the matcher.
    fn follow<'v>(
        &mut self,
        layer: &Layer<'v, '_>,
        resolve_type: &'v str,
        own_id: bool,
        walk: Walk<'v, '_, '_>,
    ) -> bool
    where
        'a: 'v,
    {
        if walk.depth > MAX_DEPTH {
            self.effects.warn(format!(
                "matcher nesting deeper than {MAX_DEPTH} levels at {resolve_type}"
            ));
            return false;
        }
        if *walk.steps == 0 {
            self.effects
                .warn(format!("matcher evaluation too large at {resolve_type}"));
            return false;
        }
        *walk.steps -= 1;

        let blocks: &'a dyn BlockLookup = self.blocks;
        let saved = blocks.block(resolve_type);
        if !self.overrides.is_empty() {
            let forced = saved
                .and_then(|_| self.overrides.get(resolve_type))
                .or_else(|| {
                    own_id
                        .then(|| self.overrides.get(&layer.id.render()))
                        .flatten()
                });
            if let Some(forced) = forced {
                return forced;
            }
        }
        let Some(saved) = saved else {
            return self.dispatch(layer, resolve_type, walk);
        };
        if walk.active.is_some_and(|a| a.contains(resolve_type)) {
            self.effects.warn(format!(
                "matcher cycle through saved matcher {resolve_type}"
            ));
            return false;
        }
        let Some(next) = saved.resolve_type() else {
            return true;
        };
        let active = Active {
            name: resolve_type,
            outer: walk.active,
        };
        let below = Layer {
            rule: saved,
            id: RuleId::Saved(resolve_type),
            above: Some(layer),
        };
        let walk = Walk {
            active: Some(&active),
            depth: walk.depth + 1,
            steps: walk.steps,
        };
        self.follow(&below, next, false, walk)
    }

    /// Runs the matcher registered under `key` (built-in, custom, flag bridge); unknown → false.
    fn dispatch<'v>(&mut self, rule: &Layer<'v, '_>, key: &str, walk: Walk<'v, '_, '_>) -> bool
    where
        'a: 'v,
    {
        let registry: &'a MatcherRegistry = self.registry;
        match registry.entry(key) {
            None => {
                self.effects.warn(format!("unknown matcher: {key}"));
                false
            }
            Some(Entry::Custom) => self.custom(key, rule),
            Some(Entry::FeatureFlag) => self.feature_flag(key, rule),
            Some(Entry::Builtin(Builtin::Random)) => {
                self.effects.vary("cohort");
                self.segment.draw() < traffic(rule.field("traffic"))
            }
            Some(Entry::Builtin(Builtin::Multi)) => self.multi(rule, walk),
            Some(Entry::Builtin(Builtin::Negate)) => self.negate(rule, walk),
            Some(Entry::Builtin(builtin)) => {
                let mut inputs = Inputs {
                    request: self.request,
                    effects: &mut *self.effects,
                    production: self.production,
                };
                builtins::evaluate(*builtin, rule, &mut inputs).unwrap_or(false)
            }
        }
    }

    /// `multi.ts`: every inner rule is evaluated (in order, none skipped); `op: "or"` → any,
    /// otherwise all. No inner rules → true.
    fn multi<'v>(&mut self, rule: &Layer<'v, '_>, mut walk: Walk<'v, '_, '_>) -> bool
    where
        'a: 'v,
    {
        let any = rule.text("op") == Some("or");
        let Some((list, id)) = rule.lookup("matchers") else {
            return true;
        };
        let items = list.as_array().unwrap_or_default();
        if items.is_empty() {
            return true;
        }
        let (mut some, mut all) = (false, true);
        for (i, item) in items.iter().enumerate() {
            let child = RuleId::Child {
                parent: &id,
                key: "matchers",
                index: Some(i),
            };
            let matched = self.evaluate(item, child, walk.nested());
            some |= matched;
            all &= matched;
        }
        if any { some } else { all }
    }

    /// `negate.ts`: no inner rule → false; else the inner rule does not match.
    fn negate<'v>(&mut self, rule: &Layer<'v, '_>, mut walk: Walk<'v, '_, '_>) -> bool
    where
        'a: 'v,
    {
        let Some((inner, id)) = rule.lookup("matcher").filter(|(v, _)| v.is_truthy()) else {
            return false;
        };
        let child = RuleId::Child {
            parent: &id,
            key: "matcher",
            index: None,
        };
        !self.evaluate(inner, child, walk.nested())
    }

    /// A custom matcher gets the merged rule; a failure counts as false and is recorded.
    fn custom(&mut self, key: &str, rule: &Layer<'_, '_>) -> bool {
        let merged;
        let value = if rule.above.is_none() {
            rule.rule
        } else {
            merged = rule.merged(key);
            &merged
        };
        // What a host callback reads is unknown: the page varies on it.
        self.effects.vary("custom");
        let ctx = MatcherContext::new(self.request);
        self.answered(key, self.host.custom_matcher(key, value, &ctx))
    }

    /// A feature-flag bridge: `flagKey` (required) and `variant`; with a variant the adapter's
    /// variant must equal it, otherwise the flag must be enabled. No adapter → false + warning;
    /// a failing adapter → false + error.
    fn feature_flag(&mut self, key: &str, rule: &Layer<'_, '_>) -> bool {
        self.effects.vary("feature-flag");
        let Some(adapter) = self.host.feature_flags() else {
            self.effects.warn(format!(
                "feature flag matcher {key}: no feature flag adapter configured"
            ));
            return false;
        };
        let Some(flag) = rule.text("flagKey") else {
            return false;
        };
        let answer = match rule.text("variant") {
            Some(variant) => adapter
                .feature_flag_variant(flag)
                .map(|v| v.as_deref() == Some(variant)),
            None => adapter.is_feature_enabled(flag),
        };
        self.answered(key, answer)
    }

    /// A host callback's answer: its value, or false with an error naming `key`.
    fn answered(&mut self, key: &str, answer: Result<bool, String>) -> bool {
        answer.unwrap_or_else(|message| {
            self.effects.error(key, "Matcher", message);
            false
        })
    }
}
