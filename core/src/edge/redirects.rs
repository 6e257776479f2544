//! Redirects from content, indexed once per revision.
//!
//! Sources: top-level blocks whose `__resolveType` is one of [`REDIRECT_LOADERS`], with
//! `redirects: [{from, to, type}]` or `redirect: {from, to, type}`. Matching is on the
//! percent-decoded path, ASCII case-insensitive, ignoring one trailing slash. A `from` with a
//! query matches only that query (order-insensitive, tracking parameters ignored) and wins over
//! a path-only rule. Exact rules win over globs (`/old/*`); among globs the longest prefix wins.
//! A repeated `from` keeps its last definition: blocks are read in name order, entries in array
//! order. `to` may contain `*`, replaced by the rest of the path after the glob prefix, taken
//! still percent-encoded from the request (so `%2F`, `%3F` stay encoded) and never able to change
//! the target's origin: leading slashes are collapsed (`/pt//evil.com` cannot give
//! `Location: //evil.com`), a suffix that lands in an authority starts with `/`, and one that
//! lands in a query has `&`, `=`, `+` and `#` encoded. Rules that redirect a path to itself
//! (ignoring the query: `/x` → `/x?ref=1` loops) are dropped, as are globs whose target lies
//! under their own prefix; a glob whose fixed target is the request path answers nothing.
//!
//! Globs are indexed by prefix (decision EDGE-23): building the index is one pass over the
//! rules, and a lookup tries each distinct prefix length once (one hash lookup each), not
//! each glob.

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

/// Characters encoded in a glob suffix that lands in a query or fragment.
const QUERY_SUFFIX: &AsciiSet = &LOCATION.add(b'&').add(b'=').add(b'+').add(b'#').add(b'?');

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
    /// Glob rules by prefix (decoded, lower-cased).
    globs: HashMap<Vec<u8>, Rule>,
    /// The distinct lengths of glob prefixes, longest first.
    glob_lengths: Vec<usize>,
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
        let mut lengths: Vec<usize> = table.globs.keys().map(Vec::len).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.dedup();
        table.glob_lengths = lengths;
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
        let absolute = to.contains("://");
        let (to_path, to_query) = match to.split('#').next().unwrap_or("").split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (to.split('#').next().unwrap_or(""), None),
        };
        let to_path = normalize_path(&percent_decode_str(to_path).decode_utf8_lossy());
        if let Some(prefix) = path.strip_suffix('*') {
            let prefix = prefix.trim_end_matches('*');
            // `/blog/*` → `/blog/*` or `/a/*` → `/a/b/*` would redirect forever.
            let loops = !absolute
                && to.contains('*')
                && to_path
                    .split('*')
                    .next()
                    .is_some_and(|head| head.starts_with(prefix));
            if !loops {
                self.globs.insert(prefix.as_bytes().to_vec(), rule);
            }
        } else if let Some(q) = query {
            let to_query = to_query
                .map(|q| normalize_query(Some(q), true, &[]))
                .unwrap_or_default();
            if absolute || to_path != path || to_query != q {
                self.with_query.insert((path, q), rule);
            }
        } else if absolute || to_path != path {
            // The query is ignored: `/x` → `/x?ref=1` is still a loop.
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
        if self.globs.is_empty() {
            return None;
        }
        let raw = url.path();
        let decoded: Vec<u8> = percent_decode_str(raw).collect();
        let decoded_lower = decoded.to_ascii_lowercase();
        for &len in &self.glob_lengths {
            let Some(rule) = decoded_lower.get(..len).and_then(|p| self.globs.get(p)) else {
                continue;
            };
            let to = substitute(&rule.to, raw_suffix(raw, len));
            if !to.contains("://") {
                let target = to.split(['?', '#']).next().unwrap_or("");
                if normalize_path(&percent_decode_str(target).decode_utf8_lossy()) == path {
                    return None;
                }
            }
            return Some(finish(&to, rule.status, url.query()));
        }
        None
    }
}

/// The part of an encoded path after its first `decoded_len` decoded bytes, still encoded.
fn raw_suffix(raw: &str, decoded_len: usize) -> &str {
    let b = raw.as_bytes();
    let (mut i, mut n) = (0, 0);
    while n < decoded_len && i < b.len() {
        let escape = b[i] == b'%'
            && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        i += if escape { 3 } else { 1 };
        n += 1;
    }
    raw.get(i..).unwrap_or("")
}

/// `to` with its first `*` replaced by `suffix`, such that the suffix cannot change where the
/// redirect goes: it cannot make a path protocol-relative, extend an authority or add a parameter.
fn substitute(to: &str, suffix: &str) -> String {
    let Some(star) = to.find('*') else {
        return to.to_string();
    };
    let (head, tail) = (&to[..star], &to[star + 1..]);
    let mut out = String::with_capacity(to.len() + suffix.len() + 1);
    out.push_str(head);
    if head.contains(['?', '#']) {
        out.extend(utf8_percent_encode(suffix, QUERY_SUFFIX));
    } else {
        let open_authority = head
            .split_once("://")
            .is_some_and(|(_, rest)| !rest.contains('/'));
        if (head.is_empty() || open_authority) && !suffix.starts_with('/') {
            out.push('/');
        }
        out.push_str(suffix);
    }
    out.push_str(tail);
    if !to.starts_with("//") && !to.starts_with('\\') {
        let trimmed = out.trim_start_matches(['/', '\\']);
        if trimmed.len() + 1 < out.len() {
            out = format!("/{trimmed}");
        }
    }
    out
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

    #[test]
    fn glob_suffixes_cannot_leave_the_site() {
        let t = table(
            r#"{"r": {"__resolveType": "website/loaders/redirects.ts", "redirects": [
                {"from": "/pt/*", "to": "/*"},
                {"from": "/go*", "to": "https://other.com*"},
                {"from": "/any*", "to": "*"},
                {"from": "/q/*", "to": "/search?term=*"}
            ]}}"#,
        );
        let loc = |u: &str| at(&t, u).map(|(_, l)| l);
        assert_eq!(loc("/pt//evil.com").as_deref(), Some("/evil.com"));
        assert_eq!(loc("/pt/\\evil.com").as_deref(), Some("/evil.com"));
        assert_eq!(
            loc("/pt/%2F%2Fevil.com").as_deref(),
            Some("/%2F%2Fevil.com")
        );
        assert_eq!(
            loc("/pt/%5C%5Cevil.com").as_deref(),
            Some("/%5C%5Cevil.com")
        );
        assert_eq!(
            loc("/pt/a%3Fadmin=1").as_deref(),
            Some("/a%3Fadmin=1"),
            "no query gained"
        );
        assert_eq!(
            loc("/pt/a?x=1").as_deref(),
            Some("/a?x=1"),
            "the real query is carried"
        );
        assert_eq!(
            loc("/go@evil.com").as_deref(),
            Some("https://other.com/@evil.com")
        );
        assert_eq!(loc("/any//evil.com").as_deref(), Some("/evil.com"));
        assert_eq!(loc("/anyhttp:evil.com").as_deref(), Some("/http:evil.com"));
        assert_eq!(
            loc("/q/a&admin=1").as_deref(),
            Some("/search?term=a%26admin%3D1")
        );
        for u in [
            "/pt//evil.com",
            "/pt/%2F%2Fx",
            "/go@evil.com",
            "/any//x",
            "/any%2F%2Fx",
        ] {
            let l = loc(u).unwrap();
            assert!(!l.starts_with("//") && !l.starts_with("/\\"), "{u} → {l}");
        }
    }

    #[test]
    fn self_redirects_are_dropped() {
        let t = table(
            r#"{"r": {"__resolveType": "website/loaders/redirects.ts", "redirects": [
                {"from": "/x", "to": "/x?ref=1"},
                {"from": "/y", "to": "/Y/#top"},
                {"from": "/s?q=a", "to": "/s?q=a"},
                {"from": "/t?q=a", "to": "/t?q=b"},
                {"from": "/blog/*", "to": "/blog/*"},
                {"from": "/a/*", "to": "/a/b/*"},
                {"from": "/c/*", "to": "/c/index"}
            ]}}"#,
        );
        assert_eq!(
            at(&t, "/x"),
            None,
            "the query does not make it another page"
        );
        assert_eq!(at(&t, "/x?ref=1"), None);
        assert_eq!(at(&t, "/y"), None);
        assert_eq!(at(&t, "/s?q=a"), None);
        assert_eq!(at(&t, "/t?q=a"), Some((302, "/t?q=b".into())));
        assert_eq!(at(&t, "/blog/post"), None);
        assert_eq!(at(&t, "/a/x"), None);
        assert_eq!(at(&t, "/c/other"), Some((302, "/c/index".into())));
        assert_eq!(at(&t, "/c/index"), None, "no redirect to the page itself");
    }

    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "the test times the build; the code under test reads no clock"
    )]
    fn many_globs_build_in_linear_time() {
        let entries: Vec<serde_json::Value> = (0..40_000)
            .map(|i| serde_json::json!({"from": format!("/g{}/*", i % 20_000), "to": format!("/n{i}/*")}))
            .collect();
        let block = Value::from(
            serde_json::json!({"__resolveType": "website/loaders/redirects.ts", "redirects": entries}),
        );
        let start = std::time::Instant::now();
        let t = RedirectTable::build("r", [("b", &block)]);
        assert_eq!(t.len(), 20_000);
        assert_eq!(
            at(&t, "/g7/x"),
            Some((302, "/n20007/x".into())),
            "the last definition wins"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    proptest! {
        #[test]
        fn glob_locations_stay_on_the_site(suffix in "[a-z/%2FC5@:.?&=\\\\]{0,12}") {
            let t = table(r#"{"r": {"__resolveType": "website/loaders/redirects.ts", "redirects": [{"from": "/pt/*", "to": "/*"}]}}"#);
            if let Ok(u) = Url::parse(&format!("https://s.com/pt/{suffix}"))
                && let Some(r) = t.lookup(&u)
            {
                prop_assert!(r.location.starts_with('/'));
                prop_assert!(!r.location.starts_with("//") && !r.location.starts_with("/\\"), "{}", r.location);
                let base = Url::parse("https://s.com/").unwrap();
                let joined = base.join(&r.location).unwrap();
                prop_assert_eq!(joined.host_str(), Some("s.com"));
            }
        }

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
