//! The admin protocol through the public API: configuration, schema ETags, reload sequences
//! and the host-facing jobs. The status rows live in `tests/conformance/admin/*.json`.

mod admin_site;

use chrono::{DateTime, Utc};
use serde_json::json;
use sitefile_core::admin::{
    AdminConfig, AdminErrorCode, AdminHead, AdminOutcome, AdminRequest, AdminResponse,
    AdminSettings, DEFAULT_MAX_BODY_BYTES, DEFAULT_RELOAD_MAX_BYTES, InvokeResult, PurgeToken,
    Schema, SchemaError, handle,
};
use sitefile_core::config::PlatformConfig;
use sitefile_core::edge::WorkerOptions;
use sitefile_core::resolve::ResolveConfig;
use sitefile_core::value::Value;
use sitefile_core::{Device, Site};
use std::collections::HashMap;
use std::sync::Arc;

fn now() -> DateTime<Utc> {
    "2026-11-22T10:00:00Z".parse().unwrap()
}

fn respond(site: &Site, outcome: AdminOutcome) -> AdminResponse {
    match outcome {
        AdminOutcome::Respond(r) => r,
        AdminOutcome::Reload(job) => job.apply_in_memory(site),
        other => panic!("expected a response, got {other:?}"),
    }
}

fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A site with default settings, no environment and cache keys without a deploy version
/// (readable expected keys); the tests pass their own admin configuration to `handle`.
fn plain_site(blocks: &serde_json::Value) -> Site {
    let unversioned = WorkerOptions {
        cache_version_env: None,
        ..WorkerOptions::default()
    };
    admin_site::site(
        blocks,
        ResolveConfig::by_convention(),
        unversioned,
        HashMap::new(),
        Default::default(),
    )
}

fn config_for(pairs: &[(&str, &str)], options: &WorkerOptions) -> AdminConfig {
    let env = vars(pairs);
    AdminConfig::new(&PlatformConfig::from_env(&env).unwrap(), options, &env)
}

#[test]
fn config_comes_from_the_environment_and_options() {
    let defaults = WorkerOptions::default();
    let c = config_for(
        &[
            ("NODE_ENV", "development"),
            ("PLATFORM_RELEASE_RELOAD_TOKEN", "r"),
            ("PURGE_TOKEN", "p"),
        ],
        &defaults,
    );
    assert!(c.development);
    assert_eq!(c.reload_token.as_ref().map(|s| s.expose()), Some("r"));
    assert!(matches!(&c.purge_token, PurgeToken::Token(t) if t.expose() == "p"));
    let debug = format!("{c:?}");
    assert!(
        !debug.contains("\"r\"") && !debug.contains("\"p\""),
        "{debug}"
    );

    let c = config_for(&[("PURGE_TOKEN", "")], &defaults);
    assert!(!c.development);
    assert_eq!(c.purge_token, PurgeToken::Unset);
    let off = WorkerOptions {
        purge_token_env: None,
        ..WorkerOptions::default()
    };
    assert_eq!(
        config_for(&[("PURGE_TOKEN", "p")], &off).purge_token,
        PurgeToken::Disabled
    );
    assert_eq!(c.reload_max_bytes, DEFAULT_RELOAD_MAX_BYTES);
    assert_eq!(c.max_body_bytes, DEFAULT_MAX_BODY_BYTES);
}

#[test]
fn schema_etag_is_a_hash_of_the_document() {
    let a =
        Schema::from_json(br#"{"schema":{"x":1,"y":[1]},"manifest":{"blocks":{"sections":{}}}}"#)
            .unwrap();
    let b = Schema::from_json(
        b"{ \"manifest\": {\"blocks\": {}}, \"schema\": {\"y\": [1], \"x\": 1}, \"etag\": \"old\" }",
    )
    .unwrap();
    let c = Schema::from_json(br#"{"schema":{"x":2},"manifest":{}}"#).unwrap();
    assert_eq!(
        a.etag(),
        b.etag(),
        "key order, whitespace and a stale etag do not count"
    );
    assert_ne!(a.etag(), c.etag());
    assert!(a.etag().starts_with("\"meta-") && a.etag().ends_with('"'));
    let body: serde_json::Value = serde_json::from_slice(b.body()).unwrap();
    assert_eq!(body["etag"], json!(b.etag()));
    assert_eq!(body["manifest"]["blocks"]["sections"], json!({}));
    for bad in [
        &b"[]"[..],
        br#"{"schema":{}}"#,
        br#"{"manifest":{}}"#,
        br#"{"schema":{},"manifest":{"blocks":[]}}"#,
    ] {
        assert!(matches!(Schema::from_json(bad), Err(SchemaError::Shape(_))));
    }
    assert!(matches!(Schema::from_json(b"{"), Err(SchemaError::Json(_))));
}

#[test]
fn a_reload_changes_the_etag_and_a_refused_one_changes_nothing() {
    let site = plain_site(&json!({"a": {"x": 1}}));
    let config = config_for(
        &[("PLATFORM_RELEASE_RELOAD_TOKEN", "t")],
        &WorkerOptions::default(),
    );
    let get = |tag: &str| {
        respond(
            &site,
            handle(
                &site,
                &config,
                &AdminRequest::new("GET", "/.sitefile").with_header("If-None-Match", tag),
                now(),
            ),
        )
    };
    let first = get("").header("ETag").unwrap().to_string();
    assert_eq!(get(&first).status, 304);

    let before = site.snapshot();
    let bad = AdminRequest::new("POST", "/.sitefile")
        .with_header("Authorization", "t")
        .with_body(&b"{\"blocks\": [1"[..]);
    let refused = respond(&site, handle(&site, &config, &bad, now()));
    assert_eq!(refused.status, 400);
    assert!(
        Arc::ptr_eq(&before, &site.snapshot()),
        "the old snapshot keeps serving"
    );

    let good = bad.clone().with_body(&b"{\"blocks\": {\"b\": {}}}"[..]);
    let AdminOutcome::Reload(job) = handle(&site, &config, &good, now()) else {
        panic!("reload refused");
    };
    // The Fast Deploy hook sees the new snapshot before it serves.
    let mut written = None;
    let answered = job.apply(&site, &mut |snapshot| {
        assert!(site.snapshot().block("b").is_none(), "not serving yet");
        written = Some(snapshot.revision().to_string());
        Ok(true)
    });
    let answered: serde_json::Value = serde_json::from_slice(&answered.body).unwrap();
    assert_eq!(answered["newBlockCount"], json!(2));
    assert_eq!(answered["kvWritten"], json!(true));
    assert_eq!(answered["revision"], json!(site.snapshot().revision()));
    assert_eq!(written.as_deref(), Some(site.snapshot().revision()));
    let second = get(&first);
    assert_eq!(second.status, 200);
    assert_eq!(
        second.header("ETag").unwrap(),
        format!("\"{}\"", site.snapshot().revision())
    );
    assert_eq!(get(second.header("ETag").unwrap()).status, 304);
}

#[test]
fn previews_follow_the_device_hint() {
    let site = plain_site(&json!({}));
    let request = |hint: &str| {
        AdminRequest::new("GET", "/live/previews/site/sections/Hero.tsx")
            .with_query(&format!("deviceHint={hint}"))
    };
    let job = |hint: &str| match handle(&site, &AdminConfig::default(), &request(hint), now()) {
        AdminOutcome::Preview(job) => job,
        other => panic!("{other:?}"),
    };
    let desktop_ua = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)";
    let phone_ua = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) Mobile";
    assert_eq!(
        Device::from_user_agent(&job("mobile").user_agent(desktop_ua)),
        Device::Mobile
    );
    assert_eq!(
        job("mobile").user_agent(phone_ua),
        phone_ua,
        "already mobile: kept"
    );
    assert_eq!(
        Device::from_user_agent(&job("TABLET").user_agent(phone_ua)),
        Device::Tablet
    );
    assert_eq!(
        Device::from_user_agent(&job("desktop").user_agent(phone_ua)),
        Device::Desktop
    );
    assert_eq!(job("watch").device_hint, None);
    assert_eq!(job("watch").user_agent(phone_ua), phone_ua);
    assert!(!job("mobile").is_page());
}

#[test]
fn invoke_calls_without_a_result_fail_and_errors_share_one_shape() {
    let site = plain_site(&json!({}));
    let batch = AdminRequest::new("POST", "/platform/invoke").with_body(&br#"{"a":{},"b":{}}"#[..]);
    let AdminOutcome::Invoke(job) = handle(&site, &AdminConfig::default(), &batch, now()) else {
        panic!("not an invoke");
    };
    let response = job.finish(vec![InvokeResult::Value(Value::from(1i64))], Vec::new());
    let body: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(body["a"], json!(1));
    assert_eq!(body["b"]["error"]["code"], json!("INVOKE_FAILED"));
    assert_eq!(AdminErrorCode::InvokeFailed.status(), 500);
    assert_eq!(
        serde_json::to_value(AdminErrorCode::SchemaNotInitialized).unwrap(),
        json!("SCHEMA_NOT_INITIALIZED")
    );
}

#[test]
fn purge_hands_the_keys_to_delete_and_forgets_them() {
    let site = plain_site(&json!({}));
    admin_site::cache_edge(&site, "https://shop.example/p?x=1");
    admin_site::cache_edge(&site, "https://shop.example/q");
    let config = config_for(&[("PURGE_TOKEN", "k")], &WorkerOptions::default());
    let request = AdminRequest::new("POST", "/_cache/purge")
        .with_header("Authorization", "Bearer k")
        .with_body(&br#"{"paths":["/p","/p"]}"#[..]);
    let AdminOutcome::Purge(job) = handle(&site, &config, &request, now()) else {
        panic!("not a purge");
    };
    assert_eq!(job.keys(), ["https://shop.example/p?x=1#device=desktop"]);
    assert_eq!(job.finish().status, 200);
    assert_eq!(site.purge_index().len(), 1);
}

#[test]
fn reload_and_purge_loaders_clear_the_loader_cache_but_not_the_schema_etag() {
    let site = plain_site(&json!({}));
    admin_site::set_schema(&site, &json!({"schema": {}, "manifest": {}}));
    let config = config_for(
        &[("NODE_ENV", "development"), ("PURGE_TOKEN", "k")],
        &WorkerOptions::default(),
    );
    let meta = || {
        respond(
            &site,
            handle(
                &site,
                &config,
                &AdminRequest::new("GET", "/live/_meta"),
                now(),
            ),
        )
    };
    let etag = meta().header("ETag").unwrap().to_string();
    admin_site::cache_loader(&site, "site/loaders/a.ts");
    let reload = AdminRequest::new("POST", "/.sitefile").with_body(&b"{\"a\":{}}"[..]);
    assert_eq!(
        respond(&site, handle(&site, &config, &reload, now())).status,
        200
    );
    assert_eq!(site.runtime().loader_cache().stats().entries, 0);
    assert_eq!(
        meta().header("ETag").unwrap(),
        etag,
        "same schema, same ETag"
    );

    admin_site::cache_loader(&site, "site/loaders/a.ts");
    let purge =
        AdminRequest::new("POST", "/_cache/purge-loaders").with_header("Authorization", "Bearer k");
    assert_eq!(
        respond(&site, handle(&site, &config, &purge, now())).status,
        200
    );
    assert_eq!(site.runtime().loader_cache().stats().entries, 0);
}

/// The answer the head check gave, or a panic.
fn answered(head: AdminHead) -> AdminResponse {
    match head {
        AdminHead::Respond(response) => response,
        other => panic!("expected an answer from the head, got {other:?}"),
    }
}

#[test]
fn the_head_decides_tokens_methods_and_declared_lengths_before_any_body_byte() {
    let settings = AdminSettings {
        reload_max_bytes: 100,
        max_body_bytes: 10,
        ..AdminSettings::default()
    };
    let env = vars(&[
        ("PLATFORM_RELEASE_RELOAD_TOKEN", "s3cret"),
        ("PURGE_TOKEN", "p"),
    ]);
    let site = admin_site::site(
        &json!({}),
        ResolveConfig::by_convention(),
        WorkerOptions::default(),
        env,
        settings,
    );
    let post = |path: &str| AdminRequest::new("POST", path);
    let huge = |r: AdminRequest| r.with_header("Content-Length", "68719476736");

    // No token and a huge declared body: 401 from the head (the token is checked first).
    let refused = answered(site.admin_head(&huge(post("/.sitefile"))));
    assert_eq!(refused.status, 401);
    let body: serde_json::Value = serde_json::from_slice(&refused.body).unwrap();
    assert_eq!(body["error"]["code"], "UNAUTHORIZED", "{body}");
    assert_eq!(refused.header("Access-Control-Allow-Origin"), Some("*"));
    // The purge routes say which scheme they take.
    let purge = answered(site.admin_head(&huge(post("/_cache/purge"))));
    assert_eq!(purge.status, 401);
    assert_eq!(purge.header("WWW-Authenticate"), Some("Bearer"));

    // Authorized, declared over the route's limit: 413 before the body.
    let reload = || post("/.sitefile").with_header("Authorization", "s3cret");
    let too_large = answered(site.admin_head(&reload().with_header("Content-Length", "101")));
    assert_eq!(too_large.status, 413);
    let body: serde_json::Value = serde_json::from_slice(&too_large.body).unwrap();
    assert_eq!(body["error"]["code"], "BODY_TOO_LARGE", "{body}");
    let invoke = || post("/platform/invoke/site/loaders/x.ts");
    assert_eq!(
        answered(site.admin_head(&invoke().with_header("content-length", "11"))).status,
        413
    );

    // Within the limit, or no declared length (a chunked body): read up to the route's limit.
    assert_eq!(
        site.admin_head(&reload().with_header("Content-Length", "100")),
        AdminHead::ReadBody { limit: 100 }
    );
    assert_eq!(
        site.admin_head(&reload()),
        AdminHead::ReadBody { limit: 100 }
    );
    assert_eq!(
        site.admin_head(&invoke()),
        AdminHead::ReadBody { limit: 10 }
    );
    assert_eq!(
        site.admin_head(&post("/live/previews/site/sections/Hero.tsx")),
        AdminHead::ReadBody { limit: 10 }
    );
    // Routes that read no body: not even a large declared one is refused, none is read.
    for request in [
        huge(AdminRequest::new("GET", "/.sitefile")),
        huge(AdminRequest::new(
            "GET",
            "/live/previews/site/sections/Hero.tsx",
        )),
        huge(post("/_cache/purge-loaders").with_header("Authorization", "Bearer p")),
    ] {
        assert_eq!(
            site.admin_head(&request),
            AdminHead::WithoutBody,
            "{request:?}"
        );
    }
    // Preflights, wrong methods and other paths, as the full handler answers them.
    assert_eq!(
        answered(site.admin_head(&huge(AdminRequest::new("OPTIONS", "/.sitefile")))).status,
        204
    );
    let put = answered(site.admin_head(&huge(AdminRequest::new("PUT", "/.sitefile"))));
    assert_eq!(
        (put.status, put.header("Allow")),
        (405, Some("GET, POST, OPTIONS"))
    );
    assert_eq!(site.admin_head(&post("/")), AdminHead::Pass);
    // The worker entry without its `admin` option answers only the purge routes.
    assert_eq!(site.edge_admin_head(&reload()), AdminHead::Pass);
    assert_eq!(
        answered(site.edge_admin_head(&post("/_cache/purge"))).status,
        401
    );

    // The full handler applies the same check: a declared length over the limit is 413 even
    // with the body in hand, and a wrong token is 401 whatever the body.
    let lying = reload()
        .with_header("Content-Length", "101")
        .with_body(r#"{"blocks":{}}"#);
    assert_eq!(respond(&site, site.handle_admin(&lying, now())).status, 413);
    let wrong = huge(post("/.sitefile").with_header("Authorization", "nope"));
    assert_eq!(respond(&site, site.handle_admin(&wrong, now())).status, 401);
}
