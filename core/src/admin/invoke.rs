//! `POST /platform/invoke/<key>` (one loader or action) and `POST /platform/invoke` (a batch):
//! core reads the calls; the host runs them; core shapes the answer.

use super::body::{check_size, parse_object};
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::request::AdminRequest;
use super::response::AdminResponse;
use crate::edge::headers;
use crate::uri::decode_uri_component_or_keep;
use crate::value::{Key, RESOLVE_TYPE, Value, intern};
use serde::{Deserialize, Serialize};

/// Whether the request named one key or sent a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InvokeShape {
    /// `/platform/invoke/<key>`: the answer is the result itself.
    Single,
    /// `/platform/invoke`: the answer maps each alias to its result or error.
    Batch,
}

/// One loader or action call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvokeCall {
    /// The batch alias (the key, for a single call).
    pub alias: String,
    /// The loader or action key.
    pub key: String,
    /// Its props, passed as sent (not resolved).
    pub props: Value,
}

/// The calls the host must run (concurrently), then answer with [`InvokeJob::finish`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InvokeJob {
    /// Single or batch.
    pub shape: InvokeShape,
    /// The calls, in body order.
    pub calls: Vec<InvokeCall>,
    /// Query `select=a,b`: only these top-level keys of each result are kept.
    pub select: Option<Vec<String>>,
    #[serde(skip)]
    development: bool,
    #[serde(skip)]
    cors: Cors,
}

/// What running one call gave.
#[derive(Debug, Clone, PartialEq)]
pub enum InvokeResult {
    /// The result (`Value::Null` for nothing).
    Value(Value),
    /// No loader or action is registered under the key.
    Unknown,
    /// The call failed; `stack` is shown only in development.
    Failed {
        /// The error message.
        message: String,
        /// The stack trace, if the host has one.
        stack: Option<String>,
    },
}

/// A host's result of one call as JSON, the form every binding hands over:
/// `{"value": v}`, `{"unknown": true}` or `{"error": "message", "stack"?: "..."}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvokeAnswer {
    /// The result (absent: `null`).
    #[serde(default)]
    pub value: Option<Value>,
    /// No loader or action is registered under the key.
    #[serde(default)]
    pub unknown: bool,
    /// Why the call failed.
    #[serde(default)]
    pub error: Option<String>,
    /// The failure's stack trace, if the host has one.
    #[serde(default)]
    pub stack: Option<String>,
}

impl From<InvokeAnswer> for InvokeResult {
    fn from(answer: InvokeAnswer) -> InvokeResult {
        match answer {
            InvokeAnswer { unknown: true, .. } => InvokeResult::Unknown,
            InvokeAnswer {
                error: Some(message),
                stack,
                ..
            } => InvokeResult::Failed { message, stack },
            InvokeAnswer { value, .. } => InvokeResult::Value(value.unwrap_or(Value::Null)),
        }
    }
}

impl InvokeJob {
    fn answer(&self, call: &InvokeCall, result: InvokeResult) -> Result<Value, AdminError> {
        match result {
            InvokeResult::Value(v) => Ok(self.selected(v)),
            InvokeResult::Unknown => Err(AdminError::new(
                AdminErrorCode::UnknownHandler,
                format!("Unknown handler: {}", call.key),
            )),
            InvokeResult::Failed { message, stack } => Err(AdminError {
                code: AdminErrorCode::InvokeFailed,
                message,
                stack: stack.filter(|_| self.development),
            }),
        }
    }

    fn selected(&self, v: Value) -> Value {
        let Some(keys) = &self.select else {
            return v;
        };
        let pick = |v: &Value| match v.as_object() {
            Some(o) => Value::object(
                o.entries()
                    .iter()
                    .filter(|(k, _)| keys.iter().any(|s| s == &**k))
                    .cloned()
                    .collect(),
            ),
            None => v.clone(),
        };
        match v.as_array() {
            Some(items) => Value::array(items.iter().map(pick).collect()),
            None => pick(&v),
        }
    }

    /// The response from the host's results (one per call, in order; a missing one counts as a
    /// failure) and the headers the calls wrote: `Set-Cookie` values are each kept, `Vary`
    /// tokens are merged, `Access-Control-*` are ignored (CORS is the protocol's), other names
    /// replace. Single: 200 with the result, 404 unknown key, 500 failure. Batch: always 200,
    /// `{alias: result | {"error": {...}}}`.
    pub fn finish(
        self,
        results: Vec<InvokeResult>,
        headers: Vec<(String, String)>,
    ) -> AdminResponse {
        let mut results = results.into_iter();
        let mut answers: Vec<(Key, Result<Value, AdminError>)> = Vec::new();
        for call in &self.calls {
            let result = results.next().unwrap_or(InvokeResult::Failed {
                message: "The host gave no result".into(),
                stack: None,
            });
            answers.push((intern(&call.alias), self.answer(call, result)));
        }
        let mut response = match (self.shape, answers.pop()) {
            (InvokeShape::Single, Some((_, Ok(v)))) => AdminResponse::json(200, &v, &self.cors),
            (InvokeShape::Single, Some((_, Err(e)))) => e.into_response(&self.cors),
            (_, last) => {
                // A batch (a single call always has its one answer).
                let object = Value::object(
                    answers
                        .into_iter()
                        .chain(last)
                        .map(|(alias, r)| (alias, r.unwrap_or_else(|e| Value::from(e.to_json()))))
                        .collect(),
                );
                AdminResponse::json(200, &object, &self.cors)
            }
        };
        for (name, value) in headers {
            let lower = name.to_ascii_lowercase();
            if lower == "set-cookie" {
                response.headers.push((name, value));
            } else if lower == "vary" {
                headers::add_vary(&mut response.headers, &value);
            } else if !lower.starts_with("access-control-") {
                response.set_header(&name, &value);
            }
        }
        response
    }
}

/// The body as an object: JSON, or an urlencoded form (repeated names become arrays). An empty
/// body is `{}`.
fn body_object(request: &AdminRequest) -> Result<Value, AdminError> {
    match request.media_type().as_deref() {
        Some("application/x-www-form-urlencoded") => {
            let mut entries: Vec<(Key, Vec<Value>)> = Vec::new();
            for (k, v) in url::form_urlencoded::parse(&request.body) {
                match entries.iter_mut().find(|(name, _)| **name == *k) {
                    Some((_, values)) => values.push(Value::string(&v)),
                    None => entries.push((intern(&k), vec![Value::string(&v)])),
                }
            }
            Ok(Value::object(
                entries
                    .into_iter()
                    .map(|(k, mut vs)| {
                        let v = if vs.len() == 1 {
                            vs.remove(0)
                        } else {
                            Value::array(vs)
                        };
                        (k, v)
                    })
                    .collect(),
            ))
        }
        Some("multipart/form-data") => Err(AdminError::new(
            AdminErrorCode::UnsupportedMediaType,
            "multipart/form-data is not read; send JSON or an urlencoded form",
        )),
        _ => Ok(parse_object(&request.body, "The invoke body")?
            .unwrap_or_else(|| Value::object(Vec::new()))),
    }
}

/// Reads an invoke request: `key` from the path for a single call, `None` for a batch.
pub(crate) fn parse(
    key: Option<&str>,
    config: &AdminConfig,
    request: &AdminRequest,
    cors: &Cors,
) -> Result<InvokeJob, AdminError> {
    check_size(&request.body, config.max_body_bytes)?;
    let body = body_object(request)?;
    let (shape, calls) = match key {
        Some(raw) => {
            let key = decode_uri_component_or_keep(raw);
            let call = InvokeCall {
                alias: key.clone(),
                key,
                props: body,
            };
            (InvokeShape::Single, vec![call])
        }
        None => {
            let entries = body.as_object().map(|o| o.entries()).unwrap_or_default();
            if entries.is_empty() {
                return Err(AdminError::new(
                    AdminErrorCode::InvalidBody,
                    "No invoke key specified: the batch body maps aliases to {\"__resolveType\": key, ...props}",
                ));
            }
            let calls = entries
                .iter()
                .map(|(alias, payload)| {
                    let props = payload.as_object().ok_or_else(|| {
                        AdminError::new(
                            AdminErrorCode::InvalidBody,
                            format!("The batch entry {alias} must be a JSON object"),
                        )
                    })?;
                    Ok(InvokeCall {
                        alias: alias.to_string(),
                        key: props.resolve_type().unwrap_or(alias).to_string(),
                        props: payload.clone(),
                    })
                })
                .collect::<Result<Vec<_>, AdminError>>()?;
            (InvokeShape::Batch, calls)
        }
    };
    let select = request.query_param("select").map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_string)
            .collect()
    });
    Ok(InvokeJob {
        shape,
        calls,
        select,
        development: config.development,
        cors: cors.clone(),
    })
}

/// The body of a batch invoke (`POST /platform/invoke`) asking another server — the origin a
/// binding sits in front of — to run `calls`: `{"<alias>": {"__resolveType": "<key>",
/// ...props}}`, the form [`parse`] reads. Props that are no object are sent as none.
pub fn batch_body(calls: &[InvokeCall]) -> Vec<u8> {
    let entries = calls
        .iter()
        .map(|call| {
            let mut payload = vec![(intern(RESOLVE_TYPE), Value::string(&call.key))];
            if let Some(props) = call.props.as_object() {
                payload.extend(
                    props
                        .entries()
                        .iter()
                        .filter(|(k, _)| &**k != RESOLVE_TYPE)
                        .cloned(),
                );
            }
            (intern(&call.alias), Value::object(payload))
        })
        .collect();
    Value::object(entries).to_json_string().into_bytes()
}

/// Reads the answer to [`batch_body`] (`{alias: result | {"error": {"code", "message"}}}`, what
/// [`InvokeJob::finish`] writes for a batch): one result per call, in order. An entry that is an
/// object holding only `error` is that call's failure (`UNKNOWN_HANDLER`: no such loader); a
/// call the answer leaves out failed. A body that is not a JSON object is an error.
pub fn read_batch_answer(calls: &[InvokeCall], body: &[u8]) -> Result<Vec<InvokeResult>, String> {
    let answer =
        Value::from_slice(body).map_err(|e| format!("the batch answer is not JSON: {e}"))?;
    let answer = answer
        .as_object()
        .ok_or("the batch answer is not a JSON object")?;
    Ok(calls
        .iter()
        .map(|call| match answer.get(&call.alias) {
            None => InvokeResult::Failed {
                message: format!("the batch answer has no result for {}", call.alias),
                stack: None,
            },
            Some(result) => batch_entry(result),
        })
        .collect())
}

/// One entry of a batch answer.
fn batch_entry(result: &Value) -> InvokeResult {
    let error = result
        .as_object()
        .filter(|o| o.entries().len() == 1)
        .and_then(|o| o.get("error"));
    let Some(error) = error else {
        return InvokeResult::Value(result.clone());
    };
    let code = error.get("code").and_then(Value::as_str);
    if code == Some(AdminErrorCode::UnknownHandler.as_str()) {
        return InvokeResult::Unknown;
    }
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or(error.as_str())
        .map_or_else(|| error.to_json_string(), str::to_string);
    InvokeResult::Failed {
        message,
        stack: error
            .get("stack")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

impl InvokeResult {
    /// The result as a resolution takes a loader's (`Resolution::provide`): the value, or why
    /// the loader `key` gave none.
    pub fn into_loader_result(self, key: &str) -> Result<Value, String> {
        match self {
            InvokeResult::Value(v) => Ok(v),
            InvokeResult::Unknown => Err(format!("no loader is registered under {key}")),
            InvokeResult::Failed { message, .. } => Err(message),
        }
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    fn call(alias: &str, key: &str, props: &str) -> InvokeCall {
        InvokeCall {
            alias: alias.into(),
            key: key.into(),
            props: Value::from_json_str(props).unwrap(),
        }
    }

    #[test]
    fn a_batch_body_names_each_key_beside_its_props() {
        let calls = [
            call(
                "0",
                "site/loaders/a.ts",
                r#"{"q":1,"__resolveType":"other"}"#,
            ),
            call("1", "site/loaders/b.ts", "null"),
        ];
        let body = String::from_utf8(batch_body(&calls)).unwrap();
        assert_eq!(
            body,
            r#"{"0":{"__resolveType":"site/loaders/a.ts","q":1},"1":{"__resolveType":"site/loaders/b.ts"}}"#
        );
    }

    #[test]
    fn a_batch_answer_gives_each_call_its_value_or_error() {
        let calls = [
            call("0", "a", "{}"),
            call("1", "b", "{}"),
            call("2", "c", "{}"),
            call("3", "d", "{}"),
            call("4", "e", "{}"),
        ];
        let body = br#"{"0":{"items":[1]},"1":{"error":{"code":"INVOKE_FAILED","message":"boom"}},
            "2":{"error":{"code":"UNKNOWN_HANDLER","message":"Unknown handler: c"}},
            "4":{"error":"plain","other":1}}"#;
        let results = read_batch_answer(&calls, body).unwrap();
        assert_eq!(
            results[0],
            InvokeResult::Value(Value::from_json_str(r#"{"items":[1]}"#).unwrap())
        );
        assert_eq!(
            results[1],
            InvokeResult::Failed {
                message: "boom".into(),
                stack: None
            }
        );
        assert_eq!(results[2], InvokeResult::Unknown);
        assert!(
            matches!(&results[3], InvokeResult::Failed { message, .. } if message.contains("no result for 3"))
        );
        assert!(
            matches!(&results[4], InvokeResult::Value(_)),
            "an object with more than an error is a result"
        );
        assert_eq!(
            results[2].clone().into_loader_result("c"),
            Err("no loader is registered under c".into())
        );
        assert!(read_batch_answer(&calls, b"[1]").is_err());
        assert!(read_batch_answer(&calls, b"<html>").is_err());
    }

    #[test]
    fn a_batch_body_is_read_back_as_the_same_calls() {
        let calls = [call("0", "site/loaders/a.ts", r#"{"q":"x"}"#)];
        let request = AdminRequest {
            method: "POST".into(),
            path: "/platform/invoke".into(),
            query: String::new(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: batch_body(&calls),
        };
        let job = parse(None, &AdminConfig::default(), &request, &Cors::default()).unwrap();
        assert_eq!(job.calls[0].key, "site/loaders/a.ts");
        assert_eq!(job.calls[0].alias, "0");
    }
}
