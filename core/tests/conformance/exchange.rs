//! The runner of the `edge-exchange/` suite: requests driven through `Site::edge_exchange` the
//! way a host drives them — a store (a map of key → copy), an origin that answers as the step
//! says, background refreshes run once the visitor was answered, collapsed misses interleaved —
//! with steps and answers in their JSON form, the one every binding passes (README,
//! "Edge exchange cases").

use crate::support;
use serde_json::{Value as Json, json};
use sitefile_core::Site;
use sitefile_core::site::{EdgeExchange, EdgeHints, TimedAnswer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A copy in the runner's store.
struct Copy {
    status: Json,
    headers: Json,
    body: String,
}

/// The host of one case: its store and what the origin was asked.
#[derive(Default)]
struct Host {
    store: BTreeMap<String, Copy>,
    origin_requests: u64,
}

/// What driving one exchange produced.
#[derive(Default)]
struct Driven {
    trace: Vec<String>,
    response: Option<(Json, Json, String)>,
    failed: bool,
    deadline: Json,
    refresh: Option<EdgeExchange>,
    /// The body of the copy looked up (what a `stored` body sends).
    looked_up: Option<String>,
    /// The body of the origin's answer (what an `origin` body sends).
    origin_body: Option<String>,
}

/// Where a drive stops before its exchange is done.
#[derive(PartialEq)]
enum Pause {
    /// Not before it is done.
    Never,
    /// At the first `askOrigin` (a collapse's leader) or `follow` (its followers).
    AtOrigin,
}

fn answer(exchange: &mut EdgeExchange, answer: Json, now_ms: f64) {
    let mut form = answer;
    form["nowMs"] = json!(now_ms);
    let timed: TimedAnswer = serde_json::from_value(form.clone())
        .unwrap_or_else(|e| panic!("the answer {form} reads: {e}"));
    exchange
        .answer(timed.answer, timed.now_ms)
        .unwrap_or_else(|e| panic!("the answer {form} is taken: {e}"));
}

/// Answers the pending `askOrigin` from `origin` (`{status, headers, body}`, `{"fail"}` or
/// `{"hang": true}`, which misses any deadline).
fn ask_origin(
    exchange: &mut EdgeExchange,
    origin: &Json,
    host: &mut Host,
    d: &mut Driven,
    now: f64,
) {
    host.origin_requests += 1;
    if origin.get("fail").is_some() || origin.get("hang").is_some() {
        let reason = origin["fail"].as_str().unwrap_or("deadline");
        return answer(
            exchange,
            json!({"answer": "originFailed", "reason": reason}),
            now,
        );
    }
    d.origin_body = Some(origin["body"].as_str().unwrap_or_default().to_string());
    let status = origin.get("status").cloned().unwrap_or(json!(200));
    let headers = json!(support::pairs(&origin["headers"]));
    answer(
        exchange,
        json!({"answer": "origin", "status": status, "headers": headers}),
        now,
    );
}

/// Drives `exchange` until it is done (or pauses as `pause` says), answering from `host`.
fn drive(
    exchange: &mut EdgeExchange,
    origin: &Json,
    step_case: &Json,
    host: &mut Host,
    d: &mut Driven,
    now: f64,
    pause: Pause,
) {
    loop {
        let step = serde_json::to_value(exchange.next_step()).expect("steps serialize");
        let kind = step["step"].as_str().expect("a step kind").to_string();
        d.trace.push(kind.clone());
        match kind.as_str() {
            "lookup" => {
                let key = step["key"].as_str().expect("a key");
                let copy = host.store.get(key).map(|c| {
                    d.looked_up = Some(c.body.clone());
                    json!({"status": c.status, "headers": c.headers})
                });
                answer(exchange, json!({"answer": "lookup", "copy": copy}), now);
            }
            "askOrigin" | "follow" => {
                d.deadline = step["deadlineMs"].clone();
                if pause == Pause::AtOrigin {
                    return;
                }
                if kind == "follow" {
                    panic!("a lone exchange follows a flight nobody flies");
                }
                ask_origin(exchange, origin, host, d, now);
            }
            "delete" => {
                for key in step["keys"].as_array().into_iter().flatten() {
                    host.store.remove(key.as_str().expect("keys are strings"));
                }
            }
            "refresh" => d.refresh = exchange.take_refresh(),
            "respond" => {
                let body = match step["body"].as_str() {
                    Some("stored") => d.looked_up.clone().expect("a copy was looked up"),
                    Some("origin") => d.origin_body.clone().expect("the origin answered"),
                    _ => String::new(),
                };
                if let Some(store) = step["store"].as_object() {
                    let kept = step_case["keepRefused"] != json!(true);
                    if kept {
                        let key = store["key"].as_str().expect("a key").to_string();
                        let copy = Copy {
                            status: store["status"].clone(),
                            headers: store["headers"].clone(),
                            body: body.clone(),
                        };
                        host.store.insert(key, copy);
                    }
                    answer(exchange, json!({"answer": "kept", "kept": kept}), now);
                }
                d.response = Some((step["status"].clone(), step["headers"].clone(), body));
            }
            "settle" => {}
            "fail" => d.failed = true,
            "done" => return,
            other => panic!("unknown step {other}"),
        }
    }
}

/// The time of a step's request, in milliseconds since the epoch.
fn now_of(step: &Json) -> f64 {
    support::instant(&step["request"]["now"]).timestamp_millis() as f64
}

fn exchange_of(site: &Arc<Site>, step: &Json) -> EdgeExchange {
    let request = support::request(&step["request"]);
    let hints: EdgeHints = step
        .get("hints")
        .map(|h| serde_json::from_value(h.clone()).expect("edge hints"))
        .unwrap_or_default();
    let cache = step["noStore"] != json!(true);
    site.edge_exchange(&request, &hints, cache)
        .expect("the hints are valid")
}

/// Drives one exchange to its end, then its background refresh (answered from `refreshOrigin`,
/// else `origin`).
fn exchange_step(site: &Arc<Site>, step: &Json, host: &mut Host) -> (Driven, Option<Driven>) {
    let now = now_of(step);
    let mut exchange = exchange_of(site, step);
    let mut d = Driven::default();
    drive(
        &mut exchange,
        &step["origin"],
        step,
        host,
        &mut d,
        now,
        Pause::Never,
    );
    let refreshed = d.refresh.take().map(|mut refresh| {
        let origin = step.get("refreshOrigin").unwrap_or(&step["origin"]);
        let mut r = Driven::default();
        drive(&mut refresh, origin, step, host, &mut r, now, Pause::Never);
        r
    });
    (d, refreshed)
}

/// Checks one exchange's expectations: `trace`, `status`, `headers`, `body`, `failed`,
/// `deadlineMs`, and the refresh's `refreshTrace`.
fn check_driven(
    expect: &Json,
    d: &Driven,
    refreshed: Option<&Driven>,
    at: &str,
    failures: &mut Vec<String>,
) {
    let mut fail = |what: &str, want: &Json, got: &Json| {
        failures.push(format!(
            "{at}{what}:\n    expected {want}\n    actual   {got}"
        ));
    };
    let (status, headers, body) = match &d.response {
        Some((s, h, b)) => (s.clone(), support::pairs(h), json!(b)),
        None => (Json::Null, Vec::new(), Json::Null),
    };
    let checks = [
        ("trace", json!(d.trace)),
        ("status", status),
        ("body", body),
        ("failed", json!(d.failed)),
        ("deadlineMs", d.deadline.clone()),
        (
            "refreshTrace",
            refreshed.map_or(Json::Null, |r| json!(r.trace)),
        ),
    ];
    for (name, got) in checks {
        if let Some(want) = expect.get(name)
            && *want != got
        {
            fail(name, want, &got);
        }
    }
    let mut header_failures = Vec::new();
    support::check_headers(
        &expect["headers"],
        &headers,
        &|s| s.to_string(),
        &mut header_failures,
    );
    failures.extend(header_failures.into_iter().map(|f| format!("{at}{f}")));
}

/// The keys every exchange expectation may use.
const EXCHANGE_KEYS: [&str; 7] = [
    "trace",
    "status",
    "headers",
    "body",
    "failed",
    "deadlineMs",
    "refreshTrace",
];

/// A leader and `followers` concurrent requests for one key: the leader stops at the origin,
/// each follower at its `follow`, then the leader is answered and finishes, then the followers.
fn collapse_step(site: &Arc<Site>, step: &Json, host: &mut Host, failures: &mut Vec<String>) {
    let now = now_of(step);
    let origin = &step["origin"];
    let mut leader = exchange_of(site, step);
    let mut led = Driven::default();
    drive(
        &mut leader,
        origin,
        step,
        host,
        &mut led,
        now,
        Pause::AtOrigin,
    );
    let count = step["followers"].as_u64().expect("a follower count");
    let mut followers: Vec<(EdgeExchange, Driven)> = (0..count)
        .map(|_| {
            let mut follower = exchange_of(site, step);
            let mut d = Driven::default();
            drive(
                &mut follower,
                origin,
                step,
                host,
                &mut d,
                now,
                Pause::AtOrigin,
            );
            (follower, d)
        })
        .collect();
    if led.trace.last().map(String::as_str) == Some("askOrigin") {
        ask_origin(&mut leader, origin, host, &mut led, now);
    }
    drive(&mut leader, origin, step, host, &mut led, now, Pause::Never);
    for (follower, d) in &mut followers {
        if d.trace.last().map(String::as_str) == Some("follow") {
            answer(follower, json!({"answer": "followed"}), now);
        } else {
            ask_origin(follower, origin, host, d, now);
        }
        drive(follower, origin, step, host, d, now, Pause::Never);
    }
    let expect = &step["expect"];
    support::known_keys(&expect["leader"], &EXCHANGE_KEYS, failures);
    support::known_keys(&expect["followers"], &EXCHANGE_KEYS, failures);
    check_driven(&expect["leader"], &led, None, "leader ", failures);
    for (n, (_, d)) in followers.iter().enumerate() {
        check_driven(
            &expect["followers"],
            d,
            None,
            &format!("follower {n} "),
            failures,
        );
    }
}

/// Runs every step of an `edge-exchange/` case; the failures, each prefixed with its step.
fn run_case(case: &Json) -> Vec<String> {
    let site = Arc::new(support::site_for(case));
    let mut host = Host::default();
    let mut failures = Vec::new();
    for (index, step) in case["steps"].as_array().expect("steps").iter().enumerate() {
        let before = host.origin_requests;
        let expect = &step["expect"];
        let mut own = Vec::new();
        let label = step["do"].as_str().unwrap_or_default();
        let known: &[&str] = match label {
            "exchange" => {
                let (d, refreshed) = exchange_step(&site, step, &mut host);
                check_driven(expect, &d, refreshed.as_ref(), "", &mut own);
                &EXCHANGE_KEYS
            }
            "collapse" => {
                collapse_step(&site, step, &mut host, &mut own);
                &["leader", "followers"]
            }
            "purge" => {
                let keys = site.purge(step["target"].as_str().expect("a purge target"));
                for key in &keys {
                    host.store.remove(key);
                }
                &[]
            }
            other => panic!("unknown step {other:?}"),
        };
        let common = ["originRequests", "storedCopies", "flightsInAir"];
        support::known_keys(expect, &[known, &common[..]].concat(), &mut own);
        let checks = [
            ("originRequests", json!(host.origin_requests - before)),
            ("storedCopies", json!(host.store.len())),
            ("flightsInAir", json!(site.edge_flights_in_air())),
        ];
        for (name, got) in checks {
            if let Some(want) = expect.get(name)
                && *want != got
            {
                own.push(format!("{name}:\n    expected {want}\n    actual   {got}"));
            }
        }
        failures.extend(
            own.into_iter()
                .map(|f| format!("step {index} ({label}): {f}")),
        );
    }
    failures
}

#[test]
fn edge_exchange_cases() {
    support::run_suites(&["edge-exchange"], run_case);
}
