//! A stand-in OAuth authorization server: OpenID Connect discovery and a JWKS of P-256
//! keys that can be rotated, and ES256 access tokens signed with them; and an RFC 7662
//! introspection endpoint for opaque tokens, open to the client [`CLIENT_ID`].

/// The one client the introspection endpoint answers (HTTP Basic).
pub const CLIENT_ID: &str = "workspace";
/// Its secret (with characters RFC 6749 §2.3.1 form-encodes before Basic encoding).
pub const CLIENT_SECRET: &str = "s3cret:+/ é";

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// A signing key and its id.
pub struct SigningKey {
    /// `kid`.
    pub kid: String,
    encoding: EncodingKey,
    jwk: Value,
}

impl SigningKey {
    /// A fresh P-256 key named `kid`.
    pub fn new(kid: &str) -> Self {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let raw = pair.public_key_raw();
        let (x, y) = raw[1..].split_at(32);
        Self {
            kid: kid.to_string(),
            encoding: EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes()).unwrap(),
            jwk: json!({ "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
                "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y) }),
        }
    }

    /// `claims` signed with this key (ES256, this key's `kid`).
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// The running authorization server.
pub struct AuthServer {
    /// Its issuer URL.
    pub issuer: String,
    jwks: Arc<Mutex<Value>>,
    /// The `Cache-Control` of the JWKS response, if any.
    cache_control: Arc<Mutex<Option<String>>>,
    /// Whether the JWKS answers 503.
    down: Arc<AtomicBool>,
    /// What introspection answers for each opaque token (inactive for any other).
    opaque: Arc<Mutex<HashMap<String, Value>>>,
    /// Introspection requests answered, and the tokens they named.
    introspected: Arc<Mutex<Vec<String>>>,
    /// Introspection requests refused for bad client credentials.
    refused: Arc<AtomicUsize>,
}

impl AuthServer {
    /// Serves discovery and a JWKS publishing `key`.
    pub async fn start(key: &SigningKey) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let jwks = Arc::new(Mutex::new(json!({ "keys": [key.jwk] })));
        let metadata = json!({ "issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                               "introspection_endpoint": format!("{issuer}/introspect") });
        let opaque = Arc::new(Mutex::new(HashMap::new()));
        let introspected = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(AtomicUsize::new(0));
        let (answers, asked, refusals) = (opaque.clone(), introspected.clone(), refused.clone());
        let published = jwks.clone();
        let cache_control = Arc::new(Mutex::new(None::<String>));
        let down = Arc::new(AtomicBool::new(false));
        let (header, failing) = (cache_control.clone(), down.clone());
        let router = Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(move || async move { Json(metadata) }),
            )
            .route(
                "/jwks",
                get(move || {
                    let keys = published.lock().unwrap().clone();
                    let header = header.lock().unwrap().clone();
                    let failing = failing.load(Ordering::SeqCst);
                    async move { jwks_response(keys, header, failing) }
                }),
            )
            .route(
                "/introspect",
                post(move |headers: HeaderMap, body: String| async move {
                    if !client_authenticated(&headers) {
                        refusals.fetch_add(1, Ordering::SeqCst);
                        return StatusCode::UNAUTHORIZED.into_response();
                    }
                    let token = url::form_urlencoded::parse(body.as_bytes())
                        .find(|(name, _)| name == "token")
                        .map(|(_, value)| value.into_owned())
                        .unwrap_or_default();
                    asked.lock().unwrap().push(token.clone());
                    let answer = answers.lock().unwrap().get(&token).cloned();
                    Json(answer.unwrap_or_else(|| json!({ "active": false }))).into_response()
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self {
            issuer,
            jwks,
            cache_control,
            down,
            opaque,
            introspected,
            refused,
        }
    }

    /// Makes introspection of `token` answer `answer` (an RFC 7662 response).
    pub fn set_opaque(&self, token: &str, answer: Value) {
        self.opaque
            .lock()
            .unwrap()
            .insert(token.to_string(), answer);
    }

    /// The tokens introspection was asked about, in order.
    pub fn introspected(&self) -> Vec<String> {
        self.introspected.lock().unwrap().clone()
    }

    /// How many introspection requests had bad client credentials.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }

    /// Sends `value` as the JWKS response's `Cache-Control`.
    pub fn set_cache_control(&self, value: &str) {
        *self.cache_control.lock().unwrap() = Some(value.to_string());
    }

    /// Makes the JWKS answer 503 (`true`) or its keys again.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// Publishes `key` instead of the current keys (rotation).
    pub fn rotate_to(&self, key: &SigningKey) {
        *self.jwks.lock().unwrap() = json!({ "keys": [key.jwk] });
    }

    /// Claims of a token for `sub` meant for `aud`, valid for an hour.
    pub fn claims(&self, sub: &str, aud: &str) -> Value {
        let now = chrono::Utc::now().timestamp();
        json!({ "iss": self.issuer, "sub": sub, "aud": aud, "iat": now, "exp": now + 3600 })
    }
}

/// Whether `headers` carry HTTP Basic credentials of [`CLIENT_ID`] (each part form-encoded
/// first, RFC 6749 §2.3.1).
fn client_authenticated(headers: &HeaderMap) -> bool {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let expected = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        encode(CLIENT_ID),
        encode(CLIENT_SECRET)
    ));
    headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value == format!("Basic {expected}"))
}

/// The JWKS response: `keys` with `cache_control`, or 503 when `failing`.
fn jwks_response(keys: Value, cache_control: Option<String>, failing: bool) -> Response {
    if failing {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let mut response = Json(keys).into_response();
    if let Some(value) = cache_control {
        response
            .headers_mut()
            .insert("cache-control", value.parse().unwrap());
    }
    response
}
