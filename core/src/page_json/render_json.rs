//! The lean page JSON (`?renderJson`): `{name, path, sections}`, each section
//! `{component, props}` or, when it renders deferred, `{component, lazyUrl}`.
//!
//! A section is left out when its key ends with one of the Site block's
//! `renderJson.sectionsToIgnore` suffixes, or when the host says its module exports
//! `renderJson = false` (core cannot see modules). Props lose their top-level `__`-prefixed
//! keys and the request-derived `device`, `isMobile` and `currentSearchParam`; nested sections
//! (`{"Component", "props"}` in props) are written `{component, props}` under the same rules,
//! a left-out one becoming `null` in an object and leaving a list. A section module's
//! `renderJson` projection is the host's: it applies it to the resolved props before finishing.

use super::recognize::SECTION_PARAM;
use crate::resolve::ResolvedSection;
use crate::value::{Value, intern};

/// Props the reference's section mixins inject per request.
const INJECTED_KEYS: [&str; 3] = ["device", "isMobile", "currentSearchParam"];

/// Which sections the JSON leaves out, and how props are written.
pub(crate) struct Projection<'a> {
    ignore: Vec<&'a str>,
    dropped: &'a [String],
}

impl<'a> Projection<'a> {
    /// The projection under the Site block's `renderJson.sectionsToIgnore` (blank suffixes
    /// ignored: they would match every key) and the host's `dropped` section keys.
    pub(crate) fn new(site_block: Option<&'a Value>, dropped: &'a [String]) -> Projection<'a> {
        let ignore = site_block
            .and_then(|s| s.get("renderJson"))
            .and_then(|r| r.get("sectionsToIgnore"))
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        Projection { ignore, dropped }
    }

    /// Whether the section `component` is left out.
    pub(crate) fn is_dropped(&self, component: &str) -> bool {
        self.ignore.iter().any(|suffix| component.ends_with(suffix))
            || self.dropped.iter().any(|d| d == component)
    }

    /// `section` as the JSON writes it: `{component, props}`, or `{component, lazyUrl}` with
    /// `lazy_url` when it is given (a deferred section).
    pub(crate) fn section(&self, section: &ResolvedSection, lazy_url: Option<String>) -> Value {
        let second = match lazy_url {
            Some(url) => (intern("lazyUrl"), Value::string(&url)),
            None => (intern("props"), self.props(&section.props)),
        };
        Value::object(vec![
            (intern("component"), Value::string(&section.component)),
            second,
        ])
    }

    /// Props without the injected keys, nested sections written the same way.
    fn props(&self, props: &Value) -> Value {
        let stripped = match props.as_object() {
            Some(o) => Value::object(
                o.entries()
                    .iter()
                    .filter(|(k, _)| !k.starts_with("__") && !INJECTED_KEYS.contains(&&**k))
                    .cloned()
                    .collect(),
            ),
            None => Value::object(Vec::new()),
        };
        self.walk(&stripped).unwrap_or(stripped)
    }

    /// A nested section's key, when `value` is one (`{"Component": <key>, "props": {...}}`).
    fn nested(value: &Value) -> Option<&str> {
        let o = value.as_object()?;
        o.get("props")?.as_object()?;
        o.get("Component")?.as_str()
    }

    fn nested_json(&self, value: &Value, component: &str) -> Value {
        let props = value.get("props").unwrap_or(&Value::Null);
        Value::object(vec![
            (intern("component"), Value::string(component)),
            (intern("props"), self.props(props)),
        ])
    }

    /// `value` with its nested sections written; `None`: nothing changed.
    fn walk(&self, value: &Value) -> Option<Value> {
        match value {
            Value::Array(a) => {
                let mut changed = false;
                let mut out = Vec::with_capacity(a.items().len());
                for item in a.items() {
                    if let Some(component) = Self::nested(item) {
                        changed = true;
                        if !self.is_dropped(component) {
                            out.push(self.nested_json(item, component));
                        }
                        continue;
                    }
                    match self.walk(item) {
                        Some(v) => {
                            changed = true;
                            out.push(v);
                        }
                        None => out.push(item.clone()),
                    }
                }
                changed.then(|| Value::array(out))
            }
            Value::Object(o) => {
                if let Some(component) = Self::nested(value) {
                    return Some(match self.is_dropped(component) {
                        true => Value::Null,
                        false => self.nested_json(value, component),
                    });
                }
                let mut out: Option<Vec<_>> = None;
                for (i, (_, v)) in o.entries().iter().enumerate() {
                    if let Some(v) = self.walk(v) {
                        out.get_or_insert_with(|| o.entries().to_vec())[i].1 = v;
                    }
                }
                out.map(Value::object)
            }
            _ => None,
        }
    }
}

/// The URL a deferred section is fetched from: the request's path and query with
/// `__section=<index>` appended.
pub(crate) fn lazy_url(path_and_query: &str, index: usize) -> String {
    let sep = if path_and_query.contains('?') {
        '&'
    } else {
        '?'
    };
    format!("{path_and_query}{sep}{SECTION_PARAM}={index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(s: &str) -> Value {
        Value::from_json_str(s).unwrap()
    }

    #[test]
    fn props_lose_injected_keys_and_nested_sections_follow_the_rules() {
        let site = json(r#"{"renderJson":{"sectionsToIgnore":["Analytics.tsx"," "]}}"#);
        let dropped = vec!["site/sections/WebOnly.tsx".to_string()];
        let projection = Projection::new(Some(&site), &dropped);
        let section = ResolvedSection {
            component: "site/sections/Shelf.tsx".into(),
            props: json(
                r#"{"title":"t","__pageUrl":"u","device":"mobile","isMobile":true,"currentSearchParam":"q",
                    "nested":{"device":"kept below the top"},
                    "items":[{"Component":"site/sections/Card.tsx","props":{"a":1,"__x":2}},
                             {"Component":"site/sections/WebOnly.tsx","props":{}}],
                    "one":{"Component":"x/sections/Analytics.tsx","props":{}}}"#,
            ),
            deferred: false,
        };
        assert_eq!(
            projection.section(&section, None),
            json(
                r#"{"component":"site/sections/Shelf.tsx","props":{"title":"t",
                    "nested":{"device":"kept below the top"},
                    "items":[{"component":"site/sections/Card.tsx","props":{"a":1}}],"one":null}}"#
            )
        );
        assert!(projection.is_dropped("website/sections/Analytics/Analytics.tsx"));
        assert!(!projection.is_dropped("site/sections/Shelf.tsx"));
        assert_eq!(
            projection.section(&section, Some(lazy_url("/p?renderJson", 3))),
            json(
                r#"{"component":"site/sections/Shelf.tsx","lazyUrl":"/p?renderJson&__section=3"}"#
            )
        );
    }
}
