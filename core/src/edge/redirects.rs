//! Redirects from content, indexed once per revision.
//!
//! Sources: top-level blocks whose `__resolveType` is one of [`REDIRECT_LOADERS`], with
//! `redirects: [{from, to, type}]` or `redirect: {from, to, type}`. Matching is on the
//! percent-decoded path, ASCII case-insensitive, ignoring one trailing slash. A `from` with a
//! query matches only that query (order-insensitive, tracking parameters ignored) and wins over
//! a path-only rule. Exact rules win over globs (`/old/*`); among globs the longest prefix wins.
//! A repeated `from` keeps its last definition: blocks are read in name order, entries in array
//! order. `to` may contain `*`, replaced by the rest of the path after the glob prefix.

use super::normalize::normalize_query;
use crate::value::Value;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use std::collections::HashMap;
use url::Url;

/// `__resolveType`s of redirect blocks.
pub const REDIRECT_LOADERS: [&str; 4] = [
    "website/loaders/redirect.ts",
    "website/loaders/redirects.ts",
    "website/loaders/redirectsFromCsv.ts",
    "deco-sites/std/loaders/x/redirects.ts",
];

/// Characters `encodeURI` escapes (besides non-ASCII); `%` is kept so encoded targets stay as they are.
const LOCATION: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// A redirect to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `301`, `302`, `303`, `307` or `308`.
    pub status: u16,
    /// The `Location` header.
    pub location: String,
}

#[derive(Debug, Clone)]
struct Rule {
    to: String,
    status: u16,
}

/// The redirects of one content revision.
#[derive(Debug, Clone, Default)]
pub struct RedirectTable {
    revision: String,
    exact: HashMap<String, Rule>,
    with_query: HashMap<(String, String), Rule>,
    /// Glob prefixes, longest first.
    globs: Vec<(String, Rule)>,
}

/// The status of a redirect `type`: `permanent` → 301, `temporary` (or missing) → 302; the
/// codes 301, 302, 303, 307 and 308 are accepted as numbers or strings.
fn status_of(kind: Option<&Value>) -> u16 {
    let code = match kind {
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "permanent" => 301,
            "temporary" => 302,
            other => other.parse().unwrap_or(302),
        },
        Some(Value::Number(n)) => n.as_u64().map_or(302, |n| u16::try_from(n).unwrap_or(302)),
        _ => 302,
    };
    if matches!(code, 301 | 302 | 303 | 307 | 308) {
        code
    } else {
        302
    }
}

/// Normalises a decoded path for matching: ASCII lower case, leading `/`, one trailing `/` dropped.
fn normalize_path(decoded: &str) -> String {
    let mut p = decoded.trim().to_ascii_lowercase();
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    if p.len() > 1 && p.ends_with('/') {
        p.pop();
    }
    p
}

/// Splits a `from` into its normalised path and query (absolute URLs give their path).
fn split_from(from: &str) -> (String, Option<String>) {
    let from = from.trim();
    let (path, query) = match Url::parse(from) {
        Ok(u) if u.has_host() => (u.path().to_string(), u.query().map(str::to_string)),
        _ => match from.split_once('?') {
            Some((p, q)) => (p.to_string(), Some(q.to_string())),
            None => (from.to_string(), None),
        },
    };
    let query = query
        .map(|q| normalize_query(Some(&q), true, &[]))
        .filter(|q| !q.is_empty());
    (
        normalize_path(&percent_decode_str(&path).decode_utf8_lossy()),
        query,
    )
}

impl RedirectTable {
    /// Indexes the redirects of a content revision from its top-level blocks (any order: they
    /// are read sorted by name, so the result does not depend on map iteration order).
    pub fn build<'a>(
        revision: &str,
        blocks: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> RedirectTable {
        let mut table = RedirectTable {
            revision: revision.to_string(),
            ..RedirectTable::default()
        };
        let mut blocks: Vec<(&str, &Value)> = blocks.into_iter().collect();
        blocks.sort_by(|a, b| a.0.cmp(b.0));
        for (_, block) in blocks {
            if !block
                .resolve_type()
                .is_some_and(|t| REDIRECT_LOADERS.contains(&t))
            {
                continue;
            }
            let entries = block
                .get("redirects")
                .and_then(Value::as_array)
                .unwrap_or(&[]);
            for entry in entries.iter().chain(block.get("redirect")) {
                table.add(entry);
            }
        }
        table.globs.sort_by_key(|g| std::cmp::Reverse(g.0.len()));
        table
    }

    fn add(&mut self, entry: &Value) {
        let text = |k: &str| {
            entry
                .get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let (Some(from), Some(to)) = (text("from"), text("to")) else {
            return;
        };
        let rule = Rule {
            to: to.to_string(),
            status: status_of(entry.get("type")),
        };
        let (path, query) = split_from(from);
        if let Some(prefix) = path.strip_suffix('*') {
            let prefix = prefix.trim_end_matches('*').to_string();
            self.globs.retain(|(p, _)| *p != prefix);
            self.globs.push((prefix, rule));
        } else if let Some(q) = query {
            self.with_query.insert((path, q), rule);
        } else if normalize_path(&percent_decode_str(to).decode_utf8_lossy()) != path
            || to.contains("://")
        {
            self.exact.insert(path, rule);
        }
    }

    /// The revision the table was built from; rebuild when the content revision differs.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.exact.len() + self.with_query.len() + self.globs.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The redirect for a request URL, if any. The request's query is carried over when neither
    /// the rule's `from` (a query rule) nor its `to` has a query of its own.
    pub fn lookup(&self, url: &Url) -> Option<Redirect> {
        if self.is_empty() {
            return None;
        }
        let original = percent_decode_str(url.path()).decode_utf8_lossy();
        let lower = original.to_ascii_lowercase();
        let path = normalize_path(&lower);
        let query = normalize_query(url.query(), true, &[]);
        if !query.is_empty()
            && let Some(rule) = self.with_query.get(&(path.clone(), query))
        {
            return Some(finish(&rule.to, rule.status, None));
        }
        if let Some(rule) = self.exact.get(&path) {
            return Some(finish(&rule.to, rule.status, url.query()));
        }
        for (prefix, rule) in &self.globs {
            if lower.starts_with(prefix.as_str()) {
                // ASCII lower-casing keeps byte offsets, so the suffix keeps its original case.
                let suffix = original.get(prefix.len()..).unwrap_or("");
                let to = rule.to.replacen('*', suffix, 1);
                return Some(finish(&to, rule.status, url.query()));
            }
        }
        None
    }
}

fn finish(to: &str, status: u16, carry_query: Option<&str>) -> Redirect {
    let mut location = utf8_percent_encode(to, LOCATION).to_string();
    if let Some(q) = carry_query.filter(|q| !q.is_empty())
        && !to.contains('?')
    {
        match location.find('#') {
            Some(hash) => location.insert_str(hash, &format!("?{q}")),
            None => {
                location.push('?');
                location.push_str(q);
            }
        }
    }
    Redirect { status, location }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table(json: &str) -> RedirectTable {
        let blocks: Vec<(String, Value)> = Value::from_json_str(json)
            .unwrap()
            .as_object()
            .unwrap()
            .entries()
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        RedirectTable::build("rev1", blocks.iter().map(|(k, v)| (k.as_str(), v)))
    }

    fn at(t: &RedirectTable, u: &str) -> Option<(u16, String)> {
        t.lookup(&Url::parse(&format!("https://s.com{u}")).unwrap())
            .map(|r| (r.status, r.location))
    }

    const CONTENT: &str = r#"{
        "r1": {"__resolveType": "website/loaders/redirect.ts", "redirect": {"from": "/Old-Page/", "to": "/new-page", "type": "permanent"}},
        "r2": {"__resolveType": "deco-sites/std/loaders/x/redirects.ts", "redirects": [
            {"from": "/blog/*", "to": "/news/*", "type": "temporary"},
            {"from": "/blog/archive/*", "to": "/archive"},
            {"from": "/s?q=Airking", "to": "/rolex/air-king", "type": "permanent"},
            {"from": "https://s.com/abs", "to": "https://other.com/x#frag", "type": "308"},
            {"from": "/café", "to": "/cafés e chás"},
            {"from": "", "to": "/x"},
            {"from": "/loop", "to": "/loop/"}
        ]},
        "r3": {"__resolveType": "website/loaders/redirect.ts", "redirect": {"from": "/old-page", "to": "/newer-page", "type": "permanent"}},
        "notredirect": {"__resolveType": "site/sections/Hero.tsx", "redirect": {"from": "/hero", "to": "/x"}}
    }"#;

    #[test]
    fn statuses_case_and_trailing_slash() {
        let t = table(CONTENT);
        assert_eq!(t.revision(), "rev1");
        assert_eq!(
            at(&t, "/old-page"),
            Some((301, "/newer-page".into())),
            "last definition wins"
        );
        assert_eq!(
            at(&t, "/OLD-PAGE/"),
            Some((301, "/newer-page".into())),
            "case and trailing slash ignored"
        );
        assert_eq!(
            at(&t, "/abs"),
            Some((308, "https://other.com/x#frag".into()))
        );
        assert_eq!(at(&t, "/hero"), None, "only redirect loaders count");
        assert_eq!(at(&t, "/loop"), None, "self-redirects are dropped");
        assert_eq!(at(&t, "/nothing"), None);
    }

    #[test]
    fn block_order_does_not_matter() {
        let content = Value::from_json_str(CONTENT).unwrap();
        let mut blocks: Vec<(&str, &Value)> = content
            .as_object()
            .unwrap()
            .entries()
            .iter()
            .map(|(k, v)| (&**k, v))
            .collect();
        blocks.reverse();
        let t = RedirectTable::build("rev1", blocks);
        assert_eq!(
            at(&t, "/old-page"),
            Some((301, "/newer-page".into())),
            "r3 sorts after r1"
        );
    }

    #[test]
    fn globs_and_precedence() {
        let t = table(CONTENT);
        assert_eq!(
            at(&t, "/blog/Post-1"),
            Some((302, "/news/Post-1".into())),
            "suffix keeps its case"
        );
        assert_eq!(
            at(&t, "/blog/archive/2020"),
            Some((302, "/archive".into())),
            "longest prefix wins"
        );
        assert_eq!(at(&t, "/blog/"), Some((302, "/news/".into())));
    }

    #[test]
    fn queries() {
        let t = table(CONTENT);
        assert_eq!(
            at(&t, "/s?q=Airking"),
            Some((301, "/rolex/air-king".into()))
        );
        assert_eq!(
            at(&t, "/s?utm_source=x&q=Airking"),
            Some((301, "/rolex/air-king".into()))
        );
        assert_eq!(at(&t, "/s?q=other"), None);
        assert_eq!(
            at(&t, "/old-page?utm_source=mail"),
            Some((301, "/newer-page?utm_source=mail".into())),
            "query carried over"
        );
        assert_eq!(
            at(&t, "/abs?a=1"),
            Some((308, "https://other.com/x?a=1#frag".into()))
        );
    }

    #[test]
    fn location_is_uri_encoded() {
        let t = table(CONTENT);
        assert_eq!(
            at(&t, "/caf%C3%A9"),
            Some((302, "/caf%C3%A9s%20e%20ch%C3%A1s".into()))
        );
    }

    proptest! {
        #[test]
        fn build_and_lookup_never_panic(from in "[ -~]{0,20}", to in "[ -~é*]{0,20}", path in "(/[a-zA-Z0-9%*é]{0,6}){0,4}") {
            let block = Value::from(serde_json::json!({"__resolveType": "website/loaders/redirects.ts", "redirects": [{"from": from, "to": to}]}));
            let t = RedirectTable::build("r", [("b", &block)]);
            if let Ok(u) = Url::parse(&format!("https://s.com{path}")) {
                let _ = t.lookup(&u);
            }
        }
    }
}
