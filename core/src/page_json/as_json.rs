//! The legacy page JSON (`?asJson`), the shape editor tooling reads:
//! `{"props": {name, path, seo?, sections, devMode, unindexedDomain}, "metadata": {resolveChain,
//! component}}`, each section and the SEO `{"props", "metadata": {resolveChain, component}}`.
//!
//! The chains are built from what the resolved page records: the page's chain (the handler,
//! `page`, `resolved`, the page block, `website/pages/Page.tsx`), then for a section `sections`,
//! its position in the page JSON's list (site globals first) and its component; for the SEO
//! `seo` and its component. Saved blocks and flags a section passed through on its way are not
//! recorded by resolution, so they are not in its chain.

use crate::pages::PAGE_RESOLVE_TYPE;
use crate::resolve::ResolvedPage;
use crate::uri::encode_uri_component;
use crate::value::{RESOLVE_TYPE, Value, intern};

/// The handler at the root of every chain.
const HANDLER: &str = "website/handlers/fresh.ts";
/// SEO props the Site block's defaults never carry into a page.
const TEMPLATE_KEYS: [&str; 2] = ["titleTemplate", "descriptionTemplate"];

/// One `resolveChain` step.
fn step(kind: &str, value: &str) -> Value {
    Value::object(vec![
        (intern("type"), Value::string(kind)),
        (intern("value"), Value::string(value)),
    ])
}

/// `{"props", "metadata": {"resolveChain", "component"}}`.
fn resolved(props: Value, chain: Vec<Value>, component: &str) -> Value {
    let metadata = Value::object(vec![
        (intern("resolveChain"), Value::array(chain)),
        (intern("component"), Value::string(component)),
    ]);
    Value::object(vec![
        (intern("props"), props),
        (intern("metadata"), metadata),
    ])
}

/// The chain of page block `block`: `pages-` then the rest of its name URI-encoded (a name
/// without the prefix is encoded whole).
fn page_chain(block: &str) -> Vec<Value> {
    let resolvable = match block.strip_prefix("pages-") {
        Some(rest) => format!("pages-{}", encode_uri_component(rest)),
        None => encode_uri_component(block),
    };
    vec![
        step("resolver", HANDLER),
        step("prop", "page"),
        step("resolver", "resolved"),
        step("resolvable", &resolvable),
        step("resolver", PAGE_RESOLVE_TYPE),
    ]
}

/// The page's SEO props: its resolved SEO block without `__resolveType`, each key it lacks
/// taken from the Site block's `seo` (entries still holding references are not resolved, so
/// not taken), the title and description templates left out.
fn seo_props(seo: &Value, site_block: Option<&Value>) -> Value {
    let mut entries: Vec<_> = seo
        .as_object()
        .map(|o| o.entries().to_vec())
        .unwrap_or_default();
    let defaults = site_block
        .and_then(|s| s.get("seo"))
        .and_then(Value::as_object);
    for (k, v) in defaults.map(|d| d.entries()).unwrap_or_default() {
        if !v.is_dynamic() && !entries.iter().any(|(have, _)| have == k) {
            entries.push((k.clone(), v.clone()));
        }
    }
    entries.retain(|(k, _)| &**k != RESOLVE_TYPE && !TEMPLATE_KEYS.contains(&&**k));
    Value::object(entries)
}

/// The body of a found page: `name` is the page block's, `site_block` gives SEO defaults.
pub(crate) fn body(
    page: &ResolvedPage,
    block: &str,
    name: &str,
    site_block: Option<&Value>,
    dev_mode: bool,
) -> Value {
    let chain = page_chain(block);
    let mut props = vec![
        (intern("name"), Value::string(name)),
        (
            intern("path"),
            page.path.as_deref().map_or(Value::Null, Value::string),
        ),
    ];
    if let Some((seo, component)) = page.seo.as_ref().and_then(|s| Some((s, s.resolve_type()?))) {
        let mut seo_chain = chain.clone();
        seo_chain.extend([step("prop", "seo"), step("resolver", component)]);
        props.push((
            intern("seo"),
            resolved(seo_props(seo, site_block), seo_chain, component),
        ));
    }
    let sections = page.sections.iter().enumerate().map(|(i, s)| {
        let mut section_chain = chain.clone();
        section_chain.extend([
            step("prop", "sections"),
            step("prop", &i.to_string()),
            step("resolver", &s.component),
        ]);
        resolved(s.props.clone(), section_chain, &s.component)
    });
    props.extend([
        (intern("sections"), Value::array(sections.collect())),
        (intern("devMode"), Value::Bool(dev_mode)),
        (intern("unindexedDomain"), Value::Bool(false)),
    ]);
    resolved(Value::object(props), chain, PAGE_RESOLVE_TYPE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_encoded_after_the_prefix() {
        assert_eq!(
            page_chain("pages-Home page")[3],
            step("resolvable", "pages-Home%20page")
        );
        assert_eq!(
            page_chain("Landing/x")[3],
            step("resolvable", "Landing%2Fx")
        );
    }

    #[test]
    fn seo_defaults_fill_missing_plain_keys_without_templates() {
        let site = Value::from_json_str(
            r#"{"seo":{"title":"Site","image":"/i.png","titleTemplate":"%s | S",
                "favicon":{"__resolveType":"x"}}}"#,
        )
        .unwrap();
        let seo = Value::from_json_str(
            r#"{"__resolveType":"website/sections/Seo/SeoV2.tsx","title":"Page","descriptionTemplate":"%s"}"#,
        )
        .unwrap();
        assert_eq!(
            seo_props(&seo, Some(&site)),
            Value::from_json_str(r#"{"title":"Page","image":"/i.png"}"#).unwrap()
        );
    }
}
