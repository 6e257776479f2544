//! Walking a page's raw sections: the Site block's globals and the page's `sections`, followed
//! through flags, wrappers, saved blocks and `resolved` data to the list they stand for. Which
//! variants of a flag a walk follows is its chooser's: the one a request chooses (resolution),
//! or every one (`sitefile check`).

use super::engine::Resolver;
use super::keys;
use super::rules::{merged_reference, variants_of};
use crate::content::Snapshot;
use crate::value::{Key, Object, Value, intern};
use std::collections::HashMap;

/// A page-level item before resolution, with where it lives in its block (for override ids).
pub(crate) struct RawSection {
    /// The block it lives in.
    pub block: Key,
    /// Where in the block (`["sections", "0"]`).
    pub path: Vec<String>,
    /// The item as the content holds it.
    pub value: Value,
}

impl RawSection {
    /// The `path` field as the resolver takes it: borrowed segments.
    pub(super) fn path(&self) -> Vec<&str> {
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
