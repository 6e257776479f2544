//! `NativeDraft`: what rendering a page request's draft needs — nothing, the draft at hand, or
//! a fetch the JS side performs and hands back.

use crate::convert::to_json;
use crate::error::{Code, guarded};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use sitefile_core::{DraftSource, Site};
use std::sync::Arc;

/// A page request's draft (core `Site::page_draft`): read `fetch`; when it is not `null`,
/// fetch it within its bounds and call `provide` with the body (or `null` on any failure).
#[napi]
pub struct NativeDraft {
    pub(crate) site: Arc<Site>,
    pub(crate) source: DraftSource,
}

#[napi]
impl NativeDraft {
    /// The fetch to perform, as JSON `{url, timeoutMs, maxBytes}`; `null` when there is none.
    #[napi(getter)]
    pub fn fetch(&self) -> Result<Option<String>, napi::Error<Code>> {
        guarded(|| match &self.source {
            DraftSource::Fetch(fetch) => to_json(fetch).map(Some),
            _ => Ok(None),
        })
    }

    /// Whether the draft is at hand (render it with `resolveWithDraft`); `false` renders the
    /// published content.
    #[napi(getter)]
    pub fn ready(&self) -> bool {
        matches!(self.source, DraftSource::Ready(_))
    }

    /// The fetch's answer: the body read, or `null` when it failed, answered other than 2xx, or
    /// passed its timeout or size cap. Nothing happens when there was no fetch to perform.
    #[napi]
    pub fn provide(&mut self, body: Option<Buffer>) {
        if let DraftSource::Fetch(fetch) = &self.source {
            self.source = self.site.draft_fetched(fetch, body.as_deref());
        }
    }
}
