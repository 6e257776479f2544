//! The `section-loaders/` suite: a page's sections (`sections`, as a binding hands them back)
//! through `Site::run_section_loaders` for `request`; the sections of the keys of `loaders`
//! have loaders, answered from `loaders` round by round. `expect`: `rounds`, `sections`,
//! `effects`, compared as page cases compare them.

use crate::support;
use serde_json::Value as Json;
use sitefile_core::Site;
use sitefile_core::section_loaders::{SectionStep, sections_from_json};
use std::collections::HashSet;

/// The keys a case's `expect` (or a `sectionLoaders` step's, beside the common ones) may hold.
pub const EXPECT_KEYS: &[&str] = &["rounds", "sections", "effects"];

/// Runs one case; returns its failures.
fn run(case: &Json) -> Vec<String> {
    let site = support::site_for(case);
    let mut failures = Vec::new();
    support::known_keys(&case["expect"], EXPECT_KEYS, &mut failures);
    let output = run_on(&site, &case["request"], &case["sections"], &case["loaders"]);
    support::compare_page(&case["expect"], &output, "", &mut failures);
    failures
}

/// `sections` through `site`'s section loaders for `request`, the keys of `loaders` having
/// loaders answered from it: the finished sections and effects, with the `rounds`.
pub fn run_on(site: &Site, request: &Json, sections: &Json, loaders: &Json) -> Json {
    let request = support::request(request);
    let sections = sections_from_json(&sections.to_string()).expect("case sections");
    let with_loaders: HashSet<String> = loaders
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut run = site.run_section_loaders(&request, sections, with_loaders);
    let mut rounds = Vec::new();
    let done = loop {
        match run.next().expect("the runner drives in order") {
            SectionStep::NeedLoaders(calls) => {
                rounds.push(Json::from(
                    calls
                        .iter()
                        .map(|c| Json::from(c.key.as_str()))
                        .collect::<Vec<_>>(),
                ));
                for call in calls {
                    let answer = support::answer(loaders, &call.key, &call.props);
                    run.provide(call.id, answer)
                        .expect("every handed-out call is answered once");
                }
            }
            SectionStep::Done(done) => break done,
        }
    };
    let mut output = serde_json::to_value(&done).expect("sections serialize");
    output["rounds"] = Json::from(rounds);
    output
}

#[test]
fn section_loader_cases() {
    support::run_suites(&["section-loaders"], run);
}
