//! The `matchers/` and `resolution/` suites: one page resolution per case (`repeat` times),
//! after an optional `reload`, compared with `expect` (the page's serde form plus `rounds`).

use crate::support::{self, CaseHost};
use serde_json::Value as Json;

/// Runs one case; returns its failures.
fn run(case: &Json) -> Vec<String> {
    let site = support::site_for(case);
    if let Some(reload) = case.get("reload") {
        site.reload(reload.to_string().as_bytes(), support::instant(&Json::Null))
            .expect("case reload body is accepted");
    }
    let host = CaseHost::of(case);
    let repeat = case["repeat"].as_u64().unwrap_or(1).max(1);
    let mut output = Json::Null;
    for _ in 0..repeat {
        let resolution = site.resolve_page(support::request(&case["request"]), &host);
        output = support::drive(resolution, &host, &case["loaders"]);
    }
    let mut failures = Vec::new();
    support::compare_page(&case["expect"], &output, "", &mut failures);
    failures
}

#[test]
fn matcher_and_resolution_cases() {
    support::run_suites(&["matchers", "resolution"], run);
}
