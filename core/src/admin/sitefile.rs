//! `GET /.sitefile` (the content map, `ETag` = revision) and `POST /.sitefile` (reload).

use super::body::check_size;
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::etag::if_none_match;
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::site::AdminSite;
use crate::content::{ReloadError, ReloadRefused, ReloadResponse, Snapshot, reload_body};
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// The `ETag` of a revision: the revision, quoted (a strong validator).
pub(crate) fn revision_etag(revision: &str) -> String {
    format!("\"{revision}\"")
}

/// `GET /.sitefile`: the content map (blocks sorted by name) as a reload body that lands on the
/// same revision ([`reload_body`]), or 304.
pub(crate) fn read<S: AdminSite + ?Sized>(
    site: &S,
    request: &AdminRequest,
    cors: &Cors,
) -> AdminResponse {
    let snapshot = site.snapshot();
    let etag = revision_etag(snapshot.revision());
    if if_none_match(request.header_values("if-none-match"), &etag) {
        return AdminResponse::empty(304, cors).with_etag(&etag);
    }
    AdminResponse::json_bytes(200, reload_body(&snapshot), cors).with_etag(&etag)
}

/// `POST /.sitefile` (its token already checked with the head): the size bound; the reload
/// itself is the host's to apply.
pub(crate) fn reload(
    config: &AdminConfig,
    request: &AdminRequest,
    now: DateTime<Utc>,
    cors: &Cors,
) -> Result<ReloadJob, AdminError> {
    check_size(&request.body, config.reload_max_bytes)?;
    Ok(ReloadJob {
        body: request.body.clone(),
        now,
        cors: cors.clone(),
    })
}

/// An authorized reload, not applied yet. The host applies it with [`ReloadJob::apply`], giving
/// the hook that writes the new snapshot to the key-value store under the single-writer lock,
/// before it serves (Fast Deploy), or with [`ReloadJob::apply_in_memory`]; a host whose store is
/// reached asynchronously plans it with [`ReloadJob::prepare`], writes, then commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadJob {
    body: Vec<u8>,
    now: DateTime<Utc>,
    cors: Cors,
}

impl ReloadJob {
    /// Applies the reload: `before_swap` gets the new snapshot and answers whether it reached
    /// the key-value store (`kvWritten`); a failing hook is 503 `KV_WRITE_FAILED` and a refused
    /// body 400, both with the content unchanged.
    pub fn apply<S: AdminSite + ?Sized>(
        self,
        site: &S,
        before_swap: &mut dyn FnMut(&Arc<Snapshot>) -> Result<bool, String>,
    ) -> AdminResponse {
        match site.reload(&self.body, self.now, before_swap) {
            Ok(response) => AdminResponse::json(200, &response, &self.cors),
            Err(refused) => refusal(&refused).into_response(&self.cors),
        }
    }

    /// Applies the reload with no key-value store (`kvWritten: false`).
    pub fn apply_in_memory<S: AdminSite + ?Sized>(self, site: &S) -> AdminResponse {
        self.apply(site, &mut |_| Ok(false))
    }

    /// Plans the reload without applying it: the snapshot to write to the key-value store
    /// before it serves, or the answer to a refused body (400, the content unchanged).
    pub fn prepare<S: AdminSite + ?Sized>(self, site: &S) -> Result<PreparedReload, AdminResponse> {
        match site.plan_reload(&self.body, self.now) {
            Ok(planned) => Ok(PreparedReload {
                snapshot: planned.snapshot,
                response: planned.response,
                cors: self.cors,
            }),
            Err(refused) => Err(refusal(&ReloadRefused::Body(refused)).into_response(&self.cors)),
        }
    }
}

/// A planned reload whose snapshot the host writes to the key-value store before it serves
/// ([`ReloadJob::prepare`]).
#[derive(Debug)]
pub struct PreparedReload {
    snapshot: Arc<Snapshot>,
    response: ReloadResponse,
    cors: Cors,
}

impl PreparedReload {
    /// The new content, to write.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// Serves the new content once the store answered: `written` is whether it reached the store
    /// (`kvWritten`), or why the write failed — then 503 `KV_WRITE_FAILED` and the content
    /// unchanged, as when [`ReloadJob::apply`]'s hook fails. The content serves even if another
    /// change landed while the store was written: the store holds this reload's snapshot, the
    /// last written, and a host serves what its store holds.
    pub fn commit<S: AdminSite + ?Sized>(
        self,
        site: &S,
        written: Result<bool, String>,
    ) -> AdminResponse {
        match written {
            Ok(kv_written) => {
                site.serve_reloaded(self.snapshot);
                let response = ReloadResponse {
                    kv_written,
                    ..self.response
                };
                AdminResponse::json(200, &response, &self.cors)
            }
            Err(why) => refusal(&ReloadRefused::Hook(why)).into_response(&self.cors),
        }
    }
}

/// The admin error answering a refused reload.
fn refusal(refused: &ReloadRefused) -> AdminError {
    let code = match refused {
        ReloadRefused::Body(ReloadError::Json(_)) => AdminErrorCode::InvalidJson,
        ReloadRefused::Body(ReloadError::NotAnObject(_) | ReloadError::DeltaNotAMap(_)) => {
            AdminErrorCode::InvalidContent
        }
        ReloadRefused::Hook(_) => AdminErrorCode::KvWriteFailed,
    };
    AdminError::new(code, refused.to_string())
}
