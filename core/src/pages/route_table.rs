//! The route table of a snapshot: page patterns compiled once, tried in precedence order
//! (decision PAGE-2). A route keeps only its pattern's pathname component, and that
//! component's regular expression is built on first use ([`LazyRegex`]): most patterns never
//! need one, which keeps a 140-page site's table at a few KB rather than about 10 MB.

use super::specificity::Specificity;
use regex::Regex;
use rustc_hash::FxHashSet;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use urlpattern::component::Component;
use urlpattern::{RegexSyntax, UrlPattern, UrlPatternInit, UrlPatternOptions, regexp::RegExp};

/// A regular expression validated when the pattern is compiled but built on first use. A URL
/// pattern holds one per URL component; only the pathname's is ever run, and most pathname
/// patterns match without one, so routing tables stay small and quick to build.
#[derive(Debug)]
pub struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Option<Regex>>,
}

impl RegExp for LazyRegex {
    fn syntax() -> RegexSyntax {
        RegexSyntax::Rust
    }

    fn parse(pattern: &str, _flags: &str, _force_eval: bool) -> Result<Self, ()> {
        regex_syntax::Parser::new().parse(pattern).map_err(|_| ())?;
        Ok(LazyRegex {
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        })
    }

    fn matches<'a>(&self, text: &'a str) -> Option<Vec<Option<&'a str>>> {
        let regex = self
            .compiled
            .get_or_init(|| Regex::new(&self.pattern).ok())
            .as_ref()?;
        let captures = regex.captures(text)?;
        Some(
            captures
                .iter()
                .skip(1)
                .map(|c| c.map(|m| m.as_str()))
                .collect(),
        )
    }

    fn pattern_string(&self) -> &str {
        &self.pattern
    }
}

/// One routable page.
#[derive(Debug)]
pub struct Route {
    /// The page block name.
    pub name: String,
    /// Its path pattern as written.
    pub pattern: String,
    specificity: Specificity,
    compiled: Option<Component<LazyRegex>>,
}

/// A page chosen for a path, with the values of its pattern's groups (still percent-encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageMatch<'a> {
    /// The page block name.
    pub name: &'a str,
    /// Its path pattern.
    pub pattern: &'a str,
    /// Named and numbered groups; unmatched optional groups are absent.
    pub params: BTreeMap<String, String>,
}

impl Route {
    /// Compiles the route of page `name` at `pattern`.
    fn new(name: &str, pattern: &str) -> Arc<Route> {
        Arc::new(Route {
            name: name.to_string(),
            pattern: pattern.to_string(),
            specificity: Specificity::of(pattern),
            compiled: compile(pattern),
        })
    }

    /// Precedence: [`Specificity`] descending, then name (names are unique, so the order is
    /// total and the same however the table was built).
    fn precedence(a: &Arc<Route>, b: &Arc<Route>) -> std::cmp::Ordering {
        b.specificity
            .cmp(&a.specificity)
            .then_with(|| a.name.cmp(&b.name))
    }
}

/// Every routable page in precedence order. Routes are shared: a table derived from another
/// ([`RouteTable::with_changes`]) compiles only the pages that changed.
#[derive(Debug, Default, Clone)]
pub struct RouteTable {
    routes: Vec<Arc<Route>>,
}

impl RouteTable {
    /// Compiles `(page name, path pattern)` pairs. A malformed pattern never matches (and is
    /// reported by [`RouteTable::malformed`]). Order: [`Specificity`] descending, then name.
    pub fn build<'a>(pages: impl IntoIterator<Item = (&'a str, &'a str)>) -> RouteTable {
        RouteTable::default().with_changes(&FxHashSet::default(), pages)
    }

    /// This table with the routes of the blocks named in `changed` replaced by `pages` (the
    /// routable pages among them, `(name, pattern)`): only those are compiled, the rest are
    /// shared. The same table [`RouteTable::build`] makes of the resulting pages.
    pub fn with_changes<'a>(
        &self,
        changed: &FxHashSet<&str>,
        pages: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> RouteTable {
        let mut added: Vec<Arc<Route>> = pages
            .into_iter()
            .map(|(name, pattern)| Route::new(name, pattern))
            .collect();
        added.sort_by(Route::precedence);
        let kept = self
            .routes
            .iter()
            .filter(|route| !changed.contains(route.name.as_str()));
        let mut routes = Vec::with_capacity(self.routes.len() + added.len());
        let mut added = added.into_iter().peekable();
        for route in kept {
            while let Some(next) = added.next_if(|a| Route::precedence(a, route).is_lt()) {
                routes.push(next);
            }
            routes.push(route.clone());
        }
        routes.extend(added);
        RouteTable { routes }
    }

    /// The routes in the order they are tried.
    pub fn routes(&self) -> &[Arc<Route>] {
        &self.routes
    }

    /// Routes whose pattern does not compile.
    pub fn malformed(&self) -> impl Iterator<Item = &Route> {
        self.routes
            .iter()
            .map(|r| &**r)
            .filter(|r| r.compiled.is_none())
    }

    /// The first page whose pattern matches the whole `path` (percent-encoded, as in a URL;
    /// case-sensitive; trailing slash significant).
    pub fn find(&self, path: &str) -> Option<PageMatch<'_>> {
        self.routes.iter().find_map(|route| {
            let component = route.compiled.as_ref()?;
            let groups = component.matcher.matches(path)?;
            let params = component
                .group_name_list
                .iter()
                .zip(groups)
                .filter_map(|(name, value)| Some((name.clone(), value?.to_string())))
                .collect();
            Some(PageMatch {
                name: &route.name,
                pattern: &route.pattern,
                params,
            })
        })
    }
}

/// The pathname component of the URL pattern (the other components are never used).
fn compile(pattern: &str) -> Option<Component<LazyRegex>> {
    let init = UrlPatternInit {
        pathname: Some(pattern.to_string()),
        ..Default::default()
    };
    let parsed: UrlPattern<LazyRegex> =
        UrlPattern::parse(init, UrlPatternOptions::default()).ok()?;
    Some(parsed.pathname)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pages: &[(&str, &str)]) -> RouteTable {
        RouteTable::build(pages.iter().copied())
    }

    fn found<'a>(t: &'a RouteTable, path: &str) -> Option<&'a str> {
        t.find(path).map(|m| m.name)
    }

    #[test]
    fn precedence_and_params() {
        let t = table(&[
            ("pages-catchall", "/*"),
            ("pages-category", "/:slug"),
            ("pages-product", "/:slug/p"),
            ("pages-search", "/s"),
            ("pages-home", "/"),
        ]);
        assert_eq!(found(&t, "/"), Some("pages-home"));
        assert_eq!(found(&t, "/s"), Some("pages-search"));
        assert_eq!(found(&t, "/shoes"), Some("pages-category"));
        assert_eq!(found(&t, "/shoes/p"), Some("pages-product"));
        assert_eq!(found(&t, "/a/b/c"), Some("pages-catchall"));
        let m = t.find("/red-shoes/p").unwrap();
        assert_eq!(m.params.get("slug").map(String::as_str), Some("red-shoes"));
        let m = t.find("/a/b").unwrap();
        assert_eq!(m.params.get("0").map(String::as_str), Some("a/b"));
    }

    #[test]
    fn trailing_slash_case_and_wildcards() {
        let t = table(&[("pages-sale", "/sale"), ("pages-foo", "/foo/*")]);
        assert_eq!(found(&t, "/sale"), Some("pages-sale"));
        assert_eq!(found(&t, "/sale/"), None);
        assert_eq!(found(&t, "/Sale"), None);
        assert_eq!(found(&t, "/foo"), None);
        assert_eq!(found(&t, "/foo/x"), Some("pages-foo"));
        let root = table(&[("pages-all", "/*")]);
        assert_eq!(found(&root, "/"), Some("pages-all"));
    }

    #[test]
    fn optional_groups_encoding_and_malformed() {
        let t = table(&[
            ("pages-opt", "/blog{/:id}?"),
            ("pages-cafe", "/café"),
            ("pages-bad", "/(["),
        ]);
        assert_eq!(found(&t, "/blog"), Some("pages-opt"));
        assert_eq!(found(&t, "/blog/7"), Some("pages-opt"));
        assert!(!t.find("/blog").unwrap().params.contains_key("id"));
        assert_eq!(found(&t, "/caf%C3%A9"), Some("pages-cafe"));
        assert_eq!(t.malformed().count(), 1);
    }

    #[test]
    fn a_table_with_changes_is_the_table_built_from_its_pages() {
        let before = [
            ("pages-catchall", "/*"),
            ("pages-category", "/:slug"),
            ("pages-product", "/:slug/p"),
            ("pages-home", "/"),
        ];
        let t = table(&before);
        let changed: FxHashSet<&str> = ["pages-category", "pages-home", "pages-new"]
            .into_iter()
            .collect();
        let changes = [("pages-category", "/c/:slug"), ("pages-new", "/:a/:b")];
        let derived = t.with_changes(&changed, changes);
        let after = [
            ("pages-catchall", "/*"),
            ("pages-category", "/c/:slug"),
            ("pages-product", "/:slug/p"),
            ("pages-new", "/:a/:b"),
        ];
        let names = |t: &RouteTable| -> Vec<(String, String)> {
            t.routes()
                .iter()
                .map(|r| (r.name.clone(), r.pattern.clone()))
                .collect()
        };
        assert_eq!(names(&derived), names(&table(&after)));
        let product = |t: &RouteTable| {
            let found = t.routes().iter().find(|r| r.name == "pages-product");
            found.cloned().unwrap()
        };
        assert!(
            Arc::ptr_eq(&product(&t), &product(&derived)),
            "unchanged routes are shared, not compiled again"
        );
        assert_eq!(found(&derived, "/"), Some("pages-catchall"), "home is gone");
    }

    #[test]
    fn ties_break_by_name() {
        let t = table(&[("pages-b", "/:x"), ("pages-a", "/:y")]);
        assert_eq!(found(&t, "/q"), Some("pages-a"));
    }
}
