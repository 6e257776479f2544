//! The `edge` target: a visitor request on `https://shop.example` through `Site::edge_plan_with`,
//! `Site::after_origin`, `Site::stored_copy` and the edge exchange, driven against an in-memory
//! store.
//!
//! Input, as text:
//!
//! ```text
//! @ rounds=2 advance=90 fail=2 refuse nocache collapse profile=static nonce segment={"device":"mobile"}
//! GET /path?query HTTP/1.1
//! Cookie: a=b
//! User-Agent: ...
//!
//! 200
//! Content-Type: text/html
//! Cache-Control: public, max-age=60
//! ```
//!
//! The first line is optional (it starts with `@`); its words, all optional: `rounds=N` (1 to
//! 4) drives the same request N times against one store, the clock moving `advance=S` seconds
//! between rounds; bit i of `fail=MASK` makes the origin fail in round i; `refuse`: the store
//! keeps no copy; `nocache`: the host has no store; `collapse`: round 0 is a leader and a
//! follower of one collapsed miss; `profile=`, `nonce`, `segment=` (the rest of the line, JSON)
//! are the edge hints. Then the request's head, a blank line, and the origin's answer: a status
//! line (`fail`, or anything that is not a number, is an origin that did not answer) and its
//! header lines. Each input runs against three sites (defaults; CSP enforce, speculation rules,
//! bypass paths, no geo key; development mode).
//!
//! Properties: nothing panics; no header the core produces (plan, origin request, decision,
//! stored copy, every step) holds CR, LF or NUL; a redirect's `Location` stays on the site (a
//! path starting with one `/`, or an absolute URL on `shop.example`, however a browser resolves
//! it); every exchange (refreshes included) reaches `Done` within [`MAX_STEPS`] steps, with the
//! host's answers always taken, and no flight is left in the air.

use crate::sites::{self, HOST};
use crate::{check_headers, header_fields, is_token, parse_head, split_head};
use sitefile_core::Request;
use sitefile_core::edge::{EdgeAction, EdgePlan};
use sitefile_core::site::{
    BodySource, EdgeExchange, EdgeHints, ExchangeAnswer, ExchangeStep, OriginAnswer, StoredHead,
};
use sitefile_core::value::Value;
use sitefile_core::{Site, site::OriginOutcome};
use std::collections::HashMap;
use std::sync::Arc;
use url::Url;

/// The most steps one exchange may take before it is done.
pub const MAX_STEPS: usize = 64;

/// The clock at round 0, in milliseconds since the epoch.
const START_MS: f64 = 1_767_225_600_000.0;

/// What an input asks for.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Method and target.
    pub method: String,
    /// The request target.
    pub target: String,
    /// The request's header fields.
    pub headers: Vec<(String, String)>,
    /// The origin's answer; `None`: it does not answer.
    pub origin: Option<OriginAnswer>,
    /// Rounds of the same request against one store.
    pub rounds: u32,
    /// Seconds between rounds.
    pub advance: u64,
    /// Bit i: the origin fails in round i.
    pub fail: u32,
    /// The store keeps no copy.
    pub refuse: bool,
    /// The host has a store.
    pub cache: bool,
    /// Round 0 is a collapsed miss: a leader and a follower.
    pub collapse: bool,
    /// The edge hints.
    pub hints: EdgeHints,
}

/// Reads an input.
pub fn scenario(data: &[u8]) -> Scenario {
    let (mut lines, rest) = split_head(data);
    let knobs = match lines.first() {
        Some(first) if first.starts_with('@') => lines.remove(0),
        _ => String::new(),
    };
    let head = parse_head(&lines);
    let (origin_lines, _) = split_head(rest);
    let origin = origin_lines.split_first().and_then(|(status, fields)| {
        let status = status.trim().parse::<u16>().ok()?;
        Some(OriginAnswer {
            status,
            headers: header_fields(fields),
        })
    });
    let mut s = Scenario {
        method: head.method,
        target: head.target,
        headers: head.headers,
        origin: origin.or_else(|| rest.is_empty().then(default_origin)),
        rounds: 1,
        advance: 0,
        fail: 0,
        refuse: false,
        cache: true,
        collapse: false,
        hints: EdgeHints::default(),
    };
    let mut words = knobs.trim_start_matches('@').trim_start();
    while !words.is_empty() {
        if let Some(json) = words.strip_prefix("segment=") {
            s.hints.segment = Value::from_json_str(json).ok();
            break;
        }
        let (word, after) = words.split_once(' ').unwrap_or((words, ""));
        words = after.trim_start();
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        match key {
            "rounds" => s.rounds = value.parse().unwrap_or(1),
            "advance" => s.advance = value.parse().unwrap_or(0),
            "fail" => s.fail = value.parse().unwrap_or(0),
            "refuse" => s.refuse = true,
            "nocache" => s.cache = false,
            "collapse" => s.collapse = true,
            "profile" => s.hints.profile = Some(value.to_string()),
            "nonce" => s.hints.nonce = Some([7; 16]),
            _ => {}
        }
    }
    s.rounds = s.rounds.clamp(1, 4);
    s
}

/// The origin's answer when the input gives none: a cacheable HTML page.
fn default_origin() -> OriginAnswer {
    OriginAnswer {
        status: 200,
        headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
    }
}

fn setups() -> [(&'static str, &'static str); 3] {
    [
        ("defaults", r#"{"env": {"BUILD_HASH": "b1"}}"#),
        (
            "csp enforce",
            r#"{"env": {"BUILD_HASH": "b2"}, "options": {"cspMode": "enforce",
                "csp": ["default-src 'self'"], "speculationRules": true,
                "extraBypassPaths": ["/internal"], "geoCacheKey": "off",
                "staleIfErrorDeadlineMs": 500}}"#,
        ),
        ("development", r#"{"env": {"NODE_ENV": "development"}}"#),
    ]
}

/// Runs one input against every site; panics when a property does not hold.
pub fn run(data: &[u8]) {
    let scenario = scenario(data);
    for (name, setup) in setups() {
        let site = Arc::new(sites::site(sites::storefront_with_redirects(), setup));
        Run {
            site: &site,
            scenario: &scenario,
            setup: name,
            store: HashMap::new(),
            url: Url::parse(&format!("https://{HOST}/")).expect("a URL"),
        }
        .all();
        assert_eq!(
            site.edge_flights_in_air(),
            0,
            "{name}: a flight left in the air"
        );
    }
}

struct Run<'a> {
    site: &'a Arc<Site>,
    scenario: &'a Scenario,
    setup: &'static str,
    store: HashMap<String, StoredHead>,
    /// The URL of the request being driven.
    url: Url,
}

impl Run<'_> {
    fn request(&self, now_ms: f64) -> Option<Request> {
        let s = self.scenario;
        let target = if s.target.starts_with('/') {
            s.target.clone()
        } else {
            format!("/{}", s.target)
        };
        let mut request = Request::new(&format!("https://{HOST}{target}")).ok()?;
        if request.url().host_str() != Some(HOST) {
            return None;
        }
        if is_token(&s.method) {
            request = request.with_method(&s.method);
        }
        for (name, value) in &s.headers {
            request = request.with_header(name, value);
        }
        let now = chrono::DateTime::from_timestamp_millis(now_ms as i64)?;
        Some(request.with_now(now))
    }

    fn all(&mut self) {
        for round in 0..self.scenario.rounds {
            let now_ms = START_MS + (round as u64 * self.scenario.advance) as f64 * 1000.0;
            let Some(request) = self.request(now_ms) else {
                return;
            };
            let Ok(plan) = self.site.edge_plan_with(&request, &self.scenario.hints) else {
                return; // a profile name that is none of the spec's
            };
            self.url = request.url().clone();
            self.check_plan(&plan, &request);
            let fails = self.scenario.fail & (1 << round) != 0;
            let origin = self.scenario.origin.clone().filter(|_| !fails);
            if let Some(origin) = &origin {
                let decision = self.site.after_origin(&plan, origin);
                self.check("decision", &decision.plan.headers);
                if let Some(stored) = &decision.store {
                    self.check("stored copy", stored);
                }
            }
            let outcome = OriginOutcome {
                status: origin.as_ref().map(|o| o.status),
                degraded: false,
            };
            for age in [0, 30, 86_400 * 400] {
                let copy = self.site.stored_copy(&plan, age, Some(&outcome));
                self.check("stored copy served", &copy.headers);
                let copy = self.site.stored_copy(&plan, age, None);
                self.check("stored copy served", &copy.headers);
            }
            if round == 0 && self.scenario.collapse {
                self.collapse(&request, origin.as_ref(), now_ms);
            } else {
                let mut exchange = self.exchange(&request);
                let refreshes = self.drive(&mut exchange, origin.as_ref(), now_ms, false);
                self.refreshes(refreshes, origin.as_ref(), now_ms);
            }
        }
    }

    fn exchange(&self, request: &Request) -> EdgeExchange {
        self.site
            .edge_exchange(request, &self.scenario.hints, self.scenario.cache)
            .expect("the hints were read by the plan already")
    }

    fn check(&self, what: &str, headers: &[(String, String)]) {
        check_headers(headers, &format!("{}: {what}", self.setup));
    }

    fn check_plan(&self, plan: &EdgePlan, request: &Request) {
        self.check("plan", &plan.headers);
        self.check("plan (HTML)", &plan.html_headers);
        self.check("origin request", &plan.origin_headers);
        if let EdgeAction::Redirect(redirect) = &plan.action {
            check_location(&redirect.location, request.url());
            let header = plan
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("location"));
            assert_eq!(
                header.map(|(_, v)| v.as_str()),
                Some(redirect.location.as_str()),
                "a redirect's plan carries its Location"
            );
        }
    }

    /// A leader and a follower of one collapsed miss: the leader stops at the origin, the
    /// follower is started, the leader finishes, then the follower.
    fn collapse(&mut self, request: &Request, origin: Option<&OriginAnswer>, now_ms: f64) {
        let mut leader = self.exchange(request);
        let mut refreshes = self.drive(&mut leader, origin, now_ms, true);
        let mut follower = self.exchange(request);
        refreshes.extend(self.drive(&mut follower, origin, now_ms, true));
        refreshes.extend(self.drive(&mut leader, origin, now_ms, false));
        refreshes.extend(self.drive(&mut follower, origin, now_ms, false));
        self.refreshes(refreshes, origin, now_ms);
    }

    fn refreshes(
        &mut self,
        mut pending: Vec<EdgeExchange>,
        origin: Option<&OriginAnswer>,
        now: f64,
    ) {
        // A refresh never announces another, but bound it anyway.
        for _ in 0..8 {
            let Some(mut refresh) = pending.pop() else {
                return;
            };
            let more = self.drive(&mut refresh, origin, now, false);
            pending.extend(more);
        }
        assert!(
            pending.is_empty(),
            "{}: refreshes announce refreshes",
            self.setup
        );
    }

    /// Drives `exchange` to `Done` (or, with `pause`, to its first `askOrigin` or `follow`),
    /// answering from the store and the origin; the refreshes it announced.
    fn drive(
        &mut self,
        exchange: &mut EdgeExchange,
        origin: Option<&OriginAnswer>,
        now_ms: f64,
        pause: bool,
    ) -> Vec<EdgeExchange> {
        let setup = self.setup;
        let mut refreshes = Vec::new();
        for _ in 0..MAX_STEPS {
            let step = exchange.next_step();
            let answer = match step {
                ExchangeStep::Lookup { key } => ExchangeAnswer::Lookup {
                    copy: self.store.get(&key).cloned(),
                },
                ExchangeStep::AskOrigin { headers, .. } => {
                    self.check("askOrigin", &headers);
                    if pause {
                        return refreshes;
                    }
                    match origin {
                        Some(origin) => ExchangeAnswer::Origin(origin.clone()),
                        None => ExchangeAnswer::OriginFailed {
                            reason: Some("refused".into()),
                        },
                    }
                }
                ExchangeStep::Follow { .. } => {
                    if pause {
                        return refreshes;
                    }
                    assert!(
                        exchange.followed_flight_landed(),
                        "{setup}: a follow whose flight never lands"
                    );
                    ExchangeAnswer::Followed
                }
                ExchangeStep::Delete { keys } => {
                    for key in keys {
                        self.store.remove(&key);
                    }
                    continue;
                }
                ExchangeStep::Refresh => {
                    refreshes.extend(exchange.take_refresh());
                    continue;
                }
                ExchangeStep::Respond {
                    headers,
                    body,
                    store,
                    ..
                } => {
                    self.check("respond", &headers.to_vec());
                    if body == BodySource::Empty
                        && let Some((_, location)) = headers
                            .iter()
                            .find(|(n, _)| n.eq_ignore_ascii_case("location"))
                    {
                        check_location(location, &self.url);
                    }
                    let Some(store) = store else {
                        continue;
                    };
                    self.check("store", &store.headers);
                    let kept = !self.scenario.refuse;
                    if kept {
                        let head = StoredHead {
                            status: store.status,
                            headers: store.headers.into(),
                        };
                        self.store.insert(store.key, head);
                    }
                    ExchangeAnswer::Kept { kept }
                }
                ExchangeStep::Settle { .. } | ExchangeStep::Fail { .. } => continue,
                ExchangeStep::Done => return refreshes,
            };
            if let Err(error) = exchange.answer(answer, now_ms) {
                panic!("{setup}: the answer to the step handed out is refused: {error}");
            }
        }
        panic!("{setup}: the exchange is not done within {MAX_STEPS} steps");
    }
}

/// Panics unless `location` keeps a browser on the request's host.
pub fn check_location(location: &str, request: &Url) {
    let host = request.host_str().unwrap_or(HOST);
    if location.starts_with('/') {
        assert!(
            !location.starts_with("//") && !location.starts_with("/\\"),
            "Location {location:?} is protocol-relative"
        );
    } else {
        let url = Url::parse(location)
            .unwrap_or_else(|e| panic!("Location {location:?} is neither a path nor a URL: {e}"));
        assert_eq!(
            url.host_str(),
            Some(host),
            "Location {location:?} leaves the site"
        );
        assert!(
            matches!(url.scheme(), "https" | "http"),
            "Location {location:?} is not http(s)"
        );
    }
    // However a browser resolves it against the page (tabs and newlines dropped, `\` as `/`).
    let resolved = request
        .join(location)
        .unwrap_or_else(|e| panic!("Location {location:?} does not resolve: {e}"));
    assert_eq!(
        resolved.host_str(),
        Some(host),
        "Location {location:?} resolves off the site"
    );
}
