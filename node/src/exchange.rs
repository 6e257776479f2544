//! `NativeEdgeExchange`: one request through the edge cache, the core's exchange driven from
//! JavaScript — steps out and answers in as JSON text in the core's serde forms.

use crate::convert::{parse, to_json};
use crate::error::{Code, guarded, thrown};
use napi_derive::napi;
use sitefile_core::{EdgeExchange, TimedAnswer};

/// The edge exchange of one request (see `Site::edge_exchange`).
#[napi]
pub struct NativeEdgeExchange {
    pub(crate) exchange: EdgeExchange,
}

#[napi]
impl NativeEdgeExchange {
    /// The edge plan the exchange follows, as `NativeEdgePlan.json` has it.
    #[napi(getter)]
    pub fn plan(&self) -> Result<String, napi::Error<Code>> {
        guarded(|| to_json(self.exchange.plan()))
    }

    /// The next step as JSON: `{step: "lookup", key}`, `{step: "askOrigin", headers, lead,
    /// deadlineMs}`, `{step: "follow", flight, deadlineMs}`, `{step: "delete", keys}`,
    /// `{step: "refresh"}`, `{step: "respond", status, headers, body: "empty"|"stored"|"origin",
    /// store: {key, status, headers, maxAge}|null}`, `{step: "settle", flight}`,
    /// `{step: "fail", message}` or `{step: "done"}`. A step waiting for its answer comes again.
    #[napi]
    pub fn next_step(&mut self) -> Result<String, napi::Error<Code>> {
        guarded(|| to_json(&self.exchange.next_step()))
    }

    /// Answers the step handed out (JSON `{answer: "lookup"|"origin"|"originFailed"|"followed"|
    /// "kept", ..., nowMs}`); an answer that does not fit it is `UNKNOWN_CALL`, one after the end
    /// `FINISHED`.
    #[napi]
    pub fn answer(&mut self, answer: String) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let timed: TimedAnswer = parse("edge exchange answer", &answer)?;
            self.exchange
                .answer(timed.answer, timed.now_ms)
                .map_err(|e| thrown(&e))
        })
    }

    /// The background refresh a `refresh` step announced, to drive beside this exchange; `null`
    /// once taken.
    #[napi]
    pub fn take_refresh(&mut self) -> Option<NativeEdgeExchange> {
        self.exchange
            .take_refresh()
            .map(|exchange| NativeEdgeExchange { exchange })
    }
}
