//! The synchronous pass of resolution: follows every `__resolveType` (named blocks, flags,
//! wrappers) and turns loader references into calls for the host, leaving holes for their
//! results.

use super::config::ResolveConfig;
use super::keys::SKIP_RESOLVE_TYPES;
use super::node::{CallId, Node};
use super::rules::{Rule, SEO_HOPS, SeoHop, merged_reference, rule_for, seo_hop, variants_of};
use crate::content::Snapshot;
use crate::effects::{Effects, FlagChoice, Loss, TriedRule};
use crate::host::Host;
use crate::matchers::{BlockLookup, Evaluator, Overrides, Segment};
use crate::request::Request;
use crate::value::{Key, Object, RESOLVE_TYPE, Value, intern};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A loader reference found in content, waiting for its props and then for the host.
#[derive(Debug, Clone)]
pub(crate) struct PendingCall {
    /// The registered loader key.
    pub key: String,
    /// Its props, possibly waiting for other calls.
    pub props: Node,
}

/// One step of the path of the value being resolved inside its raw block, kept only when the
/// request forces matchers (the `<blockId>@<path>` override form needs it).
#[derive(Debug, Clone)]
enum PathSegment {
    Key(Key),
    Index(usize),
}

#[derive(Debug, Default)]
struct Origin {
    track: bool,
    block: Option<Key>,
    path: Vec<PathSegment>,
}

impl Origin {
    fn push_key(&mut self, key: &Key) {
        if self.track {
            self.path.push(PathSegment::Key(key.clone()));
        }
    }

    fn push_index(&mut self, i: usize) {
        if self.track {
            self.path.push(PathSegment::Index(i));
        }
    }

    fn pop(&mut self) {
        if self.track {
            self.path.pop();
        }
    }

    fn id(&self) -> String {
        let mut id = self.block.as_deref().unwrap_or_default().to_string();
        id.push('@');
        for (i, segment) in self.path.iter().enumerate() {
            if i > 0 {
                id.push('.');
            }
            match segment {
                PathSegment::Key(k) => id.push_str(k),
                PathSegment::Index(n) => id.push_str(&n.to_string()),
            }
        }
        id
    }
}

impl BlockLookup for Snapshot {
    fn block(&self, name: &str) -> Option<&Value> {
        Snapshot::block(self, name)
    }
}

/// The per-request state of the synchronous pass.
pub(crate) struct Resolver<'a> {
    pub snapshot: &'a Snapshot,
    pub config: &'a ResolveConfig,
    pub request: &'a Request,
    pub route_params: &'a BTreeMap<String, String>,
    pub overrides: &'a Overrides,
    pub host: &'a dyn Host,
    pub segment: &'a mut Segment,
    pub effects: &'a mut Effects,
    pub calls: Vec<PendingCall>,
    /// Set when a lazy or deferred wrapper was passed on the current section's own chain
    /// (wrappers, flags and named blocks above its props) since the last reset.
    saw_lazy: bool,
    /// Whether the value being resolved is still on a section's chain, not inside its props.
    in_chain: bool,
    memo: FxHashMap<String, Memo>,
    expanding: Vec<Key>,
    origin: Origin,
    depth_limit: usize,
    /// How many times the depth limit cut a value so far.
    depth_cuts: u64,
    /// JSON values produced so far (a shared subtree counts once per use).
    produced: u64,
    /// Containers being resolved, one inside the other.
    nesting: usize,
    /// A size or nesting limit was hit: the rest of the page resolves to `null`.
    exhausted: bool,
    /// The last saved block expanded whose content is not an object or a list (names the
    /// block when a page section resolves to it).
    scalar_block: Option<Key>,
}

/// A named reference resolved earlier in this request.
#[derive(Debug, Clone)]
struct Memo {
    node: Node,
    /// Its own chain carries a lazy or deferred wrapper.
    lazy: bool,
    /// JSON values it produced.
    produced: u64,
    /// The depth it was resolved at, and whether the depth limit cut something inside it: a
    /// cut result is reused only as deep or deeper, where the same cut would happen.
    depth: usize,
    cut: bool,
}

/// Most JSON values one page may produce: content that references a block twice, that block
/// referencing another twice and so on grows exponentially, and must end in an error rather
/// than exhaust memory.
pub const MAX_PAGE_NODES: u64 = 2_000_000;

/// Deepest nesting of arrays and objects that resolution builds across named blocks (each
/// block alone is bounded when parsed), so no later recursion can exhaust the stack.
pub const MAX_RESOLVED_NESTING: usize = 256;

impl<'a> Resolver<'a> {
    /// A resolver for one request.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        snapshot: &'a Snapshot,
        config: &'a ResolveConfig,
        request: &'a Request,
        route_params: &'a BTreeMap<String, String>,
        overrides: &'a Overrides,
        host: &'a dyn Host,
        segment: &'a mut Segment,
        effects: &'a mut Effects,
    ) -> Resolver<'a> {
        Resolver {
            snapshot,
            config,
            request,
            route_params,
            overrides,
            host,
            segment,
            effects,
            calls: Vec::new(),
            saw_lazy: false,
            in_chain: false,
            memo: FxHashMap::default(),
            expanding: Vec::new(),
            origin: Origin {
                track: !overrides.is_empty(),
                ..Origin::default()
            },
            depth_limit: config.depth_limit(),
            depth_cuts: 0,
            produced: 0,
            nesting: 0,
            exhausted: false,
            scalar_block: None,
        }
    }

    /// Runs `f` with the origin set to `path` inside block `block` (for override ids).
    fn at<T>(&mut self, block: &Key, path: &[&str], f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::take(&mut self.origin.path);
        let saved_block = self.origin.block.replace(block.clone());
        // Paths only matter for override ids; untracked requests skip building them.
        let tracked = if self.origin.track { path } else { &[] };
        for segment in tracked {
            match segment.parse::<usize>() {
                Ok(i) => self.origin.push_index(i),
                Err(_) => self.origin.push_key(&intern(segment)),
            }
        }
        let out = f(self);
        self.origin.path = saved;
        self.origin.block = saved_block;
        out
    }

    /// Resolves a value that lives at `path` inside block `block` (for override ids).
    pub fn resolve_in(&mut self, block: &Key, path: &[&str], value: &Value) -> Node {
        self.at(block, path, |r| r.resolve(value, 0))
    }

    /// Resolves a section-like value (a page section, a previewed block) and tells whether its
    /// own chain is wrapped in Lazy or Deferred, which makes it a deferred section.
    pub fn resolve_section(&mut self, block: &Key, path: &[&str], value: &Value) -> (Node, bool) {
        self.saw_lazy = false;
        self.in_chain = true;
        self.scalar_block = None;
        let node = self.resolve_in(block, path, value);
        self.in_chain = false;
        (node, std::mem::take(&mut self.saw_lazy))
    }

    /// Resolves one raw page section (or Site global) as [`Resolver::resolve_section`] does; a
    /// section that resolves to a scalar is dropped from the page with an error naming it.
    pub fn resolve_page_section(
        &mut self,
        block: &Key,
        path: &[&str],
        value: &Value,
    ) -> (Node, bool) {
        let (node, lazy) = self.resolve_section(block, path, value);
        if let Node::Value(v) = &node
            && !matches!(v, Value::Object(_) | Value::Array(_) | Value::Null)
        {
            let scalar = self.scalar_block.take();
            let name = scalar.as_deref().or(value.resolve_type()).unwrap_or(block);
            let loss = Loss::SectionNotObject {
                block: name,
                kind: v.kind(),
            };
            self.effects.lose(name, &loss);
        }
        (node, lazy)
    }

    /// The index and unresolved value of the first variant of flag `flag` (at `path` inside
    /// `block`) whose rule matches; `None` when none matches.
    pub fn choose_in(
        &mut self,
        block: &Key,
        path: &[&str],
        flag: &Object,
    ) -> Option<(usize, Value)> {
        self.at(block, path, |r| {
            let (key, variants) = variants_of(flag)?;
            let i = r.chosen_index(key, variants)?;
            Some((i, variants[i].get("value")?.clone()))
        })
    }

    /// The page's SEO: Lazy, single-section Deferred, flags and named blocks are followed (at
    /// most [`SEO_HOPS`]); the block reached has its props resolved even when its type is one
    /// the resolver otherwise skips (the standard SEO sections are).
    pub fn resolve_seo(&mut self, page: &Key, raw: &Value) -> Node {
        let mut block = page.clone();
        let mut path: Vec<String> = vec!["seo".into()];
        let mut value = raw.clone();
        for _ in 0..SEO_HOPS {
            let Some(o) = value.as_object() else { break };
            let Some(rt) = o.resolve_type() else { break };
            let (next, steps): (Value, Vec<String>) = match seo_hop(self.snapshot, o, rt) {
                SeoHop::Wrapped(inner, steps) => {
                    (inner, steps.iter().map(|s| s.to_string()).collect())
                }
                SeoHop::Flag => {
                    let segments: Vec<&str> = path.iter().map(String::as_str).collect();
                    let Some((index, chosen)) = self.choose_in(&block, &segments, o) else {
                        return Node::Absent;
                    };
                    (
                        chosen,
                        vec!["variants".into(), index.to_string(), "value".into()],
                    )
                }
                SeoHop::Named(saved) => {
                    block = intern(rt);
                    path.clear();
                    (merged_reference(saved, o), Vec::new())
                }
                SeoHop::Stop => break,
            };
            value = next;
            path.extend(steps);
        }
        let segments: Vec<&str> = path.iter().map(String::as_str).collect();
        match value.as_object() {
            Some(o)
                if o.resolve_type()
                    .is_some_and(|rt| SKIP_RESOLVE_TYPES.contains(&rt)) =>
            {
                self.at(&block, &segments, |r| r.resolve_entries(o, None, 1))
            }
            _ => self.resolve_in(&block, &segments, &value),
        }
    }

    /// Counts `nodes` produced; past [`MAX_PAGE_NODES`] the resolution is exhausted.
    fn charge(&mut self, nodes: u64) {
        self.produced = self.produced.saturating_add(nodes);
        if self.produced > MAX_PAGE_NODES && !self.exhausted {
            self.exhausted = true;
            self.effects.cut(
                "size",
                format!("the page would hold more than {MAX_PAGE_NODES} JSON values"),
            );
        }
    }

    /// Resolves any value at nesting depth `depth` (counted in `__resolveType` objects). Once
    /// the page is exhausted every value is `null`, including the one that spent the budget.
    pub fn resolve(&mut self, value: &Value, depth: usize) -> Node {
        if !value.is_dynamic() {
            self.charge(u64::from(value.nodes()));
            return Node::Value(if self.exhausted {
                Value::Null
            } else {
                value.clone()
            });
        }
        self.charge(1);
        if self.exhausted {
            return Node::Value(Value::Null);
        }
        if self.nesting >= MAX_RESOLVED_NESTING {
            self.exhausted = true;
            self.effects.cut(
                "depth",
                format!("content nests deeper than {MAX_RESOLVED_NESTING} levels"),
            );
            return Node::Value(Value::Null);
        }
        self.nesting += 1;
        let node = self.resolve_container(value, depth);
        self.nesting -= 1;
        node
    }

    fn resolve_container(&mut self, value: &Value, depth: usize) -> Node {
        match value {
            Value::Array(a) => {
                let mut items = Vec::with_capacity(a.items().len());
                for (i, item) in a.items().iter().enumerate() {
                    // Past the budget the rest of the list is left out, not a `null` each.
                    if self.exhausted {
                        break;
                    }
                    self.origin.push_index(i);
                    items.push(self.resolve(item, depth));
                    self.origin.pop();
                }
                Node::array(items)
            }
            Value::Object(o) => match o.resolve_type() {
                Some(rt) => self.resolve_typed(o, rt, depth + 1),
                None => self.resolve_entries(o, None, depth),
            },
            _ => Node::Value(value.clone()),
        }
    }

    /// Resolves every entry of `o` except `skip` (props: no longer on a section's chain).
    fn resolve_entries(&mut self, o: &Object, skip: Option<&str>, depth: usize) -> Node {
        let in_chain = std::mem::replace(&mut self.in_chain, false);
        let mut entries = Vec::with_capacity(o.len());
        for (k, v) in o.entries() {
            if Some(&**k) == skip {
                continue;
            }
            if self.exhausted {
                break;
            }
            self.origin.push_key(k);
            entries.push((k.clone(), self.resolve(v, depth)));
            self.origin.pop();
        }
        self.in_chain = in_chain;
        Node::object(entries)
    }

    fn field(&mut self, o: &Object, name: &str, depth: usize) -> Node {
        match o.entries().iter().find(|(k, _)| &**k == name) {
            Some((k, v)) => {
                self.origin.push_key(k);
                let node = self.resolve(v, depth);
                self.origin.pop();
                node
            }
            None => Node::Value(Value::Null),
        }
    }

    /// The resolution rules for an object with a `__resolveType`, in the reference's order.
    fn resolve_typed(&mut self, o: &Object, rt: &str, depth: usize) -> Node {
        let rule = rule_for(self.snapshot, self.config, rt);
        if matches!(rule, Rule::Skipped) {
            return Node::Value(Value::Null);
        }
        if depth > self.depth_limit {
            let loss = Loss::TooDeep {
                limit: self.depth_limit,
                levels: depth,
                through: self.expanding.first().map(|b| &**b),
            };
            self.effects.lose(rt, &loss);
            self.depth_cuts += 1;
            return Node::Value(Value::Null);
        }
        match rule {
            Rule::Skipped => Node::Value(Value::Null),
            Rule::Resolved => Node::Value(o.get("data").cloned().unwrap_or(Value::Null)),
            Rule::Lazy => {
                self.saw_lazy |= self.in_chain;
                self.field(o, "section", depth)
            }
            Rule::Deferred => {
                self.saw_lazy |= self.in_chain;
                self.field(o, "sections", depth)
            }
            Rule::RequestToParam => {
                let param = o.get("param").and_then(Value::as_str).unwrap_or_default();
                Node::Value(
                    self.route_params
                        .get(param)
                        .map_or(Value::Null, |v| Value::string(v)),
                )
            }
            Rule::CommerceExtension => self.field(o, "data", depth),
            Rule::Flag => self.resolve_flag(o, depth),
            Rule::Secret(key) => {
                let plain = o
                    .get("encrypted")
                    .and_then(Value::as_str)
                    .and_then(|ct| key.decrypt_hex(ct));
                if plain.is_none() {
                    self.effects
                        .error(rt, "Secret", "the secret could not be decrypted");
                }
                Node::Value(plain.map_or(Value::Null, |p| Value::string(&p)))
            }
            Rule::Loader(key) => {
                let key = key.to_string();
                let props = self.resolve_entries(o, Some(RESOLVE_TYPE), depth);
                let id: CallId = self.calls.len();
                self.calls.push(PendingCall { key, props });
                Node::Call(id)
            }
            Rule::Preview => {
                let Some(block) = o
                    .get("block")
                    .and_then(Value::as_str)
                    .filter(|b| !b.is_empty())
                else {
                    return Node::Value(Value::Null);
                };
                let mut entries: Vec<(Key, Value)> =
                    vec![(intern(RESOLVE_TYPE), Value::string(block))];
                entries.extend(
                    o.entries()
                        .iter()
                        .filter(|(k, _)| &**k != RESOLVE_TYPE && &**k != "block")
                        .cloned(),
                );
                let target = Object::from_entries(entries);
                self.resolve_typed(&target, block, depth + 1)
            }
            Rule::Named(saved) => self.resolve_named(o, rt, saved, depth),
            Rule::Dangling => Node::Value(self.dangling(rt)),
            // A section (or an unknown type, kept verbatim with its props resolved).
            Rule::Section => self.resolve_entries(o, None, depth),
        }
    }

    /// A loader or action key nothing registered: the host's `onDanglingReference` answers
    /// (a failure counts as `null` with an error naming the key); without one, a warning and
    /// `null`.
    fn dangling(&mut self, rt: &str) -> Value {
        match self.host.on_dangling_reference(rt) {
            None => {
                self.effects
                    .warn(format!("dangling reference: {rt} (no loader registered)"));
                Value::Null
            }
            Some(Ok(value)) => value,
            Some(Err(message)) => {
                self.effects.error(rt, "onDanglingReference", message);
                Value::Null
            }
        }
    }

    /// A flag: the first variant whose rule matches is resolved; no match is "nothing".
    fn resolve_flag(&mut self, o: &Object, depth: usize) -> Node {
        let Some((variants_key, variants)) = variants_of(o) else {
            return Node::Absent;
        };
        let Some(i) = self.chosen_index(variants_key, variants) else {
            return Node::Absent;
        };
        let Some((value_key, value)) = variants[i]
            .as_object()
            .and_then(|v| v.entries().iter().find(|(k, _)| &**k == "value"))
        else {
            return Node::Absent;
        };
        self.origin.push_key(variants_key);
        self.origin.push_index(i);
        self.origin.push_key(value_key);
        let node = self.resolve(value, depth);
        self.origin.pop();
        self.origin.pop();
        self.origin.pop();
        node
    }

    /// The index of the first variant whose rule matches (the origin is at the flag); the
    /// choice is recorded in the effects.
    fn chosen_index(&mut self, variants_key: &Key, variants: &[Value]) -> Option<usize> {
        let at = self.origin.id();
        let mut tried = Vec::new();
        self.origin.push_key(variants_key);
        let mut chosen = None;
        for (i, variant) in variants.iter().enumerate() {
            let Some(variant) = variant.as_object() else {
                continue;
            };
            let rule = variant.get("rule").and_then(Value::resolve_type);
            self.origin.push_index(i);
            self.origin.push_key(&intern("rule"));
            tried.push(TriedRule {
                variant: i,
                rule: rule.map(Arc::from),
                override_name: rule.and_then(|rt| match self.snapshot.block(rt) {
                    Some(_) => Some(rt.to_string()),
                    None => self.origin.track.then(|| self.origin.id()),
                }),
            });
            let origin = &self.origin;
            let inline_id = || origin.id();
            let matched = Evaluator {
                blocks: self.snapshot,
                registry: &self.config.matchers,
                request: self.request,
                overrides: self.overrides,
                segment: &mut *self.segment,
                effects: &mut *self.effects,
                host: self.host,
                production: self.config.production,
            }
            .variant_rule(variant.get("rule"), &inline_id);
            self.origin.pop();
            self.origin.pop();
            if matched {
                chosen = Some(i);
                break;
            }
        }
        self.origin.pop();
        self.effects.flags.push(FlagChoice {
            at,
            variants: variants.len(),
            tried,
            chosen,
        });
        chosen
    }

    /// A reference to a saved block: `{...block, ...extra}` (extra wins, shallowly), memoised
    /// per request, cycles cut on the expansion stack.
    fn resolve_named(
        &mut self,
        reference: &Object,
        name: &str,
        block: &Value,
        depth: usize,
    ) -> Node {
        if !matches!(block, Value::Object(_) | Value::Array(_)) {
            self.scalar_block = Some(intern(name));
        }
        let memo_key = if reference.len() == 1 {
            name.to_string()
        } else {
            Value::Object(Arc::new(Object::from_entries(reference.entries().to_vec())))
                .to_canonical_string()
        };
        if let Some(memo) = self
            .memo
            .get(&memo_key)
            .filter(|m| !m.cut || m.depth <= depth)
        {
            let Memo {
                node,
                lazy,
                produced,
                ..
            } = memo.clone();
            self.saw_lazy |= self.in_chain && lazy;
            self.charge(produced);
            return if self.exhausted {
                Node::Value(Value::Null)
            } else {
                node
            };
        }
        if self.expanding.iter().any(|n| &**n == name) {
            let mut chain: Vec<&str> = self.expanding.iter().map(|k| &**k).collect();
            chain.push(name);
            let chain = chain.join(" -> ");
            let loss = Loss::Cycle { chain: &chain };
            self.effects.lose(name, &loss);
            self.effects.warn(loss.message());
            return Node::Value(Value::Null);
        }
        let merged = merged_reference(block, reference);
        let key = intern(name);
        self.expanding.push(key.clone());
        let saved_path = std::mem::take(&mut self.origin.path);
        let saved_block = self.origin.block.replace(key);
        let (outer_in_chain, outer_lazy) = (self.in_chain, self.saw_lazy);
        (self.in_chain, self.saw_lazy) = (true, false);
        let before = self.produced;
        let cuts_before = self.depth_cuts;
        let node = self.resolve(&merged, depth);
        let lazy = self.saw_lazy;
        (self.in_chain, self.saw_lazy) = (outer_in_chain, outer_lazy || (outer_in_chain && lazy));
        self.origin.path = saved_path;
        self.origin.block = saved_block;
        self.expanding.pop();
        self.memo.insert(
            memo_key,
            Memo {
                node: node.clone(),
                lazy,
                produced: self.produced - before,
                depth,
                cut: self.depth_cuts > cuts_before,
            },
        );
        node
    }
}

#[cfg(test)]
mod tests {
    use super::MAX_PAGE_NODES;
    use crate::Request;
    use crate::content::Snapshot;
    use crate::resolve::{ResolveConfig, Runtime};
    use crate::value::{Value, intern};

    fn json(text: &str) -> Value {
        Value::from_json_str(text).expect("test JSON")
    }

    #[test]
    fn every_flag_decided_is_recorded_with_the_rules_tried_and_the_variant_chosen() {
        let blocks = r#"{
          "pages-home": {"path": "/", "sections": [
            {"__resolveType": "website/flags/multivariate/section.ts", "variants": [
              {"rule": {"__resolveType": "Members"}, "value": {"__resolveType": "site/sections/A.tsx"}},
              {"rule": {"__resolveType": "website/matchers/device.ts", "mobile": true}, "value": {"__resolveType": "site/sections/B.tsx"}},
              {"value": {"__resolveType": "site/sections/C.tsx"}}
            ]},
            {"__resolveType": "website/flags/multivariate/section.ts", "variants": [
              {"rule": {"__resolveType": "website/matchers/never.ts"}, "value": {"__resolveType": "site/sections/D.tsx"}}
            ]}
          ]},
          "Members": {"__resolveType": "website/matchers/cookie.ts", "name": "member", "value": "1"}
        }"#;
        let blocks = match json(blocks) {
            Value::Object(o) => o.entries().to_vec(),
            _ => unreachable!("an object"),
        };
        let runtime = Runtime::new(
            Snapshot::from_blocks(blocks),
            ResolveConfig::by_convention(),
        );
        let page = runtime
            .resolve_page(
                Request::new("https://shop.example/")
                    .expect("URL")
                    .with_header(
                        "user-agent",
                        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Mobile",
                    ),
            )
            .run(|_| Ok(Value::Null));
        let flags = &page.effects.flags;
        assert_eq!(flags.len(), 2, "{flags:?}");
        assert!(flags[0].at.starts_with("pages-home@"), "{}", flags[0].at);
        assert_eq!(flags[0].variants, 3);
        assert_eq!(
            flags[0].chosen,
            Some(1),
            "the phone matches the device rule"
        );
        let tried: Vec<(usize, Option<&str>, Option<&str>)> = flags[0]
            .tried
            .iter()
            .map(|t| (t.variant, t.rule.as_deref(), t.override_name.as_deref()))
            .collect();
        assert_eq!(
            tried,
            [
                (0, Some("Members"), Some("Members")),
                // An inline rule's id is known only when the request forces matchers.
                (1, Some("website/matchers/device.ts"), None)
            ]
        );
        // Forcing a saved matcher: the page is resolved with rule ids, and an inline rule's
        // id forces it in turn (a desktop forced to variant 1).
        let forced = |pairs: &str| {
            runtime
                .resolve_page(Request::new(&format!("https://shop.example/?{pairs}")).expect("URL"))
                .run(|_| Ok(Value::Null))
        };
        let members = forced("x-platform-matchers-override=Members%3D0");
        let inline = members.effects.flags[0].tried[1]
            .override_name
            .clone()
            .expect("the inline rule's id");
        assert_eq!(inline, "pages-home@sections.0.variants.1.rule");
        let page = forced(&format!(
            "x-platform-matchers-override=Members%3D0&x-platform-matchers-override={}%3D1",
            inline.replace('@', "%40")
        ));
        assert_eq!(page.effects.flags[0].chosen, Some(1));
        assert_eq!(flags[1].chosen, None, "no rule matched");
        assert_eq!(
            page.sections
                .iter()
                .map(|s| s.component.as_str())
                .collect::<Vec<_>>(),
            ["site/sections/B.tsx"]
        );
    }

    #[test]
    fn a_block_cut_by_the_depth_limit_deep_down_is_whole_where_it_fits() {
        // Used directly, the chain C0 -> C1 -> C2 -> Hero fits the limit of 4; inside Wrap it is
        // one level too deep and is cut there. The direct use stays whole although the page
        // mentions the cut copy first (a cut memo is not reused at a shallower depth).
        let blocks = r#"{
          "pages-home": {"path": "/", "sections": [{"__resolveType": "Wrap"}, {"__resolveType": "C0"}]},
          "Wrap": {"__resolveType": "site/sections/Box.tsx", "inner": {"__resolveType": "C0"}},
          "C0": {"__resolveType": "C1"},
          "C1": {"__resolveType": "C2"},
          "C2": {"__resolveType": "site/sections/Hero.tsx", "title": "hi"}
        }"#;
        let blocks = match json(blocks) {
            Value::Object(o) => o.entries().to_vec(),
            _ => unreachable!("an object"),
        };
        let config = ResolveConfig {
            max_depth: 4,
            ..ResolveConfig::by_convention()
        };
        let runtime = Runtime::new(Snapshot::from_blocks(blocks), config);
        let page = runtime
            .resolve_page(Request::new("https://shop.example/").expect("URL"))
            .run(|_| Ok(Value::Null));
        let components: Vec<&str> = page.sections.iter().map(|s| s.component.as_str()).collect();
        assert_eq!(
            components,
            ["site/sections/Box.tsx", "site/sections/Hero.tsx"]
        );
        assert_eq!(
            page.sections[1].props.get("title").and_then(Value::as_str),
            Some("hi")
        );
        assert!(
            page.effects.errors.iter().any(|e| e.context == "depth"),
            "the wrapped copy is cut: {:?}",
            page.effects.errors
        );
    }

    #[test]
    fn a_page_past_the_value_bound_keeps_what_came_first_and_stops() {
        // 21 shared lists of 100,000 values, then a section: the list becomes dynamic, so it is
        // resolved item by item; the 20th list crosses the bound.
        let chunk = Value::array(vec![Value::Bool(true); 100_000]);
        let mut items = vec![chunk; 21];
        items.push(json(r#"{"__resolveType":"site/sections/Card.tsx"}"#));
        let big = Value::object(vec![
            (
                intern("__resolveType"),
                Value::string("site/sections/Hero.tsx"),
            ),
            (intern("items"), Value::array(items)),
        ]);
        let after = json(r#"{"__resolveType":"site/sections/After.tsx","n":1}"#);
        let page = Value::object(vec![
            (intern("path"), Value::string("/")),
            (intern("sections"), Value::array(vec![big, after])),
        ]);
        let runtime = Runtime::new(
            Snapshot::from_blocks(vec![(intern("pages-home"), page)]),
            ResolveConfig::by_convention(),
        );
        let page = runtime
            .resolve_page(Request::new("https://shop.example/").expect("URL"))
            .run(|_| Ok(Value::Null));

        let values: u64 = page
            .sections
            .iter()
            .map(|s| u64::from(s.props.nodes()))
            .sum();
        assert!(values <= MAX_PAGE_NODES, "{values} values");
        assert!(values > MAX_PAGE_NODES - 200_000, "{values} values");
        assert_eq!(
            page.sections.len(),
            1,
            "the section after the bound is gone"
        );
        let items = page.sections[0]
            .props
            .get("items")
            .and_then(Value::as_array);
        let items = items.expect("items kept");
        assert_eq!(items.len(), 20, "19 whole lists, then null, then nothing");
        assert!(items[..19].iter().all(|i| i.nodes() == 100_001));
        assert!(items[19].is_null());
        let sizes: Vec<_> = page
            .effects
            .errors
            .iter()
            .map(|e| (e.resolve_type.as_str(), e.context.as_str()))
            .collect();
        assert_eq!(sizes, vec![("page", "size")]);
    }
}
