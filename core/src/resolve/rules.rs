//! What content stands for, one definition for resolution and for the static walks of
//! `sitefile check`: the rule of each `__resolveType`, how page SEO is followed, a flag's
//! variants, a reference to a saved block.

use super::config::ResolveConfig;
use super::keys::{self, SKIP_RESOLVE_TYPES};
use crate::config::SecretKey;
use crate::content::Snapshot;
use crate::value::{Key, Object, RESOLVE_TYPE, Value};

/// How many wrappers, flags and named blocks page SEO is followed through.
pub(super) const SEO_HOPS: usize = 10;

/// What an object with `__resolveType` `rt` stands for: the resolver's rules in the reference's
/// order, one definition for resolution ([`Resolver::resolve_typed`]) and for the static walks
/// of `sitefile check` ([`StaticDepth`], [`non_object_sections`]).
///
/// [`Resolver::resolve_typed`]: super::engine::Resolver::resolve_typed
/// [`StaticDepth`]: super::static_walk::StaticDepth
/// [`non_object_sections`]: super::static_walk::non_object_sections
pub(crate) enum Rule<'c> {
    /// A skip-listed type: `null`.
    Skipped,
    /// `resolved`: its `data` as it stands.
    Resolved,
    /// The lazy wrapper: its `section`.
    Lazy,
    /// The deferred wrapper: its `sections`.
    Deferred,
    /// A route parameter of the matched page.
    RequestToParam,
    /// A commerce extension: its `data`.
    CommerceExtension,
    /// A multivariate flag: the chosen variant's `value`.
    Flag,
    /// An encrypted secret, with the configured key.
    Secret(&'c SecretKey),
    /// A registered loader (its key): a call whose props are the other entries.
    Loader(&'c str),
    /// An admin preview of the block its `block` names.
    Preview,
    /// A reference to this saved block.
    Named(&'c Value),
    /// An unregistered loader or action key.
    Dangling,
    /// A section, or an unknown type kept with its props resolved.
    Section,
}

/// The [`Rule`] for `__resolveType` `rt` in `snapshot` as `config` resolves it.
pub(crate) fn rule_for<'c>(
    snapshot: &'c Snapshot,
    config: &'c ResolveConfig,
    rt: &'c str,
) -> Rule<'c> {
    if SKIP_RESOLVE_TYPES.contains(&rt) {
        return Rule::Skipped;
    }
    match rt {
        keys::RESOLVED => return Rule::Resolved,
        keys::LAZY => return Rule::Lazy,
        keys::DEFERRED => return Rule::Deferred,
        keys::REQUEST_TO_PARAM => return Rule::RequestToParam,
        _ => {}
    }
    if keys::COMMERCE_EXTENSIONS.contains(&rt) {
        return Rule::CommerceExtension;
    }
    if keys::is_flag(rt) {
        return Rule::Flag;
    }
    if rt == keys::SECRET
        && let Some(key) = &config.secret_key
    {
        return Rule::Secret(key);
    }
    if let Some(key) = config.loaders.lookup(rt) {
        return Rule::Loader(key);
    }
    if rt == keys::PREVIEW {
        return Rule::Preview;
    }
    if let Some(saved) = snapshot.block(rt) {
        return Rule::Named(saved);
    }
    if keys::is_dangling_candidate(rt) {
        return Rule::Dangling;
    }
    Rule::Section
}

/// One hop page SEO is followed through toward the section it stands for.
pub(crate) enum SeoHop<'v> {
    /// A Lazy wrapper or a single-section Deferred: the inner value, at these steps.
    Wrapped(Value, &'static [&'static str]),
    /// A flag: its chosen variant's value.
    Flag,
    /// A saved block (not skip-listed).
    Named(&'v Value),
    /// Not followed: the SEO is this value.
    Stop,
}

/// How page SEO `o` (of type `rt`) is followed, as [`Resolver::resolve_seo`] follows it.
///
/// [`Resolver::resolve_seo`]: super::engine::Resolver::resolve_seo
pub(crate) fn seo_hop<'v>(snapshot: &'v Snapshot, o: &Object, rt: &str) -> SeoHop<'v> {
    if rt == keys::LAZY {
        SeoHop::Wrapped(o.get("section").cloned().unwrap_or_default(), &["section"])
    } else if rt == keys::DEFERRED {
        match o.get("sections").and_then(Value::as_array) {
            Some([one]) => SeoHop::Wrapped(one.clone(), &["sections", "0"]),
            _ => SeoHop::Stop,
        }
    } else if keys::is_flag(rt) {
        SeoHop::Flag
    } else if let Some(saved) = snapshot
        .block(rt)
        .filter(|_| !SKIP_RESOLVE_TYPES.contains(&rt))
    {
        SeoHop::Named(saved)
    } else {
        SeoHop::Stop
    }
}

/// The `variants` list of a flag (or of a page-level `{variants}` wrapper).
pub(crate) fn variants_of(flag: &Object) -> Option<(&Key, &[Value])> {
    flag.entries()
        .iter()
        .find(|(k, _)| &**k == "variants")
        .and_then(|(k, v)| Some((k, v.as_array()?)))
}

/// What a reference `{"__resolveType": <name>, ...extra}` to saved block `block` stands for:
/// the block with `extra` laid over it, shallowly (extra wins); a block that is not an object
/// ignores `extra`.
pub(crate) fn merged_reference(block: &Value, reference: &Object) -> Value {
    match block {
        Value::Object(b) if reference.len() > 1 => {
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
        _ => block.clone(),
    }
}
