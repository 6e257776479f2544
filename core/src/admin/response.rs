//! The response the host sends: status, headers and body bytes.

use super::cors::Cors;
use crate::edge::headers;
use serde::Serialize;
use std::sync::Arc;

/// `Cache-Control` of admin responses that carry an `ETag` (schema, content).
pub(crate) const REVALIDATE: &str = "no-cache";
/// `Cache-Control` of every other admin response.
pub(crate) const NO_STORE: &str = "no-store";

/// The `Cache-Control` of the speculation rules the edge serves.
const SPECULATION_RULES_CACHE_CONTROL: &str = "public, max-age=3600";

/// A finished admin response, CORS headers included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminResponse {
    /// HTTP status.
    pub status: u16,
    /// Header pairs; a name may repeat (`Set-Cookie`).
    pub headers: Vec<(String, String)>,
    /// The body (empty for 204 and 304); shared, so content and schema bodies kept per snapshot
    /// or schema are never copied per request.
    pub body: Arc<[u8]>,
}

impl AdminResponse {
    /// A response with `content_type` and `body`, `Cache-Control: no-store` and CORS.
    pub(crate) fn new(
        status: u16,
        content_type: &str,
        body: impl Into<Arc<[u8]>>,
        cors: &Cors,
    ) -> AdminResponse {
        let mut headers = vec![
            ("Content-Type".to_string(), content_type.to_string()),
            ("Cache-Control".to_string(), NO_STORE.to_string()),
        ];
        cors.apply(&mut headers);
        AdminResponse {
            status,
            headers,
            body: body.into(),
        }
    }

    /// A JSON response.
    pub(crate) fn json<T: Serialize + ?Sized>(
        status: u16,
        value: &T,
        cors: &Cors,
    ) -> AdminResponse {
        let body = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
        AdminResponse::new(status, "application/json", body, cors)
    }

    /// A JSON response from bytes already encoded.
    pub(crate) fn json_bytes(status: u16, body: Arc<[u8]>, cors: &Cors) -> AdminResponse {
        AdminResponse::new(status, "application/json", body, cors)
    }

    /// An HTML response.
    pub(crate) fn html(status: u16, body: String, cors: &Cors) -> AdminResponse {
        AdminResponse::new(status, "text/html; charset=utf-8", body.into_bytes(), cors)
    }

    /// The speculation rules the edge serves: their own media type (browsers ignore rules of
    /// any other), cacheable by the browser and shared caches for an hour (they change only
    /// with the worker's options); a `HEAD` gets the headers alone.
    pub(crate) fn speculation_rules(body: &str, head: bool, cors: &Cors) -> AdminResponse {
        let body = if head {
            Vec::new()
        } else {
            body.as_bytes().to_vec()
        };
        let mut response = AdminResponse::new(200, "application/speculationrules+json", body, cors);
        response.set_header("Cache-Control", SPECULATION_RULES_CACHE_CONTROL);
        response
    }

    /// A plain-text response.
    pub(crate) fn text(status: u16, body: &str, cors: &Cors) -> AdminResponse {
        AdminResponse::new(
            status,
            "text/plain; charset=utf-8",
            body.as_bytes().to_vec(),
            cors,
        )
    }

    /// A response without a body (204, 304): no `Content-Type`.
    pub(crate) fn empty(status: u16, cors: &Cors) -> AdminResponse {
        let mut headers = vec![("Cache-Control".to_string(), NO_STORE.to_string())];
        cors.apply(&mut headers);
        AdminResponse {
            status,
            headers,
            body: Arc::from(&[][..]),
        }
    }

    /// Sets `name` to `value`, replacing an earlier value.
    pub(crate) fn set_header(&mut self, name: &str, value: &str) {
        headers::set(&mut self.headers, name, value);
    }

    /// Sets the validator and its `Cache-Control` (revalidate on every use).
    pub(crate) fn with_etag(mut self, etag: &str) -> AdminResponse {
        self.set_header("ETag", etag);
        self.set_header("Cache-Control", REVALIDATE);
        self
    }

    /// The value of header `name`, ignoring ASCII case.
    pub fn header(&self, name: &str) -> Option<&str> {
        headers::find(&self.headers, name)
    }

    /// The body as text (lossy).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}
