//! The `page-json/` suite: one request per case through `Site::page_json`; for a job, its draft
//! fetched from `drafts` when it asks for one, then the page resolved for the same request
//! (loaders answered from `loaders`) is handed to the job's `finish` with the host's
//! `dropSections` (modules exporting `renderJson = false`).

use crate::support::{self, BodyMatch, CaseHost};
use serde_json::Value as Json;
use sitefile_core::page_json::{PageJsonOutcome, PageJsonResponse};

/// The keys a case's `expect` may hold (the README's table).
const EXPECT_KEYS: &[&str] = &[
    "outcome",
    "job",
    "rounds",
    "writtenSections",
    "status",
    "headers",
    "body",
];

/// Runs one case; returns its failures.
fn run(case: &Json) -> Vec<String> {
    let site = support::site_for(case);
    let host = CaseHost::of(case);
    let request = support::request(&case["request"]);
    let mut written = Json::Null;
    let (outcome, job, rounds, response): (&str, Json, Json, Option<PageJsonResponse>) = match site
        .page_json(&request)
    {
        None => ("pass", Json::Null, Json::Null, None),
        Some(PageJsonOutcome::Respond(r)) => ("respond", Json::Null, Json::Null, Some(r)),
        Some(PageJsonOutcome::Resolve(mut job)) => {
            let form = serde_json::to_value(&job).expect("jobs serialize");
            if let Some(fetch) = job.draft_fetch() {
                let body = support::draft_body(&case["drafts"], &fetch.url);
                site.page_json_draft_fetched(&mut job, body.as_deref());
            }
            let resolution = site.resolve_page_json(&job, request, &host);
            let (page, rounds) = support::drive_page(resolution, &host, &case["loaders"]);
            let dropped: Vec<String> =
                serde_json::from_value(case["host"]["dropSections"].clone()).unwrap_or_default();
            written = Json::from(job.written_sections(&page, &dropped));
            ("resolve", form, rounds, Some(job.finish(&page, &dropped)))
        }
    };
    let expect = &case["expect"];
    let mut failures = Vec::new();
    support::known_keys(expect, EXPECT_KEYS, &mut failures);
    let subst = |s: &str| support::substitute(s, &site);
    let answer = support::Answer {
        outcome,
        job: &job,
        response: response.as_ref().map(|r| support::Responded {
            status: r.status,
            headers: &r.headers,
            body: String::from_utf8_lossy(&r.body).into_owned(),
        }),
    };
    support::check_answer(expect, &answer, &subst, BodyMatch::Exact, &mut failures);
    if let Some(want) = expect.get("rounds")
        && *want != rounds
    {
        failures.push(format!(
            "rounds:\n    expected {want}\n    actual   {rounds}"
        ));
    }
    if let Some(want) = expect.get("writtenSections")
        && *want != written
    {
        failures.push(format!(
            "writtenSections:\n    expected {want}\n    actual   {written}"
        ));
    }
    failures
}

#[test]
fn page_json_cases() {
    support::run_suites(&["page-json"], run);
}
