//! The serde form of an edge plan, the one bindings exchange: repeated headers stay apart.
//! [`EdgePlanJson`] says the shape once; the plan serializes through it.

use super::plan::{EdgeAction, EdgePlan};
use super::profile::CacheProfile;
use crate::draft::DraftState;
use serde::ser::{Serialize, Serializer};

impl EdgeAction {
    /// The action's name in the serde form.
    pub fn as_str(&self) -> &'static str {
        match self {
            EdgeAction::Redirect(_) => "redirect",
            EdgeAction::Asset(_) => "asset",
            EdgeAction::Bypass => "bypass",
            EdgeAction::Cache => "cache",
        }
    }
}

/// The edge's decision for one request, as a host reads it.
#[derive(serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename = "EdgePlan", rename_all = "camelCase")]
pub(crate) struct EdgePlanJson<'a> {
    /// What the edge does: redirect, serve an asset, bypass the cache, or cache the page.
    #[cfg_attr(
        feature = "ts",
        ts(type = r#""redirect" | "asset" | "bypass" | "cache""#)
    )]
    action: &'static str,
    /// A redirect's status; `null` for the other actions.
    status: Option<u16>,
    /// The cache key; `null` when the response is not cached.
    key: Option<&'a str>,
    /// The cache profile.
    profile: CacheProfile,
    /// Whether the response may be stored.
    cacheable: bool,
    /// Why it may not be, when it may not.
    reason: &'a Option<String>,
    /// Whether the request renders a draft.
    #[cfg_attr(feature = "ts", ts(type = r#""preview" | "normal""#))]
    draft: &'static str,
    /// The headers the response gets.
    headers: &'a [(String, String)],
    /// Headers to set on the request before it goes on to the origin.
    origin_headers: &'a [(String, String)],
}

impl<'a> From<&'a EdgePlan> for EdgePlanJson<'a> {
    fn from(plan: &'a EdgePlan) -> Self {
        EdgePlanJson {
            action: plan.action.as_str(),
            status: match &plan.action {
                EdgeAction::Redirect(r) => Some(r.status),
                _ => None,
            },
            key: plan.key.as_ref().map(|k| k.as_str()),
            profile: plan.profile,
            cacheable: plan.cacheable,
            reason: &plan.reason,
            draft: match plan.draft.state() {
                DraftState::Preview => "preview",
                DraftState::Normal => "normal",
            },
            headers: &plan.headers,
            origin_headers: &plan.origin_headers,
        }
    }
}

impl Serialize for EdgePlan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        EdgePlanJson::from(self).serialize(serializer)
    }
}
