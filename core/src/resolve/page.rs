//! What resolution produces: a page of sections with its effects.

use crate::effects::Effects;
use crate::value::Value;
use serde::Serialize;
use std::collections::BTreeMap;

/// One rendered section of a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvedSection {
    /// The section key (`site/sections/Hero.tsx`).
    pub component: String,
    /// Its resolved props.
    pub props: Value,
    /// Rendered first as a skeleton and loaded separately (async rendering only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

/// A resolved page, in the stable format the command line prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvedPage {
    /// The page block name; `None` when no page serves the path.
    pub page: Option<String>,
    /// Its path pattern.
    pub path: Option<String>,
    /// The pattern's groups.
    pub params: BTreeMap<String, String>,
    /// Site globals then the page's sections, in order.
    pub sections: Vec<ResolvedSection>,
    /// The page's SEO block, resolved.
    pub seo: Option<Value>,
    /// Cookies, warnings, errors and what the page varies on.
    pub effects: Effects,
    /// The content revision it was resolved from.
    pub revision: String,
    /// The resolved value of a single-value resolution (a block, section or props: previews,
    /// render, invoke); absent for pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl ResolvedPage {
    /// The page as compact JSON bytes, what a binding hands its host: byte for byte what
    /// `serde_json::to_vec` writes (same escapes, same number formatting), but written by
    /// sonic-rs, whose string escaping is vectorised (pages are mostly long strings).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        // Writing to a Vec fails only for a non-string map key, which a page never has.
        sonic_rs::to_vec(self).unwrap_or_else(|_| b"null".to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_bytes_are_what_serde_json_writes() {
        let props = Value::from_json_str(
            r#"{"t":"quote \" back \\ \n \u0007 \u007f é 😀 </script>","n":[1,-2,1.5,1e21,1e-7,18446744073709551615],"z":null}"#,
        )
        .unwrap();
        let page = ResolvedPage {
            page: Some("pages-home".into()),
            path: Some("/".into()),
            params: BTreeMap::from([("id".into(), "a\tb".into())]),
            sections: vec![ResolvedSection {
                component: "site/sections/Hero.tsx".into(),
                props: props.clone(),
                deferred: true,
            }],
            seo: None,
            effects: Effects::default(),
            revision: "r".into(),
            value: Some(props),
        };
        assert_eq!(page.to_json_bytes(), serde_json::to_vec(&page).unwrap());
    }
}
