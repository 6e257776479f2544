//! CORS on every admin response, and the preflight answer.

use super::request::AdminRequest;
use crate::edge::headers;

/// Methods every admin route allows cross-origin.
pub const CORS_ALLOW_METHODS: &str = "GET, POST, OPTIONS";
/// Request headers every admin route allows cross-origin.
pub const CORS_ALLOW_HEADERS: &str = "Content-Type, Authorization, If-None-Match";

/// The CORS headers for one request: its `Origin` is echoed with credentials (and
/// `Vary: Origin`); without one, any origin and no credentials.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cors {
    origin: Option<String>,
}

impl Cors {
    /// The CORS answer for `request`.
    pub(crate) fn for_request(request: &AdminRequest) -> Cors {
        Cors {
            origin: request
                .header("origin")
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(str::to_string),
        }
    }

    /// Appends the CORS headers.
    pub(crate) fn apply(&self, headers: &mut Vec<(String, String)>) {
        let mut add = |n: &str, v: &str| headers.push((n.to_string(), v.to_string()));
        match &self.origin {
            Some(origin) => {
                add("Access-Control-Allow-Origin", origin);
                add("Access-Control-Allow-Credentials", "true");
            }
            None => add("Access-Control-Allow-Origin", "*"),
        }
        add("Access-Control-Allow-Methods", CORS_ALLOW_METHODS);
        add("Access-Control-Allow-Headers", CORS_ALLOW_HEADERS);
        add("Access-Control-Expose-Headers", "ETag");
        if self.origin.is_some() {
            headers::add_vary(headers, "Origin");
        }
    }
}

/// The CORS headers an admin response to `request` carries (what the `corsHeaders` helper of a
/// binding answers, for responses the host builds itself).
pub fn cors_headers(request: &AdminRequest) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    Cors::for_request(request).apply(&mut headers);
    headers
}
