//! `NativeEdgePlan`: the edge's decision for one request, then the decision once the origin
//! answered and how to serve a stored copy — the core's edge forms as JSON text.

use crate::error::{Code, JsResult, fail, guarded};
use napi_derive::napi;
use sitefile_core::edge::{CacheProfile, EdgePlan};
use sitefile_core::site::{OriginAnswer, OriginOutcome};
use sitefile_core::{ErrorCode, Site};
use std::sync::Arc;

/// The edge plan of one request.
#[napi]
pub struct NativeEdgePlan {
    pub(crate) site: Arc<Site>,
    pub(crate) plan: EdgePlan,
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> JsResult<T> {
    serde_json::from_str(text)
        .map_err(|e| fail(ErrorCode::InvalidJson, format!("invalid {what}: {e}")))
}

fn to_json<T: serde::Serialize>(value: &T) -> JsResult<String> {
    serde_json::to_string(value).map_err(|e| fail(ErrorCode::InvalidContent, e))
}

#[napi]
impl NativeEdgePlan {
    /// The plan as JSON: `{action: "redirect"|"asset"|"bypass"|"cache", status, key, profile,
    /// cacheable, reason, draft: "preview"|"normal", headers: [[name, value]...]}`.
    #[napi(getter)]
    pub fn json(&self) -> Result<String, napi::Error<Code>> {
        guarded(|| to_json(&self.plan))
    }

    /// The decision once the origin answered (JSON `{status, headers: [[name, value]...]}`):
    /// the plan merged with the visitor's headers, plus `originStatus`, `storeHeaders` (`null`:
    /// do not store) and `evict` (stored keys to delete). A stored key is recorded for purges.
    #[napi]
    pub fn after_origin(&self, origin: String) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let origin: OriginAnswer = parse("origin answer", &origin)?;
            to_json(&self.site.after_origin(&self.plan, &origin))
        })
    }

    /// How to serve a stored copy of the plan's key that is `ageSecs` old: before asking the
    /// origin (`origin` absent) or once it failed (JSON `{status: number|null, degraded?}`).
    /// JSON `{state: "HIT"|"STALE"|"STALE-ERROR"|"MISS", headers: [[name, value]...]}`.
    #[napi]
    pub fn stored_copy(
        &self,
        age_secs: f64,
        origin: Option<String>,
    ) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let origin: Option<OriginOutcome> =
                origin.map(|o| parse("origin outcome", &o)).transpose()?;
            let age = if age_secs.is_finite() && age_secs > 0.0 {
                age_secs as u64
            } else {
                0
            };
            to_json(&self.site.stored_copy(&self.plan, age, origin.as_ref()))
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
