//! The edge decision for one request, before and after the origin answered, as one result.

use crate::edge::{
    CacheProfile, CspNonce, EdgePlan, OriginFacts, SegmentKey, StoredState, UnknownProfile,
};
use crate::value::Value;
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
    /// How long a stored copy is worth keeping, in seconds (the profile's edge `fresh` plus its
    /// longer stale window): past it a copy is never served, so a storage may drop it. `None`
    /// when nothing is stored.
    #[serde(rename = "storeMaxAge")]
    pub store_max_age: Option<u32>,
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
    /// What became of the origin request, for [`Site::stored_copy`](super::Site::stored_copy):
    /// its status, and whether it marked its page degraded (`X-Platform-Degraded`).
    pub fn outcome(&self) -> OriginOutcome {
        OriginOutcome {
            status: Some(self.status),
            degraded: crate::edge::respond::is_degraded(&self.headers),
        }
    }

    /// The borrowed form the edge policy reads.
    pub fn facts(&self) -> OriginFacts<'_> {
        OriginFacts {
            status: self.status,
            headers: &self.headers,
        }
    }
}

/// What the host adds to one edge plan: the answers of the site's own functions, which the host
/// runs (`buildSegment(request)`, `detectProfile(url)`), and random bytes for the CSP nonce. All
/// data, so a JS function or a C callback never has to live inside the site.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EdgeHints {
    /// What `buildSegment(request)` returned (`{device, loggedIn, salesChannel, regionId, flags,
    /// ...custom}`); `None` when the site has no `buildSegment`.
    #[serde(default)]
    pub segment: Option<Value>,
    /// What `detectProfile(url)` returned: a profile name, or `None` for the built-in rules.
    #[serde(default)]
    pub profile: Option<String>,
    /// Sixteen bytes from the host's cryptographic random source, for the CSP nonce of an
    /// uncached HTML response under `cspMode: "enforce"`.
    #[serde(default)]
    pub nonce: Option<[u8; 16]>,
}

/// [`EdgeHints`] read into the edge's own types.
#[derive(Default)]
pub(super) struct ReadHints {
    pub(super) segment: Option<SegmentKey>,
    pub(super) profile: Option<CacheProfile>,
    pub(super) nonce: Option<CspNonce>,
}

impl EdgeHints {
    /// The hints as the edge reads them; a profile name that is none of the spec's is an error.
    pub(super) fn read(&self) -> Result<ReadHints, UnknownProfile> {
        Ok(ReadHints {
            segment: self.segment.as_ref().map(SegmentKey::from_value),
            profile: self.profile.as_deref().map(str::parse).transpose()?,
            nonce: self.nonce.map(CspNonce::from_bytes),
        })
    }
}

/// How the edge serves a stored copy of a plan's key: the state and the headers added to the
/// copy's own stored headers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredCopy {
    /// `HIT` (serve it), `STALE` (serve it and revalidate in the background), `STALE-ERROR`
    /// (the origin failed: serve it instead), or `MISS` (too old: go to the origin).
    #[serde(serialize_with = "x_cache")]
    pub state: StoredState,
    /// The headers to add to the stored copy's when it is served (`X-Cache`, `X-Cache-Age`, …).
    pub headers: Vec<(String, String)>,
}

fn x_cache<S: serde::Serializer>(state: &StoredState, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(state.x_cache())
}

/// What became of the origin request, when a stored copy is weighed against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OriginOutcome {
    /// The origin's status; `None` when it could not be reached.
    pub status: Option<u16>,
    /// The origin marked its page degraded (`X-Platform-Degraded`).
    #[serde(default)]
    pub degraded: bool,
}
