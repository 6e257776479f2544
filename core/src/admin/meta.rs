//! `GET /live/_meta` (also `/platform/meta`): the schema document with its `ETag`.

use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::etag::if_none_match;
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::site::AdminSite;

/// The schema, 304 when `If-None-Match` matches, 503 before a schema is set.
pub(crate) fn meta<S: AdminSite + ?Sized>(
    site: &S,
    request: &AdminRequest,
    cors: &Cors,
) -> Result<AdminResponse, AdminError> {
    let schema = site.schema().ok_or_else(|| {
        AdminError::new(
            AdminErrorCode::SchemaNotInitialized,
            "Schema not initialized",
        )
    })?;
    let etag = schema.etag();
    if if_none_match(request.header_values("if-none-match"), etag) {
        return Ok(AdminResponse::empty(304, cors).with_etag(etag));
    }
    Ok(AdminResponse::json_bytes(200, schema.body().clone(), cors).with_etag(etag))
}
