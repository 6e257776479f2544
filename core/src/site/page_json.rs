//! Page JSON (`?renderJson`, `?asJson`) through the facade: one question per request.

use super::Site;
use crate::host::Host;
use crate::page_json::{self, PageJsonFacts, PageJsonOutcome};
use crate::request::Request;
use crate::resolve::Resolution;
use std::sync::Arc;

impl Site {
    /// Whether `request` is page JSON, and what to do: `None` (not page JSON: go on with
    /// `proxyHandler`, assets and the cache), a response to send (a preflight), or a job: resolve
    /// the page for `request` with [`Site::resolve_page_json`], then
    /// [`page_json::PageJsonJob::finish`].
    /// Ask after admin routes and purges; a content redirect of the path wins over page JSON.
    pub fn page_json(&self, request: &Request) -> Option<PageJsonOutcome> {
        let derived = self.derived.current();
        page_json::outcome(request, self.policy().options(), &derived.redirects, || {
            Arc::new(PageJsonFacts {
                snapshot: derived.snapshot.clone(),
                secrets: derived.secret_texts(self.runtime.config().secret_key.as_ref()),
                dev_mode: self.platform.is_dev_mode(),
            })
        })
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
        self.runtime
            .resolve_page_on(job.snapshot().clone(), request, Default::default(), host)
    }
}
