//! The request a host hands the admin protocol: method, path, query, headers and body, already
//! read off its transport.

/// An HTTP request as the admin protocol sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdminRequest {
    /// The method (`GET`, `POST`, ...), compared ignoring ASCII case.
    pub method: String,
    /// The path, percent-encoded as it arrived (`/live/previews/site%2Fsections%2FHero.tsx`).
    pub path: String,
    /// The query without `?` (empty when there is none).
    pub query: String,
    /// Header pairs in arrival order; a name may repeat. Names compare ignoring ASCII case.
    pub headers: Vec<(String, String)>,
    /// The body. A host reads it only as [`Site::admin_head`](crate::Site::admin_head) says:
    /// none for a request the head answers or a route that reads none, else until it holds more
    /// than the route's limit.
    pub body: Vec<u8>,
}

impl AdminRequest {
    /// A request with no query, headers or body.
    pub fn new(method: &str, path: &str) -> AdminRequest {
        AdminRequest {
            method: method.to_string(),
            path: path.to_string(),
            ..AdminRequest::default()
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> AdminRequest {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the query (without `?`).
    pub fn with_query(mut self, query: &str) -> AdminRequest {
        self.query = query.to_string();
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> AdminRequest {
        self.body = body.into();
        self
    }

    /// Every value of header `name`, in arrival order.
    pub fn header_values<'a, 'n>(
        &'a self,
        name: &'n str,
    ) -> impl Iterator<Item = &'a str> + use<'a, 'n> {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.header_values(name).next()
    }

    /// The first value of query parameter `name`, form-decoded (`+` is a space).
    pub fn query_param(&self, name: &str) -> Option<String> {
        url::form_urlencoded::parse(self.query.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }

    /// Whether the method is `method`, ignoring ASCII case.
    pub(crate) fn is(&self, method: &str) -> bool {
        self.method.eq_ignore_ascii_case(method)
    }

    /// The media type of `Content-Type`, lower case, without parameters.
    pub(crate) fn media_type(&self) -> Option<String> {
        self.header("content-type").map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
    }
}
