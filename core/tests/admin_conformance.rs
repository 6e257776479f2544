//! Runs the shared admin protocol cases (`tests/conformance/admin/*.json` at the repository
//! root) through `Site::handle_admin`. The C and Node bindings run the same files; the format
//! is described in `tests/conformance/admin/README.md`.

// The harness reads the case files; the core under test does no I/O.
#![allow(clippy::disallowed_methods)]

mod admin_site;

use serde_json::{Value as Json, json};
use sitefile_core::Site;
use sitefile_core::admin::{
    AdminOutcome, AdminRequest, AdminResponse, AdminSettings, AdminSite, InvokeResult,
    RenderedSection,
};
use sitefile_core::edge::WorkerOptions;
use sitefile_core::value::Value;
use std::collections::HashMap;
use std::path::Path;

/// Replaces `{revision}` and `{schemaEtag}` in a string.
fn substitute(s: &str, site: &Site) -> String {
    let etag = site
        .schema()
        .map(|s| s.etag().to_string())
        .unwrap_or_default();
    s.replace("{revision}", site.snapshot().revision())
        .replace("{schemaEtag}", &etag)
}

fn pairs(headers: &Json) -> Vec<(String, String)> {
    match headers {
        Json::Array(list) => list
            .iter()
            .map(|p| {
                (
                    p[0].as_str().unwrap_or_default().to_string(),
                    p[1].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect(),
        Json::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        _ => Vec::new(),
    }
}

fn body_bytes(body: &Json) -> Vec<u8> {
    match body {
        Json::Null => Vec::new(),
        Json::String(s) => s.as_bytes().to_vec(),
        other => other.to_string().into_bytes(),
    }
}

fn site_for(case: &Json) -> Site {
    let env: HashMap<String, String> =
        serde_json::from_value(case["env"].clone()).unwrap_or_default();
    let options = match case.get("options") {
        Some(o) => WorkerOptions::from_json(o).expect("case options"),
        None => WorkerOptions::default(),
    };
    let limits = &case["limits"];
    let defaults = AdminSettings::default();
    let limit = |name: &str, default: usize| {
        limits[name]
            .as_u64()
            .map_or(default, |n| usize::try_from(n).expect("a limit fits"))
    };
    let settings = AdminSettings {
        reload_max_bytes: limit("reloadMaxBytes", defaults.reload_max_bytes),
        max_body_bytes: limit("maxBodyBytes", defaults.max_body_bytes),
        ..defaults
    };
    let site = admin_site::site(&case["blocks"], options, env, settings);
    if let Some(doc) = case.get("schema") {
        admin_site::set_schema(&site, doc);
    }
    for loader in case["loaderCache"].as_array().into_iter().flatten() {
        admin_site::cache_loader(&site, loader.as_str().expect("loader keys are strings"));
    }
    for url in case["edgeCache"].as_array().into_iter().flatten() {
        admin_site::cache_edge(&site, url.as_str().expect("edge cache entries are URLs"));
    }
    site
}

fn request_for(case: &Json, site: &Site) -> AdminRequest {
    let r = &case["request"];
    AdminRequest {
        method: r["method"].as_str().unwrap_or("GET").to_string(),
        path: r["path"].as_str().unwrap_or("/").to_string(),
        query: r["query"].as_str().unwrap_or_default().to_string(),
        headers: pairs(&r["headers"])
            .into_iter()
            .map(|(n, v)| (n, substitute(&v, site)))
            .collect(),
        body: body_bytes(&r["body"]),
    }
}

fn invoke_results(host: &Json) -> Vec<InvokeResult> {
    host["invoke"]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            if r.get("unknown").is_some() {
                InvokeResult::Unknown
            } else if let Some(message) = r.get("error") {
                InvokeResult::Failed {
                    message: message.as_str().unwrap_or_default().to_string(),
                    stack: r["stack"].as_str().map(str::to_string),
                }
            } else {
                InvokeResult::Value(Value::from(r["value"].clone()))
            }
        })
        .collect()
}

fn rendered(host: &Json) -> Result<Vec<RenderedSection>, String> {
    let render = &host["render"];
    if let Some(message) = render["error"].as_str() {
        return Err(message.to_string());
    }
    Ok(render["sections"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| RenderedSection {
            key: s["key"].as_str().unwrap_or_default().to_string(),
            html: match s["error"].as_str() {
                Some(e) => Err(e.to_string()),
                None => Ok(s["html"].as_str().unwrap_or_default().to_string()),
            },
        })
        .collect())
}

/// Runs one case: the outcome's name, the job (if any) as JSON, and the final response.
fn run(case: &Json, site: &Site) -> (String, Json, Option<AdminResponse>) {
    let now = case["now"]
        .as_str()
        .unwrap_or("2026-01-01T00:00:00Z")
        .parse()
        .expect("case now is RFC 3339");
    let host = &case["host"];
    match site.handle_admin(&request_for(case, site), now) {
        AdminOutcome::Pass => ("pass".into(), Json::Null, None),
        AdminOutcome::Respond(r) => ("respond".into(), Json::Null, Some(r)),
        AdminOutcome::Reload(job) => {
            // The Fast Deploy hook: it fails with `kvError`, else answers `kvWritten`.
            let kv = host["kvWritten"].as_bool().unwrap_or(false);
            let failure = host["kvError"].as_str();
            let response = job.apply(site, &mut |_| match failure {
                Some(message) => Err(message.to_string()),
                None => Ok(kv),
            });
            ("reload".into(), Json::Null, Some(response))
        }
        AdminOutcome::Purge(job) => {
            let json = json!({ "keys": job.keys() });
            ("purge".into(), json, Some(job.finish()))
        }
        AdminOutcome::Preview(job) => {
            let json = serde_json::to_value(&job).expect("jobs serialize");
            ("preview".into(), json, Some(job.finish(rendered(host))))
        }
        AdminOutcome::Invoke(job) => {
            let json = serde_json::to_value(&job).expect("jobs serialize");
            let headers = pairs(&host["invoke"]["headers"]);
            let response = job.finish(invoke_results(host), headers);
            ("invoke".into(), json, Some(response))
        }
    }
}

/// Whether `actual` holds `expected`: objects compare only the keys present in `expected`,
/// arrays element by element with equal lengths, strings after substitution.
fn holds(expected: &Json, actual: &Json, site: &Site) -> bool {
    match (expected, actual) {
        (Json::Object(e), Json::Object(a)) => e.iter().all(|(k, v)| {
            a.get(k).is_some_and(|got| holds(v, got, site)) || (v.is_null() && !a.contains_key(k))
        }),
        (Json::Array(e), Json::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| holds(e, a, site))
        }
        (Json::String(e), Json::String(a)) => substitute(e, site) == *a,
        _ => expected == actual,
    }
}

/// The keys a case's `expect` may hold (the README's table).
const EXPECT_KEYS: &[&str] = &[
    "outcome",
    "job",
    "status",
    "headers",
    "body",
    "content",
    "loaderCacheEntries",
    "edgeCacheEntries",
];

fn check(
    case: &Json,
    site: &Site,
    before: &str,
    outcome: &str,
    job: &Json,
    response: Option<&AdminResponse>,
) -> Vec<String> {
    let expect = &case["expect"];
    let mut failures = Vec::new();
    // A misspelled key would make a case that cannot fail.
    for key in expect.as_object().into_iter().flatten().map(|(k, _)| k) {
        if !EXPECT_KEYS.contains(&key.as_str()) {
            failures.push(format!("unknown expect key {key:?}"));
        }
    }
    let mut fail = |what: &str, want: &Json, got: &Json| {
        failures.push(format!("{what}:\n    expected {want}\n    actual   {got}"));
    };
    if let Some(want) = expect.get("outcome")
        && want != outcome
    {
        fail("outcome", want, &json!(outcome));
    }
    if let Some(want) = expect.get("job")
        && !holds(want, job, site)
    {
        fail("job", want, job);
    }
    let status = response.map_or(Json::Null, |r| json!(r.status));
    if let Some(want) = expect.get("status")
        && *want != status
    {
        fail("status", want, &status);
    }
    for (name, want) in expect["headers"].as_object().into_iter().flatten() {
        let values: Vec<&str> = response
            .into_iter()
            .flat_map(|r| r.headers.iter())
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        let got = match (want, values.as_slice()) {
            (Json::Array(_), _) => json!(values),
            (_, []) => Json::Null,
            (_, [one]) => json!(one),
            _ => json!(values),
        };
        if !holds(want, &got, site) {
            fail(&format!("header {name}"), want, &got);
        }
    }
    if let Some(want) = expect.get("body") {
        let text = response.map(AdminResponse::body_text).unwrap_or_default();
        let ok = match want {
            Json::String(s) => substitute(s, site) == text,
            _ => serde_json::from_str::<Json>(&text).is_ok_and(|got| holds(want, &got, site)),
        };
        if !ok {
            fail("body", want, &json!(text));
        }
    }
    let content = &expect["content"];
    let snapshot = site.snapshot();
    if let Some(want) = content.get("unchanged") {
        let got = json!(snapshot.revision() == before);
        if *want != got {
            fail("content.unchanged", want, &got);
        }
    }
    if let Some(want) = content.get("blockCount")
        && *want != json!(snapshot.len())
    {
        fail("content.blockCount", want, &json!(snapshot.len()));
    }
    for (name, want) in content["blocks"].as_object().into_iter().flatten() {
        let got = snapshot.block(name).map_or(Json::Null, Json::from);
        if *want != got {
            fail(&format!("content.blocks.{name}"), want, &got);
        }
    }
    if let Some(want) = expect.get("loaderCacheEntries") {
        let got = json!(site.runtime().loader_cache().stats().entries);
        if *want != got {
            fail("loaderCacheEntries", want, &got);
        }
    }
    if let Some(want) = expect.get("edgeCacheEntries") {
        let got = json!(site.purge_index().len());
        if *want != got {
            fail("edgeCacheEntries", want, &got);
        }
    }
    failures
}

#[test]
fn admin_conformance_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance/admin");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no admin cases under {}", root.display());
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let cases: Vec<Json> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for case in &cases {
            count += 1;
            let name = format!(
                "{} :: {}",
                file.file_name().unwrap().to_string_lossy(),
                case["name"].as_str().unwrap_or("(unnamed)")
            );
            let site = site_for(case);
            let before = site.revision();
            let (outcome, job, response) = run(case, &site);
            let case_failures = check(case, &site, &before, &outcome, &job, response.as_ref());
            if !case_failures.is_empty() {
                failures.push(format!("{name}\n  {}", case_failures.join("\n  ")));
            }
        }
    }
    eprintln!("{count} admin cases in {} files", files.len());
    assert!(
        failures.is_empty(),
        "{} of {count} admin cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
