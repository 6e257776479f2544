//! What a custom matcher sees (spec "Matcher context").

use crate::request::Request;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// The request as a custom matcher sees it: borrowed views, nothing copied.
#[derive(Debug, Clone, Copy)]
pub struct MatcherContext<'a> {
    /// The full URL of the page.
    pub url: &'a str,
    /// The path of the page, as received (not decoded).
    pub path: &'a str,
    /// The `User-Agent` header, or `""`.
    pub user_agent: &'a str,
    /// The cookies, decoded, in arrival order (a later repeat of a name wins in [`Self::cookie`]).
    pub cookies: &'a [(String, String)],
    /// The headers, names lower case, in arrival order.
    pub headers: &'a [(String, String)],
    /// The whole request.
    pub request: &'a Request,
}

impl<'a> MatcherContext<'a> {
    /// The context of `request`.
    pub fn new(request: &'a Request) -> MatcherContext<'a> {
        MatcherContext {
            url: request.url().as_str(),
            path: request.path(),
            user_agent: request.user_agent(),
            cookies: request.cookies(),
            headers: request.headers(),
            request,
        }
    }

    /// The value of a cookie.
    pub fn cookie(&self, name: &str) -> Option<&'a str> {
        self.request.cookie(name)
    }

    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.request.header(name)
    }
}

/// The serde form a binding hands a custom matcher written in another language (spec "Matcher
/// context"): `{"url", "path", "userAgent", "cookies": {name: value}, "headers": {name: value}}`.
/// Each object holds what [`MatcherContext::cookie`] and [`MatcherContext::header`] answer for
/// its names — the last repeat of a cookie, the first of a header — so a custom matcher sees
/// the values the built-in matchers see. The host adds its own request object as `request`.
impl Serialize for MatcherContext<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("url", self.url)?;
        map.serialize_entry("path", self.path)?;
        map.serialize_entry("userAgent", self.user_agent)?;
        map.serialize_entry("cookies", &Named(self.cookies, Repeat::Last))?;
        map.serialize_entry("headers", &Named(self.headers, Repeat::First))?;
        map.end()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Repeat {
    First,
    Last,
}

/// Name/value pairs as an object, in first-arrival order, one entry per name.
struct Named<'a>(&'a [(String, String)], Repeat);

impl Serialize for Named<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Named(pairs, repeat) = *self;
        let mut seen: Vec<&str> = Vec::with_capacity(pairs.len());
        let mut map = serializer.serialize_map(None)?;
        for (i, (name, value)) in pairs.iter().enumerate() {
            if seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            let value = match repeat {
                Repeat::First => value,
                Repeat::Last => pairs[i..]
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map_or(value, |(_, v)| v),
            };
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_the_request() {
        let req = Request::new("https://shop.example/p/a%20b?x=1")
            .unwrap()
            .with_header("User-Agent", "UA/1")
            .with_header("Cookie", "a=1; a=2");
        let ctx = MatcherContext::new(&req);
        assert_eq!(ctx.url, "https://shop.example/p/a%20b?x=1");
        assert_eq!(ctx.path, "/p/a%20b");
        assert_eq!(ctx.user_agent, "UA/1");
        assert_eq!(ctx.cookie("a"), Some("2"));
        assert_eq!(ctx.cookies.len(), 2);
        assert_eq!(ctx.header("user-agent"), Some("UA/1"));
        assert_eq!(ctx.headers.len(), 2);
    }

    #[test]
    fn serializes_as_the_spec_names_it_with_the_accessors_values() {
        let req = Request::new("https://shop.example/p?x=1")
            .unwrap()
            .with_header("User-Agent", "UA/1")
            .with_header("X-Tag", "first")
            .with_header("x-tag", "second")
            .with_header("Cookie", "a=1; b=x%20y; a=2");
        let ctx = MatcherContext::new(&req);
        let json = serde_json::to_value(ctx).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "url": "https://shop.example/p?x=1",
                "path": "/p",
                "userAgent": "UA/1",
                "cookies": {"a": ctx.cookie("a").unwrap(), "b": ctx.cookie("b").unwrap()},
                "headers": {
                    "user-agent": "UA/1",
                    "x-tag": ctx.header("x-tag").unwrap(),
                    "cookie": "a=1; b=x%20y; a=2"
                }
            })
        );
        assert_eq!(json["cookies"]["a"], "2");
        assert_eq!(json["headers"]["x-tag"], "first");
    }
}
