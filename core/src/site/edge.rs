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
    /// Every header, in order (repeated `Set-Cookie` entries kept apart). Read from JSON, a
    /// field that is not a valid HTTP field ([`check_header_field`]) is refused, as hyper and
    /// nginx refuse such an origin response: it never reaches the visitor or a stored copy.
    #[serde(default, deserialize_with = "valid_header_fields")]
    pub headers: Vec<(String, String)>,
}

/// Whether `name: value` is a header field the edge may pass on: the name a non-empty HTTP
/// token, the value free of control characters but tab (no CR, LF or NUL, which would split or
/// smuggle a response; RFC 9110 §5.1, §5.5). The error says what is wrong, naming the field.
pub(crate) fn check_header_field(name: &str, value: &str) -> Result<(), String> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() {
        return Err("a header has an empty name".to_string());
    }
    if !name.chars().all(tchar) {
        return Err(format!("header name {name:?} is not an HTTP token"));
    }
    match value.chars().find(|&c| c.is_ascii_control() && c != '\t') {
        Some(c) => Err(format!(
            "the value of header `{name}` holds the control character {c:?} \
             (CR, LF, NUL and every control but tab are refused)"
        )),
        None => Ok(()),
    }
}

/// Reads `[[name, value], ...]`, refusing a field [`check_header_field`] refuses.
fn valid_header_fields<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, String)>, D::Error> {
    let fields = <Vec<(String, String)> as serde::Deserialize>::deserialize(d)?;
    for (name, value) in &fields {
        check_header_field(name, value).map_err(serde::de::Error::custom)?;
    }
    Ok(fields)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_answer_with_a_field_that_could_split_a_response_is_refused() {
        for json in [
            r#"{"status": 200, "headers": [["x-a", "1\r\nset-cookie: s=1"]]}"#,
            r#"{"status": 200, "headers": [["x-a", "1\n"]]}"#,
            r#"{"status": 200, "headers": [["x-a", "1\u0000"]]}"#,
            r#"{"status": 200, "headers": [["x-a", "\u007f"]]}"#,
            r#"{"status": 200, "headers": [["x-a\r\nx-b", "1"]]}"#,
            r#"{"status": 200, "headers": [["x-a:", "1"]]}"#,
            r#"{"status": 200, "headers": [["", "1"]]}"#,
        ] {
            let error = serde_json::from_str::<OriginAnswer>(json).unwrap_err();
            assert!(error.to_string().contains("header"), "{json}: {error}");
        }
        let fine: OriginAnswer = serde_json::from_str(
            r#"{"status": 200, "headers": [["X-Note", "caf\u00e9\tau lait"], ["ETag", "\"1\""]]}"#,
        )
        .unwrap();
        assert_eq!(fine.headers[0].1, "caf\u{e9}\tau lait");
    }
}
