//! The `page-json/` suite: one request per case through `Site::page_json`; for a job, the page
//! resolved for the same request (loaders answered from `loaders`) is handed to the job's
//! `finish` with the host's `dropSections` (modules exporting `renderJson = false`).

use crate::support::{self, CaseHost};
use serde_json::{Value as Json, json};
use sitefile_core::page_json::{PageJsonOutcome, PageJsonResponse};

/// The keys a case's `expect` may hold (the README's table).
const EXPECT_KEYS: &[&str] = &["outcome", "job", "rounds", "status", "headers", "body"];

/// Runs one case; returns its failures.
fn run(case: &Json) -> Vec<String> {
    let site = support::site_for(case);
    let host = CaseHost::of(case);
    let request = support::request(&case["request"]);
    let (outcome, job, rounds, response): (&str, Json, Json, Option<PageJsonResponse>) = match site
        .page_json(&request)
    {
        None => ("pass", Json::Null, Json::Null, None),
        Some(PageJsonOutcome::Respond(r)) => ("respond", Json::Null, Json::Null, Some(r)),
        Some(PageJsonOutcome::Resolve(job)) => {
            let resolution = site.resolve_page(request, &host);
            let (page, rounds) = support::drive_page(resolution, &host, &case["loaders"]);
            let dropped: Vec<String> =
                serde_json::from_value(case["host"]["dropSections"].clone()).unwrap_or_default();
            let form = serde_json::to_value(&job).expect("jobs serialize");
            ("resolve", form, rounds, Some(job.finish(&page, &dropped)))
        }
    };
    let expect = &case["expect"];
    let mut failures = Vec::new();
    support::known_keys(expect, EXPECT_KEYS, &mut failures);
    let subst = |s: &str| support::substitute(s, &site);
    let headers = response.as_ref().map(|r| r.headers.as_slice());
    support::check_headers(
        &expect["headers"],
        headers.unwrap_or_default(),
        &subst,
        &mut failures,
    );
    let mut fail = |what: &str, want: &Json, got: &Json| {
        failures.push(format!("{what}:\n    expected {want}\n    actual   {got}"));
    };
    if let Some(want) = expect.get("outcome")
        && want != outcome
    {
        fail("outcome", want, &json!(outcome));
    }
    if let Some(want) = expect.get("job")
        && !support::holds(want, &job, &subst)
    {
        fail("job", want, &job);
    }
    if let Some(want) = expect.get("rounds")
        && *want != rounds
    {
        fail("rounds", want, &rounds);
    }
    let status = response.as_ref().map_or(Json::Null, |r| json!(r.status));
    if let Some(want) = expect.get("status")
        && *want != status
    {
        fail("status", want, &status);
    }
    if let Some(want) = expect.get("body") {
        let text = response
            .as_ref()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .unwrap_or_default();
        let ok = match want {
            Json::String(s) => *s == text,
            _ => serde_json::from_str::<Json>(&text).is_ok_and(|got| got == *want),
        };
        if !ok {
            fail("body", want, &json!(text));
        }
    }
    failures
}

#[test]
fn page_json_cases() {
    support::run_suites(&["page-json"], run);
}
