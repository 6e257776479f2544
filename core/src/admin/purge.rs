//! `POST /_cache/purge` (edge entries of paths) and `POST /_cache/purge-loaders`.

use super::body::{check_size, parse_object};
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::site::AdminSite;
use serde_json::json;

/// An edge purge that has been taken out of the purge index: the host deletes `keys` from its
/// cache storage, then sends [`PurgeJob::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeJob {
    targets: Vec<String>,
    keys: Vec<String>,
    response: AdminResponse,
}

impl PurgeJob {
    /// The cache keys to delete, sorted.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The purge targets the body named, in its order: a storage shared by several servers
    /// purges their scopes (`Site::purge_scope`) too, since this server's index only knows the
    /// keys it stored.
    pub fn targets(&self) -> &[String] {
        &self.targets
    }

    /// The 200 response: `{"purged": [keys], "total": n}`.
    pub fn finish(self) -> AdminResponse {
        self.response
    }
}

/// `POST /_cache/purge` with `{"paths": ["/", "/p?x=1"]}` (the token already checked with the
/// head); other fields are ignored (every variant of a path is purged).
pub(crate) fn purge<S: AdminSite + ?Sized>(
    site: &S,
    config: &AdminConfig,
    request: &AdminRequest,
    cors: &Cors,
) -> Result<PurgeJob, AdminError> {
    check_size(&request.body, config.max_body_bytes)?;
    let bad = || {
        AdminError::new(
            AdminErrorCode::InvalidBody,
            "The body must include \"paths\": a non-empty array of paths starting with /",
        )
    };
    let body = parse_object(&request.body, "The purge body")?.ok_or_else(bad)?;
    let paths: Vec<&str> = body
        .get("paths")
        .and_then(|p| p.as_array())
        .filter(|p| !p.is_empty())
        .and_then(|p| p.iter().map(|v| v.as_str()).collect::<Option<_>>())
        .filter(|p: &Vec<&str>| p.iter().all(|s| s.starts_with('/')))
        .ok_or_else(bad)?;
    let mut keys: Vec<String> = paths.iter().flat_map(|p| site.purge_edge(p)).collect();
    keys.sort();
    keys.dedup();
    let response = AdminResponse::json(200, &json!({ "purged": keys, "total": keys.len() }), cors);
    let targets = paths.iter().map(|p| p.to_string()).collect();
    Ok(PurgeJob {
        targets,
        keys,
        response,
    })
}

/// `POST /_cache/purge-loaders` (the token already checked with the head): clears the loader
/// cache (the body is not read).
pub(crate) fn purge_loaders<S: AdminSite + ?Sized>(site: &S, cors: &Cors) -> AdminResponse {
    site.purge_loaders();
    AdminResponse::json(200, &json!({ "cleared": true }), cors)
}
