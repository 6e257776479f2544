//! The serde form of an edge plan, the one bindings exchange: repeated headers stay apart.
//!
//! `{"action": "redirect"|"asset"|"bypass"|"cache", "status": <redirect status>, "key",
//! "profile", "cacheable", "reason", "draft": "preview"|"normal", "headers": [[name, value]...],
//! "originHeaders": [[name, value]...]}`

use super::plan::{EdgeAction, EdgePlan};
use crate::draft::DraftState;
use serde::ser::{Serialize, SerializeStruct, Serializer};

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

impl Serialize for EdgePlan {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut plan = serializer.serialize_struct("EdgePlan", 9)?;
        plan.serialize_field("action", self.action.as_str())?;
        let status = match &self.action {
            EdgeAction::Redirect(r) => Some(r.status),
            _ => None,
        };
        plan.serialize_field("status", &status)?;
        plan.serialize_field("key", &self.key.as_ref().map(|k| k.as_str()))?;
        plan.serialize_field("profile", self.profile.as_str())?;
        plan.serialize_field("cacheable", &self.cacheable)?;
        plan.serialize_field("reason", &self.reason)?;
        let draft = match self.draft.state() {
            DraftState::Preview => "preview",
            DraftState::Normal => "normal",
        };
        plan.serialize_field("draft", draft)?;
        plan.serialize_field("headers", &self.headers)?;
        plan.serialize_field("originHeaders", &self.origin_headers)?;
        plan.end()
    }
}
