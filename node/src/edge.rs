//! `NativeEdgePlan`: the edge's decision for one request, then the decision once the origin
//! answered — the core's edge forms as JSON text.

use crate::convert::{parse, to_json};
use crate::error::{Code, guarded};
use napi_derive::napi;
use sitefile_core::{CacheProfile, DraftState, EdgePlan, OriginAnswer, Site};
use std::sync::Arc;

/// The edge plan of one request.
#[napi]
pub struct NativeEdgePlan {
    pub(crate) site: Arc<Site>,
    pub(crate) plan: EdgePlan,
}

#[napi]
impl NativeEdgePlan {
    /// The plan as JSON: `{action: "redirect"|"asset"|"bypass"|"cache", status, key, profile,
    /// cacheable, reason, draft: "preview"|"normal", headers: [[name, value]...],
    /// originHeaders: [[name, value]...]}`.
    #[napi(getter)]
    pub fn json(&self) -> Result<String, napi::Error<Code>> {
        guarded(|| to_json(&self.plan))
    }

    /// The plan's draft-preview decision, what a front such as the Next.js middleware applies:
    /// JSON `{state: "preview"|"normal", setCookie: string|null, headers: [[name, value]...],
    /// forward: [name, value]|null}` — the cookie to set or clear, the response headers of a
    /// draft render (`Vary` to merge, the others to replace) and the request header carrying
    /// the pointer to the renderer (a client's own copy is to be removed first).
    #[napi(getter)]
    pub fn draft(&self) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let draft = &self.plan.draft;
            let state = match draft.state() {
                DraftState::Preview => "preview",
                DraftState::Normal => "normal",
            };
            to_json(&serde_json::json!({
                "state": state,
                "setCookie": draft.set_cookie(),
                "headers": draft.response_headers(),
                "forward": draft.forward_header(),
            }))
        })
    }

    /// The decision once the origin answered (JSON `{status, headers: [[name, value]...]}`):
    /// the plan merged with the visitor's headers, plus `originStatus`, `storeHeaders` (`null`:
    /// do not store), `storeMaxAge` (seconds the stored copy can be served) and `evict` (stored
    /// keys to delete). A stored key is recorded for purges.
    #[napi]
    pub fn after_origin(&self, origin: String) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let origin: OriginAnswer = parse("origin answer", &origin)?;
            to_json(&self.site.after_origin(&self.plan, &origin))
        })
    }
}

/// The cache profile names, in the core's order: what `detectProfile` may answer and what a
/// `cdnCacheControl` function is asked about.
#[napi]
pub fn cache_profiles() -> Vec<String> {
    CacheProfile::ALL
        .iter()
        .map(|p| p.as_str().to_string())
        .collect()
}

/// A cache key as a URL without a fragment, for storages that key by URL and drop fragments
/// (the Web Cache API): the key's variant parts travel in a last query parameter.
#[napi]
pub fn storage_url(key: String) -> String {
    sitefile_core::storage_url(&key)
}

/// How a request asks for a draft preview, and what a response rendering one carries: what a
/// framework's static route configuration must name (the Next.js config wrapper's header rules).
#[napi(object)]
pub struct DraftSignals {
    /// The query parameter that opens a draft (`__draft`).
    pub param: String,
    /// The cookie that keeps it (`__platform_draft`).
    pub cookie: String,
    /// The request header a front forwards the pointer to the renderer in (`x-platform-draft`).
    pub header: String,
    /// The headers of a response that renders a draft, as `[name, value]` pairs.
    pub headers: Vec<Vec<String>>,
}

/// The draft-preview signals of the core (see [`DraftSignals`]).
#[napi]
pub fn draft_signals() -> DraftSignals {
    use sitefile_core::{DRAFT_COOKIE, DRAFT_HEADER, DRAFT_PARAM, PREVIEW_HEADERS};
    DraftSignals {
        param: DRAFT_PARAM.to_string(),
        cookie: DRAFT_COOKIE.to_string(),
        header: DRAFT_HEADER.to_string(),
        headers: PREVIEW_HEADERS
            .iter()
            .map(|(n, v)| vec![n.to_string(), v.to_string()])
            .collect(),
    }
}

/// The `Content-Security-Policy` value that lets the editor frame a site's pages
/// (`frame-ancestors 'self'` and the editor's origins), what the edge sets on HTML by default.
#[napi]
pub fn editor_frame_ancestors() -> String {
    use sitefile_core::EDITOR_ORIGINS;
    sitefile_core::frame_ancestors(&EDITOR_ORIGINS.map(String::from))
}
