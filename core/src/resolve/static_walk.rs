//! Static walks over raw content for `sitefile check`, over every variant of every flag: how
//! many `__resolveType` levels a value reaches, and the saved blocks on a section's chain that
//! are neither objects nor lists.

use super::config::ResolveConfig;
use super::keys::SKIP_RESOLVE_TYPES;
use super::rules::{Rule, SEO_HOPS, SeoHop, merged_reference, rule_for, seo_hop, variants_of};
use crate::content::Snapshot;
use crate::value::{Object, RESOLVE_TYPE, Value};
use rustc_hash::FxHashMap;

/// `__resolveType` levels of raw content, counted as [`Resolver::resolve`] counts them and
/// over every variant of every flag, for `sitefile check`: a raw page section whose count
/// exceeds the depth limit loses what lies deeper on every request that reaches it.
///
/// [`Resolver::resolve`]: super::engine::Resolver::resolve
pub(crate) struct StaticDepth<'a> {
    snapshot: &'a Snapshot,
    config: &'a ResolveConfig,
    /// Levels of each saved block read so far; `None` while it is being counted (a cycle,
    /// which counts as nothing more: resolution cuts it).
    blocks: FxHashMap<String, Option<usize>>,
}

impl<'a> StaticDepth<'a> {
    /// A counter for `snapshot` as `config` resolves it.
    pub fn new(snapshot: &'a Snapshot, config: &'a ResolveConfig) -> StaticDepth<'a> {
        StaticDepth {
            snapshot,
            config,
            blocks: FxHashMap::default(),
        }
    }

    /// The deepest level a resolution starting at `value` reaches.
    pub fn levels(&mut self, value: &Value) -> usize {
        if !value.is_dynamic() {
            return 0;
        }
        match value {
            Value::Array(a) => self.deepest(a.items().iter()),
            Value::Object(o) => match o.resolve_type() {
                Some(rt) => self.typed(o, rt),
                None => self.deepest(o.entries().iter().map(|(_, v)| v)),
            },
            _ => 0,
        }
    }

    /// The deepest level page SEO `value` reaches: mirrors [`Resolver::resolve_seo`], whose
    /// hops count nothing and whose skip-listed terminal type has its props counted. Each saved
    /// block is followed once.
    ///
    /// [`Resolver::resolve_seo`]: super::engine::Resolver::resolve_seo
    pub fn seo(&mut self, value: &Value) -> usize {
        let mut followed: Vec<String> = Vec::new();
        self.seo_from(value, SEO_HOPS, &mut followed)
    }

    fn seo_from(&mut self, value: &Value, hops: usize, followed: &mut Vec<String>) -> usize {
        let Some((o, rt)) = value.as_object().and_then(|o| Some((o, o.resolve_type()?))) else {
            return self.levels(value);
        };
        if hops > 0 {
            let next = match seo_hop(self.snapshot, o, rt) {
                SeoHop::Wrapped(inner, _) => Some(vec![inner]),
                SeoHop::Flag => Some(
                    variants_of(o)
                        .map(|(_, v)| v)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(|v| v.get("value").cloned())
                        .collect(),
                ),
                SeoHop::Named(_) if followed.iter().any(|f| f == rt) => Some(Vec::new()),
                SeoHop::Named(saved) => {
                    followed.push(rt.to_string());
                    Some(vec![merged_reference(saved, o)])
                }
                SeoHop::Stop => None,
            };
            if let Some(next) = next {
                return next
                    .iter()
                    .map(|v| self.seo_from(v, hops - 1, followed))
                    .max()
                    .unwrap_or(0);
            }
        }
        if SKIP_RESOLVE_TYPES.contains(&rt) {
            1 + self.deepest(o.entries().iter().map(|(_, v)| v))
        } else {
            self.levels(value)
        }
    }

    fn deepest<'v>(&mut self, values: impl Iterator<Item = &'v Value>) -> usize {
        values.map(|v| self.levels(v)).max().unwrap_or(0)
    }

    /// Mirrors the order of [`Resolver::resolve_typed`].
    ///
    /// [`Resolver::resolve_typed`]: super::engine::Resolver::resolve_typed
    fn typed(&mut self, o: &Object, rt: &str) -> usize {
        let inner = match rule_for(self.snapshot, self.config, rt) {
            Rule::Skipped => return 0,
            Rule::Resolved | Rule::RequestToParam | Rule::Secret(_) | Rule::Dangling => 0,
            Rule::Lazy => self.deepest(o.get("section").into_iter()),
            Rule::Deferred => self.deepest(o.get("sections").into_iter()),
            Rule::CommerceExtension => self.deepest(o.get("data").into_iter()),
            Rule::Flag => {
                let variants = variants_of(o).map(|(_, v)| v).unwrap_or_default();
                self.deepest(variants.iter().filter_map(|v| v.get("value")))
            }
            Rule::Loader(_) | Rule::Preview | Rule::Section => {
                self.deepest(o.entries().iter().map(|(_, v)| v))
            }
            // Extra props on a reference count as props of the block's own type: an upper
            // bound (an extra may replace a deeper entry) that keeps counting linear.
            Rule::Named(_) => {
                let extra = o.entries().iter().filter(|(k, _)| &**k != RESOLVE_TYPE);
                let extra = match self.deepest(extra.map(|(_, v)| v)) {
                    0 => 0,
                    n => n + 1,
                };
                self.block(rt).max(extra)
            }
        };
        1 + inner
    }

    fn block(&mut self, name: &str) -> usize {
        match self.blocks.get(name) {
            Some(known) => return known.unwrap_or(0),
            None => self.blocks.insert(name.to_string(), None),
        };
        let snapshot = self.snapshot;
        let levels = snapshot.block(name).map_or(0, |b| self.levels(b));
        self.blocks.insert(name.to_string(), Some(levels));
        levels
    }
}

/// The saved blocks raw page section `value` reaches on its own chain (named blocks, flags
/// in every variant, Lazy, Deferred, `resolved`) that are neither objects nor lists, each with
/// what it is: resolution drops the section each stands for. Each block is followed once.
pub(crate) fn non_object_sections(
    snapshot: &Snapshot,
    config: &ResolveConfig,
    value: &Value,
) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    let mut followed: Vec<String> = Vec::new();
    let mut pending: Vec<Value> = vec![value.clone()];
    while let Some(value) = pending.pop() {
        if let Some(items) = value.as_array() {
            pending.extend(items.iter().rev().cloned());
            continue;
        }
        let Some(o) = value.as_object() else { continue };
        let Some(rt) = o.resolve_type() else { continue };
        let next = match rule_for(snapshot, config, rt) {
            Rule::Lazy => o.get("section").cloned(),
            Rule::Deferred => o.get("sections").cloned(),
            Rule::Flag => {
                let variants = variants_of(o).map(|(_, v)| v).unwrap_or_default();
                pending.extend(
                    variants
                        .iter()
                        .rev()
                        .filter_map(|v| v.get("value").cloned()),
                );
                None
            }
            Rule::Named(_) if followed.iter().any(|f| f == rt) => None,
            Rule::Named(block @ (Value::Object(_) | Value::Array(_))) => {
                followed.push(rt.to_string());
                Some(merged_reference(block, o))
            }
            Rule::Named(other) => {
                followed.push(rt.to_string());
                found.push((rt.to_string(), other.kind()));
                None
            }
            // Resolved data is a value as it stands, never a block reference; the rest are not
            // a section's chain.
            _ => None,
        };
        pending.extend(next);
    }
    found
}
