//! What crosses a resolution's boundary as JSON: the steps a host is handed (a round of loader
//! calls, then the finished page) and its answers to the loader calls.

use super::node::CallId;
use super::page::{PAGE_BUFFER_START, ResolvedPage};
use crate::value::Value;
use serde::Serialize;

/// A loader the host must run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LoaderCall {
    /// Identifies the call in [`Resolution::provide`](super::Resolution::provide).
    pub id: CallId,
    /// The registered loader key.
    pub key: String,
    /// Fully resolved props, with the page's path, URL and query injected.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub props: Value,
    /// A stale-while-revalidate refresh: the page already has the cached value; the answer
    /// only refreshes the loader cache.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional = nullable, type = "true"))]
    pub refresh: bool,
}

/// What the host must do next.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "step", content = "value", rename_all = "camelCase")]
pub enum Step {
    /// Run these loaders (concurrently), `provide` every result, then call `next` again.
    NeedLoaders(Vec<LoaderCall>),
    /// Resolution is complete.
    Done(#[cfg_attr(feature = "ts", ts(as = "super::PageJson<'static, false>"))] Box<ResolvedPage>),
}

impl Step {
    /// The room a buffer for a step's JSON starts with: most pages fit without growing it.
    pub const BUFFER_CAPACITY: usize = PAGE_BUFFER_START;

    /// The step as JSON bytes, its serde form: `{"step":"needLoaders","value":[calls]}` or
    /// `{"step":"done","value":<page>}`, the page written by [`ResolvedPage::to_json_bytes`].
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Step::BUFFER_CAPACITY);
        self.write_json(&mut out);
        out
    }

    /// Appends what [`Step::to_json_bytes`] returns to `out` (a binding writing straight into
    /// the buffer it hands its host).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Step::Done(page) => {
                // The page is written straight after the prefix, not copied behind it.
                out.extend_from_slice(br#"{"step":"done","value":"#);
                page.write_json(out);
                out.push(b'}');
            }
            // Writing loader calls to a Vec cannot fail: their keys are strings.
            Step::NeedLoaders(_) => {
                let start = out.len();
                if serde_json::to_writer(&mut *out, self).is_err() {
                    out.truncate(start);
                }
            }
        }
    }
}

/// A host's answer to one loader call, as JSON: `{"id", "value"}` or `{"id", "error"}` (an
/// answer with neither is `null`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoaderAnswer {
    /// The call answered.
    pub id: CallId,
    /// Its result.
    #[serde(default)]
    pub value: Option<Value>,
    /// Why it failed.
    #[serde(default)]
    pub error: Option<String>,
}

impl LoaderAnswer {
    /// The result [`Resolution::provide`] takes: the error when there is one, else the value.
    ///
    /// [`Resolution::provide`]: super::Resolution::provide
    pub fn into_result(self) -> Result<Value, String> {
        match self.error {
            Some(message) => Err(message),
            None => Ok(self.value.unwrap_or(Value::Null)),
        }
    }
}
