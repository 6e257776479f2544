//! The HTTP response the addon hands to JS: what an admin route, a page-JSON request and a
//! finished page-JSON resolution each answer, converted from the core's responses.

use crate::convert::flat_headers;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use sitefile_core::{AdminResponse, PageJsonResponse};

/// A finished admin response.
#[napi(object)]
pub struct AdminResponseOutput {
    /// HTTP status.
    pub status: u32,
    /// Header names and values, alternating (a name may repeat: `Set-Cookie`).
    pub headers: Vec<String>,
    /// The body bytes (empty for 204 and 304).
    pub body: Buffer,
}

impl From<AdminResponse> for AdminResponseOutput {
    fn from(response: AdminResponse) -> AdminResponseOutput {
        AdminResponseOutput {
            status: u32::from(response.status),
            headers: flat_headers(&response.headers),
            body: Buffer::from(response.body.to_vec()),
        }
    }
}

impl From<PageJsonResponse> for AdminResponseOutput {
    fn from(response: PageJsonResponse) -> AdminResponseOutput {
        AdminResponseOutput {
            status: u32::from(response.status),
            headers: flat_headers(&response.headers),
            body: Buffer::from(response.body),
        }
    }
}
