//! JSON-RPC 2.0 messages as MCP uses them.

use serde_json::{Value, json};

/// Invalid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// Unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Bad parameters (including tool arguments failing the input schema).
pub const INVALID_PARAMS: i64 = -32602;
/// Tool execution or upstream failure.
pub const INTERNAL_ERROR: i64 = -32603;
/// The tool call exceeded the connection's timeout.
pub const REQUEST_TIMEOUT: i64 = -32001;
/// The caller may not invoke this tool.
pub const ACCESS_DENIED: i64 = -32003;

/// A parsed JSON-RPC request or notification.
#[derive(Clone, Debug)]
pub struct RpcRequest {
    /// The id; `None` for a notification.
    pub id: Option<Value>,
    /// Method name.
    pub method: String,
    /// Parameters (`{}` when absent).
    pub params: Value,
}

impl RpcRequest {
    /// Parses one message; the error is a complete JSON-RPC error response.
    pub fn parse(body: &Value) -> Result<Self, Value> {
        let id = body.get("id").cloned();
        let invalid =
            |message: &str| error(id.clone().unwrap_or(Value::Null), INVALID_REQUEST, message);
        let object = body
            .as_object()
            .ok_or_else(|| invalid("expected a JSON-RPC object"))?;
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(invalid("jsonrpc must be \"2.0\""));
        }
        let method = object
            .get("method")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("method is required"))?;
        let params = object.get("params").cloned().unwrap_or_else(|| json!({}));
        if !params.is_object() {
            return Err(invalid("params must be an object"));
        }
        Ok(Self {
            id,
            method: method.to_string(),
            params,
        })
    }

    /// The id to answer with (`null` for notifications).
    pub fn reply_id(&self) -> Value {
        self.id.clone().unwrap_or(Value::Null)
    }

    /// For `tools/call`: the tool name and its arguments (`{}` when absent).
    pub fn tool_call(&self) -> Result<(String, Value), Value> {
        let name = self
            .params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                error(
                    self.reply_id(),
                    INVALID_PARAMS,
                    "params.name must be a string",
                )
            })?;
        let arguments = self
            .params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if !arguments.is_object() {
            return Err(error(
                self.reply_id(),
                INVALID_PARAMS,
                "params.arguments must be an object",
            ));
        }
        Ok((name.to_string(), arguments))
    }
}

/// A success response.
pub fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// An error response.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// A tool result carrying JSON as text and as structured content.
pub fn tool_result(value: &Value) -> Value {
    json!({
        "content": [{ "type": "text", "text": value.to_string() }],
        "structuredContent": value,
    })
}

/// A tool result reporting a failure to the model/client.
pub fn tool_error(message: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}
