//! What every suite's runner shares (`tests/conformance/README.md`, "Runner conventions"):
//! finding and loading the case files, building a `Site` from a case, the request form,
//! answering loaders, driving a resolution, and comparing results.

use crate::admin_site;
use serde_json::{Value as Json, json};
use sitefile_core::MatcherContext;
use sitefile_core::admin::AdminSettings;
use sitefile_core::edge::WorkerOptions;
use sitefile_core::loader_cache::Freshness;
use sitefile_core::resolve::{KeyRegistry, Resolution, ResolveConfig, ResolvedPage, Step};
use sitefile_core::value::Value;
use sitefile_core::{FeatureFlagAdapter, Host, Request, RequestForm, Site};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The instant a case runs at when it names none (requests, reloads, admin requests).
pub const DEFAULT_NOW: &str = "2026-01-01T00:00:00Z";

/// The conformance tree at the repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance")
}

/// The case files of `suite` (a directory under the tree), sorted by name.
pub fn suite_files(suite: &str) -> Vec<PathBuf> {
    let dir = root().join(suite);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no cases under {}", dir.display());
    files
}

/// The cases of one file (an array of cases).
pub fn cases_of(file: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Runs every case of every `suites` directory through `run` (which returns the case's
/// failures) and fails with all of them at once.
pub fn run_suites(suites: &[&str], run: impl Fn(&Json) -> Vec<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for suite in suites {
        for file in suite_files(suite) {
            for case in cases_of(&file) {
                count += 1;
                let case_failures = run(&case);
                if !case_failures.is_empty() {
                    let name = case["name"].as_str().unwrap_or("(unnamed)");
                    let file = file.file_name().unwrap_or_default().to_string_lossy();
                    failures.push(format!(
                        "{suite}/{file} :: {name}\n  {}",
                        case_failures.join("\n  ")
                    ));
                }
            }
        }
    }
    eprintln!("{count} cases in {suites:?}");
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// An RFC 3339 instant, or [`DEFAULT_NOW`] when absent.
pub fn instant(value: &Json) -> chrono::DateTime<chrono::Utc> {
    value
        .as_str()
        .unwrap_or(DEFAULT_NOW)
        .parse()
        .expect("case times are RFC 3339")
}

/// Header pairs from either form a case may use: `[[name, value]…]` or `{name: value}`.
pub fn pairs(headers: &Json) -> Vec<(String, String)> {
    let text = |v: &Json| v.as_str().unwrap_or_default().to_string();
    match headers {
        Json::Array(list) => list.iter().map(|p| (text(&p[0]), text(&p[1]))).collect(),
        Json::Object(map) => map.iter().map(|(k, v)| (k.clone(), text(v))).collect(),
        _ => Vec::new(),
    }
}

/// A request from the common request form (`{"url", "method", "headers", "cookies", "now",
/// "seed", "draws", "geo"}`), read as every binding reads it: through the core's `RequestForm`, with the
/// suite's defaults for `url` and `now`.
pub fn request(form: &Json) -> Request {
    let mut form = form.as_object().cloned().unwrap_or_default();
    form.entry("url")
        .or_insert_with(|| json!("https://site.example/"));
    form.entry("now").or_insert_with(|| json!(DEFAULT_NOW));
    RequestForm::from_json(&Json::Object(form).to_string())
        .and_then(RequestForm::into_request)
        .expect("case requests are valid request forms")
}

/// The environment variables of a case: `env`, plus `NODE_ENV` from `environment` and
/// `PLATFORM_CRYPTO_KEY` from `config.cryptoKey` (the resolution suite's spellings).
fn vars(case: &Json) -> HashMap<String, String> {
    let mut vars: HashMap<String, String> =
        serde_json::from_value(case["env"].clone()).unwrap_or_default();
    if let Some(env) = case["environment"].as_str() {
        vars.insert("NODE_ENV".into(), env.into());
    }
    if let Some(key) = case["config"]["cryptoKey"].as_str() {
        vars.insert("PLATFORM_CRYPTO_KEY".into(), key.into());
    }
    vars
}

/// The resolve configuration of a case: the command line's conventions (sections), the keys of
/// `loaders` as the only registered loaders, `cachedLoaders`, custom matchers, the feature-flag
/// bridge and `config`'s setup options.
fn resolve_config(case: &Json) -> ResolveConfig {
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
    for (key, f) in case["cachedLoaders"].as_object().into_iter().flatten() {
        let freshness = Freshness {
            max_age_ms: f["maxAgeMs"].as_u64().expect("maxAgeMs is a number"),
            stale_ms: f["staleMs"].as_u64().unwrap_or(0),
        };
        config.cached_loaders.insert(key.clone(), freshness);
    }
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
        config = config
            .with_production_origins(&origins)
            .expect("case origins are valid");
    }
    for key in c["layoutSections"].as_array().into_iter().flatten() {
        let key = key.as_str().expect("layout section keys are strings");
        config.layout_sections.insert(key.to_string());
    }
    for key in c["nonCriticalSections"].as_array().into_iter().flatten() {
        let key = key.as_str().expect("non-critical section keys are strings");
        config.non_critical_sections.insert(key.to_string());
    }
    config.async_rendering = c["asyncRendering"].as_bool().unwrap_or(false);
    config.resolve_globals = c["resolveGlobals"].as_bool().unwrap_or(true);
    config
}

/// The `Site` a case describes: `blocks`, `env`, `options`, `limits`, the resolve settings,
/// the `schema`, and the `loaderCache` and `edgeCache` entries filled before the case runs.
pub fn site_for(case: &Json) -> Site {
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
    let site = admin_site::site(
        &case["blocks"],
        resolve_config(case),
        options,
        vars(case),
        settings,
    );
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
pub struct CaseHost {
    flags: Option<Flags>,
    dangling: Option<Json>,
}

impl CaseHost {
    /// The host of `case`.
    pub fn of(case: &Json) -> CaseHost {
        CaseHost {
            flags: case.get("featureFlags").map(|f| Flags {
                enabled: serde_json::from_value(f["enabled"].clone()).unwrap_or_default(),
                variants: serde_json::from_value(f["variants"].clone()).unwrap_or_default(),
            }),
            dangling: case["config"].get("onDanglingReference").cloned(),
        }
    }
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

/// The answer to a loader call from a case's `loaders` map: the JSON value, `{"$error": msg}`
/// (the loader fails) or `{"$echo": true}` (the loader answers its key and props).
pub fn answer(answers: &Json, key: &str, props: &Value) -> Result<Value, String> {
    let answer = &answers[key];
    if let Some(message) = answer.get("$error") {
        Err(message.as_str().unwrap_or("failed").to_string())
    } else if answer.get("$echo").is_some() {
        Ok(Value::from(
            json!({"loader": key, "props": Json::from(props)}),
        ))
    } else {
        Ok(Value::from(answer.clone()))
    }
}

/// Drives `resolution` to its page, answering every call from `answers`: the page and the
/// rounds (each call its key, or `{"key", "refresh": true}` for a refresh).
pub fn drive_page(
    mut resolution: Resolution,
    host: &dyn Host,
    answers: &Json,
) -> (Box<ResolvedPage>, Json) {
    let mut rounds: Vec<Json> = Vec::new();
    let page = loop {
        match resolution.next(host).expect("the runner drives in order") {
            Step::NeedLoaders(calls) => {
                let round = calls.iter().map(|c| match c.refresh {
                    true => json!({"key": c.key, "refresh": true}),
                    false => json!(c.key),
                });
                rounds.push(round.collect());
                for call in calls {
                    resolution
                        .provide(call.id, answer(answers, &call.key, &call.props))
                        .expect("every handed-out call is answered once");
                }
            }
            Step::Done(page) => break page,
        }
    };
    (page, json!(rounds))
}

/// [`drive_page`] as the page's serde form with `rounds` added.
pub fn drive(resolution: Resolution, host: &dyn Host, answers: &Json) -> Json {
    let (page, rounds) = drive_page(resolution, host, answers);
    let mut output = serde_json::to_value(&*page).expect("pages serialize");
    output["rounds"] = rounds;
    output
}

/// Compares a resolved page with `expect` the way the resolution suite does: every listed key
/// exactly (a missing list is `[]`, a missing `degraded` or `notFound` is `false`), `effects`
/// key by key.
pub fn compare_page(expect: &Json, actual: &Json, at: &str, failures: &mut Vec<String>) {
    for (key, want) in expect.as_object().into_iter().flatten() {
        let got = actual.get(key).cloned().unwrap_or(match key.as_str() {
            "errors" | "setCookies" | "warnings" | "varies" => json!([]),
            "degraded" | "notFound" => json!(false),
            _ => Json::Null,
        });
        if key == "effects" {
            compare_page(want, &got, &format!("{at}.effects"), failures);
        } else if &got != want {
            failures.push(format!(
                "{at}.{key}:\n    expected {want}\n    actual   {got}"
            ));
        }
    }
}

/// The body the case's draft API (`drafts`: URL -> body) answers for `url`: a string as it is,
/// other JSON written compactly; `None` (a failed fetch) for a URL it does not list.
pub fn draft_body(drafts: &Json, url: &str) -> Option<Vec<u8>> {
    drafts.get(url).map(|body| match body {
        Json::String(text) => text.clone().into_bytes(),
        other => other.to_string().into_bytes(),
    })
}

/// Replaces `{revision}` (the site's content revision now) in an expected string.
pub fn substitute(s: &str, site: &Site) -> String {
    s.replace("{revision}", &site.revision())
}

/// Whether `actual` holds `expected`: objects compare only the keys present in `expected` (a
/// listed `null` also matches a missing key), arrays element by element with equal lengths,
/// strings after `substitute`, other values by equality.
pub fn holds(expected: &Json, actual: &Json, subst: &dyn Fn(&str) -> String) -> bool {
    match (expected, actual) {
        (Json::Object(e), Json::Object(a)) => e.iter().all(|(k, v)| {
            a.get(k).is_some_and(|got| holds(v, got, subst)) || (v.is_null() && !a.contains_key(k))
        }),
        (Json::Array(e), Json::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| holds(e, a, subst))
        }
        (Json::String(e), Json::String(a)) => subst(e) == *a,
        _ => expected == actual,
    }
}

/// Checks header expectations (`{name: string | [strings] | null}`, names without case): a
/// string is the one value, an array every value in order, `null` absent.
pub fn check_headers(
    expect: &Json,
    headers: &[(String, String)],
    subst: &dyn Fn(&str) -> String,
    failures: &mut Vec<String>,
) {
    for (name, want) in expect.as_object().into_iter().flatten() {
        let values: Vec<&str> = headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        let got = match (want, values.as_slice()) {
            (Json::Array(_), _) => json!(values),
            (_, []) => Json::Null,
            (_, [one]) => json!(one),
            _ => json!(values),
        };
        if !holds(want, &got, subst) {
            failures.push(format!(
                "header {name}:\n    expected {want}\n    actual   {got}"
            ));
        }
    }
}

/// What a one-request case (admin, page JSON) ended with: the outcome's name, the job as JSON,
/// and the final response (status, headers, body text); no response when it was passed on.
pub struct Answer<'a> {
    /// `pass`, `respond`, ... (the suite's outcome names).
    pub outcome: &'a str,
    /// The job's serde form, or `null`.
    pub job: &'a Json,
    /// The final response.
    pub response: Option<Responded<'a>>,
}

/// A final response as the comparisons read it.
pub struct Responded<'a> {
    /// The status.
    pub status: u16,
    /// The headers.
    pub headers: &'a [(String, String)],
    /// The body as text.
    pub body: String,
}

/// How a case's JSON `body` is compared with the parsed body.
#[derive(Clone, Copy)]
pub enum BodyMatch {
    /// As a subset ([`holds`]).
    Subset,
    /// Exactly.
    Exact,
}

/// Checks the keys every one-request suite shares (README tables): `outcome`, `job` (a
/// subset), `status`, `headers` and `body` (a string: the exact text; other JSON: the parsed
/// body, compared by `body_match`).
pub fn check_answer(
    expect: &Json,
    answer: &Answer<'_>,
    subst: &dyn Fn(&str) -> String,
    body_match: BodyMatch,
    failures: &mut Vec<String>,
) {
    let (status, headers, text) = match &answer.response {
        Some(r) => (json!(r.status), r.headers, r.body.as_str()),
        None => (Json::Null, &[][..], ""),
    };
    check_headers(&expect["headers"], headers, subst, failures);
    let mut fail = |what: &str, want: &Json, got: &Json| {
        failures.push(format!("{what}:\n    expected {want}\n    actual   {got}"));
    };
    if let Some(want) = expect.get("outcome")
        && want != answer.outcome
    {
        fail("outcome", want, &json!(answer.outcome));
    }
    if let Some(want) = expect.get("job")
        && !holds(want, answer.job, subst)
    {
        fail("job", want, answer.job);
    }
    if let Some(want) = expect.get("status")
        && *want != status
    {
        fail("status", want, &status);
    }
    if let Some(want) = expect.get("body") {
        let ok = match (want, body_match) {
            (Json::String(s), _) => subst(s) == text,
            (_, BodyMatch::Subset) => {
                serde_json::from_str::<Json>(text).is_ok_and(|got| holds(want, &got, subst))
            }
            (_, BodyMatch::Exact) => {
                serde_json::from_str::<Json>(text).is_ok_and(|got| got == *want)
            }
        };
        if !ok {
            fail("body", want, &json!(text));
        }
    }
}

/// Fails on keys of `expect` not in `known`: a misspelled key would make a case that cannot fail.
pub fn known_keys(expect: &Json, known: &[&str], failures: &mut Vec<String>) {
    for key in expect.as_object().into_iter().flatten().map(|(k, _)| k) {
        if !known.contains(&key.as_str()) {
            failures.push(format!("unknown expect key {key:?}"));
        }
    }
}
