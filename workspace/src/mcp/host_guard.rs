//! DNS-rebinding protection on the MCP endpoints: a request naming a host the service does not
//! answer for is refused before anything else reads it.
//!
//! A page on `evil.example` whose name an attacker points at the service's address can make a
//! browser send it requests; they carry `Host: evil.example` (and `Origin: http://evil.example`).
//! The MCP endpoints answer only for the host of the public URL (`PLATFORM_PUBLIC_URL`), the
//! loopback names when that host is a loopback one, and `PLATFORM_ALLOWED_HOSTS`; a request
//! whose `Host`, or `Origin` when it sends one, names another host is answered 403 with a
//! JSON-RPC error. Host names are compared without ports, as the MCP SDKs compare them.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{HOST, ORIGIN};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::jsonrpc;
use super::transport::reply;
use crate::state::AppState;

/// The loopback host names, answered for together.
const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// The JSON-RPC code of the refusal (the SDKs' "server error").
const REFUSED: i64 = -32000;

/// The host name of an authority (`host[:port]`) or a URL, lowercased; `None` when unreadable.
fn host_name(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    parsed.host_str().map(str::to_ascii_lowercase)
}

/// The host name of a `Host` header's value (`host[:port]`, nothing else: no user, no path).
fn authority_name(authority: &str) -> Option<String> {
    if authority.contains(['@', '/', '?', '#', '\\']) {
        return None;
    }
    host_name(&format!("http://{authority}"))
}

/// Whether the service answers for host name `name`. Configured names are read as `Host`
/// values are (case, port and IPv6 brackets do not matter).
fn allows(public_url: &str, extra: &[String], name: &str) -> bool {
    let public = host_name(public_url);
    let loopback = |n: &str| LOOPBACK.contains(&n);
    let configured = |h: &String| {
        h == "*"
            || authority_name(h).as_deref() == Some(name)
            || authority_name(&format!("[{h}]")).as_deref() == Some(name)
    };
    public.as_deref() == Some(name)
        || (public.as_deref().is_some_and(loopback) && loopback(name))
        || extra.iter().any(configured)
}

/// Why a request's `Host` and `Origin` are refused, if they are.
fn refusal(public_url: &str, extra: &[String], request: &Request) -> Option<String> {
    let host = request
        .headers()
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    let named = host.and_then(authority_name);
    match named {
        Some(name) if allows(public_url, extra, &name) => {}
        _ => return Some(format!("Invalid Host header: {}", host.unwrap_or("none"))),
    }
    let origin = request.headers().get(ORIGIN)?;
    let text = origin.to_str().unwrap_or_default();
    match host_name(text) {
        Some(name) if allows(public_url, extra, &name) => None,
        _ => Some(format!("Invalid Origin header: {text}")),
    }
}

/// Middleware of the MCP endpoints: 403 for a host the service does not answer for.
pub async fn guard_host(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let config = &state.config;
    match refusal(&config.public_url, &config.allowed_hosts, &request) {
        Some(message) => reply(
            StatusCode::FORBIDDEN,
            jsonrpc::error(Value::Null, REFUSED, &message),
        ),
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: Option<&str>, origin: Option<&str>) -> Request {
        let mut builder = Request::builder().uri("/api/acme/mcp/self");
        if let Some(host) = host {
            builder = builder.header(HOST, host);
        }
        if let Some(origin) = origin {
            builder = builder.header(ORIGIN, origin);
        }
        builder.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn only_the_hosts_the_service_answers_for_pass() {
        let public = "https://mcp.example.com";
        let none: &[String] = &[];
        let pass = |host, origin| refusal(public, none, &request(host, origin)).is_none();
        assert!(pass(Some("mcp.example.com"), None));
        assert!(pass(
            Some("MCP.example.com:8443"),
            Some("https://mcp.example.com")
        ));
        assert!(!pass(Some("evil.example.com"), None));
        assert!(!pass(
            Some("mcp.example.com"),
            Some("http://evil.example.com")
        ));
        assert!(!pass(Some("mcp.example.com"), Some("null")));
        assert!(!pass(None, None));
        // Loopback names go together, for a loopback public URL only.
        assert!(!pass(Some("127.0.0.1:9"), None));
        let local = "http://127.0.0.1:8787";
        assert!(refusal(local, none, &request(Some("localhost:3000"), None)).is_none());
        assert!(refusal(local, none, &request(Some("[::1]:1"), None)).is_none());
        // A user or a path is no host name.
        assert!(!pass(Some("evil@mcp.example.com"), None));
        assert!(!pass(Some("mcp.example.com/x"), None));
        // More names, or any, read as hosts are.
        let extra = ["Internal.SVC:8080".to_string(), "::1".to_string()];
        assert!(refusal(public, &extra, &request(Some("internal.svc:80"), None)).is_none());
        assert!(refusal(public, &extra, &request(Some("[::1]:9"), None)).is_none());
        let any = ["*".to_string()];
        assert!(refusal(public, &any, &request(Some("anything"), None)).is_none());
    }
}
