//! Which blocks are pages.

use crate::value::Value;

/// The `__resolveType` that marks a page block regardless of its name.
pub const PAGE_RESOLVE_TYPE: &str = "website/pages/Page.tsx";

/// Whether a block is a page block: its name starts with `pages-` or its `__resolveType` is
/// [`PAGE_RESOLVE_TYPE`].
pub fn is_page_block(name: &str, block: &Value) -> bool {
    name.starts_with("pages-") || block.resolve_type() == Some(PAGE_RESOLVE_TYPE)
}

/// The path of a routable page block: a page block with a non-empty string `path` and a
/// non-null, non-false `sections`.
pub fn page_path<'a>(name: &str, block: &'a Value) -> Option<&'a str> {
    if !is_page_block(name, block) {
        return None;
    }
    let path = block.get("path")?.as_str().filter(|p| !p.is_empty())?;
    block.get("sections").filter(|s| s.is_truthy())?;
    Some(path)
}

/// The field with which a page block says it is the site's not-found page: `"notFound": true`.
pub const NOT_FOUND_FIELD: &str = "notFound";

/// Whether a page block is the site's not-found page: it answers 404 where it serves, and serves
/// every path no other page does.
pub fn is_not_found_page(block: &Value) -> bool {
    block.get(NOT_FOUND_FIELD).and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Value {
        Value::from_json_str(s).unwrap()
    }

    #[test]
    fn recognises_prefix_or_type_and_requires_path_and_sections() {
        assert_eq!(
            page_path("pages-home", &v(r#"{"path":"/","sections":[]}"#)),
            Some("/")
        );
        assert_eq!(
            page_path(
                "Home",
                &v(r#"{"__resolveType":"website/pages/Page.tsx","path":"/x","sections":[]}"#)
            ),
            Some("/x")
        );
        // Legacy page-shaped block without prefix or type stays unrouted.
        assert_eq!(page_path("Home", &v(r#"{"path":"/","sections":[]}"#)), None);
        assert_eq!(
            page_path("pages-a", &v(r#"{"path":"","sections":[]}"#)),
            None
        );
        assert_eq!(page_path("pages-a", &v(r#"{"path":"/a"}"#)), None);
        assert_eq!(
            page_path("pages-a", &v(r#"{"path":7,"sections":[]}"#)),
            None
        );
    }
}
