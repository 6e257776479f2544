//! Helpers shared by the matcher tests.

use super::builtins::{self, Builtin, Inputs};
use super::{Evaluator, MatcherRegistry, Overrides, Segment};
use crate::effects::Effects;
use crate::host::{Host, NoHost};
use crate::request::Request;
use crate::value::Value;
use chrono::DateTime;
use std::collections::HashMap;

pub(crate) const IPHONE: &str =
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
pub(crate) const IPAD: &str =
    "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148";
pub(crate) const MAC: &str =
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15";

/// The inline id tests give the variant rule.
pub(crate) const INLINE_ID: &str = "pages-test@sections.0.variants.0.rule";

pub(crate) fn request(url: &str) -> Request {
    Request::new(url).expect("test URL")
}

pub(crate) fn request_at(url: &str, now: &str) -> Request {
    request(url).with_now(
        DateTime::parse_from_rfc3339(now)
            .expect("test time")
            .to_utc(),
    )
}

pub(crate) fn json(text: &str) -> Value {
    Value::from_json_str(text).expect("test JSON")
}

/// Runs a stateless built-in on a rule written as JSON.
pub(crate) fn builtin(kind: Builtin, rule: &str, req: &Request) -> (bool, Effects) {
    let rule = json(rule);
    let mut effects = Effects::default();
    let mut inputs = Inputs {
        request: req,
        effects: &mut effects,
        production: false,
    };
    let matched = builtins::evaluate(kind, rule.as_object().expect("rule object"), &mut inputs)
        .expect("stateless built-in");
    (matched, effects)
}

/// Content, registry and host settings for evaluator tests.
pub(crate) struct Site {
    pub blocks: HashMap<String, Value>,
    pub registry: MatcherRegistry,
    pub production: bool,
}

/// What evaluating rules for one request produced.
pub(crate) struct Outcome {
    pub results: Vec<bool>,
    pub effects: Effects,
    pub segment: Segment,
}

impl Outcome {
    pub(crate) fn first(&self) -> bool {
        self.results[0]
    }
}

impl Site {
    /// A site whose blocks are the given JSON object.
    pub(crate) fn new(blocks: &str) -> Site {
        let blocks = match json(blocks) {
            Value::Object(o) => o
                .entries()
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            _ => panic!("blocks must be an object"),
        };
        Site {
            blocks,
            registry: MatcherRegistry::default(),
            production: false,
        }
    }

    /// Evaluates variant rules (JSON, `null` = no rule) in order for one request.
    pub(crate) fn run(&self, rules: &[&str], req: &Request) -> Outcome {
        self.run_with(rules, req, &NoHost)
    }

    pub(crate) fn run_with(&self, rules: &[&str], req: &Request, host: &dyn Host) -> Outcome {
        let overrides = Overrides::from_request(req);
        let mut segment = Segment::from_request(req);
        let mut effects = Effects::default();
        let rules: Vec<Value> = rules.iter().map(|r| json(r)).collect();
        let mut evaluator = Evaluator {
            blocks: &self.blocks,
            registry: &self.registry,
            request: req,
            overrides: &overrides,
            segment: &mut segment,
            effects: &mut effects,
            host,
            production: self.production,
        };
        let results = rules
            .iter()
            .map(|r| evaluator.variant_rule((!r.is_null()).then_some(r), &|| INLINE_ID.to_string()))
            .collect();
        Outcome {
            results,
            effects,
            segment,
        }
    }

    /// Evaluates one rule with no blocks involved.
    pub(crate) fn eval(&self, rule: &str, req: &Request) -> Outcome {
        self.run(&[rule], req)
    }
}

/// The first draw of a request seeded with `seed`.
pub(crate) fn first_draw(seed: u64) -> f64 {
    crate::request::RandomSource::new(seed).next_f64()
}

/// A seed whose first draw is below `0.5` (`low`) or at/above it.
pub(crate) fn seed_drawing(low: bool) -> u64 {
    (0..)
        .find(|s| (first_draw(*s) < 0.5) == low)
        .expect("some seed")
}
