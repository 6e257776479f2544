//! Which MCP revision a request speaks, and the 2026-07-28 revision's request checks and result
//! stamps.
//!
//! A request is of the stateless revision (2026-07-28, "modern") when its body claims it:
//! `params._meta["io.modelcontextprotocol/protocolVersion"]`; otherwise it is of the session
//! revisions (2025-11-25 and before, "legacy"), as a dual-era server tells them apart. A modern
//! request is checked in the order the revision's reference implementation checks: the envelope
//! (400, `-32602`), headers that contradict the body (400, `-32020`), the version served (400,
//! `-32022`), the headers that must repeat the body but are missing (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`; 400, `-32020`), then the method (404, `-32601`).

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::jsonrpc::{self, INVALID_PARAMS, METHOD_NOT_FOUND, RpcRequest};
use super::transport::reply;

/// The stateless revisions this server speaks, newest first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// The first stateless revision: a version at or after it (they sort as dates) is modern.
const FIRST_MODERN_VERSION: &str = "2026-07-28";

/// The envelope key of the request's revision.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The envelope key of the client's capabilities.
const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The result `_meta` key naming the server.
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// The keys of the request envelope (the revision's other `io.modelcontextprotocol/*` keys,
/// such as a related task, are not the envelope).
pub const ENVELOPE_KEYS: &[&str] = &[
    PROTOCOL_VERSION_KEY,
    CLIENT_CAPABILITIES_KEY,
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
];

/// The headers and the body disagree.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request's revision is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The session revisions' code for a resource not found.
const RESOURCE_NOT_FOUND: i64 = -32002;

/// The requests of the 2026-07-28 revision this server knows; any other method is not found.
const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "subscriptions/listen",
];

/// The methods whose `Mcp-Name` header repeats a parameter, and which one.
const NAMED_PARAMS: &[(&str, &str)] = &[
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
];

/// The lists whose complete results carry cache hints (`ttlMs`, `cacheScope`).
const HINTED_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The revision a request speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Era {
    /// A session revision (2025-11-25 and before): `initialize`, `Mcp-Session-Id`.
    Legacy,
    /// The stateless revision, at this version.
    Modern(String),
}

/// A request the revision's checks refuse: the HTTP status and the JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: StatusCode,
    /// The JSON-RPC error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// The error's `data`.
    pub data: Value,
}

impl Refusal {
    fn new(status: StatusCode, code: i64, message: String, data: Value) -> Refusal {
        Refusal {
            status,
            code,
            message,
            data,
        }
    }

    /// The refusal as the reply to request `id`.
    pub fn response(&self, id: Value) -> Response {
        let mut body = jsonrpc::error(id, self.code, &self.message);
        body["error"]["data"] = self.data.clone();
        reply(self.status, body)
    }
}

/// The version a request's body claims, if it claims one.
fn claimed_version(request: &RpcRequest) -> Option<&Value> {
    request.params.get("_meta")?.get(PROTOCOL_VERSION_KEY)
}

/// The parameter a method's `Mcp-Name` header repeats, if it has one.
pub fn named_param(method: &str) -> Option<&'static str> {
    NAMED_PARAMS
        .iter()
        .find(|(m, _)| *m == method)
        .map(|(_, param)| *param)
}

/// A header's value, trimmed of surrounding whitespace; `None` when absent or not text.
fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// Whether `version` is a stateless revision (those sort after the last session one).
fn is_modern_version(version: &str) -> bool {
    version >= FIRST_MODERN_VERSION
}

/// The revision of `request` with `headers`, or why it is refused, in the order the
/// revision's reference implementation checks: the envelope, headers that contradict the body,
/// the version, headers missing, then the method.
pub fn classify(headers: &HeaderMap, request: &RpcRequest) -> Result<Era, Refusal> {
    let Some(claim) = claimed_version(request) else {
        // A modern header on a body of a session revision.
        if let Some(version) = header(headers, "mcp-protocol-version")
            && is_modern_version(version)
        {
            if request.method == "initialize" {
                return Err(mismatch("mcp-protocol-version", Some(version), None));
            }
            return Err(envelope_refusal(vec![PROTOCOL_VERSION_KEY]));
        }
        return Ok(Era::Legacy);
    };
    let Some(version) = claim.as_str() else {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
            format!("Invalid params: _meta[\"{PROTOCOL_VERSION_KEY}\"] must be a string"),
            json!({ "envelope": { "key": PROTOCOL_VERSION_KEY, "problem": "not a string" } }),
        ));
    };
    let meta = &request.params["_meta"];
    let missing: Vec<&str> = [CLIENT_CAPABILITIES_KEY]
        .into_iter()
        .filter(|key| !meta.get(*key).is_some_and(Value::is_object))
        .collect();
    if !missing.is_empty() && request.id.is_some() {
        return Err(envelope_refusal(missing));
    }
    contradicts(headers, "mcp-protocol-version", Some(version))?;
    contradicts(headers, "mcp-method", Some(&request.method))?;
    if !MODERN_VERSIONS.contains(&version) {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {version}"),
            json!({ "supported": MODERN_VERSIONS, "requested": version }),
        ));
    }
    // A notification is accepted as it is: nothing answers it.
    if request.id.is_none() {
        return Ok(Era::Modern(version.to_string()));
    }
    check_header(headers, "mcp-protocol-version", Some(version))?;
    check_header(headers, "mcp-method", Some(&request.method))?;
    if let Some(param) = named_param(&request.method) {
        let named = request.params.get(param).and_then(Value::as_str);
        // Neither the body nor the header names it: the handler says what is missing.
        if named.is_some() || header(headers, "mcp-name").is_some() {
            check_header(headers, "mcp-name", named)?;
        }
    }
    if !MODERN_METHODS.contains(&request.method.as_str()) {
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            Value::Null,
        ));
    }
    Ok(Era::Modern(version.to_string()))
}

/// 400 `-32020` when header `name` is sent and says something else than the body (`body`);
/// a missing header is checked later.
fn contradicts(headers: &HeaderMap, name: &str, body: Option<&str>) -> Result<(), Refusal> {
    match header(headers, name) {
        Some(_) => check_header(headers, name, body),
        None => Ok(()),
    }
}

/// 400 `-32020`: header `name` (`sent`) and the body (`body`) disagree.
fn mismatch(name: &str, sent: Option<&str>, body: Option<&str>) -> Refusal {
    Refusal::new(
        StatusCode::BAD_REQUEST,
        HEADER_MISMATCH,
        format!(
            "Bad Request: the request headers and body disagree: {name} is {} but the body says {}",
            sent.map_or("missing".to_string(), |s| format!("{s:?}")),
            body.map_or("nothing".to_string(), |b| format!("{b:?}")),
        ),
        json!({ "mismatch": { "header": name, "body": body } }),
    )
}

/// 400 `-32602`: the envelope lacks `missing`.
fn envelope_refusal(missing: Vec<&str>) -> Refusal {
    Refusal::new(
        StatusCode::BAD_REQUEST,
        INVALID_PARAMS,
        format!(
            "Invalid params: the request's _meta lacks {}",
            missing.join(", ")
        ),
        json!({ "envelope": { "missing": missing } }),
    )
}

/// 400 `-32020` unless header `name` carries `body` (the value the body holds; a header for a
/// value the body lacks disagrees too). `=?base64?…?=` values are decoded first.
fn check_header(headers: &HeaderMap, name: &str, body: Option<&str>) -> Result<(), Refusal> {
    let sent = header(headers, name);
    match (sent.map(decode_sentinel), body) {
        (Some(decoded), Some(body)) if decoded == body => Ok(()),
        _ => Err(mismatch(name, sent, body)),
    }
}

/// A header value as the client meant it: `=?base64?<data>?=` carries UTF-8 in Base64; any other
/// value is itself (an undecodable sentinel is kept as sent, so it disagrees).
fn decode_sentinel(value: &str) -> String {
    use base64::Engine as _;
    value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|data| base64::engine::general_purpose::STANDARD.decode(data).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_string())
}

/// `value` as a header carries it: itself when it is visible ASCII without surrounding spaces,
/// else `=?base64?<data>?=` (UTF-8 in Base64).
pub fn encode_sentinel(value: &str) -> String {
    use base64::Engine as _;
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !value.starts_with("=?base64?");
    if plain {
        return value.to_string();
    }
    let data = base64::engine::general_purpose::STANDARD.encode(value);
    format!("=?base64?{data}?=")
}

/// The 2026-07-28 envelope of a request's `params` (`_meta`'s [`ENVELOPE_KEYS`]), if it has one.
pub fn envelope_of(params: &Value) -> Option<Value> {
    let meta = params.get("_meta")?.as_object()?;
    let envelope: Map<String, Value> = meta
        .iter()
        .filter(|(key, _)| ENVELOPE_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!envelope.is_empty()).then_some(Value::Object(envelope))
}

/// `params` without the 2026-07-28 envelope (`_meta`'s [`ENVELOPE_KEYS`], and `_meta` itself
/// when nothing else is left): what a session-revision peer is sent.
pub fn without_envelope(mut params: Value) -> Value {
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.retain(|key, _| !ENVELOPE_KEYS.contains(&key.as_str()));
        if meta.is_empty()
            && let Some(object) = params.as_object_mut()
        {
            object.remove("_meta");
        }
    }
    params
}

/// The capabilities an endpoint announces to a stateless client: `capabilities` without what
/// the stateless revision does not have here (`tasks`, subscriptions, list-change
/// notifications, which need `subscriptions/listen`).
pub fn modern_capabilities(mut capabilities: Value) -> Value {
    if let Some(object) = capabilities.as_object_mut() {
        object.remove("tasks");
        for capability in object.values_mut().filter_map(Value::as_object_mut) {
            capability.remove("subscribe");
            capability.remove("listChanged");
        }
    }
    capabilities
}

/// A server's name and version, as `serverInfo` carries them.
pub struct ServerInfo<'a> {
    /// The name.
    pub name: &'a str,
    /// The version.
    pub version: &'a str,
}

impl ServerInfo<'_> {
    fn value(&self) -> Value {
        json!({ "name": self.name, "version": self.version })
    }
}

impl Era {
    /// The `server/discover` result (a method of the stateless revision only): the stateless
    /// revisions served, `capabilities`, and `instructions` when there are some.
    pub fn discover(
        &self,
        capabilities: Value,
        instructions: Option<&str>,
        server: &ServerInfo<'_>,
    ) -> Value {
        let mut result = json!({
            "supportedVersions": MODERN_VERSIONS,
            "capabilities": capabilities,
        });
        if let Some(instructions) = instructions {
            result["instructions"] = json!(instructions);
        }
        self.stamp_result("server/discover", result, server)
    }

    /// A result of `method` as the request's revision writes it: for a stateless request,
    /// `resultType` (`complete` unless the result says otherwise), the server in
    /// `_meta["io.modelcontextprotocol/serverInfo"]`, and the cache hints of a complete list
    /// (nothing is shared between callers: `ttlMs` 0, `cacheScope` `private`); a session
    /// request's result without them (an upstream spoken to statelessly adds them).
    pub fn stamp_result(&self, method: &str, mut result: Value, server: &ServerInfo<'_>) -> Value {
        let Some(object) = result.as_object_mut() else {
            return result;
        };
        if *self == Era::Legacy {
            if object.get("resultType").is_some_and(|t| t == "complete") {
                object.remove("resultType");
            }
            object.remove("ttlMs");
            object.remove("cacheScope");
            if let Some(meta) = object.get_mut("_meta").and_then(Value::as_object_mut) {
                meta.remove(SERVER_INFO_KEY);
                if meta.is_empty() {
                    object.remove("_meta");
                }
            }
            return result;
        }
        let complete = object
            .entry("resultType")
            .or_insert_with(|| json!("complete"))
            == "complete";
        if complete && HINTED_METHODS.contains(&method) {
            object.entry("ttlMs").or_insert(json!(0));
            object.entry("cacheScope").or_insert(json!("private"));
        }
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(SERVER_INFO_KEY.into(), server.value());
        }
        result
    }

    /// A whole JSON-RPC reply to `method` (with its HTTP status) stamped as
    /// [`Era::stamp_result`] stamps its result. A stateless error reply gets the revision's
    /// code for a resource not found (`-32602`, where the session revisions said `-32002`),
    /// and an unsupported-version error, which cannot be about a request this endpoint
    /// accepted (its version was checked here), is the upstream's: 502 `-32603` carrying it
    /// in `data.upstream`.
    pub fn stamp_reply(
        &self,
        method: &str,
        status: StatusCode,
        mut body: Value,
        server: &ServerInfo<'_>,
    ) -> (StatusCode, Value) {
        if *self == Era::Legacy && body["result"]["resultType"] == "input_required" {
            // A session client knows no multi round-trip result: it would read it as empty.
            let message = "the upstream asks the client for input in a multi round-trip \
                           request (MCP 2026-07-28): a client of the 2025 revisions can be \
                           asked only in a session (Mcp-Session-Id) on the call's event \
                           stream (Accept: text/event-stream), or call with a 2026-07-28 client";
            let error = jsonrpc::error(body["id"].take(), jsonrpc::INTERNAL_ERROR, message);
            return (status, error);
        }
        if let Some(result) = body.get_mut("result") {
            *result = self.stamp_result(method, result.take(), server);
            return (status, body);
        }
        let Era::Modern(_) = self else {
            return (status, body);
        };
        match body["error"]["code"].as_i64() {
            Some(RESOURCE_NOT_FOUND) => body["error"]["code"] = json!(INVALID_PARAMS),
            Some(UNSUPPORTED_PROTOCOL_VERSION) => {
                let upstream = body["error"].take();
                let message = "the upstream refused the revision this endpoint speaks to it";
                body = jsonrpc::error(body["id"].take(), jsonrpc::INTERNAL_ERROR, message);
                body["error"]["data"] =
                    json!({ "upstream": { "status": status.as_u16(), "error": upstream } });
                return (StatusCode::BAD_GATEWAY, body);
            }
            _ => {}
        }
        (status, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, params: Value) -> RpcRequest {
        RpcRequest::parse(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .unwrap()
    }

    fn envelope(version: &str) -> Value {
        json!({ PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: {} })
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn a_body_without_a_claim_is_legacy_unless_a_modern_header_says_otherwise() {
        let plain = request("tools/list", json!({}));
        assert_eq!(classify(&HeaderMap::new(), &plain), Ok(Era::Legacy));
        let old = headers(&[("mcp-protocol-version", "2025-11-25")]);
        assert_eq!(classify(&old, &plain), Ok(Era::Legacy));
        let new = headers(&[("mcp-protocol-version", "2026-07-28")]);
        let refused = classify(&new, &plain).unwrap_err();
        assert_eq!(
            (refused.status, refused.code),
            (StatusCode::BAD_REQUEST, -32602)
        );
    }

    #[test]
    fn the_modern_ladder() {
        let call = request(
            "tools/call",
            json!({"name": "héllo", "arguments": {}, "_meta": envelope("2026-07-28")}),
        );
        let good = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?aMOpbGxv?="),
        ]);
        assert_eq!(classify(&good, &call), Ok(Era::Modern("2026-07-28".into())));
        for (dropped, header) in [
            (0, "mcp-protocol-version"),
            (1, "mcp-method"),
            (2, "mcp-name"),
        ] {
            let mut partial = good.clone();
            partial.remove(["mcp-protocol-version", "mcp-method", "mcp-name"][dropped]);
            let refused = classify(&partial, &call).unwrap_err();
            assert_eq!(refused.code, HEADER_MISMATCH, "{header}");
            assert_eq!(refused.data["mismatch"]["header"], header);
        }
        let future = request("tools/list", json!({"_meta": envelope("2099-01-01")}));
        let refused = classify(&good, &future).unwrap_err();
        assert_eq!(
            refused.code, HEADER_MISMATCH,
            "the header contradicts the body first"
        );
        let later = headers(&[
            ("mcp-protocol-version", "2099-01-01"),
            ("mcp-method", "tools/list"),
        ]);
        let refused = classify(&later, &future).unwrap_err();
        assert_eq!(refused.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            refused.data,
            json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
        );
        let bare = request(
            "tools/list",
            json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}),
        );
        let refused = classify(&good, &bare).unwrap_err();
        assert_eq!(
            refused.data["envelope"]["missing"],
            json!([CLIENT_CAPABILITIES_KEY])
        );
        let removed = request("initialize", json!({"_meta": envelope("2026-07-28")}));
        let initialize = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "initialize"),
        ]);
        let refused = classify(&initialize, &removed).unwrap_err();
        assert_eq!(
            (refused.status, refused.code),
            (StatusCode::NOT_FOUND, -32601)
        );
        let notification = RpcRequest::parse(&json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"_meta": envelope("2026-07-28")}}))
        .unwrap();
        assert_eq!(
            classify(&HeaderMap::new(), &notification),
            Ok(Era::Modern("2026-07-28".into())),
            "a notification is accepted as it is"
        );
        let unnamed = request("tools/call", json!({"_meta": envelope("2026-07-28")}));
        let call = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
        ]);
        assert!(
            classify(&call, &unnamed).is_ok(),
            "no name anywhere: the handler says so"
        );
    }

    #[test]
    fn stamps_and_envelopes() {
        let server = ServerInfo {
            name: "s",
            version: "1",
        };
        let modern = Era::Modern("2026-07-28".into());
        let list = modern.stamp_result("tools/list", json!({"tools": []}), &server);
        assert_eq!(list["resultType"], "complete");
        assert_eq!(
            (list["ttlMs"].clone(), list["cacheScope"].clone()),
            (json!(0), json!("private"))
        );
        assert_eq!(list["_meta"][SERVER_INFO_KEY]["name"], "s");
        let asked = modern.stamp_result(
            "tools/call",
            json!({"resultType": "input_required", "requestState": "x"}),
            &server,
        );
        assert_eq!(asked["resultType"], "input_required");
        assert!(asked.get("ttlMs").is_none());
        assert_eq!(
            Era::Legacy.stamp_result("tools/list", json!({"tools": []}), &server),
            json!({"tools": []})
        );
        assert_eq!(
            without_envelope(json!({"name": "t", "_meta": envelope("2026-07-28")})),
            json!({"name": "t"})
        );
        let task = json!({"taskId": "t"});
        assert_eq!(
            without_envelope(json!({"_meta": {
                "progressToken": 1,
                PROTOCOL_VERSION_KEY: "2026-07-28",
                "io.modelcontextprotocol/related-task": task,
            }})),
            json!({"_meta": {"progressToken": 1, "io.modelcontextprotocol/related-task": task}}),
            "only the envelope goes"
        );
        assert_eq!(
            modern_capabilities(json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true},
                "tasks": {},
            })),
            json!({"tools": {}, "resources": {}})
        );
    }
}
