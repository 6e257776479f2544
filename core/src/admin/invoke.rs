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
use crate::value::{Key, Value, intern};
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
