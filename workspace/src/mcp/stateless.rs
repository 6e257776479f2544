//! Speaking the stateless revision (2026-07-28) to an upstream: finding out whether it speaks
//! it (`server/discover`), and each request's envelope and headers when it does.
//!
//! An upstream is probed once per connection revision (cached by [`super::upstream::Upstream`]):
//! a `server/discover` result naming a stateless version this service speaks means every
//! request without a downstream session of its own goes there statelessly; anything else an
//! upstream answers (`-32601`, a 4xx of a session server asking for `initialize`, a result
//! naming no version spoken here) means a session revision. Only what says nothing about the
//! revisions fails the probe (and is not cached): the upstream unreachable, a 5xx, a timeout,
//! and a 401 or 403 refusing the service's own credentials.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::era::{self, ENVELOPE_KEYS, MODERN_VERSIONS, PROTOCOL_VERSION_KEY};
use super::upstream::UpstreamError;

/// The stateless revision this service speaks to upstreams.
pub const VERSION: &str = MODERN_VERSIONS[0];

/// The envelope key of the client's capabilities.
const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The envelope key naming the client.
const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// The envelope key of the log level a client opts in to log messages at.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// The result `_meta` key naming the server.
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The `server/discover` probe, with id `id`.
pub fn discover_body(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {} })
}

/// What the probe's outcome says: the upstream's discover result when it speaks [`VERSION`],
/// `None` when it speaks a session revision (it answered, but not with a version spoken here:
/// a result naming none, an in-band error, or a 400, 404 or 405 refusal, as session servers
/// refuse a request outside a session), or the failure that says neither (unreachable, a
/// timeout, a 5xx, a refusal of the service's credentials, a rate limit, an answer cut short).
pub fn speaks(
    outcome: Result<Option<Value>, UpstreamError>,
) -> Result<Option<Value>, UpstreamError> {
    match outcome {
        Ok(Some(reply)) => {
            let result = &reply["result"];
            let versions = result["supportedVersions"].as_array();
            let spoken = versions.is_some_and(|v| v.iter().any(|v| v == VERSION));
            Ok(spoken.then(|| result.clone()))
        }
        Ok(None) => Ok(None),
        Err(refusal) if refuses_the_revision(&refusal) => Ok(None),
        Err(failure) => Err(failure),
    }
}

/// Whether an upstream's refusal is one of a server of the session revisions (or of a
/// revision not spoken here): HTTP 400, 404 or 405, with a JSON-RPC error or without.
pub fn refuses_the_revision(error: &UpstreamError) -> bool {
    const STATUSES: [u16; 3] = [400, 404, 405];
    match error {
        UpstreamError::Refused { status, .. } | UpstreamError::Status(status) => {
            STATUSES.contains(status)
        }
        _ => false,
    }
}

/// The `initialize` result a session client is given for an upstream that answered `result`
/// to `server/discover`: its capabilities (without those needing a stream this translation
/// does not keep: subscriptions, list changes), server and instructions, in
/// `protocol_version`.
pub fn init_result(discovered: &Value, protocol_version: &str) -> Value {
    let capabilities = discovered.get("capabilities").cloned();
    let mut init = json!({
        "protocolVersion": protocol_version,
        "capabilities": era::modern_capabilities(capabilities.unwrap_or_else(|| json!({}))),
    });
    if let Some(server) = discovered["_meta"].get(SERVER_INFO_KEY) {
        init["serverInfo"] = server.clone();
    }
    if let Some(instructions) = discovered.get("instructions") {
        init["instructions"] = instructions.clone();
    }
    init
}

/// The envelope a session client's requests are sent with: what it declared in `initialize`
/// (the `capabilities` relayed, its `clientInfo`).
pub fn session_envelope(capabilities: Value, client_info: Option<Value>) -> Value {
    json!({
        CLIENT_CAPABILITIES_KEY: capabilities,
        CLIENT_INFO_KEY: client_info.unwrap_or_else(own_info),
    })
}

/// The service as a client names itself.
fn own_info() -> Value {
    json!({ "name": "sitefile-workspace", "version": env!("CARGO_PKG_VERSION") })
}

/// `message` with the envelope in its params' `_meta`: the caller's envelope keys
/// (`envelope`, a stateless client's own, or a session client's), the service's where it has
/// none, and always this revision's version.
pub fn stamp(message: &Value, envelope: Option<&Value>) -> Value {
    let mut message = message.clone();
    if message.get("method").is_none() {
        return message;
    }
    let params = message
        .as_object_mut()
        .map(|m| m.entry("params").or_insert_with(|| json!({})));
    let Some(params) = params.and_then(Value::as_object_mut) else {
        return message;
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    let Some(meta) = meta.as_object_mut() else {
        return message;
    };
    meta.retain(|key, _| !ENVELOPE_KEYS.contains(&key.as_str()));
    if let Some(envelope) = envelope.and_then(Value::as_object) {
        for (key, value) in envelope {
            if ENVELOPE_KEYS.contains(&key.as_str()) {
                meta.insert(key.clone(), value.clone());
            }
        }
    }
    meta.entry(CLIENT_CAPABILITIES_KEY)
        .or_insert_with(|| Value::Object(Map::new()));
    meta.entry(CLIENT_INFO_KEY).or_insert_with(own_info);
    meta.insert(PROTOCOL_VERSION_KEY.into(), json!(VERSION));
    message
}

/// The log levels, least severe first.
const LOG_LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Whether a notification an upstream sends is delivered to a client whose request carried
/// `envelope` (a stateless client's; `None` for the session revisions, which get everything):
/// a log message only when the request opted in with a `logLevel` at or below its level.
pub fn delivers(envelope: Option<&Value>, notification: &Value) -> bool {
    let Some(envelope) = envelope else {
        return true;
    };
    if notification["method"] != "notifications/message" {
        return true;
    }
    let rank = |level: &Value| LOG_LEVELS.iter().position(|l| level == *l);
    match (
        rank(&envelope[LOG_LEVEL_KEY]),
        rank(&notification["params"]["level"]),
    ) {
        (Some(wanted), Some(level)) => level >= wanted,
        _ => false,
    }
}

/// `target_headers` with a stateless client's `Mcp-Param-*` headers from `client_headers` added
/// (a tool's parameters its schema puts in headers, which an intermediary forwards as they
/// are); the connection's own headers win.
pub fn with_param_headers(mut target_headers: HeaderMap, client_headers: &HeaderMap) -> HeaderMap {
    let params = client_headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("mcp-param-"));
    for (name, value) in params {
        target_headers.entry(name.clone()).or_insert(value.clone());
    }
    target_headers
}

/// The headers a stateless request repeats its body in: `MCP-Protocol-Version`, `Mcp-Method`
/// and, where the revision names one, `Mcp-Name` (Base64-wrapped when not plain ASCII).
pub fn headers(message: &Value) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        HeaderName::from_static("mcp-protocol-version"),
        HeaderValue::from_static(VERSION),
    );
    let Some(method) = message["method"].as_str() else {
        return headers;
    };
    if let Ok(value) = HeaderValue::from_str(method) {
        headers.insert(HeaderName::from_static("mcp-method"), value);
    }
    if let Some(name) = era::named_param(method).and_then(|p| message["params"][p].as_str())
        && let Ok(value) = HeaderValue::from_str(&era::encode_sentinel(name))
    {
        headers.insert(HeaderName::from_static("mcp-name"), value);
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_keeps_other_meta_and_a_clients_capabilities() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "_meta": {"progressToken": 7, PROTOCOL_VERSION_KEY: "2025-11-25"}}});
        let client = json!({ CLIENT_CAPABILITIES_KEY: {"elicitation": {}}, "other": 1 });
        let stamped = stamp(&call, Some(&client));
        assert_eq!(
            stamped["params"]["_meta"],
            json!({"progressToken": 7, PROTOCOL_VERSION_KEY: VERSION,
                CLIENT_CAPABILITIES_KEY: {"elicitation": {}}, CLIENT_INFO_KEY: own_info()})
        );
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(stamp(&answer, None), answer);
    }

    #[test]
    fn a_stateless_client_gets_log_messages_only_at_the_level_it_asked_for() {
        let log =
            |level: &str| json!({"method": "notifications/message", "params": {"level": level}});
        let progress = json!({"method": "notifications/progress", "params": {}});
        let asked = |level: &str| json!({ LOG_LEVEL_KEY: level });
        assert!(delivers(None, &log("debug")));
        assert!(!delivers(Some(&json!({})), &log("emergency")));
        assert!(delivers(Some(&json!({})), &progress));
        assert!(delivers(Some(&asked("warning")), &log("error")));
        assert!(delivers(Some(&asked("warning")), &log("warning")));
        assert!(!delivers(Some(&asked("warning")), &log("info")));
        assert!(!delivers(Some(&asked("loud")), &log("error")));
    }

    #[test]
    fn names_outside_ascii_travel_in_base64() {
        let call = json!({"method": "tools/call", "params": {"name": "héllo"}});
        let headers = headers(&call);
        assert_eq!(headers["mcp-method"], "tools/call");
        assert_eq!(headers["mcp-name"], "=?base64?aMOpbGxv?=");
        let read = json!({"method": "resources/read", "params": {"uri": "file:///a"}});
        assert_eq!(super::headers(&read)["mcp-name"], "file:///a");
    }

    #[test]
    fn only_what_says_nothing_about_revisions_fails_the_probe() {
        let discovered = json!({"result": {"supportedVersions": [VERSION], "capabilities": {}}});
        assert!(speaks(Ok(Some(discovered))).unwrap().is_some());
        let other = json!({"result": {"supportedVersions": ["2099-01-01"]}});
        assert!(speaks(Ok(Some(other))).unwrap().is_none());
        let missing = json!({"error": {"code": -32601, "message": "Method not found"}});
        assert!(speaks(Ok(Some(missing))).unwrap().is_none());
        let session = UpstreamError::Status(400);
        assert!(speaks(Err(session)).unwrap().is_none());
        let cut = UpstreamError::Protocol("upstream stream ended without a response".into());
        assert!(speaks(Err(cut)).is_err());
        let refused = |status| UpstreamError::Refused {
            status,
            error: json!({}),
        };
        assert!(speaks(Err(refused(400))).unwrap().is_none());
        assert!(speaks(Err(refused(401))).is_err());
        assert!(speaks(Err(refused(429))).is_err());
        assert!(speaks(Err(UpstreamError::Timeout)).is_err());
    }
}
