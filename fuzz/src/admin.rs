//! The `admin` target: an admin request through `Site::admin_head`, then `Site::handle_admin`,
//! then the job the outcome names, finished the way a host finishes it.
//!
//! Input: `METHOD target` (the target split at its first `?` into path and query), header lines,
//! a blank line, the body. Each input runs against three sites: production with reload and
//! purge tokens and in-memory reloads; development (every reload authorized) whose key-value
//! hook fails, so every reload is refused; production without a reload token, purging disabled,
//! speculation rules on and small body limits.
//!
//! Properties: nothing panics; `admin_head` and `handle_admin` agree on passing and on answers
//! from the head; only a reload the core accepted changes the revision; every response header
//! is free of CR, LF and NUL.

use crate::sites::{self, PURGE_TOKEN, RELOAD_TOKEN};
use crate::{Head, check_headers, parse_head, split_head};
use chrono::{DateTime, Utc};
use sitefile_core::admin::{
    AdminHead, AdminOutcome, AdminRequest, AdminResponse, InvokeResult, RenderedSection, Schema,
};
use sitefile_core::value::Value;

/// How a site's reloads are applied.
#[derive(Clone, Copy, PartialEq)]
enum Apply {
    /// No key-value store (`kvWritten: false`).
    InMemory,
    /// The Fast Deploy hook wrote the snapshot (`kvWritten: true`).
    Written,
    /// The Fast Deploy hook failed: every reload is refused.
    HookFails,
}

/// One of the sites an input runs against.
struct Variant {
    name: &'static str,
    setup: String,
    apply: Apply,
}

fn variants() -> [Variant; 3] {
    [
        Variant {
            name: "production",
            setup: format!(
                r#"{{"env": {{"PLATFORM_RELEASE_RELOAD_TOKEN": "{RELOAD_TOKEN}",
                    "PURGE_TOKEN": "{PURGE_TOKEN}", "BUILD_HASH": "b1"}},
                    "options": {{"admin": true}}}}"#
            ),
            apply: Apply::InMemory,
        },
        Variant {
            name: "development, failing hook",
            setup: r#"{"env": {"NODE_ENV": "development", "PURGE_TOKEN": "p-token"},
                "options": {"previewShell": "<html>shell</html>"}}"#
                .to_string(),
            apply: Apply::HookFails,
        },
        Variant {
            name: "no reload token, purging off",
            setup: r#"{"env": {"NODE_ENV": "production"},
                "options": {"purgeTokenEnv": false, "speculationRules": true},
                "admin": {"reloadMaxBytes": 65536, "maxBodyBytes": 4096,
                          "renderShell": {"css": "body{}", "lang": "pt-BR"}}}"#
                .to_string(),
            apply: Apply::Written,
        },
    ]
}

/// The schema `/live/_meta` serves.
const SCHEMA: &str = r#"{"schema": {"definitions": {}, "root": {}}, "manifest": {"blocks": {}}}"#;

/// The time reloads record.
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_767_225_600, 0).expect("a valid instant")
}

/// The admin request an input describes.
pub fn request(data: &[u8]) -> AdminRequest {
    let (lines, body) = split_head(data);
    let Head {
        method,
        target,
        headers,
    } = parse_head(&lines);
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_string(), query.to_string()),
        None => (target, String::new()),
    };
    AdminRequest {
        method,
        path,
        query,
        headers,
        body: body.to_vec(),
    }
}

fn check_response(response: &AdminResponse, what: &str) {
    check_headers(&response.headers, what);
    assert!(
        (100..=599).contains(&response.status),
        "{what}: status {}",
        response.status
    );
}

/// Runs one input against every site; panics when a property does not hold.
pub fn run(data: &[u8]) {
    let request = request(data);
    for variant in variants() {
        run_on(&variant, &request);
    }
}

fn run_on(variant: &Variant, request: &AdminRequest) {
    let site = sites::site(sites::storefront(), &variant.setup);
    site.set_schema(Schema::from_json(SCHEMA.as_bytes()).expect("the schema is valid"));
    let at = |what: &str| format!("{} ({}): {what}", variant.name, request.path);
    let before = site.revision();

    // The head alone, as a host reads it before any body byte.
    let head_only = AdminRequest {
        body: Vec::new(),
        ..request.clone()
    };
    let head = site.admin_head(&head_only);
    let handed = match &head {
        AdminHead::Pass => request.clone(),
        AdminHead::Respond(response) => {
            check_response(response, &at("head response"));
            request.clone()
        }
        AdminHead::WithoutBody => head_only,
        // A host stops reading once it holds more than the limit.
        AdminHead::ReadBody { limit } => AdminRequest {
            body: request.body[..request.body.len().min(limit.saturating_add(1))].to_vec(),
            ..request.clone()
        },
    };
    let outcome = site.handle_admin(&handed, now());
    match (&head, &outcome) {
        (AdminHead::Pass, AdminOutcome::Pass) => {}
        (AdminHead::Pass, _) | (_, AdminOutcome::Pass) => {
            panic!("{}", at("the head and the handler disagree on passing"))
        }
        (AdminHead::Respond(from_head), AdminOutcome::Respond(handled)) => {
            assert_eq!(from_head, handled, "{}", at("the head's answer"));
        }
        (AdminHead::Respond(_), _) => panic!("{}", at("the head answered, the handler did not")),
        _ => {}
    }

    let reloaded = match outcome {
        AdminOutcome::Pass => false,
        AdminOutcome::Respond(response) => {
            check_response(&response, &at("response"));
            false
        }
        AdminOutcome::Reload(job) => {
            let response = match variant.apply {
                Apply::InMemory => job.apply_in_memory(&site),
                Apply::Written => job.apply(&site, &mut |_| Ok(true)),
                Apply::HookFails => job.apply(&site, &mut |_| Err("the store is down".into())),
            };
            check_response(&response, &at("reload response"));
            if variant.apply == Apply::HookFails {
                assert_ne!(response.status, 200, "{}", at("a failing hook refuses"));
            }
            response.status == 200
        }
        AdminOutcome::Purge(job) => {
            for key in job.keys() {
                assert!(!key.is_empty(), "{}", at("an empty purged key"));
            }
            check_response(&job.finish(), &at("purge response"));
            false
        }
        AdminOutcome::Preview(job) => {
            let _ = job.is_page();
            let _ = job.user_agent("Mozilla/5.0 (iPhone) Mobile");
            let rendered = vec![
                RenderedSection {
                    key: job.component.clone(),
                    html: Ok("<p>rendered</p>".into()),
                },
                RenderedSection {
                    key: "site/sections/Broken.tsx".into(),
                    html: Err("boom <b>".into()),
                },
            ];
            check_response(&job.clone().finish(Ok(rendered)), &at("preview"));
            check_response(&job.clone().finish(Err("down".into())), &at("preview"));
            check_response(&job.unavailable("no renderer"), &at("preview"));
            false
        }
        AdminOutcome::Invoke(job) => {
            let results = job
                .calls
                .iter()
                .enumerate()
                .map(|(i, call)| match i % 3 {
                    0 => InvokeResult::Value(call.props.clone()),
                    1 => InvokeResult::Unknown,
                    _ => InvokeResult::Failed {
                        message: format!("failed {}", call.key),
                        stack: Some("at x".into()),
                    },
                })
                .collect();
            let written = vec![
                ("Set-Cookie".to_string(), "a=1; Path=/".to_string()),
                ("Vary".to_string(), "Cookie".to_string()),
                ("Access-Control-Allow-Origin".to_string(), "*".to_string()),
                ("X-Loader".to_string(), "yes".to_string()),
            ];
            check_response(&job.finish(results, written), &at("invoke response"));
            false
        }
    };

    let after = site.revision();
    if !reloaded {
        assert_eq!(
            before,
            after,
            "{}",
            at("the revision changed without a reload")
        );
        return;
    }
    // An accepted reload: the content read back is the new revision's.
    let read = AdminRequest::new("GET", "/.sitefile");
    match site.handle_admin(&read, now()) {
        AdminOutcome::Respond(response) => {
            check_response(&response, &at("content after reload"));
            assert_eq!(
                response.header("etag"),
                Some(format!("\"{after}\"").as_str()),
                "{}",
                at("the content's ETag is the revision")
            );
            Value::from_slice(&response.body).expect("the content served is JSON");
        }
        other => panic!("{}: {other:?}", at("GET /.sitefile")),
    }
}
