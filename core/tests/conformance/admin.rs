//! The `admin/` suite: one admin request per case through `Site::handle_admin`, the host's
//! answer to the job it asks for, and the response and content afterwards.

use crate::support::{self, BodyMatch, pairs};
use serde_json::{Value as Json, json};
use sitefile_core::Site;
use sitefile_core::admin::{
    AdminOutcome, AdminRequest, AdminResponse, AdminSite, InvokeAnswer, InvokeResult, RenderAnswer,
    RenderedSection,
};

/// Replaces `{revision}` and `{schemaEtag}` in a string.
fn substitute(s: &str, site: &Site) -> String {
    let etag = site
        .schema()
        .map(|s| s.etag().to_string())
        .unwrap_or_default();
    support::substitute(s, site).replace("{schemaEtag}", &etag)
}

fn body_bytes(body: &Json) -> Vec<u8> {
    match body {
        Json::Null => Vec::new(),
        Json::String(s) => s.as_bytes().to_vec(),
        other => other.to_string().into_bytes(),
    }
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
    let results = host["invoke"]["results"].clone();
    let answers: Vec<InvokeAnswer> = match results {
        Json::Null => Vec::new(),
        results => serde_json::from_value(results).expect("host.invoke.results are invoke answers"),
    };
    answers.into_iter().map(InvokeResult::from).collect()
}

fn rendered(host: &Json) -> Result<Vec<RenderedSection>, String> {
    let answer: RenderAnswer = match &host["render"] {
        Json::Null => RenderAnswer {
            sections: Vec::new(),
            error: None,
        },
        render => serde_json::from_value(render.clone()).expect("host.render is a render answer"),
    };
    answer.into_result()
}

/// Runs one case: the outcome's name, the job (if any) as JSON, and the final response.
fn run(case: &Json, site: &Site) -> (String, Json, Option<AdminResponse>) {
    let now = support::instant(&case["now"]);
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
    support::known_keys(expect, EXPECT_KEYS, &mut failures);
    let subst = |s: &str| substitute(s, site);
    let answer = support::Answer {
        outcome,
        job,
        response: response.map(|r| support::Responded {
            status: r.status,
            headers: &r.headers,
            body: r.body_text(),
        }),
    };
    support::check_answer(expect, &answer, &subst, BodyMatch::Subset, &mut failures);
    let mut fail = |what: &str, want: &Json, got: &Json| {
        failures.push(format!("{what}:\n    expected {want}\n    actual   {got}"));
    };
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
fn admin_cases() {
    support::run_suites(&["admin"], |case| {
        let site = support::site_for(case);
        let before = site.revision();
        let (outcome, job, response) = run(case, &site);
        check(case, &site, &before, &outcome, &job, response.as_ref())
    });
}
