//! An entry of a page's pass: the node a raw page section (or Site global) resolved to, and the
//! sections it makes once it is a value, memoised when the page cache keeps the pass.

use super::config::ResolveConfig;
use super::node::Node;
use super::origins::relativize;
use super::page::ResolvedSection;
use super::section_props::section_props;
use crate::effects::Effects;
use crate::value::{Array, Value};
use std::sync::{Arc, OnceLock};

/// One page-level item of a pass: a raw section resolved, or taken from the layout cache.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// What it resolved to, with holes for the loader results it waits for.
    pub(super) node: Node,
    /// Its own chain is wrapped in Lazy or Deferred: a deferred section.
    pub(super) lazy: bool,
    /// A Site global, not one of the page's sections.
    pub(super) global: bool,
    /// Layout block to store the output under (a cache miss).
    pub(super) layout: Option<String>,
    /// The sections `node` makes once it is a value, when the page cache keeps the entry: shared
    /// by the copies of the cached pass.
    pub(super) sections: SectionsMemo,
}

impl Entry {
    /// An entry without a memo.
    pub(super) fn new(node: Node, lazy: bool, global: bool, layout: Option<String>) -> Entry {
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
/// on every request: later pages clone the sections and replay the warnings (decision
/// RESOLVE-26). An entry whose node changes, or that no cache keeps, has none (keeping would
/// only cost it).
#[derive(Debug, Clone, Default)]
pub(super) struct SectionsMemo(pub(super) Option<Arc<OnceLock<EntrySections>>>);

/// The sections an entry makes, and the warnings making them recorded.
#[derive(Debug, Clone)]
pub(super) struct EntrySections {
    pub(super) sections: Vec<ResolvedSection>,
    pub(super) warnings: Vec<String>,
}

impl EntrySections {
    /// The sections `value` makes for a page of `config`.
    pub(super) fn of(config: &ResolveConfig, value: Option<Value>) -> EntrySections {
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
    pub(super) fn kept(self) -> EntrySections {
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
