//! `NativePageJson`: a `?renderJson` / `?asJson` request — answered by the core at once, or a
//! page resolution whose finished page the core turns into the response.

use crate::convert::to_json;
use crate::error::{Code, JsResult, fail, guarded};
use crate::resolution::NativeResolution;
use crate::response::AdminResponseOutput;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use sitefile_core::{ErrorCode, PageJsonFinish, PageJsonOutcome, Request, Site};
use std::sync::Arc;

/// What the core made of a page-JSON request: `respond` (call `response()`) or `resolve` (call
/// `resolve(droppedSections)`, drive it, then `pageJsonResponse()` on the resolution).
#[napi]
pub struct NativePageJson {
    pub(crate) site: Arc<Site>,
    pub(crate) request: Request,
    pub(crate) outcome: Option<PageJsonOutcome>,
}

fn taken(method: &str) -> napi::Error<Code> {
    fail(
        ErrorCode::Finished,
        format!("{method}: this page JSON request was already answered"),
    )
}

#[napi]
impl NativePageJson {
    /// `respond` or `resolve`.
    #[napi(getter)]
    pub fn kind(&self) -> String {
        match &self.outcome {
            Some(PageJsonOutcome::Respond(_)) => "respond",
            _ => "resolve",
        }
        .to_string()
    }

    /// The job as JSON (`{"kind": "renderJson" | "asJson", "section": <index> | null}`), or
    /// `null` for `respond`.
    #[napi(getter)]
    pub fn job(&self) -> Result<Option<String>, napi::Error<Code>> {
        guarded(|| match &self.outcome {
            Some(PageJsonOutcome::Resolve(job)) => serde_json::to_string(job)
                .map(Some)
                .map_err(|e| fail(ErrorCode::InvalidContent, e)),
            _ => Ok(None),
        })
    }

    /// The draft to fetch before `resolve` (JSON `{url, timeoutMs, maxBytes}`), or `null`: see
    /// `provideDraft`.
    #[napi(getter)]
    pub fn draft_fetch(&self) -> Result<Option<String>, napi::Error<Code>> {
        guarded(|| match &self.outcome {
            Some(PageJsonOutcome::Resolve(job)) => job.draft_fetch().map(to_json).transpose(),
            _ => Ok(None),
        })
    }

    /// The draft fetch's answer: the body read, or `null` when it failed, answered other than
    /// 2xx, or passed its timeout or size cap (the published page is answered then).
    #[napi]
    pub fn provide_draft(&mut self, body: Option<Buffer>) {
        if let Some(PageJsonOutcome::Resolve(job)) = &mut self.outcome {
            self.site.page_json_draft_fetched(job, body.as_deref());
        }
    }

    /// The response of a `respond` outcome (a preflight, a `__section` that is no index).
    #[napi]
    pub fn response(&mut self) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| match self.outcome.take() {
            Some(PageJsonOutcome::Respond(response)) => Ok(response.into()),
            Some(other) => {
                self.outcome = Some(other);
                Err(fail(
                    ErrorCode::InvalidRequest,
                    "response() does not answer a `resolve` page JSON request",
                ))
            }
            None => Err(taken("response")),
        })
    }

    /// Starts resolving the page of a `resolve` outcome; `dropped` are the sections whose
    /// module exports `renderJson = false`. Once the resolution is done, its
    /// `pageJsonResponse()` is the response.
    #[napi]
    pub fn resolve(&mut self, dropped: Vec<String>) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| -> JsResult<NativeResolution> {
            let job = match self.outcome.take() {
                Some(PageJsonOutcome::Resolve(job)) => job,
                Some(other) => {
                    self.outcome = Some(other);
                    return Err(fail(
                        ErrorCode::InvalidRequest,
                        "resolve() does not answer a `respond` page JSON request",
                    ));
                }
                None => return Err(taken("resolve")),
            };
            let (site, request, of) = (self.site.clone(), self.request.clone(), job.clone());
            let mut resolution = NativeResolution::starting(Box::new(move |host| {
                Ok(site.resolve_page_json(&of, request, host))
            }));
            resolution.page_json = PageJsonFinish::pending(job, dropped);
            Ok(resolution)
        })
    }
}
