//! `GET /.sitefile` (the content map, `ETag` = revision) and `POST /.sitefile` (reload).

use super::body::check_size;
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::etag::if_none_match;
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::site::AdminSite;
use crate::content::{ReloadError, ReloadRefused, Snapshot, reload_body};
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
/// before it serves (Fast Deploy), or with [`ReloadJob::apply_in_memory`].
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
            Err(refused) => {
                let code = match &refused {
                    ReloadRefused::Body(ReloadError::Json(_)) => AdminErrorCode::InvalidJson,
                    ReloadRefused::Body(
                        ReloadError::NotAnObject(_) | ReloadError::DeltaNotAMap(_),
                    ) => AdminErrorCode::InvalidContent,
                    ReloadRefused::Hook(_) => AdminErrorCode::KvWriteFailed,
                };
                AdminError::new(code, refused.to_string()).into_response(&self.cors)
            }
        }
    }

    /// Applies the reload with no key-value store (`kvWritten: false`).
    pub fn apply_in_memory<S: AdminSite + ?Sized>(self, site: &S) -> AdminResponse {
        self.apply(site, &mut |_| Ok(false))
    }
}
