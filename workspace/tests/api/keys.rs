//! API keys: creation, scopes, minting limits, listing, revocation, expiry, org binding.

use std::time::Duration;

use serde_json::json;
use sitefile_workspace::clock::{ManualClock, now_ms};

use crate::both_backends;
use crate::common::{Api, Backend, post_over_limit};

both_backends!(
    keys_scopes_and_minting,
    keys_revoke_expire_and_cross_org,
    tools_endpoint_errors,
    a_minted_key_never_outlives_its_minter
);

async fn a_minted_key_never_outlives_its_minter(backend: Backend) {
    let clock = ManualClock::new(now_ms());
    let api = Api::start_with(backend, |c| c.clock = clock.clock()).await;
    let permissions = json!({ "self": ["API_KEY_CREATE", "COLLECTION_THREADS_LIST"] });
    let minter = api
        .ok(
            &api.owner,
            "API_KEY_CREATE",
            json!({ "name": "minter", "expiresIn": 60, "permissions": permissions }),
        )
        .await;
    let minter_key = minter["key"].as_str().unwrap().to_string();
    for asked in [json!(null), json!(3600)] {
        let mut input = json!({ "name": "minted", "permissions": permissions });
        if !asked.is_null() {
            input["expiresIn"] = asked.clone();
        }
        let minted = api.ok(&minter_key, "API_KEY_CREATE", input).await;
        assert_eq!(
            minted["expiresAt"], minter["expiresAt"],
            "asked {asked}: the minted key expires with its minter"
        );
    }
    let shorter = api
        .ok(
            &minter_key,
            "API_KEY_CREATE",
            json!({ "name": "short", "expiresIn": 10, "permissions": permissions }),
        )
        .await;
    assert_ne!(
        shorter["expiresAt"], minter["expiresAt"],
        "a shorter expiry is kept"
    );
    let minted = api
        .ok(
            &minter_key,
            "API_KEY_CREATE",
            json!({ "name": "late", "permissions": permissions }),
        )
        .await;
    let minted_key = minted["key"].as_str().unwrap().to_string();
    clock.advance(Duration::from_secs(60));
    for key in [&minter_key, &minted_key] {
        assert_eq!(
            api.tool(key, "COLLECTION_THREADS_LIST", json!({})).await.0,
            401
        );
    }
}

async fn keys_scopes_and_minting(backend: Backend) {
    let api = Api::start(backend).await;
    let out = api
        .ok(
            &api.owner,
            "API_KEY_CREATE",
            json!({ "name": "bot", "expiresIn": 3600,
            "permissions": { "self": ["COLLECTION_THREADS_LIST", "API_KEY_CREATE"] } }),
        )
        .await;
    let key = out["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("sfk_"));
    assert!(out["expiresAt"].is_string() && out["createdAt"].is_string() && out["id"].is_string());

    // Scopes are enforced for every key, including keys created by the owner.
    let (status, _) = api.tool(&key, "COLLECTION_THREADS_LIST", json!({})).await;
    assert_eq!(status, 200);
    let (status, body) = api
        .tool(&key, "COLLECTION_CONNECTIONS_LIST", json!({}))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("COLLECTION_CONNECTIONS_LIST")
    );

    // A key can mint a narrower key but never a wider one.
    let (status, _) = api
        .tool(
            &key,
            "API_KEY_CREATE",
            json!({ "name": "n", "permissions": { "self": ["COLLECTION_THREADS_LIST"] } }),
        )
        .await;
    assert_eq!(status, 200);
    for wider in [
        json!({ "self": ["*"] }),
        json!({ "self": ["COLLECTION_CONNECTIONS_LIST"] }),
        json!({ "*": ["*"] }),
    ] {
        let (status, _) = api
            .tool(
                &key,
                "API_KEY_CREATE",
                json!({ "name": "w", "permissions": wider }),
            )
            .await;
        assert_eq!(status, 403, "minting {wider}");
    }

    // expiresIn must be a number of seconds.
    for bad in [json!("3600"), json!(-5), json!(0), json!(1.5)] {
        let (status, _) = api
            .tool(
                &api.owner,
                "API_KEY_CREATE",
                json!({ "name": "x", "expiresIn": bad }),
            )
            .await;
        assert_eq!(status, 400, "expiresIn {bad}");
    }
    let (status, _) = api
        .tool(&api.owner, "API_KEY_CREATE", json!({ "permissions": {} }))
        .await;
    assert_eq!(status, 400, "name is required");

    // Listing never shows values or hashes.
    let list = api.ok(&api.owner, "API_KEY_LIST", json!({})).await;
    let text = list.to_string();
    assert!(list["items"].as_array().unwrap().len() >= 3);
    assert!(!text.contains(&key) && !text.contains("key_hash") && !text.contains("\"key\""));
}

async fn keys_revoke_expire_and_cross_org(backend: Backend) {
    let clock = ManualClock::new(now_ms());
    let api = Api::start_with(backend, |c| c.clock = clock.clock()).await;
    let (id, key) = api
        .key(json!({ "self": ["COLLECTION_THREADS_LIST"] }))
        .await;
    assert_eq!(
        api.tool(&key, "COLLECTION_THREADS_LIST", json!({})).await.0,
        200
    );
    let out = api
        .ok(&api.owner, "API_KEY_DELETE", json!({ "keyId": id }))
        .await;
    assert_eq!(out, json!({ "success": true, "keyId": id }));
    assert_eq!(
        api.tool(&key, "COLLECTION_THREADS_LIST", json!({})).await.0,
        401,
        "revoked at once"
    );
    assert_eq!(
        api.tool(&api.owner, "API_KEY_DELETE", json!({ "keyId": id }))
            .await
            .0,
        404
    );

    let out = api
        .ok(
            &api.owner,
            "API_KEY_CREATE",
            json!({ "name": "short", "expiresIn": 1,
            "permissions": { "self": ["COLLECTION_THREADS_LIST"] } }),
        )
        .await;
    let short = out["key"].as_str().unwrap().to_string();
    assert_eq!(
        api.tool(&short, "COLLECTION_THREADS_LIST", json!({}))
            .await
            .0,
        200
    );
    clock.advance(Duration::from_millis(999));
    assert_eq!(
        api.tool(&short, "COLLECTION_THREADS_LIST", json!({}))
            .await
            .0,
        200,
        "not yet expired"
    );
    clock.advance(Duration::from_millis(1));
    assert_eq!(
        api.tool(&short, "COLLECTION_THREADS_LIST", json!({}))
            .await
            .0,
        401,
        "expired"
    );

    // A key is bound to its organization: another org (existing or not) answers 403 alike.
    let other = api.new_org("globex").await;
    let (status, a) = api
        .tool_in("globex", &api.owner, "COLLECTION_THREADS_LIST", json!({}))
        .await;
    let (status2, b) = api
        .tool_in(
            "no-such-org",
            &api.owner,
            "COLLECTION_THREADS_LIST",
            json!({}),
        )
        .await;
    assert_eq!((status, status2), (403, 403));
    assert_eq!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .replace("globex", "X"),
        b["error"]["message"]
            .as_str()
            .unwrap()
            .replace("no-such-org", "X")
    );
    assert_eq!(
        api.tool_in("globex", &other, "COLLECTION_THREADS_LIST", json!({}))
            .await
            .0,
        200
    );
    // Keys of one org cannot delete keys of another.
    let (status, _) = api
        .tool_in(
            "globex",
            &other,
            "API_KEY_DELETE",
            json!({ "keyId": out["id"] }),
        )
        .await;
    assert_eq!(status, 404);
}

async fn tools_endpoint_errors(backend: Backend) {
    let api = Api::start(backend).await;
    let url = |tool: &str| format!("{}/api/acme/tools/{tool}", api.base);
    let r = api
        .client
        .post(url("COLLECTION_THREADS_LIST"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(
        r.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let r = api
        .client
        .post(url("COLLECTION_THREADS_LIST"))
        .bearer_auth("sfk_nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(api.tool(&api.owner, "NO_SUCH_TOOL", json!({})).await.0, 404);
    let r = api
        .client
        .post(url("COLLECTION_THREADS_GET"))
        .bearer_auth(&api.owner)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let deep = "[".repeat(200) + &"]".repeat(200);
    let r = api
        .client
        .post(url("COLLECTION_THREADS_GET"))
        .bearer_auth(&api.owner)
        .body(deep)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "absurd nesting");
    let path = "/api/acme/tools/COLLECTION_THREADS_GET";
    let (status, _, _) = post_over_limit(&api, path, false).await;
    assert_eq!(status, 413, "body size bounded");
    assert_eq!(
        api.tool(&api.owner, "COLLECTION_THREADS_GET", json!({}))
            .await
            .0,
        400
    );
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_THREADS_GET",
            json!({ "id": "missing" })
        )
        .await
        .0,
        404
    );
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_THREADS_LIST",
            json!({ "limit": 5000 })
        )
        .await
        .0,
        400
    );
    assert_eq!(
        api.tool(
            &api.owner,
            "COLLECTION_THREADS_LIST",
            json!({ "limit": "10" })
        )
        .await
        .0,
        400
    );
}
