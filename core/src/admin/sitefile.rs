//! `GET /.sitefile` (the content map, `ETag` = revision) and `POST /.sitefile` (reload).

use super::auth::check_reload;
use super::body::check_size;
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::etag::if_none_match;
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::site::AdminSite;
use crate::content::{ReloadError, ReloadResponse, write_bundle};
use chrono::{DateTime, Utc};

/// The `ETag` of a revision: the revision, quoted (a strong validator).
pub fn revision_etag(revision: &str) -> String {
    format!("\"{revision}\"")
}

/// `GET /.sitefile`: the canonical content map (blocks sorted by name), or 304.
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
    AdminResponse::json_bytes(200, write_bundle(snapshot.blocks()), cors).with_etag(&etag)
}

/// `POST /.sitefile`: token, size bound, then the site's reload.
pub(crate) fn reload<S: AdminSite + ?Sized>(
    site: &S,
    config: &AdminConfig,
    request: &AdminRequest,
    now: DateTime<Utc>,
    cors: &Cors,
) -> Result<ReloadJob, AdminError> {
    check_reload(config, request)?;
    check_size(&request.body, config.reload_max_bytes)?;
    let response = site.reload(&request.body, now).map_err(|e| {
        let code = match e {
            ReloadError::Json(_) => AdminErrorCode::InvalidJson,
            ReloadError::NotAnObject(_) => AdminErrorCode::InvalidBody,
        };
        AdminError::new(code, e.to_string())
    })?;
    Ok(ReloadJob {
        response,
        cors: cors.clone(),
    })
}

/// A reload that has been applied. With Fast Deploy the host writes the new snapshot to the
/// key-value store, then answers with [`ReloadJob::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadJob {
    response: ReloadResponse,
    cors: Cors,
}

impl ReloadJob {
    /// The reload response (with `kvWritten: false`).
    pub fn response(&self) -> &ReloadResponse {
        &self.response
    }

    /// The 200 response; `kv_written` says whether the snapshot reached the key-value store.
    pub fn finish(mut self, kv_written: bool) -> AdminResponse {
        self.response.kv_written = kv_written;
        AdminResponse::json(200, &self.response, &self.cors)
    }
}
