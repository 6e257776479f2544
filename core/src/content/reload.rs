//! Reloading content: a delta (`{"blocks": {...}}`, `null` deletes) or a full replacement.

use super::block::Block;
use super::snapshot::Snapshot;
use crate::value::{ParseError, Value, intern};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use std::sync::Arc;

/// How a reload applied its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReloadMode {
    /// Only the named blocks changed.
    Delta,
    /// The body replaced all content.
    Full,
}

/// The response of a reload, field for field as the spec names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadResponse {
    /// Always `true`.
    pub ok: bool,
    /// `delta` or `full`.
    pub mode: ReloadMode,
    /// Blocks before.
    pub previous_block_count: usize,
    /// Blocks after.
    pub new_block_count: usize,
    /// The new revision.
    pub revision: String,
    /// Whether the snapshot was written to the key-value store (Fast Deploy).
    pub kv_written: bool,
    /// When it was applied, RFC 3339.
    pub timestamp: String,
}

/// A reload body that was refused; the current content keeps serving.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReloadError {
    /// The body is not JSON.
    #[error(transparent)]
    Json(#[from] ParseError),
    /// The body is JSON but not an object.
    #[error("the reload body must be a JSON object, got {0}")]
    NotAnObject(&'static str),
    /// The body's only key is `blocks` but it holds no map: a malformed delta, refused rather
    /// than taken as a full reload that would replace every block with one named `blocks`.
    #[error("a delta's \"blocks\" must be a map of block name to block, got {0}")]
    DeltaNotAMap(&'static str),
}

/// A new snapshot built off to the side, with the response describing it.
#[derive(Debug)]
pub struct ReloadOutcome {
    /// The snapshot to swap in.
    pub snapshot: Arc<Snapshot>,
    /// The response to send.
    pub response: ReloadResponse,
}

/// The key of a delta body: `{"blocks": {...}}`.
const DELTA_KEY: &str = "blocks";

/// The reload body that lands on `snapshot` — what `GET /.sitefile` answers, so posting what was
/// read lands on the same revision: the canonical content map, except when its only block is
/// named `blocks`, which would read back as a delta of that block's fields; that map is answered
/// in the delta form that sets it, `{"blocks": {"blocks": …}}`.
pub fn reload_body(snapshot: &Snapshot) -> Arc<[u8]> {
    let canonical = snapshot.canonical_bytes();
    if snapshot.len() != 1 || snapshot.block(DELTA_KEY).is_none() {
        return canonical;
    }
    let map = canonical.strip_suffix(b"\n").unwrap_or(&canonical);
    let mut delta = Vec::with_capacity(map.len() + DELTA_KEY.len() + 6);
    delta.extend_from_slice(format!("{{\"{DELTA_KEY}\":").as_bytes());
    delta.extend_from_slice(map);
    delta.extend_from_slice(b"}\n");
    delta.into()
}

/// Builds the snapshot a reload body asks for, without touching `current`. Delta iff the body's
/// only key is `blocks` holding an object (any other value there is refused); otherwise every
/// key of the body is a block (`null` values are skipped). Unchanged blocks are shared with `current`, so only changed blocks are
/// hashed for the new revision.
pub fn plan_reload(
    current: &Snapshot,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<ReloadOutcome, ReloadError> {
    let body = Value::from_content_slice(body)?;
    let Some(object) = body.as_object() else {
        return Err(ReloadError::NotAnObject(body.kind()));
    };
    let delta = match object.entries() {
        [(key, Value::Object(blocks))] if &**key == DELTA_KEY => Some(blocks),
        [(key, other)] if &**key == DELTA_KEY => {
            return Err(ReloadError::DeltaNotAMap(other.kind()));
        }
        _ => None,
    };
    let (mode, snapshot) = match delta {
        Some(changes) => {
            let changes = changes.entries().iter().map(|(name, value)| {
                let block = (!value.is_null()).then(|| Arc::new(Block::new(value.clone())));
                (intern(name), block)
            });
            (ReloadMode::Delta, current.with_changes(changes))
        }
        None => {
            let blocks = object
                .entries()
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()));
            (ReloadMode::Full, Snapshot::from_blocks(blocks))
        }
    };
    let response = ReloadResponse {
        ok: true,
        mode,
        previous_block_count: current.len(),
        new_block_count: snapshot.len(),
        revision: snapshot.revision().to_string(),
        kv_written: false,
        timestamp: now.to_rfc3339_opts(SecondsFormat::Millis, true),
    };
    Ok(ReloadOutcome {
        snapshot: Arc::new(snapshot),
        response,
    })
}

impl crate::errors::HasErrorCode for ReloadError {
    fn code(&self) -> crate::errors::ErrorCode {
        match self {
            ReloadError::Json(_) => crate::errors::ErrorCode::InvalidJson,
            ReloadError::NotAnObject(_) | ReloadError::DeltaNotAMap(_) => {
                crate::errors::ErrorCode::InvalidContent
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Snapshot {
        let v = Value::from_json_str(r#"{"a":{"x":1},"b":{"y":2}}"#).unwrap();
        Snapshot::from_blocks(v.as_object().unwrap().entries().to_vec())
    }

    fn now() -> DateTime<Utc> {
        "2026-11-22T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn delta_replaces_adds_and_deletes() {
        let current = base();
        let out = plan_reload(&current, br#"{"blocks":{"a":null,"c":{"z":3}}}"#, now()).unwrap();
        assert_eq!(out.response.mode, ReloadMode::Delta);
        assert_eq!(out.response.previous_block_count, 2);
        assert_eq!(out.response.new_block_count, 2);
        assert!(out.snapshot.block("a").is_none());
        assert!(out.snapshot.block("c").is_some());
        assert_eq!(out.response.timestamp, "2026-11-22T10:00:00.000Z");
        assert!(!out.response.kv_written);
        // Unchanged blocks are shared, not copied.
        assert!(Arc::ptr_eq(
            &current.shared_blocks()["b"],
            &out.snapshot.shared_blocks()["b"]
        ));
    }

    #[test]
    fn delta_reaches_the_same_revision_as_full() {
        let current = base();
        let delta = plan_reload(&current, br#"{"blocks":{"b":{"y":3}}}"#, now()).unwrap();
        let full = plan_reload(&current, br#"{"b":{"y":3},"a":{"x":1}}"#, now()).unwrap();
        assert_eq!(full.response.mode, ReloadMode::Full);
        assert_eq!(delta.response.revision, full.response.revision);
    }

    #[test]
    fn other_shapes_are_full_reloads_and_bad_bodies_and_malformed_deltas_are_refused() {
        let current = base();
        let two_keys = plan_reload(&current, br#"{"blocks":{},"x":{}}"#, now()).unwrap();
        assert_eq!(two_keys.response.mode, ReloadMode::Full);
        assert!(matches!(
            plan_reload(&current, br#"{"blocks":[1]}"#, now()),
            Err(ReloadError::DeltaNotAMap("an array"))
        ));
        let wipe = plan_reload(&current, b"{}", now()).unwrap();
        assert_eq!(wipe.response.new_block_count, 0);
        assert!(matches!(
            plan_reload(&current, b"[1]", now()),
            Err(ReloadError::NotAnObject("an array"))
        ));
        assert!(matches!(
            plan_reload(&current, b"{", now()),
            Err(ReloadError::Json(_))
        ));
    }
}
