//! OAuth access tokens of a configured authorization server: discovery, validation
//! (signature, audience bound to the resource, expiry, key rotation and age) and the subject
//! mapped to a member.

use std::time::Duration;

use serde_json::{Value, json};
use sitefile_workspace::clock::ManualClock;
use sitefile_workspace::config::{OAuthClient, OAuthConfig};

use crate::both_backends;
use crate::common::{Api, Backend, request};
use crate::oauth_double::{AuthServer, CLIENT_ID, CLIENT_SECRET, SigningKey};

both_backends!(oauth_tokens_map_to_members);
both_backends!(oauth_audience_is_the_resource);
both_backends!(oauth_opaque_tokens_are_introspected);

/// The `WWW-Authenticate` of a 401 on `path` with `token`.
async fn refusal(api: &Api, path: &str, token: &str) -> String {
    let (status, headers, body) = api.rpc(path, Some(token), request("tools/list")).await;
    assert_eq!(status, 401, "{body}");
    headers["www-authenticate"].to_str().unwrap().to_string()
}

/// Asserts `token` is refused on `path` with RFC 6750 `invalid_token`, a description
/// naming `reason`, and without the token echoed.
async fn assert_invalid_token(api: &Api, path: &str, token: &str, reason: &str) {
    let challenge = refusal(api, path, token).await;
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains(reason), "{reason}: {challenge}");
    assert!(!challenge.contains(token), "the token is not echoed");
}

async fn start(
    backend: Backend,
    key: &SigningKey,
    clock: Option<&ManualClock>,
) -> (Api, AuthServer) {
    let server = AuthServer::start(key).await;
    let issuer = server.issuer.clone();
    let api = Api::start_with(backend, |config| {
        config.oauth = Some(OAuthConfig {
            issuer,
            audience: None,
            client: None,
            scopes: vec!["mcp".into()],
        });
        if let Some(clock) = clock {
            config.clock = clock.clock();
        }
    })
    .await;
    (api, server)
}

async fn oauth_tokens_map_to_members(backend: Backend) {
    let key = SigningKey::new("k1");
    let (api, server) = start(backend, &key, None).await;
    api.new_org_as("beta", "alice").await;
    api.new_org_as("gamma", "bob").await;
    let path = "/api/beta/mcp/self";

    // The RFC 9728 document names the authorization server.
    let doc: Value = api
        .client
        .get(format!(
            "{}{path}/.well-known/oauth-protected-resource",
            api.base
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["authorization_servers"], json!([server.issuer]));
    assert_eq!(
        doc["scopes_supported"],
        json!(["mcp"]),
        "a client that names no scope asks for the one the service accepts"
    );

    // A token for alice meant for this service or for this very resource: the owner's rights.
    for aud in [api.base.clone(), format!("{}{path}", api.base)] {
        let token = key.sign(&server.claims("alice", &aud));
        let (status, _, body) = api.rpc(path, Some(&token), request("tools/list")).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty())
        );
    }
    let token = key.sign(&server.claims("alice", &api.base));
    let (status, out) = api
        .tool_in("beta", &token, "COLLECTION_THREADS_LIST", json!({}))
        .await;
    assert_eq!(status, 200, "{out}");

    // Another organization's member: 403 here, though valid in its own organization.
    let bob = key.sign(&server.claims("bob", &api.base));
    let (status, _, body) = api.rpc(path, Some(&bob), request("tools/list")).await;
    assert_eq!(status, 403, "{body}");
    let (status, _, _) = api
        .rpc("/api/gamma/mcp/self", Some(&bob), request("tools/list"))
        .await;
    assert_eq!(status, 200);

    // Refused tokens: 401 invalid_token with a reason.
    let cases = [
        (
            key.sign(&server.claims("nobody", &api.base)),
            "not a member",
        ),
        (
            key.sign(&server.claims("alice", "https://elsewhere.example")),
            "aud",
        ),
        (
            key.sign(&server.claims("alice", &format!("{}x", api.base))),
            "aud",
        ),
        (
            SigningKey::new("k1").sign(&server.claims("alice", &api.base)),
            "signature",
        ),
        (
            {
                let mut claims = server.claims("alice", &api.base);
                claims["exp"] = json!(chrono::Utc::now().timestamp() - 120);
                key.sign(&claims)
            },
            "expired",
        ),
        (
            {
                let mut claims = server.claims("alice", &api.base);
                claims["iss"] = json!("https://impostor.example");
                key.sign(&claims)
            },
            "issuer",
        ),
    ];
    for (token, reason) in cases {
        assert_invalid_token(&api, path, &token, reason).await;
    }

    // The tools endpoints refuse alike.
    let response = api
        .client
        .post(format!(
            "{}/api/beta/tools/COLLECTION_THREADS_LIST",
            api.base
        ))
        .bearer_auth(key.sign(&server.claims("nobody", &api.base)))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with("Bearer realm=\"workspace\""),
        "{challenge}"
    );
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains("not a member"), "{challenge}");

    // Within the clock skew, an expired token still passes.
    let mut claims = server.claims("alice", &api.base);
    claims["exp"] = json!(chrono::Utc::now().timestamp() - 10);
    let (status, _, _) = api
        .rpc(path, Some(&key.sign(&claims)), request("tools/list"))
        .await;
    assert_eq!(status, 200);

    // API keys still work beside OAuth.
    let (status, _, _) = api
        .rpc(
            "/api/acme/mcp/self",
            Some(&api.owner),
            request("tools/list"),
        )
        .await;
    assert_eq!(status, 200);
}

/// A token signed with a key published after the JWKS was cached passes once the cache may
/// be refreshed (at most once per refetch interval); the retired key is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_key_rotation() {
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    let old = SigningKey::new("k1");
    let (api, server) = start(Backend::Sqlite, &old, Some(&clock)).await;
    api.new_org_as("beta", "alice").await;
    let path = "/api/beta/mcp/self";
    let claims = server.claims("alice", &api.base);
    let (status, _, _) = api
        .rpc(path, Some(&old.sign(&claims)), request("tools/list"))
        .await;
    assert_eq!(status, 200);

    let new = SigningKey::new("k2");
    server.rotate_to(&new);
    // Just fetched: an unknown kid does not trigger another fetch yet.
    assert!(
        refusal(&api, path, &new.sign(&claims))
            .await
            .contains("unknown")
    );
    clock.advance(Duration::from_millis(
        sitefile_workspace::auth::REFETCH_INTERVAL_MS as u64 + 1,
    ));
    let (status, _, body) = api
        .rpc(path, Some(&new.sign(&claims)), request("tools/list"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        refusal(&api, path, &old.sign(&claims))
            .await
            .contains("unknown")
    );

    // Expiry follows the service's clock: an hour and the skew later, the token has expired.
    clock.advance(Duration::from_secs(
        3600 + sitefile_workspace::auth::LEEWAY_SECS + 1,
    ));
    assert!(
        refusal(&api, path, &new.sign(&claims))
            .await
            .contains("expired")
    );
}

/// The status and `WWW-Authenticate` of `tools/list` on `path` with `token`.
async fn rpc_status(api: &Api, path: &str, token: &str) -> (u16, String) {
    let (status, headers, body) = api.rpc(path, Some(token), request("tools/list")).await;
    let challenge = headers
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, format!("{challenge} {body}"))
}

/// RFC 8707/9728: a token obtained for one MCP resource works there only; a token for the
/// service-wide audience works everywhere; the REST tools accept only the latter.
async fn oauth_audience_is_the_resource(backend: Backend) {
    let key = SigningKey::new("k1");
    let (api, server) = start(backend, &key, None).await;
    api.new_org_as("beta", "alice").await;
    let a = "/api/beta/mcp/conn_a";
    let for_a = key.sign(&server.claims("alice", &format!("{}{a}", api.base)));
    let service = key.sign(&server.claims("alice", &api.base));

    // At its own resource the token authenticates (the connection does not exist: 404, not 401).
    let (status, out) = rpc_status(&api, a, &for_a).await;
    assert_eq!(status, 404, "{out}");
    // Anywhere else it is refused as not meant for that resource.
    for other in [
        "/api/beta/mcp/conn_b",
        "/api/beta/mcp/gateway/agent_1",
        "/api/beta/mcp/self",
        "/mcp/conn_a",
    ] {
        let (status, out) = rpc_status(&api, other, &for_a).await;
        assert_eq!(status, 401, "{other}: {out}");
        assert!(out.contains("error=\"invalid_token\""), "{other}: {out}");
        assert!(out.contains("(aud)"), "{other}: {out}");
    }
    // Not a way to mint an API key, nor to read threads.
    for tool in ["API_KEY_CREATE", "COLLECTION_THREADS_LIST"] {
        let response = api
            .client
            .post(format!("{}/api/beta/tools/{tool}", api.base))
            .bearer_auth(&for_a)
            .json(&json!({ "name": "minted" }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{tool}");
        let challenge = response.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    }

    // The service-wide audience: accepted on every resource and on the tools.
    for path in [a, "/api/beta/mcp/conn_b", "/api/beta/mcp/gateway/agent_1"] {
        let (status, out) = rpc_status(&api, path, &service).await;
        assert_eq!(status, 404, "{path}: {out}");
    }
    let (status, out) = rpc_status(&api, "/api/beta/mcp/self", &service).await;
    assert_eq!(status, 200, "{out}");
    let (status, out) = api
        .tool_in("beta", &service, "COLLECTION_THREADS_LIST", json!({}))
        .await;
    assert_eq!(status, 200, "{out}");
}

/// A key withdrawn from the JWKS stops being trusted once the cached set reaches its age
/// (the response's `max-age`, never below the minimum); while the authorization server is
/// down the old set is kept for a bounded grace, then nothing is trusted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_jwks_ages_out() {
    use sitefile_workspace::auth::{MIN_MAX_AGE_MS, STALE_GRACE_MS};
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    let old = SigningKey::new("k1");
    let new = SigningKey::new("k2");
    let server = AuthServer::start(&old).await;
    server.set_cache_control("public, max-age=120");
    let issuer = server.issuer.clone();
    let api = Api::start_with(Backend::Sqlite, |config| {
        config.oauth = Some(OAuthConfig {
            issuer,
            audience: None,
            client: None,
            scopes: vec!["mcp".into()],
        });
        config.clock = clock.clock();
    })
    .await;
    api.new_org_as("beta", "alice").await;
    let path = "/api/beta/mcp/self";
    let tokens_at = |key: &SigningKey| {
        // Valid for long enough that only the keys decide.
        let mut claims = server.claims("alice", &api.base);
        claims["exp"] = json!(chrono::Utc::now().timestamp() + 7 * 24 * 3600);
        key.sign(&claims)
    };
    let (old_token, new_token) = (tokens_at(&old), tokens_at(&new));
    assert_eq!(rpc_status(&api, path, &old_token).await.0, 200);

    // k1 is withdrawn (k2 published): trusted while the cached set is young, not after.
    server.rotate_to(&new);
    clock.advance(Duration::from_secs(110));
    assert_eq!(rpc_status(&api, path, &old_token).await.0, 200);
    clock.advance(Duration::from_secs(11));
    let (status, out) = rpc_status(&api, path, &old_token).await;
    assert_eq!(status, 401, "{out}");
    assert!(out.contains("unknown"), "{out}");
    assert_eq!(rpc_status(&api, path, &new_token).await.0, 200);

    // The authorization server goes down: the aged set is still used within the grace.
    server.set_down(true);
    clock.advance(Duration::from_secs(121));
    assert_eq!(rpc_status(&api, path, &new_token).await.0, 200);
    clock.advance(Duration::from_millis(STALE_GRACE_MS as u64));
    let (status, out) = rpc_status(&api, path, &new_token).await;
    assert_eq!(status, 401, "{out}");
    assert!(out.contains("could not be fetched"), "{out}");

    // Back up, asking for a 1 s age: held to the minimum, so a withdrawal made now is
    // noticed only once that minimum has passed.
    server.set_down(false);
    server.set_cache_control("max-age=1");
    clock.advance(Duration::from_millis(
        sitefile_workspace::auth::REFETCH_INTERVAL_MS as u64 + 1,
    ));
    assert_eq!(rpc_status(&api, path, &new_token).await.0, 200);
    server.rotate_to(&old);
    clock.advance(Duration::from_millis(MIN_MAX_AGE_MS as u64 - 1000));
    assert_eq!(rpc_status(&api, path, &new_token).await.0, 200);
    clock.advance(Duration::from_secs(2));
    assert_eq!(rpc_status(&api, path, &new_token).await.0, 401);
}

/// A server of `issuer`'s tokens that introspects opaque ones as the client `secret`, on
/// `clock`.
async fn start_introspecting(
    backend: Backend,
    issuer: &str,
    secret: &str,
    clock: &ManualClock,
) -> Api {
    let (issuer, secret) = (issuer.to_string(), secret.to_string());
    Api::start_with(backend, |config| {
        config.oauth = Some(OAuthConfig {
            issuer,
            audience: None,
            client: Some(OAuthClient {
                id: CLIENT_ID.into(),
                secret,
            }),
            scopes: vec!["mcp".into()],
        });
        config.clock = clock.clock();
    })
    .await
}

/// RFC 7662: with client credentials, a token that is not a JWT is checked by the
/// authorization server's introspection endpoint (discovered from its metadata), under the
/// same rules as a JWT (active, issuer, audience bound to the resource, expiry, subject a
/// member); answers are kept for 30 s; API keys are never sent there; JWTs are still
/// checked locally.
async fn oauth_opaque_tokens_are_introspected(backend: Backend) {
    use sitefile_workspace::auth::INTROSPECTION_CACHE_MS;
    let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
    let key = SigningKey::new("k1");
    let server = AuthServer::start(&key).await;
    let api = start_introspecting(backend, &server.issuer, CLIENT_SECRET, &clock).await;
    api.new_org_as("beta", "alice").await;
    let path = "/api/beta/mcp/self";
    let answer = |sub: &str, aud: &str| {
        let mut claims = server.claims(sub, aud);
        claims["active"] = json!(true);
        claims
    };
    let past_cache = Duration::from_millis(INTROSPECTION_CACHE_MS as u64 + 1000);

    // An active token for this service, then for this very resource: the owner's rights.
    server.set_opaque("opaque-alice", answer("alice", &api.base));
    server.set_opaque(
        "opaque-here",
        answer("alice", &format!("{}{path}", api.base)),
    );
    for token in ["opaque-alice", "opaque-here"] {
        let (status, out) = rpc_status(&api, path, token).await;
        assert_eq!(status, 200, "{token}: {out}");
    }
    let (status, out) = api
        .tool_in("beta", "opaque-alice", "COLLECTION_THREADS_LIST", json!({}))
        .await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        server.introspected(),
        ["opaque-alice", "opaque-here"],
        "answers are kept"
    );

    // Revoked at the authorization server: honoured once the kept answer has aged out.
    server.set_opaque("opaque-alice", json!({ "active": false }));
    assert_eq!(rpc_status(&api, path, "opaque-alice").await.0, 200);
    clock.advance(past_cache);
    let challenge = refusal(&api, path, "opaque-alice").await;
    assert!(challenge.contains("not active"), "{challenge}");
    assert_eq!(server.introspected().len(), 3);

    // Refused as a JWT would be: 401 invalid_token with the reason, the token not echoed.
    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = answer("alice", &api.base);
        change(&mut claims);
        claims
    };
    let cases = [
        ("opaque-unknown", None, "not active"),
        (
            "opaque-nobody",
            Some(answer("nobody", &api.base)),
            "not a member",
        ),
        (
            "opaque-elsewhere",
            Some(answer("alice", "https://elsewhere.example")),
            "aud",
        ),
        (
            "opaque-expired",
            Some(with(&|c| {
                c["exp"] = json!(chrono::Utc::now().timestamp() - 120)
            })),
            "expired",
        ),
        (
            "opaque-impostor",
            Some(with(&|c| c["iss"] = json!("https://impostor.example"))),
            "issuer",
        ),
        (
            "opaque-no-subject",
            Some(with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            })),
            "required claim",
        ),
    ];
    for (token, introspected, reason) in cases {
        if let Some(introspected) = introspected {
            server.set_opaque(token, introspected);
        }
        assert_invalid_token(&api, path, token, reason).await;
    }

    // API keys, known or not, stay here; JWTs are checked against the keys, not introspected.
    let asked = server.introspected().len();
    assert_eq!(
        rpc_status(&api, "/api/acme/mcp/self", &api.owner).await.0,
        200
    );
    let challenge = refusal(&api, path, "sfk_not-a-key-of-this-service").await;
    assert!(challenge.contains("unknown"), "{challenge}");
    let jwt = key.sign(&server.claims("alice", &api.base));
    assert_eq!(rpc_status(&api, path, &jwt).await.0, 200);
    assert_eq!(
        server.introspected().len(),
        asked,
        "nothing more was introspected"
    );
    assert!(server.introspected().iter().all(|t| !t.starts_with("sfk_")));

    // Credentials the authorization server refuses: the token cannot be checked, so 401.
    let wrong = start_introspecting(backend, &server.issuer, "not the secret", &clock).await;
    wrong.new_org_as("delta", "alice").await;
    server.set_opaque("opaque-alice", answer("alice", &wrong.base));
    let challenge = refusal(&wrong, "/api/delta/mcp/self", "opaque-alice").await;
    assert!(challenge.contains("could not introspect"), "{challenge}");
    assert_eq!(server.refused(), 1);
}
