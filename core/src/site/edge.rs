//! The edge decision for one request, before and after the origin answered, as one result.

use crate::edge::{EdgePlan, OriginFacts};
use serde::Serialize;

/// What the edge does once the origin answered: the plan with its cacheability, reason and
/// headers replaced by the after-origin decision.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeDecision {
    /// The plan, merged: `cacheable` says whether the response is stored, `reason` why not,
    /// `headers` are the visitor's.
    #[serde(flatten)]
    pub plan: EdgePlan,
    /// The status to answer the visitor with.
    #[serde(rename = "originStatus")]
    pub status: u16,
    /// The headers of the copy to store; `None`: do not store.
    #[serde(rename = "storeHeaders")]
    pub store: Option<Vec<(String, String)>>,
    /// Stored keys the purge index had to forget to stay bounded: the host deletes them from
    /// its storage, since a purge could no longer reach them.
    pub evict: Vec<String>,
}

/// What the origin answered, owned (the binding form of [`OriginFacts`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct OriginAnswer {
    /// The status code.
    pub status: u16,
    /// Every header, in order (repeated `Set-Cookie` entries kept apart).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
}

impl OriginAnswer {
    /// The borrowed form the edge policy reads.
    pub fn facts(&self) -> OriginFacts<'_> {
        OriginFacts {
            status: self.status,
            headers: &self.headers,
        }
    }
}
