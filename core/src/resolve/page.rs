//! What resolution produces: a page of sections with its effects.
//!
//! The page's wire shape is said once (`PageJson`) and written two ways: plainly by
//! `impl Serialize`, for any serializer (no sonic-rs raw value ever reaches `serde_json`), or
//! with kept content JSON spliced in by [`ResolvedPage::to_json_bytes`], for sonic-rs only
//! (decision CONTENT-13).

use crate::effects::Effects;
use crate::value::{Json, Value};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// One rendered section of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedSection {
    /// The section key (`site/sections/Hero.tsx`).
    pub component: String,
    /// Its resolved props.
    pub props: Value,
    /// Rendered first as a skeleton and loaded separately (async rendering only).
    pub deferred: bool,
}

/// A resolved page, in the stable format the command line prints.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedPage {
    /// The page block name; `None` when no page serves the path.
    pub page: Option<String>,
    /// Its path pattern.
    pub path: Option<String>,
    /// The pattern's groups.
    pub params: BTreeMap<String, String>,
    /// The page is the site's not-found page (`"notFound": true`): whoever answers it answers
    /// 404 with it. Serialized as `notFound`, only when true.
    pub not_found: bool,
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
    pub value: Option<Value>,
}

// The wire shape of a page, written plainly (`SPLICE` false: any serializer) or with kept
// content JSON spliced in (true: sonic-rs only, see `Json`). The one place the shape is said;
// its TypeScript declaration is generated from it, with its docs (`crate::ts_types`).
/// A resolved page, in the stable format the command line prints.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename = "ResolvedPage")]
pub(crate) struct PageJson<'a, const SPLICE: bool> {
    /// The page block name; `null` when no page serves the path.
    page: &'a Option<String>,
    /// Its path pattern.
    path: &'a Option<String>,
    /// The pattern's groups, still percent-encoded.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, string>"))]
    params: &'a BTreeMap<String, String>,
    /// `true` when the page is the site's not-found page (its block says `"notFound": true`):
    /// answer it with status 404. Absent otherwise.
    #[serde(rename = "notFound", skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional = nullable, type = "true"))]
    not_found: bool,
    /// Site globals, then the page's sections.
    #[cfg_attr(feature = "ts", ts(as = "Vec<SectionJson<'static, false>>"))]
    sections: SectionsJson<'a, SPLICE>,
    /// The page's SEO block, resolved (its shape is the site's content).
    #[cfg_attr(feature = "ts", ts(type = "any"))]
    seo: Option<Json<'a, SPLICE>>,
    /// Cookies, warnings, errors and what the page varies on.
    effects: &'a Effects,
    /// The content revision it was resolved from.
    revision: &'a str,
    /// The resolved value of a single-value resolution (a block, section or props: previews,
    /// render, invoke); absent for pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional = nullable, type = "unknown"))]
    value: Option<Json<'a, SPLICE>>,
}

// The wire shape of a `ResolvedSection`.
/// One section of a resolved page.
#[derive(Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename = "ResolvedSection")]
pub(crate) struct SectionJson<'a, const SPLICE: bool> {
    /// The section key (`site/sections/Hero.tsx`).
    component: &'a str,
    /// Its resolved props: whatever the section's component declares, handed to it as they are.
    #[cfg_attr(feature = "ts", ts(type = "any"))]
    props: Json<'a, SPLICE>,
    /// Rendered first as a skeleton and loaded separately (async rendering only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional = nullable, type = "true"))]
    deferred: bool,
}

struct SectionsJson<'a, const SPLICE: bool>(&'a [ResolvedSection]);

impl<const SPLICE: bool> Serialize for SectionsJson<'_, SPLICE> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ResolvedSection::json::<SPLICE>))
    }
}

impl ResolvedSection {
    fn json<const SPLICE: bool>(&self) -> SectionJson<'_, SPLICE> {
        SectionJson {
            component: &self.component,
            props: Json(&self.props),
            deferred: self.deferred,
        }
    }
}

impl Serialize for ResolvedSection {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json::<false>().serialize(s)
    }
}

impl Serialize for ResolvedPage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json::<false>().serialize(s)
    }
}

/// Bytes a page's JSON buffer starts with: real pages are tens to hundreds of KB, and growing a
/// buffer from nothing reallocates and copies it a dozen times. The buffer is handed to the host
/// and dropped, so the room a small page leaves unused is not kept.
pub(crate) const PAGE_BUFFER_START: usize = 64 * 1024;

impl ResolvedPage {
    /// The page as compact JSON bytes, what a binding hands its host: byte for byte what
    /// `serde_json::to_vec` writes (same escapes, same number formatting), but written by
    /// sonic-rs, whose string escaping is vectorised (pages are mostly long strings), and with
    /// the JSON of large unchanged content subtrees copied from what the content keeps (the
    /// first page to write one escapes it; see [`crate::value`]).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PAGE_BUFFER_START);
        self.write_json(&mut out);
        out
    }

    /// Appends what [`ResolvedPage::to_json_bytes`] returns to `out`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        let start = out.len();
        // Writing to a Vec fails only for a non-string map key, which a page never has.
        if sonic_rs::to_writer(&mut *out, &self.json::<true>()).is_err() {
            out.truncate(start);
            out.extend_from_slice(b"null");
        }
    }

    fn json<const SPLICE: bool>(&self) -> PageJson<'_, SPLICE> {
        PageJson {
            page: &self.page,
            path: &self.path,
            params: &self.params,
            not_found: self.not_found,
            sections: SectionsJson(&self.sections),
            seo: self.seo.as_ref().map(Json),
            effects: &self.effects,
            revision: &self.revision,
            value: self.value.as_ref().map(Json),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_bytes_are_what_serde_json_writes() {
        // `big` is static and large enough to keep its JSON: written once, then copied.
        let big = (0..40).map(|i| format!(r#"{{"i":{i},"s":"\u2028 \"{i}\" \t"}}"#));
        let props = Value::from_json_str(&format!(
            r#"{{"t":"quote \" back \\ \n \u0007 \u007f é 😀 </script>","n":[1,-2,1.5,1e21,1e-7,18446744073709551615],"z":null,"big":[{}]}}"#,
            big.collect::<Vec<_>>().join(",")
        ))
        .unwrap();
        let page = ResolvedPage {
            page: Some("pages-home".into()),
            path: Some("/".into()),
            params: BTreeMap::from([("id".into(), "a\tb".into())]),
            not_found: true,
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
        let expected = serde_json::to_vec(&page).unwrap();
        assert_eq!(page.to_json_bytes(), expected);
        assert_eq!(
            page.to_json_bytes(),
            expected,
            "once the content keeps its JSON"
        );
        assert_eq!(serde_json::to_vec(&page).unwrap(), expected);
        let pretty = serde_json::to_string_pretty(&page).unwrap();
        assert!(
            !pretty.contains("sonic"),
            "no raw-value token reaches serde_json"
        );
        assert_eq!(
            serde_json::to_value(&page).unwrap()["sections"][0]["props"]["big"][39]["i"],
            39
        );
    }
}
