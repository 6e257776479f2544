//! The synchronous pass of resolution: follows every `__resolveType` (named blocks, flags,
//! wrappers) and turns loader references into calls for the host, leaving holes for their
//! results.

use super::config::ResolveConfig;
use super::keys::{self, SKIP_RESOLVE_TYPES};
use super::node::{CallId, Node};
use crate::content::Snapshot;
use crate::effects::Effects;
use crate::matchers::{BlockLookup, Evaluator, FeatureFlagAdapter, Overrides, Segment};
use crate::request::Request;
use crate::value::{Key, Object, RESOLVE_TYPE, Value, intern};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

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
    pub feature_flags: Option<&'a dyn FeatureFlagAdapter>,
    pub segment: &'a mut Segment,
    pub effects: &'a mut Effects,
    pub calls: Vec<PendingCall>,
    /// Set when a lazy or deferred wrapper was passed since the last reset.
    pub saw_lazy: bool,
    memo: FxHashMap<String, Node>,
    expanding: Vec<Key>,
    origin: Origin,
    depth_limit: usize,
}

impl<'a> Resolver<'a> {
    /// A resolver for one request.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        snapshot: &'a Snapshot,
        config: &'a ResolveConfig,
        request: &'a Request,
        route_params: &'a BTreeMap<String, String>,
        overrides: &'a Overrides,
        feature_flags: Option<&'a dyn FeatureFlagAdapter>,
        segment: &'a mut Segment,
        effects: &'a mut Effects,
    ) -> Resolver<'a> {
        Resolver {
            snapshot,
            config,
            request,
            route_params,
            overrides,
            feature_flags,
            segment,
            effects,
            calls: Vec::new(),
            saw_lazy: false,
            memo: FxHashMap::default(),
            expanding: Vec::new(),
            origin: Origin {
                track: !overrides.is_empty(),
                ..Origin::default()
            },
            depth_limit: config.depth_limit(),
        }
    }

    /// Resolves a value that lives at `path` inside block `block` (for override ids).
    pub fn resolve_in(&mut self, block: &Key, path: &[&str], value: &Value) -> Node {
        let saved = std::mem::take(&mut self.origin.path);
        let saved_block = self.origin.block.replace(block.clone());
        for segment in path {
            match segment.parse::<usize>() {
                Ok(i) => self.origin.push_index(i),
                Err(_) => self.origin.push_key(&intern(segment)),
            }
        }
        let node = self.resolve(value, 0);
        self.origin.path = saved;
        self.origin.block = saved_block;
        node
    }

    /// Resolves any value at nesting depth `depth` (counted in `__resolveType` objects).
    pub fn resolve(&mut self, value: &Value, depth: usize) -> Node {
        if !value.is_dynamic() {
            return Node::Value(value.clone());
        }
        match value {
            Value::Array(a) => {
                let mut items = Vec::with_capacity(a.items().len());
                for (i, item) in a.items().iter().enumerate() {
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

    /// Resolves every entry of `o` except `skip`.
    fn resolve_entries(&mut self, o: &Object, skip: Option<&str>, depth: usize) -> Node {
        let mut entries = Vec::with_capacity(o.len());
        for (k, v) in o.entries() {
            if Some(&**k) == skip {
                continue;
            }
            self.origin.push_key(k);
            entries.push((k.clone(), self.resolve(v, depth)));
            self.origin.pop();
        }
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
        if SKIP_RESOLVE_TYPES.contains(&rt) {
            return Node::Value(Value::Null);
        }
        if depth > self.depth_limit {
            self.effects.error(
                rt,
                "depth",
                format!("nesting deeper than {} levels", self.depth_limit),
            );
            return Node::Value(Value::Null);
        }
        match rt {
            keys::RESOLVED => return Node::Value(o.get("data").cloned().unwrap_or(Value::Null)),
            keys::LAZY => {
                self.saw_lazy = true;
                return self.field(o, "section", depth);
            }
            keys::DEFERRED => {
                self.saw_lazy = true;
                return self.field(o, "sections", depth);
            }
            keys::REQUEST_TO_PARAM => {
                let param = o.get("param").and_then(Value::as_str).unwrap_or_default();
                return Node::Value(
                    self.route_params
                        .get(param)
                        .map_or(Value::Null, |v| Value::string(v)),
                );
            }
            _ => {}
        }
        if keys::COMMERCE_EXTENSIONS.contains(&rt) {
            return self.field(o, "data", depth);
        }
        if keys::is_flag(rt) {
            return self.resolve_flag(o, depth);
        }
        if rt == keys::SECRET
            && let Some(key) = &self.config.secret_key
        {
            let plain = o
                .get("encrypted")
                .and_then(Value::as_str)
                .and_then(|ct| key.decrypt_hex(ct));
            if plain.is_none() {
                self.effects
                    .error(rt, "Secret", "the secret could not be decrypted");
            }
            return Node::Value(plain.map_or(Value::Null, |p| Value::string(&p)));
        }
        if let Some(key) = self.config.loaders.lookup(rt) {
            let key = key.to_string();
            let props = self.resolve_entries(o, Some(RESOLVE_TYPE), depth);
            let id: CallId = self.calls.len();
            self.calls.push(PendingCall { key, props });
            return Node::Call(id);
        }
        if rt == keys::PREVIEW {
            let Some(block) = o.get("block").and_then(Value::as_str) else {
                return Node::Value(Value::Null);
            };
            let mut entries: Vec<(Key, Value)> = vec![(intern(RESOLVE_TYPE), Value::string(block))];
            entries.extend(
                o.entries()
                    .iter()
                    .filter(|(k, _)| &**k != RESOLVE_TYPE && &**k != "block")
                    .cloned(),
            );
            let target = Value::object(entries);
            let target = target.as_object().expect("built as an object");
            return self.resolve_typed(target, block, depth + 1);
        }
        if self.snapshot.block(rt).is_some() {
            return self.resolve_named(o, rt, depth);
        }
        if keys::is_dangling_candidate(rt) {
            self.effects
                .warn(format!("dangling reference: {rt} (no loader registered)"));
            return Node::Value(Value::Null);
        }
        // A section (or an unknown type, kept verbatim with its props resolved).
        self.resolve_entries(o, None, depth)
    }

    /// A flag: the first variant whose rule matches is resolved; no match is "nothing".
    fn resolve_flag(&mut self, o: &Object, depth: usize) -> Node {
        let Some((variants_key, Value::Array(variants))) =
            o.entries().iter().find(|(k, _)| &**k == "variants")
        else {
            return Node::Absent;
        };
        self.origin.push_key(variants_key);
        let mut chosen = Node::Absent;
        for (i, variant) in variants.items().iter().enumerate() {
            let Some(variant) = variant.as_object() else {
                continue;
            };
            self.origin.push_index(i);
            self.origin.push_key(&intern("rule"));
            let origin = &self.origin;
            let inline_id = || origin.id();
            let matched = Evaluator {
                blocks: self.snapshot,
                registry: &self.config.matchers,
                request: self.request,
                overrides: self.overrides,
                segment: &mut *self.segment,
                effects: &mut *self.effects,
                feature_flags: self.feature_flags,
                production: self.config.production,
            }
            .variant_rule(variant.get("rule"), &inline_id);
            self.origin.pop();
            if matched {
                chosen = match variant.entries().iter().find(|(k, _)| &**k == "value") {
                    Some((k, v)) => {
                        self.origin.push_key(k);
                        let node = self.resolve(v, depth);
                        self.origin.pop();
                        node
                    }
                    None => Node::Absent,
                };
                self.origin.pop();
                break;
            }
            self.origin.pop();
        }
        self.origin.pop();
        chosen
    }

    /// A reference to a saved block: `{...block, ...extra}` (extra wins, shallowly), memoised
    /// per request, cycles cut on the expansion stack.
    fn resolve_named(&mut self, reference: &Object, name: &str, depth: usize) -> Node {
        let memo_key = if reference.len() == 1 {
            name.to_string()
        } else {
            Value::Object(std::sync::Arc::new(Object::from_entries(
                reference.entries().to_vec(),
            )))
            .to_canonical_string()
        };
        if let Some(node) = self.memo.get(&memo_key) {
            return node.clone();
        }
        if self.expanding.iter().any(|n| &**n == name) {
            let mut chain: Vec<&str> = self.expanding.iter().map(|k| &**k).collect();
            chain.push(name);
            let chain = chain.join(" -> ");
            self.effects
                .error(name, "cycle", format!("cyclic reference: {chain}"));
            self.effects.warn(format!("cyclic reference: {chain}"));
            return Node::Value(Value::Null);
        }
        let block = self
            .snapshot
            .block(name)
            .expect("caller checked the block exists")
            .clone();
        let merged = match (&block, reference.len()) {
            (Value::Object(b), n) if n > 1 => {
                let mut entries = b.entries().to_vec();
                for (k, v) in reference.entries() {
                    if &**k == RESOLVE_TYPE {
                        continue;
                    }
                    match entries.iter_mut().find(|(k2, _)| k2 == k) {
                        Some(slot) => slot.1 = v.clone(),
                        None => entries.push((k.clone(), v.clone())),
                    }
                }
                Value::object(entries)
            }
            _ => block,
        };
        let key = intern(name);
        self.expanding.push(key.clone());
        let saved_path = std::mem::take(&mut self.origin.path);
        let saved_block = self.origin.block.replace(key);
        let node = self.resolve(&merged, depth);
        self.origin.path = saved_path;
        self.origin.block = saved_block;
        self.expanding.pop();
        self.memo.insert(memo_key, node.clone());
        node
    }
}
