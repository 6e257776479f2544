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
