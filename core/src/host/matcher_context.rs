//! What a custom matcher sees (spec "Matcher context").

use crate::request::Request;

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
}
