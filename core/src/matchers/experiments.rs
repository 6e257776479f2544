//! N-way experiments (`sdk/experiments`): configurations the host reads from its key-value
//! store, one variant per visitor drawn in proportion to the weights and kept sticky in the
//! `platform_segment` cookie beside the `random.ts` decisions.

use super::segment::Segment;
use crate::value::Value;
use serde::Serialize;

/// The experiments of a site: `{"version", "experiments": [{key, variants: [{id, weight,
/// payload}]}]}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExperimentsConfig {
    experiments: Vec<Experiment>,
}

/// One experiment and its arms.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    /// The experiment's key (its name in the cookie).
    pub key: String,
    /// The arms, in configuration order.
    pub variants: Vec<ExperimentVariant>,
}

/// One arm of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentVariant {
    /// The arm's id (what the cookie keeps).
    pub id: String,
    /// Its share of visitors, relative to the other arms' (negative counts as 0).
    pub weight: f64,
    /// What the site does with the arm (copy, a layout, a price), as configured.
    pub payload: Value,
}

/// The arm a visitor is in (`resolveExperimentVariant`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentAssignment {
    /// The experiment.
    pub experiment_key: String,
    /// The arm.
    pub variant_id: String,
    /// The arm's payload.
    pub payload: Value,
    /// Drawn by this request (not read back from the cookie).
    pub is_fresh: bool,
}

impl ExperimentsConfig {
    /// Reads a configuration; experiments without a key or arms, and arms without an id, are
    /// left out (a half-written configuration never breaks a page).
    pub fn from_value(config: &Value) -> ExperimentsConfig {
        let list = config
            .get("experiments")
            .and_then(Value::as_array)
            .unwrap_or_default();
        let experiments = list
            .iter()
            .filter_map(|e| {
                let key = e.get("key")?.as_str()?.to_string();
                let variants: Vec<ExperimentVariant> = e
                    .get("variants")?
                    .as_array()?
                    .iter()
                    .filter_map(|v| {
                        Some(ExperimentVariant {
                            id: v.get("id")?.as_str()?.to_string(),
                            weight: v.get("weight").and_then(Value::as_f64).unwrap_or(0.0),
                            payload: v.get("payload").cloned().unwrap_or(Value::Null),
                        })
                    })
                    .collect();
                (!variants.is_empty()).then_some(Experiment { key, variants })
            })
            .collect();
        ExperimentsConfig { experiments }
    }

    /// The experiment under `key`.
    pub fn experiment(&self, key: &str) -> Option<&Experiment> {
        self.experiments.iter().find(|e| e.key == key)
    }
}

impl Experiment {
    /// The fingerprint of the arms: djb2 over the sorted `id:weight` texts joined by `|`,
    /// unsigned, modulo 1,000,000. Reordering the arms keeps it; changing an id or a weight
    /// changes it, which re-rolls visitors once. Never `-1` (the cookie's "unknown").
    pub fn fingerprint(&self) -> i64 {
        let mut arms: Vec<String> = self
            .variants
            .iter()
            .map(|v| format!("{}:{}", v.id, js_number(v.weight)))
            .collect();
        arms.sort();
        let text = arms.join("|");
        i64::from(crate::hash::djb2(&text) % 1_000_000)
    }

    /// The arm `draw` (in `[0, 1)`) falls in, each arm's share proportional to its weight
    /// (negative counts as 0); all weights 0: the first arm. `None` without arms.
    fn arm_at(&self, draw: f64) -> Option<&ExperimentVariant> {
        let weights = || self.variants.iter().map(|v| v.weight.max(0.0));
        let total: f64 = weights().sum();
        let mut point = draw * total;
        for (variant, weight) in self.variants.iter().zip(weights()) {
            if point < weight {
                return Some(variant);
            }
            point -= weight;
        }
        // Rounding may leave the point past the last share: the last arm with weight holds it.
        self.variants
            .iter()
            .rev()
            .find(|v| v.weight > 0.0)
            .or(self.variants.first())
    }
}

/// JavaScript's `String(number)` (ECMAScript `Number::toString`) for the weights of a
/// fingerprint, so a cookie written by the reference runtime keeps its arm: the shortest
/// round-tripping digits, in plain notation from 1e-7 (exclusive) up to 1e21 (exclusive), else
/// as `1.5e-7` / `1e+21`.
fn js_number(n: f64) -> String {
    // Weights come from JSON, so they are finite; `-0` is written `0`, as JavaScript does.
    if n == 0.0 {
        return "0".into();
    }
    // Rust writes the shortest round-tripping digits: `d.ddde±x`.
    let scientific = format!("{:e}", n.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    // The decimal point sits after `point` digits.
    let point = exponent.parse::<i64>().unwrap_or(0) + 1;
    let text = if (k..=21).contains(&point) {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if (1..=21).contains(&point) {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    } else if (-5..=0).contains(&point) {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let sign = if point - 1 < 0 { '-' } else { '+' };
        let rest = if k > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!("{}{rest}e{sign}{}", &digits[..1], (point - 1).abs())
    };
    if n < 0.0 { format!("-{text}") } else { text }
}

impl Segment {
    /// The visitor's arm of `experiment`: one assigned earlier this request, else the cookie's
    /// when it is still an arm and the fingerprint matches (or is unknown), else a fresh draw
    /// from the request's random stream. The assignment is kept in the cookie. `None` for an
    /// experiment without arms.
    pub fn assign(&mut self, experiment: &Experiment) -> Option<ExperimentAssignment> {
        let pct = experiment.fingerprint();
        let known = |id: &str| experiment.variants.iter().find(|v| v.id == id);
        let stored = self.stored_variant(&experiment.key, pct).and_then(known);
        let variant = match self.decided_variant(&experiment.key, pct).and_then(known) {
            Some(variant) => variant,
            None => {
                let variant = match stored {
                    Some(variant) => variant,
                    None => experiment.arm_at(self.draw())?,
                };
                self.record_variant(&experiment.key, &variant.id, pct);
                variant
            }
        };
        Some(ExperimentAssignment {
            experiment_key: experiment.key.clone(),
            variant_id: variant.id.clone(),
            payload: variant.payload.clone(),
            is_fresh: stored.is_none_or(|s| s.id != variant.id),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchers::SEGMENT_COOKIE;
    use crate::matchers::test_support::request;

    fn config(variants: serde_json::Value) -> Experiment {
        let config = Value::from(serde_json::json!({"version": 1, "experiments": [
            {"key": "hero", "variants": variants},
            {"key": "no-arms", "variants": []},
            {"variants": [{"id": "x", "weight": 1}]}
        ]}));
        let parsed = ExperimentsConfig::from_value(&config);
        assert!(
            parsed.experiment("no-arms").is_none(),
            "an experiment without arms is left out"
        );
        parsed.experiment("hero").cloned().unwrap()
    }

    fn ids(e: &Experiment, draws: &[f64]) -> Vec<String> {
        draws
            .iter()
            .map(|d| e.arm_at(*d).unwrap().id.clone())
            .collect()
    }

    #[test]
    fn arms_split_in_proportion_to_their_weights() {
        let two = config(serde_json::json!([{"id": "a", "weight": 60}, {"id": "b", "weight": 40}]));
        assert_eq!(ids(&two, &[0.0, 0.59, 0.6, 0.999]), ["a", "a", "b", "b"]);
        let three = config(serde_json::json!([
            {"id": "a", "weight": 1}, {"id": "b", "weight": -5}, {"id": "c", "weight": 2}]));
        assert_eq!(
            ids(&three, &[0.0, 0.33, 0.34, 0.99]),
            ["a", "a", "c", "c"],
            "weights need not sum to 100; a negative one gets nobody"
        );
        let none = config(serde_json::json!([{"id": "a", "weight": 0}, {"id": "b", "weight": 0}]));
        assert_eq!(
            ids(&none, &[0.0, 0.7]),
            ["a", "a"],
            "all zero: the first arm"
        );
    }

    #[test]
    fn weights_are_written_as_javascript_writes_numbers() {
        for (n, js) in [
            (50.0, "50"),
            (50.5, "50.5"),
            (0.1, "0.1"),
            (100.0, "100"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e22, "1.5e+22"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.25e-7, "1.25e-7"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ] {
            assert_eq!(js_number(n), js, "{n}");
        }
    }

    #[test]
    fn the_fingerprint_follows_ids_and_weights_not_their_order() {
        let ab =
            config(serde_json::json!([{"id": "a", "weight": 50}, {"id": "b", "weight": 50.5}]));
        let ba =
            config(serde_json::json!([{"id": "b", "weight": 50.5}, {"id": "a", "weight": 50}]));
        assert_eq!(ab.fingerprint(), ba.fingerprint());
        let changed =
            config(serde_json::json!([{"id": "a", "weight": 40}, {"id": "b", "weight": 50.5}]));
        assert_ne!(ab.fingerprint(), changed.fingerprint());
        for e in [&ab, &changed] {
            assert!((0..1_000_000).contains(&e.fingerprint()));
        }
        // djb2 of "a:50|b:50.5" with 32-bit wrap, unsigned, modulo 1,000,000.
        let expected = "a:50|b:50.5".bytes().fold(5381u32, |h, c| {
            h.wrapping_mul(33).wrapping_add(u32::from(c))
        });
        assert_eq!(ab.fingerprint(), i64::from(expected % 1_000_000));
    }

    /// The `platform_segment` value a request's assignments set.
    fn cookie_of(segment: &Segment) -> String {
        let set = segment.set_cookie().unwrap();
        let value = set.split(';').next().unwrap();
        value.trim_start_matches("platform_segment=").to_string()
    }

    #[test]
    fn an_assignment_sticks_until_its_arm_or_weights_change() {
        let e = config(serde_json::json!([{"id": "a", "weight": 50}, {"id": "b", "weight": 50}]));
        let mut first = Segment::from_request(&request("/").with_seed(7));
        let drawn = first.assign(&e).unwrap();
        assert!(drawn.is_fresh);
        assert_eq!(
            first.assign(&e).unwrap().variant_id,
            drawn.variant_id,
            "same request"
        );
        let cookie = cookie_of(&first);

        // Any later request with the cookie gets the same arm, whatever its random stream.
        for seed in 0..20 {
            let mut later = Segment::from_request(
                &request("/")
                    .with_seed(seed)
                    .with_cookie(SEGMENT_COOKIE, &cookie),
            );
            let again = later.assign(&e).unwrap();
            assert_eq!(again.variant_id, drawn.variant_id);
            assert!(!again.is_fresh);
            assert_eq!(later.set_cookie(), None, "nothing new to write");
            assert!(later.cache_token().unwrap().contains(&drawn.variant_id));
        }

        // A removed arm re-rolls among the remaining ones.
        let other = if drawn.variant_id == "a" { "b" } else { "a" };
        let without =
            config(serde_json::json!([{"id": other, "weight": 1}, {"id": "c", "weight": 1}]));
        let mut after = Segment::from_request(&request("/").with_cookie(SEGMENT_COOKIE, &cookie));
        let rerolled = after.assign(&without).unwrap();
        assert!(rerolled.is_fresh);
        assert_ne!(rerolled.variant_id, drawn.variant_id);

        // Changed weights re-roll once, then the new assignment sticks.
        let reweighted =
            config(serde_json::json!([{"id": "a", "weight": 90}, {"id": "b", "weight": 10}]));
        let mut once = Segment::from_request(
            &request("/")
                .with_seed(3)
                .with_cookie(SEGMENT_COOKIE, &cookie),
        );
        let fresh = once.assign(&reweighted).unwrap();
        let cookie = cookie_of(&once);
        let mut sticky = Segment::from_request(
            &request("/")
                .with_seed(99)
                .with_cookie(SEGMENT_COOKIE, &cookie),
        );
        let kept = sticky.assign(&reweighted).unwrap();
        assert_eq!(kept.variant_id, fresh.variant_id);
        assert!(!kept.is_fresh);
    }

    #[test]
    fn experiments_share_the_cookie_with_random_rules() {
        let e = config(serde_json::json!([{"id": "a", "weight": 1}]));
        let mut segment = Segment::from_request(&request("/"));
        assert!(segment.decide("HeroTest", 1.0));
        assert_eq!(segment.assign(&e).unwrap().variant_id, "a");
        let cookie = cookie_of(&segment);
        let mut next = Segment::from_request(&request("/").with_cookie(SEGMENT_COOKIE, &cookie));
        assert!(next.decide("HeroTest", 1.0));
        assert!(!next.assign(&e).unwrap().is_fresh);
        assert_eq!(next.set_cookie(), None);
    }
}
