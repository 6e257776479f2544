//! The configured OAuth authorization server as this service reaches it: its metadata
//! (OpenID Connect Discovery or RFC 8414), and bounded JSON requests to the endpoints it
//! names (the JWKS, the RFC 7662 introspection endpoint).

use std::time::Duration;

use futures_util::StreamExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The time limit of each request (metadata, JWKS or introspection).
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest document read (metadata, JWKS or introspection answer).
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// The part of the authorization server metadata read here.
#[derive(Deserialize)]
pub struct Metadata {
    /// The issuer the metadata speaks for (must be the configured one).
    pub issuer: String,
    /// Where the signing keys are.
    pub jwks_uri: Option<String>,
    /// Where access tokens are introspected (RFC 7662), if the server offers it.
    pub introspection_endpoint: Option<String>,
}

/// An HTTP client of one authorization server.
pub struct AuthorizationServer {
    issuer: String,
    client: reqwest::Client,
}

impl AuthorizationServer {
    /// A client of `issuer` (no redirects followed, every request bounded in time and size).
    pub fn new(issuer: &str) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("OAuth HTTP client: {e}"))?;
        Ok(Self {
            issuer: issuer.to_string(),
            client,
        })
    }

    /// The issuer URL.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The issuer's metadata, from the first place that has it; its `issuer` must be the
    /// configured one.
    pub async fn metadata(&self) -> Result<Metadata, String> {
        let mut last_error = String::new();
        for url in metadata_urls(&self.issuer) {
            match self.get::<Metadata>(&url).await {
                Ok((metadata, _)) if metadata.issuer == self.issuer => return Ok(metadata),
                Ok((metadata, _)) => {
                    last_error = format!("{url} names issuer {:?}", metadata.issuer);
                }
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// GETs a JSON document, with its `Cache-Control: max-age` in milliseconds when it has
    /// one.
    pub async fn get<T: DeserializeOwned>(&self, url: &str) -> Result<(T, Option<i64>), String> {
        let request = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        self.send(url, request).await
    }

    /// POSTs `form` (`application/x-www-form-urlencoded`) with HTTP Basic client
    /// authentication (RFC 6749 §2.3.1: both parts form-encoded first) and reads the JSON
    /// answer.
    pub async fn post_form<T: DeserializeOwned>(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client_id: &str,
        client_secret: &str,
    ) -> Result<T, String> {
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .client
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .basic_auth(encode(client_id), Some(encode(client_secret)))
            .body(body);
        Ok(self.send(url, request).await?.0)
    }

    /// Sends `request` and reads a JSON answer of at most [`MAX_DOCUMENT_BYTES`].
    async fn send<T: DeserializeOwned>(
        &self,
        url: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<(T, Option<i64>), String> {
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status().as_u16()));
        }
        let max_age_ms = response
            .headers()
            .get(reqwest::header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok())
            .and_then(max_age_ms);
        let mut stream = response.bytes_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("{url}: {e}"))?;
            if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        let document = serde_json::from_slice(&bytes).map_err(|e| format!("{url}: {e}"))?;
        Ok((document, max_age_ms))
    }
}

/// The `max-age` directive of a `Cache-Control` value, in milliseconds; `no-cache` and
/// `no-store` count as an age of zero (so the shortest age applies). Parsed by hand rather
/// than with the `headers` crate, for one directive.
fn max_age_ms(cache_control: &str) -> Option<i64> {
    cache_control.split(',').find_map(|directive| {
        let directive = directive.trim();
        if directive.eq_ignore_ascii_case("no-cache") || directive.eq_ignore_ascii_case("no-store")
        {
            return Some(0);
        }
        let (name, value) = directive.split_once('=')?;
        let secs: i64 = value.trim().trim_matches('"').parse().ok()?;
        name.trim()
            .eq_ignore_ascii_case("max-age")
            .then(|| secs.saturating_mul(1000))
    })
}

/// Where the issuer's metadata may be: OpenID Connect Discovery (appended), then RFC 8414
/// (inserted before the issuer's path).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let base = issuer.trim_end_matches('/');
    let mut urls = vec![format!("{base}/.well-known/openid-configuration")];
    if let Ok(url) = url::Url::parse(base) {
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        urls.push(format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        ));
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_control_max_age() {
        assert_eq!(max_age_ms("public, max-age=300"), Some(300_000));
        assert_eq!(max_age_ms("MAX-AGE=\"60\""), Some(60_000));
        assert_eq!(max_age_ms("no-store"), Some(0));
        assert_eq!(max_age_ms("public, max-age=soon"), None);
        assert_eq!(max_age_ms("public"), None);
    }

    #[test]
    fn metadata_addresses() {
        assert_eq!(
            metadata_urls("https://as.example/tenant/"),
            [
                "https://as.example/tenant/.well-known/openid-configuration",
                "https://as.example/.well-known/oauth-authorization-server/tenant",
            ]
        );
    }
}
