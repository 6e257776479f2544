//! The synchronous pass over one page: its Site globals and page sections resolved into entries
//! (or taken from the layout cache), its SEO, and the loader calls they wait for.

use super::config::ResolveConfig;
use super::engine::{PendingCall, Resolver};
use super::entry::Entry;
use super::layout_cache::LayoutCache;
use super::node::Node;
use super::sections::{RawSection, globals, sections_list};
use crate::content::Snapshot;
use crate::effects::Effects;
use crate::host::Host;
use crate::matchers::{Overrides, Segment};
use crate::request::Request;
use crate::value::{Value, intern};
use std::collections::{BTreeMap, HashSet};

/// The output of the synchronous pass for one page.
#[derive(Debug, Clone)]
pub(crate) struct FirstPass {
    /// The page-level items, the Site globals first.
    pub entries: Vec<Entry>,
    /// The page's SEO.
    pub seo: Option<Node>,
    /// The loader calls the entries and the SEO wait for.
    pub calls: Vec<PendingCall>,
    /// What the pass recorded.
    pub effects: Effects,
}

/// The page a pass is for: the block, the route pattern it matched and its parameters.
pub(super) struct PageInfo {
    pub(super) name: String,
    pub(super) pattern: String,
    pub(super) params: BTreeMap<String, String>,
    /// The page is the site's not-found page (it answers 404).
    pub(super) not_found: bool,
}

/// The synchronous pass over one page: globals, sections and SEO.
#[allow(clippy::too_many_arguments)]
pub(super) fn first_pass(
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
