//! Runs the shared conformance cases (`tests/conformance/**/*.json` at the repository root)
//! through the core's public API. The C and Node bindings run the same files.
//!
//! A case: `{"name", "blocks", "request": {"url", "headers", "cookies", "now", "seed"},
//! "loaders": {key: answer | {"$error": msg} | {"$echo": true}}, "environment",
//! "customMatchers": [key], "featureFlags": {"enabled": {}, "variants": {}},
//! "featureFlagMatcher": key, "config": {"productionOrigins", "layoutSections",
//! "asyncRendering", "resolveGlobals", "cryptoKey", "onDanglingReference": <what it returns>}, "repeat": n, "reload": body,
//! "expect": {page, path, params, sections, seo, effects: {...}, rounds: [[keys]]}}`.
//! Only keys present in `expect` (and in `expect.effects`) are compared.

// The harness reads the case files; the core under test does no I/O.
#![allow(clippy::disallowed_methods)]

use serde_json::{Value as Json, json};
use sitefile_core::MatcherContext;
use sitefile_core::config::SecretKey;
use sitefile_core::content::Snapshot;
use sitefile_core::resolve::{KeyRegistry, RequestOptions, ResolveConfig, Runtime, Step};
use sitefile_core::value::{Key, Value};
use sitefile_core::{FeatureFlagAdapter, Host, Request};
use std::collections::HashMap;

/// The instant a case's `reload` is applied at, and a case request's default `now`.
const RELOADED_AT: &str = "2026-01-01T00:00:00Z";
use std::path::{Path, PathBuf};

struct Flags {
    enabled: HashMap<String, bool>,
    variants: HashMap<String, String>,
}

impl FeatureFlagAdapter for Flags {
    fn is_feature_enabled(&self, key: &str) -> Result<bool, String> {
        Ok(self.enabled.get(key).copied().unwrap_or(false))
    }
    fn feature_flag_variant(&self, key: &str) -> Result<Option<String>, String> {
        Ok(self.variants.get(key).cloned())
    }
}

/// The host callbacks a case configures: custom matchers answer their rule's `result` (a rule
/// with `"fail": "<message>"` fails), the feature flags, and `onDanglingReference`.
struct CaseHost {
    flags: Option<Flags>,
    dangling: Option<Json>,
}

impl Host for CaseHost {
    fn custom_matcher(
        &self,
        _key: &str,
        rule: &Value,
        _context: &MatcherContext<'_>,
    ) -> Result<bool, String> {
        if let Some(message) = rule.get("fail").and_then(Value::as_str) {
            return Err(message.to_string());
        }
        Ok(rule.get("result").and_then(Value::as_bool) == Some(true))
    }

    fn feature_flags(&self) -> Option<&dyn FeatureFlagAdapter> {
        self.flags.as_ref().map(|f| f as &dyn FeatureFlagAdapter)
    }

    fn on_dangling_reference(&self, resolve_type: &str) -> Option<Result<Value, String>> {
        // The hook answers with the configured value, tagged with the key it was asked for.
        let answer = self.dangling.as_ref()?;
        Some(Ok(Value::from(
            json!({"key": resolve_type, "value": answer}),
        )))
    }
}

fn host_for(case: &Json) -> CaseHost {
    CaseHost {
        flags: case.get("featureFlags").map(|f| Flags {
            enabled: serde_json::from_value(f["enabled"].clone()).unwrap_or_default(),
            variants: serde_json::from_value(f["variants"].clone()).unwrap_or_default(),
        }),
        dangling: case["config"].get("onDanglingReference").cloned(),
    }
}

fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            // The admin protocol cases have their own format and runner (`admin_conformance.rs`).
            if path.file_name().is_some_and(|n| n == "admin") {
                continue;
            }
            case_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
}

fn config_for(case: &Json) -> ResolveConfig {
    let mut config = ResolveConfig::by_convention();
    let mut loaders = KeyRegistry::default();
    for key in case["loaders"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
    {
        loaders.register(key);
    }
    config.loaders = loaders;
    config.production = case["environment"].as_str() == Some("production");
    for key in case["customMatchers"].as_array().into_iter().flatten() {
        config
            .matchers
            .register(key.as_str().expect("custom matcher keys are strings"));
    }
    if let Some(key) = case["featureFlagMatcher"].as_str() {
        config.matchers.register_feature_flag_bridge(key);
    }
    let c = &case["config"];
    if let Some(origins) = c["productionOrigins"].as_array() {
        let origins: Vec<&str> = origins.iter().filter_map(Json::as_str).collect();
        config = config.with_production_origins(&origins);
    }
    for key in c["layoutSections"].as_array().into_iter().flatten() {
        config
            .layout_sections
            .insert(key.as_str().unwrap().to_string());
    }
    config.async_rendering = c["asyncRendering"].as_bool().unwrap_or(false);
    config.resolve_globals = c["resolveGlobals"].as_bool().unwrap_or(true);
    if let Some(key) = c["cryptoKey"].as_str() {
        config.secret_key = Some(SecretKey::from_env_value(key).expect("case crypto key"));
    }
    config
}

fn request_for(case: &Json) -> Request {
    let r = &case["request"];
    let mut request =
        Request::new(r["url"].as_str().unwrap_or("https://site.example/")).expect("case URL");
    for (k, v) in r["headers"].as_object().into_iter().flatten() {
        request = request.with_header(k, v.as_str().unwrap_or_default());
    }
    for (k, v) in r["cookies"].as_object().into_iter().flatten() {
        request = request.with_cookie(k, v.as_str().unwrap_or_default());
    }
    let now = r["now"].as_str().unwrap_or(RELOADED_AT);
    request
        .with_now(now.parse().expect("case now is RFC 3339"))
        .with_seed(r["seed"].as_u64().unwrap_or(0))
}

/// Runs one case; returns the actual output (the page plus `rounds`).
fn run_case(case: &Json) -> Json {
    let blocks: Vec<(Key, Value)> = Value::from(case["blocks"].clone())
        .as_object()
        .map(|o| o.entries().to_vec())
        .unwrap_or_default();
    let runtime = Runtime::new(Snapshot::from_blocks(blocks), config_for(case));
    if let Some(reload) = case.get("reload") {
        runtime
            .reload(reload.to_string().as_bytes(), RELOADED_AT.parse().unwrap())
            .expect("case reload body is accepted");
    }
    let host = host_for(case);
    let answers = case["loaders"].as_object().cloned().unwrap_or_default();
    let repeat = case["repeat"].as_u64().unwrap_or(1).max(1);
    let mut output = Json::Null;
    for _ in 0..repeat {
        let mut resolution =
            runtime.resolve_page_with(request_for(case), RequestOptions::default(), &host);
        let mut rounds: Vec<Vec<String>> = Vec::new();
        let page = loop {
            match resolution.next(&host).expect("the runner drives in order") {
                Step::NeedLoaders(calls) => {
                    rounds.push(calls.iter().map(|c| c.key.clone()).collect());
                    for call in calls {
                        let answer = &answers[&call.key];
                        let result = if let Some(message) = answer.get("$error") {
                            Err(message.as_str().unwrap_or("failed").to_string())
                        } else if answer.get("$echo").is_some() {
                            Ok(Value::from(json!({
                                "loader": call.key,
                                "props": Json::from(&call.props),
                            })))
                        } else {
                            Ok(Value::from(answer.clone()))
                        };
                        resolution
                            .provide(call.id, result)
                            .expect("every handed-out call is answered once");
                    }
                }
                Step::Done(page) => break page,
            }
        };
        output = serde_json::to_value(&*page).expect("pages serialize");
        output["rounds"] = json!(rounds);
    }
    output
}

fn compare(expect: &Json, actual: &Json, at: &str, failures: &mut Vec<String>) {
    for (key, want) in expect.as_object().into_iter().flatten() {
        let got = actual.get(key).cloned().unwrap_or(match key.as_str() {
            "errors" | "setCookies" | "warnings" | "varies" => json!([]),
            "degraded" => json!(false),
            _ => Json::Null,
        });
        if key == "effects" {
            compare(want, &got, &format!("{at}.effects"), failures);
        } else if &got != want {
            failures.push(format!(
                "{at}.{key}:\n    expected {}\n    actual   {}",
                want, got
            ));
        }
    }
}

#[test]
fn conformance_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let mut files = Vec::new();
    case_files(&root, &mut files);
    assert!(
        !files.is_empty(),
        "no conformance cases under {}",
        root.display()
    );
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let parsed: Json =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let cases = match parsed {
            Json::Array(cases) => cases,
            one => vec![one],
        };
        for case in &cases {
            count += 1;
            let name = format!(
                "{} :: {}",
                file.strip_prefix(&root).unwrap().display(),
                case["name"].as_str().unwrap_or("(unnamed)")
            );
            let actual = run_case(case);
            let mut case_failures = Vec::new();
            compare(&case["expect"], &actual, "", &mut case_failures);
            if !case_failures.is_empty() {
                failures.push(format!("{name}\n  {}", case_failures.join("\n  ")));
            }
        }
    }
    eprintln!("{count} conformance cases in {} files", files.len());
    assert!(
        failures.is_empty(),
        "{} of {count} conformance cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
