//! Page JSON (`?renderJson`, `?asJson`) through the facade: one question per request.

use super::Site;
use crate::draft::decide_draft;
use crate::host::Host;
use crate::page_json::{self, PageJsonFacts, PageJsonOutcome};
use crate::request::Request;
use crate::resolve::{RequestOptions, Resolution};
use std::sync::Arc;

impl Site {
    /// Whether `request` is page JSON, and what to do: `None` (not page JSON: go on with
    /// `proxyHandler`, assets and the cache), a response to send (a preflight), or a job: resolve
    /// the page for `request` with [`Site::resolve_page_json`], then
    /// [`page_json::PageJsonJob::finish`].
    /// Ask after admin routes and purges; a content redirect of the path wins over page JSON.
    /// On a host that may preview, a job renders the request's draft as a page does (spec
    /// "Draft preview mode"): fetch what [`page_json::PageJsonJob::draft_fetch`] names first and
    /// hand the body to [`Site::page_json_draft_fetched`]. Page JSON is answered by the front
    /// itself, so a forwarded `x-platform-draft` header is never trusted here.
    pub fn page_json(&self, request: &Request) -> Option<PageJsonOutcome> {
        let derived = self.derived.current();
        let outcome =
            page_json::outcome(request, self.policy().options(), &derived.redirects, || {
                Arc::new(PageJsonFacts {
                    snapshot: derived.snapshot.clone(),
                    secrets: derived.secret_texts(self.runtime.config().secret_key.as_ref()),
                    dev_mode: self.platform.is_dev_mode(),
                })
            })?;
        Some(match outcome {
            PageJsonOutcome::Resolve(job) => {
                let decision = decide_draft(request, &derived.preview_hosts, false);
                let source = self.drafts.source(&decision, &self.api_domains);
                let key = self.runtime.config().secret_key.as_ref();
                PageJsonOutcome::Resolve(job.with_draft(decision, source, key))
            }
            respond => respond,
        })
    }

    /// The host's answer to `job`'s draft fetch: the body read, or `None` when the fetch failed,
    /// answered other than 2xx, or passed its timeout or size cap. A JSON object of blocks is
    /// the draft the page is resolved on (and kept for the next requests); anything else leaves
    /// the published page. Nothing happens when the job fetches nothing.
    pub fn page_json_draft_fetched(&self, job: &mut page_json::PageJsonJob, body: Option<&[u8]>) {
        if let Some(fetch) = job.draft_fetch().cloned() {
            let key = self.runtime.config().secret_key.as_ref();
            job.draft_is(self.drafts.fetched(&fetch, body), key);
        }
    }

    /// Starts resolving the page of page JSON `job` for `request`, on the content that served
    /// when the job was made: the body's page name, SEO defaults and secret redaction come from
    /// that content, so the sections must too, even when a reload comes in between.
    pub fn resolve_page_json(
        &self,
        job: &page_json::PageJsonJob,
        request: Request,
        host: &dyn Host,
    ) -> Resolution {
        let options = RequestOptions {
            bypass_caches: job.in_draft(),
            ..RequestOptions::default()
        };
        self.runtime
            .resolve_page_on(job.snapshot().clone(), request, options, host)
    }
}
