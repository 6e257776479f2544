//! The step-case runner of the `reload/`, `edge/`, `draft/` and `loader-cache/` suites: a site
//! built from the case, then its `steps` in order, each one call of the `Site` API checked
//! against the step's `expect` (README, "Step cases").

use crate::section_loaders;
use crate::support::{self, CaseHost};
use serde_json::{Value as Json, json};
use sitefile_core::resolve::{Resolution, ResolutionMisuse, Step};
use sitefile_core::site::{EdgeHints, OriginAnswer};
use sitefile_core::value::{Key, Value};
use sitefile_core::{HasErrorCode, Site};

/// The `expect` keys every step may use.
const COMMON_KEYS: [&str; 4] = [
    "revision",
    "content",
    "loaderCacheEntries",
    "edgeCacheEntries",
];

/// What a step produced, for the common checks.
struct Checked {
    failures: Vec<String>,
}

impl Checked {
    fn fail(&mut self, what: &str, want: &Json, got: &Json) {
        self.failures
            .push(format!("{what}:\n    expected {want}\n    actual   {got}"));
    }
}

/// Runs every step of `case`; returns the failures, each prefixed with its step's index.
pub fn run_case(case: &Json) -> Vec<String> {
    let site = support::site_for(case);
    let host = CaseHost::of(case);
    let mut failures = Vec::new();
    let steps = case["steps"].as_array().expect("a step case has steps");
    for (index, step) in steps.iter().enumerate() {
        let before = site.revision();
        let mut checked = Checked {
            failures: Vec::new(),
        };
        let expect = &step["expect"];
        let own: &[&str] = match step["do"].as_str() {
            Some("reload") => {
                reload(step, &site, &mut checked);
                &["response", "error"]
            }
            Some("edge") => {
                edge(step, &site, &mut checked);
                &["plan", "headers", "storeHeaders", "evict", "error"]
            }
            Some("purge") => {
                let mut keys = site.purge(step["target"].as_str().expect("a purge target"));
                keys.sort();
                if let Some(want) = expect.get("keys")
                    && *want != json!(keys)
                {
                    checked.fail("keys", want, &json!(keys));
                }
                &["keys"]
            }
            Some("purgeLoaders") => {
                site.purge_loaders();
                &[]
            }
            Some("resolve") => {
                resolve(case, step, &site, &host, &mut checked);
                &["page", "rounds", "error"]
            }
            Some("sectionLoaders") => {
                let loaders = step.get("loaders").unwrap_or(&case["loaders"]);
                let output =
                    section_loaders::run_on(&site, &step["request"], &step["sections"], loaders);
                let own: serde_json::Map<String, Json> = section_loaders::EXPECT_KEYS
                    .iter()
                    .filter_map(|k| Some((k.to_string(), expect.get(*k)?.clone())))
                    .collect();
                support::compare_page(&Json::Object(own), &output, "", &mut checked.failures);
                section_loaders::EXPECT_KEYS
            }
            other => panic!("unknown step {other:?}"),
        };
        let known: Vec<&str> = COMMON_KEYS.iter().chain(own).copied().collect();
        support::known_keys(expect, &known, &mut checked.failures);
        common(expect, &site, &before, &mut checked);
        let label = step["do"].as_str().unwrap_or_default();
        failures.extend(
            checked
                .failures
                .into_iter()
                .map(|f| format!("step {index} ({label}): {f}")),
        );
    }
    failures
}

/// The checks any step may ask for: the revision, the content, and the cache occupancy.
fn common(expect: &Json, site: &Site, before: &str, checked: &mut Checked) {
    if let Some(want) = expect.get("revision") {
        let got = json!(if site.revision() == before {
            "unchanged"
        } else {
            "changed"
        });
        if *want != got {
            checked.fail("revision", want, &got);
        }
    }
    let snapshot = site.snapshot();
    let content = &expect["content"];
    if let Some(want) = content.get("blockCount")
        && *want != json!(snapshot.len())
    {
        checked.fail("content.blockCount", want, &json!(snapshot.len()));
    }
    for (name, want) in content["blocks"].as_object().into_iter().flatten() {
        let got = snapshot.block(name).map_or(Json::Null, Json::from);
        if *want != got {
            checked.fail(&format!("content.blocks.{name}"), want, &got);
        }
    }
    if let Some(want) = expect.get("loaderCacheEntries") {
        let got = json!(site.runtime().loader_cache().stats().entries);
        if *want != got {
            checked.fail("loaderCacheEntries", want, &got);
        }
    }
    if let Some(want) = expect.get("edgeCacheEntries") {
        let got = json!(site.purge_index().len());
        if *want != got {
            checked.fail("edgeCacheEntries", want, &got);
        }
    }
}

/// Compares an error code (`expect.error`) with the result of a call.
fn check_error(expect: &Json, got: Option<&dyn HasErrorCode>, checked: &mut Checked) {
    let got = got.map_or(Json::Null, |e| json!(e.code().as_str()));
    let want = expect.get("error").unwrap_or(&Json::Null);
    if *want != got {
        checked.fail("error", want, &got);
    }
}

/// `{"do": "reload", "body", "hook"?, "now"?}`: `Site::reload`, or `Site::reload_with` with a
/// hook answering `{"kvWritten": bool}` or failing with `{"error": message}`.
fn reload(step: &Json, site: &Site, checked: &mut Checked) {
    let body = match &step["body"] {
        Json::String(text) => text.clone().into_bytes(),
        other => other.to_string().into_bytes(),
    };
    let now = support::instant(&step["now"]);
    let result = match step.get("hook") {
        None => site
            .reload(&body, now)
            .map_err(|e| Box::new(e) as Box<dyn HasErrorCode>),
        Some(hook) => site
            .reload_with(&body, now, &mut |_| match hook["error"].as_str() {
                Some(message) => Err(message.to_string()),
                None => Ok(hook["kvWritten"].as_bool().unwrap_or(false)),
            })
            .map_err(|e| Box::new(e) as Box<dyn HasErrorCode>),
    };
    let expect = &step["expect"];
    match &result {
        Ok(response) => {
            let got = serde_json::to_value(response).expect("responses serialize");
            if let Some(want) = expect.get("response")
                && !support::holds(want, &got, &|s| support::substitute(s, site))
            {
                checked.fail("response", want, &got);
            }
            check_error(expect, None, checked);
        }
        Err(error) => check_error(expect, Some(error.as_ref()), checked),
    }
}

/// `{"do": "edge", "request", "hints"?, "origin"?}`: `Site::edge_plan` (`Site::edge_plan_with`
/// when the site's functions answered), then `Site::after_origin` when the origin answered.
fn edge(step: &Json, site: &Site, checked: &mut Checked) {
    let request = support::request(&step["request"]);
    let plan = match step.get("hints") {
        None => site.edge_plan(&request),
        Some(hints) => {
            let hints: EdgeHints = serde_json::from_value(hints.clone()).expect("edge hints");
            match site.edge_plan_with(&request, &hints) {
                Ok(plan) => plan,
                Err(error) => return check_error(&step["expect"], Some(&error), checked),
            }
        }
    };
    check_error(&step["expect"], None, checked);
    let (form, headers, store) = match step.get("origin") {
        None => {
            let form = serde_json::to_value(&plan).expect("plans serialize");
            (form, plan.headers, None)
        }
        Some(origin) => {
            let answer = OriginAnswer {
                status: origin["status"]
                    .as_u64()
                    .map_or(200, |s| u16::try_from(s).expect("an HTTP status")),
                headers: support::pairs(&origin["headers"]),
            };
            let decision = site.after_origin(&plan, &answer);
            let form = serde_json::to_value(&decision).expect("decisions serialize");
            (form, decision.plan.headers, decision.store)
        }
    };
    let expect = &step["expect"];
    let subst = |s: &str| support::substitute(s, site);
    if let Some(want) = expect.get("plan")
        && !support::holds(want, &form, &subst)
    {
        checked.fail("plan", want, &form);
    }
    support::check_headers(&expect["headers"], &headers, &subst, &mut checked.failures);
    match (expect.get("storeHeaders"), &store) {
        (None, _) => {}
        (Some(Json::Null), None) => {}
        (Some(Json::Null), Some(_)) | (Some(_), None) => {
            checked.fail("storeHeaders", &expect["storeHeaders"], &json!(store));
        }
        (Some(want), Some(stored)) => {
            support::check_headers(want, stored, &subst, &mut checked.failures);
        }
    }
    if let Some(want) = expect.get("evict")
        && *want != form["evict"]
    {
        checked.fail("evict", want, &form["evict"]);
    }
}

/// How a `resolve` step misuses the resolution on purpose (`"misuse"`).
fn misuse(kind: &str, mut resolution: Resolution, host: &CaseHost) -> ResolutionMisuse {
    /// An id no call of a resolution has.
    const NEVER_HANDED_OUT: usize = 4_294_967_295;
    let first_round = |r: &mut Resolution| match r.next(host).expect("a first step") {
        Step::NeedLoaders(calls) => calls,
        Step::Done(_) => panic!("the misuse case needs a loader round"),
    };
    let result = match kind {
        "provideUnknown" => {
            first_round(&mut resolution);
            resolution.provide(NEVER_HANDED_OUT, Ok(Value::Null))
        }
        "provideTwice" => {
            let call = first_round(&mut resolution).remove(0);
            resolution
                .provide(call.id, Ok(Value::Null))
                .expect("the first answer is taken");
            resolution.provide(call.id, Ok(Value::Null))
        }
        "nextAfterDone" | "provideAfterDone" => {
            while let Step::NeedLoaders(calls) = resolution.next(host).expect("drives in order") {
                for call in calls {
                    resolution
                        .provide(call.id, Ok(Value::Null))
                        .expect("answered once");
                }
            }
            match kind {
                "nextAfterDone" => resolution.next(host).map(|_| ()),
                _ => resolution.provide(0, Ok(Value::Null)),
            }
        }
        other => panic!("unknown misuse {other:?}"),
    };
    result.expect_err("the misuse is refused")
}

/// `{"do": "resolve", "request", "draft"?, "loaders"?, "misuse"?}`: `Site::resolve_page` (or
/// `Site::resolve_page_in_draft` with the `draft` blocks laid over the content), driven to
/// its page with the step's loader answers (else the case's).
fn resolve(case: &Json, step: &Json, site: &Site, host: &CaseHost, checked: &mut Checked) {
    let request = support::request(&step["request"]);
    let resolution = match step["draft"].as_object() {
        None => site.resolve_page(request, host),
        Some(overlay) => {
            let overlay: Vec<(Key, Value)> = overlay
                .iter()
                .map(|(k, v)| (Key::from(k.as_str()), Value::from(v.clone())))
                .collect();
            site.resolve_page_in_draft(request, &overlay, host)
        }
    };
    let expect = &step["expect"];
    if let Some(kind) = step["misuse"].as_str() {
        let error = misuse(kind, resolution, host);
        check_error(expect, Some(&error), checked);
        return;
    }
    let answers = step.get("loaders").unwrap_or(&case["loaders"]);
    let output = support::drive(resolution, host, answers);
    if let Some(want) = expect.get("rounds")
        && *want != output["rounds"]
    {
        checked.fail("rounds", want, &output["rounds"]);
    }
    support::compare_page(&expect["page"], &output, "page", &mut checked.failures);
}

#[test]
fn reload_cases() {
    support::run_suites(&["reload"], run_case);
}

#[test]
fn edge_cases() {
    support::run_suites(&["edge"], run_case);
}

#[test]
fn draft_cases() {
    support::run_suites(&["draft"], run_case);
}

#[test]
fn loader_cache_cases() {
    support::run_suites(&["loader-cache"], run_case);
}
