//! The admin protocol: `NativeSite.handleAdmin` hands a request to the core, which answers it or
//! names the host work it needs (`NativeAdminOutcome`); the JS side does that work and calls the
//! matching `finish*` method for the response.

use crate::convert::{header_pairs, to_json};
use crate::error::{Code, JsResult, fail, guarded, thrown};
use crate::fast_deploy::{KvWrite, NativeFastDeploy, swap_hook};
use crate::resolution::NativeResolution;
use crate::response::AdminResponseOutput;
use chrono::{DateTime, Utc};
use napi::bindgen_prelude::{Buffer, Function};
use napi_derive::napi;
use sitefile_core::{
    AdminHead, AdminOutcome, AdminRequest, AdminResponse, ErrorCode, InvokeAnswer, InvokeResult,
    PreparedReload, RenderAnswer, Site, Snapshot,
};
use std::sync::Arc;

/// An HTTP request as the admin protocol reads it.
#[napi(object)]
pub struct AdminRequestInput {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, percent-encoded as it arrived.
    pub path: String,
    /// The query without `?` (`""` when there is none).
    pub query: String,
    /// Header names and values, alternating: `[name, value, name, value, ...]`.
    pub headers: Vec<String>,
    /// The body bytes.
    pub body: Option<Buffer>,
}

/// What the head of an admin request (its method, path, query and headers) decides before any
/// body byte is read.
#[napi(object)]
pub struct AdminHeadOutput {
    /// `pass`: no admin route here, leave the request (and its body) alone; `respond`: send
    /// `response` and read no body (401, 405, 413 for a declared `Content-Length` over the
    /// limit, a preflight...); `handle`: hand the request over without reading its body; `read`:
    /// read the body up to `limit` bytes (stop one past it), then hand it over.
    pub kind: String,
    /// For `read`, the route's body limit in bytes.
    pub limit: Option<f64>,
    /// For `respond`, the response.
    pub response: Option<AdminResponseOutput>,
}

impl From<AdminHead> for AdminHeadOutput {
    fn from(head: AdminHead) -> AdminHeadOutput {
        let (kind, limit, response) = match head {
            AdminHead::Pass => ("pass", None, None),
            AdminHead::Respond(response) => ("respond", None, Some(response.into())),
            AdminHead::WithoutBody => ("handle", None, None),
            AdminHead::ReadBody { limit } => ("read", Some(limit as f64), None),
        };
        AdminHeadOutput {
            kind: kind.to_string(),
            limit,
            response,
        }
    }
}

impl AdminRequestInput {
    pub(crate) fn into_request(self) -> JsResult<AdminRequest> {
        Ok(AdminRequest {
            method: self.method,
            path: self.path,
            query: self.query,
            headers: header_pairs(self.headers)?,
            body: self.body.map(|b| b.to_vec()).unwrap_or_default(),
        })
    }
}

/// What the core made of an admin request: a response, or a job for the host. `kind` says which
/// method finishes it: `respond` → `response()`, `reload` → `applyReload()` (or, with Fast
/// Deploy on an asynchronous store, `prepareReload()` then `commitReload()`), `purge` →
/// `finishPurge()` (after deleting `job.keys` from the edge cache), `preview` →
/// `resolvePreview()` then `finishPreview(render)`, `invoke` → `finishInvoke(results,
/// headers)`; `pass` is not an admin route. Each outcome is finished once.
#[napi]
pub struct NativeAdminOutcome {
    site: Arc<Site>,
    request: AdminRequest,
    now: DateTime<Utc>,
    kind: &'static str,
    job: Option<String>,
    outcome: Option<AdminOutcome>,
    /// A reload `prepareReload` planned, until `commitReload`.
    prepared: Option<Prepared>,
}

/// A reload planned for Fast Deploy.
enum Prepared {
    /// Its writes are the host's to make; it serves once they are made. `serving` is the
    /// content it was planned over, which `restoreWrites` puts back.
    Writing {
        reload: PreparedReload,
        serving: Arc<Snapshot>,
    },
    /// Refused: the answer.
    Refused(AdminResponse),
}

impl NativeAdminOutcome {
    /// What the core answered (`outcome`) for `request` at `now`, kept with what its jobs need.
    pub(crate) fn new(
        site: Arc<Site>,
        request: AdminRequest,
        now: DateTime<Utc>,
        outcome: AdminOutcome,
    ) -> JsResult<NativeAdminOutcome> {
        let (kind, job) = match &outcome {
            AdminOutcome::Pass => ("pass", None),
            AdminOutcome::Respond(_) => ("respond", None),
            AdminOutcome::Reload(_) => ("reload", None),
            AdminOutcome::Purge(job) => (
                "purge",
                Some(to_json(&serde_json::json!({"keys": job.keys()}))?),
            ),
            AdminOutcome::Preview(job) => ("preview", Some(to_json(job)?)),
            AdminOutcome::Invoke(job) => ("invoke", Some(to_json(job)?)),
        };
        Ok(NativeAdminOutcome {
            site,
            request,
            now,
            kind,
            job,
            outcome: Some(outcome),
            prepared: None,
        })
    }

    fn take(&mut self, method: &str) -> JsResult<AdminOutcome> {
        self.outcome.take().ok_or_else(|| {
            fail(
                ErrorCode::Finished,
                format!("{method}: this admin outcome was already finished"),
            )
        })
    }
}

fn wrong_kind(method: &str, kind: &str) -> napi::Error<Code> {
    fail(
        ErrorCode::InvalidRequest,
        format!("{method} does not finish a `{kind}` admin outcome"),
    )
}

#[napi]
impl NativeAdminOutcome {
    /// `pass`, `respond`, `reload`, `purge`, `preview` or `invoke`.
    #[napi(getter)]
    pub fn kind(&self) -> String {
        self.kind.to_string()
    }

    /// The job as JSON text (`purge`: `{keys}`; `preview`: `{component, block, props, path,
    /// deviceHint, overlay}`; `invoke`: `{shape, calls: [{alias, key, props}], select}`), or
    /// `null`.
    #[napi(getter)]
    pub fn job(&self) -> Option<String> {
        self.job.clone()
    }

    /// For a `preview` outcome, the URL the previewed page is seen from (what its section
    /// loaders get as the request); `null` otherwise.
    #[napi(getter)]
    pub fn preview_url(&self) -> Option<String> {
        match &self.outcome {
            Some(AdminOutcome::Preview(job)) => self.site.preview_url(job, &self.request).ok(),
            _ => None,
        }
    }

    /// The response of a `respond` outcome.
    #[napi]
    pub fn response(&mut self) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| match self.take("response")? {
            AdminOutcome::Respond(response) => Ok(response.into()),
            _ => Err(wrong_kind("response", self.kind)),
        })
    }

    /// Applies a `reload` outcome; `beforeSwap` is the Fast Deploy hook (see
    /// `NativeSite.reload`; without it `kvWritten: false`). A refused body is a 400 response, a
    /// throwing hook a 503, both with the content unchanged.
    #[napi]
    pub fn apply_reload(
        &mut self,
        before_swap: Option<Function<String, bool>>,
    ) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| match self.take("applyReload")? {
            AdminOutcome::Reload(job) => {
                let mut hook = swap_hook(before_swap.as_ref());
                Ok(job.apply(self.site.as_ref(), &mut hook).into())
            }
            _ => Err(wrong_kind("applyReload", self.kind)),
        })
    }

    /// Plans a `reload` outcome for Fast Deploy (`fastDeploy`): the key-value writes of its new
    /// snapshot, in order, which the host makes before `commitReload`. No writes when the
    /// reload is refused (a bad body; a site whose last read of the store failed):
    /// `commitReload` answers the refusal.
    #[napi]
    pub fn prepare_reload(
        &mut self,
        fast_deploy: &NativeFastDeploy,
    ) -> Result<Vec<KvWrite>, napi::Error<Code>> {
        guarded(|| match self.take("prepareReload")? {
            AdminOutcome::Reload(job) => {
                let serving = self.site.snapshot();
                let (prepared, writes) = match job.prepare(self.site.as_ref()) {
                    Err(refusal) => (Prepared::Refused(refusal), Vec::new()),
                    Ok(reload) => match fast_deploy.replica.writes(reload.snapshot()) {
                        Ok(writes) => (Prepared::Writing { reload, serving }, writes.to_vec()),
                        Err(why) => {
                            let refusal = reload.commit(self.site.as_ref(), Err(why));
                            (Prepared::Refused(refusal), Vec::new())
                        }
                    },
                };
                self.prepared = Some(prepared);
                Ok(writes.into_iter().map(KvWrite::from).collect())
            }
            _ => Err(wrong_kind("prepareReload", self.kind)),
        })
    }

    /// The write that puts the content the planned reload was planned over back as the
    /// deployment's snapshot: what the host writes when a write of `prepareReload` failed after
    /// the first succeeded. None when no reload is being written.
    #[napi]
    pub fn restore_writes(&self, fast_deploy: &NativeFastDeploy) -> Vec<KvWrite> {
        match &self.prepared {
            Some(Prepared::Writing { serving, .. }) => {
                vec![fast_deploy.replica.restore(serving).into()]
            }
            _ => Vec::new(),
        }
    }

    /// Finishes a reload planned by `prepareReload` once its writes are done (`failure`: why one
    /// failed): the new content serves (`kvWritten: true`), or 503 `KV_WRITE_FAILED` with the
    /// content unchanged; a refused reload's answer otherwise.
    #[napi]
    pub fn commit_reload(
        &mut self,
        failure: Option<String>,
    ) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| match self.prepared.take() {
            Some(Prepared::Writing { reload, .. }) => {
                let written = failure.map_or(Ok(true), Err);
                Ok(reload.commit(self.site.as_ref(), written).into())
            }
            Some(Prepared::Refused(refusal)) => Ok(refusal.into()),
            None => Err(fail(
                ErrorCode::InvalidRequest,
                "commitReload: no reload was prepared (prepareReload first), or it was finished",
            )),
        })
    }

    /// The response of a `purge` outcome, once its keys are deleted from the edge cache.
    #[napi]
    pub fn finish_purge(&mut self) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| match self.take("finishPurge")? {
            AdminOutcome::Purge(job) => Ok(job.finish().into()),
            _ => Err(wrong_kind("finishPurge", self.kind)),
        })
    }

    /// Starts resolving what a `preview` outcome shows (its path, device and overlay applied);
    /// drive it like a page resolution. Its page's `sections` are what to render.
    #[napi]
    pub fn resolve_preview(&self) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let Some(AdminOutcome::Preview(job)) = &self.outcome else {
                return Err(wrong_kind("resolvePreview", self.kind));
            };
            let (job, request, now) = (job.clone(), self.request.clone(), self.now);
            let site = self.site.clone();
            Ok(NativeResolution::starting(Box::new(move |host| {
                site.resolve_preview(&job, &request, now, host)
                    .map_err(|e| thrown(&e))
            })))
        })
    }

    /// The HTML response of a `preview` outcome from the host's render (JSON: `{"sections":
    /// [{"key", "html"} | {"key", "error"}]}` or `{"error": message}`).
    #[napi]
    pub fn finish_preview(
        &mut self,
        render: String,
    ) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| {
            let answer: RenderAnswer = serde_json::from_str(&render).map_err(|e| {
                fail(
                    ErrorCode::InvalidJson,
                    format!("invalid render answer: {e}"),
                )
            })?;
            match self.take("finishPreview")? {
                AdminOutcome::Preview(job) => Ok(job.finish(answer.into_result()).into()),
                _ => Err(wrong_kind("finishPreview", self.kind)),
            }
        })
    }

    /// The response of an `invoke` outcome from the host's results, one per call in order
    /// (JSON: `[{"value"} | {"unknown": true} | {"error", "stack"?}]`), and the headers the
    /// calls wrote (alternating names and values).
    #[napi]
    pub fn finish_invoke(
        &mut self,
        results: String,
        headers: Vec<String>,
    ) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| {
            let answers: Vec<InvokeAnswer> = serde_json::from_str(&results).map_err(|e| {
                fail(
                    ErrorCode::InvalidJson,
                    format!("invalid invoke results: {e}"),
                )
            })?;
            let headers = header_pairs(headers)?;
            match self.take("finishInvoke")? {
                AdminOutcome::Invoke(job) => Ok(job
                    .finish(
                        answers.into_iter().map(InvokeResult::from).collect(),
                        headers,
                    )
                    .into()),
                _ => Err(wrong_kind("finishInvoke", self.kind)),
            }
        })
    }
}

/// The 404 of an admin handler called for a path no admin route takes.
#[napi]
pub fn unknown_admin_route(
    request: AdminRequestInput,
) -> Result<AdminResponseOutput, napi::Error<Code>> {
    guarded(|| Ok(sitefile_core::unknown_route(&request.into_request()?).into()))
}

/// The Next.js binding's answer to an admin request before the core handles it: a preview
/// `GET` is a 307 to the preview page (`/platform/preview/<target>`, query kept); `null` for
/// every other request.
#[napi]
pub fn preview_page_redirect(
    request: AdminRequestInput,
) -> Result<Option<AdminResponseOutput>, napi::Error<Code>> {
    guarded(|| {
        let request = request.into_request()?;
        Ok(sitefile_core::preview_page_redirect(&request).map(AdminResponseOutput::from))
    })
}

/// The admin path (`/platform/previews/<target>`) of what the preview page shows, from its
/// path segments as the router hands them over (decoded).
#[napi]
pub fn preview_page_admin_path(segments: Vec<String>) -> String {
    sitefile_core::preview_page_admin_path(&segments)
}
