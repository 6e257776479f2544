//! Evaluator tests: dispatch, saved matchers, overrides, stickiness, custom matchers, bridges.

use super::test_support::{IPAD, IPHONE, MAC, Site, first_draw, request, request_at, seed_drawing};
use super::{OVERRIDE_HEADER, SEGMENT_COOKIE, keys};
use crate::host::{FeatureFlagAdapter, Host};
use crate::request::Request;
use crate::value::Value;

use std::sync::atomic::{AtomicUsize, Ordering};

const RANDOM_NAME: &str = "website/matchers/random.ts";

fn cookie_value(set_cookie: &str) -> &str {
    set_cookie
        .strip_prefix("platform_segment=")
        .and_then(|v| v.split(';').next())
        .expect("segment cookie")
}

#[test]
fn absent_rules_and_rules_without_type_match() {
    let site = Site::new("{}");
    let out = site.run(
        &["null", "{}", r#"{"mobile":true}"#, r#""text""#, "3"],
        &request("/"),
    );
    assert_eq!(out.results, vec![true; 5]);
    assert!(out.effects.warnings.is_empty());
}

#[test]
fn unknown_matchers_are_false_with_a_warning() {
    let site = Site::new("{}");
    let out = site.run(
        &[
            r#"{"__resolveType":"$live/matchers/MatchCron.ts","cron":"* * * * *"}"#,
            r#"{"__resolveType":"$live/matchers/MatchCron.ts"}"#,
            r#"{"__resolveType":"site/matchers/typo.ts"}"#,
        ],
        &request("/"),
    );
    assert_eq!(out.results, vec![false, false, false]);
    assert_eq!(
        out.effects.warnings,
        vec![
            "unknown matcher: $live/matchers/MatchCron.ts",
            "unknown matcher: site/matchers/typo.ts"
        ]
    );
}

#[test]
fn always_never_and_legacy_aliases() {
    let site = Site::new("{}");
    let req = request_at("/", "2026-01-01T00:00:00Z").with_header("user-agent", IPHONE);
    let out = site.run(
        &[
            r#"{"__resolveType":"website/matchers/always.ts"}"#,
            r#"{"__resolveType":"website/matchers/never.ts"}"#,
            r#"{"__resolveType":"$live/matchers/MatchAlways.ts"}"#,
            r#"{"__resolveType":"$live/matchers/MatchDevice.ts","mobile":true}"#,
            r#"{"__resolveType":"$live/matchers/MatchDevice.ts","desktop":true}"#,
            r#"{"__resolveType":"$live/matchers/MatchDate.ts","start":"2025-01-01T00:00:00Z"}"#,
            r#"{"__resolveType":"$live/matchers/MatchDate.ts","start":"2026-01-01T00:00:00Z"}"#,
        ],
        &req,
    );
    assert_eq!(
        out.results,
        vec![true, false, true, true, false, true, false]
    );
    assert!(out.effects.warnings.is_empty());
    assert_eq!(out.effects.varies, vec!["device", "time"]);
}

#[test]
fn environment_comes_from_the_host() {
    let mut site = Site::new("{}");
    let prod = r#"{"__resolveType":"website/matchers/environment.ts","environment":"production"}"#;
    let dev = r#"{"__resolveType":"website/matchers/environment.ts","environment":"development"}"#;
    assert_eq!(
        site.run(&[prod, dev], &request("/")).results,
        vec![false, true]
    );
    site.production = true;
    let out = site.run(&[prod, dev], &request("/"));
    assert_eq!(out.results, vec![true, false]);
    assert!(out.effects.varies.is_empty());
}

#[test]
fn multi_and_or_and_empty() {
    let site = Site::new("{}");
    let req = request("/").with_header("user-agent", IPAD);
    let rule = |op: &str, inner: &[&str]| {
        format!(
            r#"{{"__resolveType":"website/matchers/multi.ts"{op},"matchers":[{}]}}"#,
            inner.join(",")
        )
    };
    let t = r#"{"__resolveType":"website/matchers/always.ts"}"#;
    let f = r#"{"__resolveType":"website/matchers/never.ts"}"#;
    let cases = [
        (rule("", &[t, t]), true),
        (rule("", &[t, f]), false),
        (rule(r#","op":"and""#, &[t, f]), false),
        (rule(r#","op":"or""#, &[f, t]), true),
        (rule(r#","op":"or""#, &[f, f]), false),
        (rule(r#","op":"OR""#, &[f, t]), false),
        (rule("", &[]), true),
        (rule(r#","op":"or""#, &[]), true),
        (rule("", &["{}", "null"]), true),
        (
            r#"{"__resolveType":"website/matchers/multi.ts"}"#.to_string(),
            true,
        ),
    ];
    for (rule, want) in cases {
        assert_eq!(site.eval(&rule, &req).first(), want, "{rule}");
    }
    let unknown = rule(r#","op":"or""#, &[r#"{"__resolveType":"x/unknown.ts"}"#, t]);
    let out = site.eval(&unknown, &req);
    assert!(out.first());
    assert_eq!(out.effects.warnings, vec!["unknown matcher: x/unknown.ts"]);
}

#[test]
fn multi_evaluates_every_inner_rule() {
    // An `or` whose first rule matches still evaluates (and records) the rest, like the reference.
    let site = Site::new("{}");
    let rule = r#"{"__resolveType":"website/matchers/multi.ts","op":"or","matchers":[
        {"__resolveType":"website/matchers/always.ts"},
        {"__resolveType":"website/matchers/device.ts","mobile":true},
        {"__resolveType":"website/matchers/random.ts","traffic":0.5}]}"#;
    let out = site.eval(rule, &request("/").with_seed(9));
    assert!(out.first());
    assert_eq!(out.effects.varies, vec!["cohort", "device"]);
    let mut seg = out.segment;
    let mut fresh = crate::request::RandomSource::new(9);
    fresh.next_f64();
    assert_eq!(seg.draw(), fresh.next_f64(), "exactly one draw was taken");
}

#[test]
fn negate_inverts_and_needs_a_rule() {
    let site = Site::new("{}");
    let req = request("/");
    let cases = [
        (
            r#"{"__resolveType":"website/matchers/negate.ts","matcher":{"__resolveType":"website/matchers/never.ts"}}"#,
            true,
        ),
        (
            r#"{"__resolveType":"website/matchers/negate.ts","matcher":{"__resolveType":"website/matchers/always.ts"}}"#,
            false,
        ),
        (r#"{"__resolveType":"website/matchers/negate.ts"}"#, false),
        (
            r#"{"__resolveType":"website/matchers/negate.ts","matcher":null}"#,
            false,
        ),
        (
            r#"{"__resolveType":"website/matchers/negate.ts","matcher":{}}"#,
            false,
        ),
        (
            r#"{"__resolveType":"website/matchers/negate.ts","matcher":{"__resolveType":"nope.ts"}}"#,
            true,
        ),
    ];
    for (rule, want) in cases {
        assert_eq!(site.eval(rule, &req).first(), want, "{rule}");
    }
}

#[test]
fn saved_matchers_are_followed_and_extra_fields_override() {
    let site = Site::new(
        r#"{
        "Mobile": {"__resolveType":"website/matchers/device.ts","mobile":true},
        "Lang": {"__resolveType":"website/matchers/cookie.ts","name":"language","value":"en"},
        "MobileAlias": {"__resolveType":"Mobile"},
        "AliasTablet": {"__resolveType":"Mobile","tablet":true},
        "Untyped": {"mobile":true}
    }"#,
    );
    let iphone = request("/")
        .with_header("user-agent", IPHONE)
        .with_header("cookie", "language=pt");
    let ipad = request("/").with_header("user-agent", IPAD);
    assert!(site.eval(r#"{"__resolveType":"Mobile"}"#, &iphone).first());
    assert!(!site.eval(r#"{"__resolveType":"Mobile"}"#, &ipad).first());
    assert!(
        site.eval(r#"{"__resolveType":"MobileAlias"}"#, &iphone)
            .first(),
        "chains"
    );
    assert!(
        site.eval(r#"{"__resolveType":"Mobile","tablet":true}"#, &ipad)
            .first()
    );
    let unchecked = site.eval(r#"{"__resolveType":"Mobile","mobile":false}"#, &ipad);
    assert!(
        unchecked.first(),
        "no device checked any more → matches everyone"
    );
    assert!(unchecked.effects.varies.is_empty());
    assert!(
        site.eval(r#"{"__resolveType":"AliasTablet"}"#, &ipad)
            .first(),
        "middle layer adds"
    );
    assert!(
        !site
            .eval(r#"{"__resolveType":"AliasTablet","tablet":false}"#, &ipad)
            .first(),
        "top layer wins"
    );
    assert!(!site.eval(r#"{"__resolveType":"Lang"}"#, &iphone).first());
    assert!(
        site.eval(r#"{"__resolveType":"Lang","value":"pt"}"#, &iphone)
            .first()
    );
    assert!(
        site.eval(r#"{"__resolveType":"Untyped"}"#, &iphone).first(),
        "saved block without type"
    );
}

#[test]
fn saved_matcher_cycles_are_false_with_a_warning() {
    let site = Site::new(
        r#"{
        "A": {"__resolveType":"B"},
        "B": {"__resolveType":"A"},
        "Self": {"__resolveType":"Self"},
        "Loop": {"__resolveType":"website/matchers/negate.ts","matcher":{"__resolveType":"Loop"}},
        "Twice": {"__resolveType":"website/matchers/multi.ts","matchers":[{"__resolveType":"Mobile"},{"__resolveType":"Mobile"}]},
        "Mobile": {"__resolveType":"website/matchers/device.ts","mobile":true}
    }"#,
    );
    let req = request("/").with_header("user-agent", IPHONE);
    let out = site.eval(r#"{"__resolveType":"A"}"#, &req);
    assert!(!out.first());
    assert_eq!(
        out.effects.warnings,
        vec!["matcher cycle through saved matcher A"]
    );
    assert!(!site.eval(r#"{"__resolveType":"Self"}"#, &req).first());
    // negate(false-by-cycle) is true; the warning still tells the editor.
    let out = site.eval(r#"{"__resolveType":"Loop"}"#, &req);
    assert_eq!(
        out.effects.warnings,
        vec!["matcher cycle through saved matcher Loop"]
    );
    let out = site.eval(r#"{"__resolveType":"Twice"}"#, &req);
    assert!(out.first(), "reusing a saved matcher twice is not a cycle");
    assert!(out.effects.warnings.is_empty());
}

#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "the test times the evaluation; the code under test reads no clock"
)]
fn deep_nesting_and_fan_out_are_bounded() {
    let mut rule = r#"{"__resolveType":"website/matchers/always.ts"}"#.to_string();
    for _ in 0..40 {
        rule = format!(r#"{{"__resolveType":"website/matchers/negate.ts","matcher":{rule}}}"#);
    }
    let site = Site::new("{}");
    let out = site.eval(&rule, &request("/"));
    assert!(out.effects.warnings[0].starts_with("matcher nesting deeper than 32 levels"));

    // L0 = multi[L1, L1], L1 = multi[L2, L2], ...: 2^15 evaluations without a budget.
    let mut blocks = Vec::new();
    for i in 0..15 {
        blocks.push(format!(
            r#""L{i}":{{"__resolveType":"website/matchers/multi.ts","matchers":[{{"__resolveType":"L{n}"}},{{"__resolveType":"L{n}"}}]}}"#,
            n = i + 1
        ));
    }
    blocks.push(r#""L15":{"__resolveType":"website/matchers/always.ts"}"#.into());
    let site = Site::new(&format!("{{{}}}", blocks.join(",")));
    let started = std::time::Instant::now();
    let out = site.eval(r#"{"__resolveType":"L0"}"#, &request("/"));
    assert!(!out.first());
    assert!(out.effects.warnings[0].starts_with("matcher evaluation too large"));
    assert!(started.elapsed().as_secs() < 5);
}

#[test]
fn overrides_force_saved_names_and_inline_ids() {
    let site = Site::new(
        r#"{
        "Never": {"__resolveType":"website/matchers/never.ts"},
        "Chain": {"__resolveType":"Never"},
        "Combo": {"__resolveType":"website/matchers/multi.ts","matchers":[
            {"__resolveType":"website/matchers/never.ts"},
            {"__resolveType":"website/matchers/always.ts"}]}
    }"#,
    );
    let forced = |value: &str| request("/").with_header(OVERRIDE_HEADER, value);
    let saved = r#"{"__resolveType":"Never"}"#;
    assert!(site.eval(saved, &forced("Never=1")).first());
    let by_type = forced("website/matchers/always.ts=0");
    let always = r#"{"__resolveType":"website/matchers/always.ts"}"#;
    assert!(
        site.eval(always, &by_type).first(),
        "inline rules are not addressable by their type"
    );
    assert!(
        site.eval(r#"{"__resolveType":"Chain"}"#, &forced("Never=1"))
            .first(),
        "every saved hop is addressable"
    );
    let inline = r#"{"__resolveType":"website/matchers/never.ts"}"#;
    assert!(
        site.eval(inline, &forced("pages-test@sections.0.variants.0.rule=1"))
            .first()
    );
    assert!(!site.eval(inline, &forced("other@x=1")).first());
    // A name that is not a saved block is only an inline id.
    assert!(!site.eval(inline, &forced("Ghost=1")).first());
    // The saved name wins over the inline id.
    assert!(
        !site
            .eval(
                saved,
                &forced("Never=0 pages-test@sections.0.variants.0.rule=1")
            )
            .first()
    );
    assert!(
        site.eval(saved, &forced("pages-test@sections.0.variants.0.rule=1"))
            .first(),
        "else the inline id"
    );
    // Nested rules: inline path and saved-block path.
    let multi = r#"{"__resolveType":"website/matchers/multi.ts","matchers":[
        {"__resolveType":"website/matchers/always.ts"},{"__resolveType":"website/matchers/always.ts"}]}"#;
    assert!(
        !site
            .eval(
                multi,
                &forced("pages-test@sections.0.variants.0.rule.matchers.1=0")
            )
            .first()
    );
    assert!(
        !site
            .eval(r#"{"__resolveType":"Combo"}"#, &request("/"))
            .first()
    );
    assert!(
        site.eval(
            r#"{"__resolveType":"Combo"}"#,
            &forced("Combo@matchers.0=1")
        )
        .first()
    );
    // Fields the referencing rule supplies keep the referencing rule's address.
    let extra =
        r#"{"__resolveType":"Combo","matchers":[{"__resolveType":"website/matchers/never.ts"}]}"#;
    assert!(
        site.eval(
            extra,
            &forced("pages-test@sections.0.variants.0.rule.matchers.0=1")
        )
        .first()
    );
    assert!(!site.eval(extra, &forced("Combo@matchers.0=1")).first());
    // Query carrier.
    let q = request("/?x-platform-matchers-override=Never%3D1");
    assert!(site.eval(saved, &q).first());
}

#[test]
fn override_ids_are_computed_only_when_needed() {
    let site = Site::new("{}");
    let calls = AtomicUsize::new(0);
    let rule = Value::from_json_str(r#"{"__resolveType":"website/matchers/always.ts"}"#).unwrap();
    let req = request("/");
    let overrides = super::Overrides::from_request(&req);
    let mut segment = super::Segment::from_request(&req);
    let mut effects = crate::effects::Effects::default();
    let mut ev = super::Evaluator {
        blocks: &site.blocks,
        registry: &site.registry,
        request: &req,
        overrides: &overrides,
        segment: &mut segment,
        effects: &mut effects,
        host: &crate::host::NoHost,
        production: false,
    };
    assert!(ev.variant_rule(Some(&rule), &|| {
        calls.fetch_add(1, Ordering::Relaxed);
        "x".into()
    }));
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}

fn random_rule(traffic: &str) -> String {
    format!(r#"{{"__resolveType":"website/matchers/random.ts","traffic":{traffic}}}"#)
}

#[test]
fn random_traffic_boundaries() {
    let site = Site::new("{}");
    for seed in 0..20 {
        let req = request("/").with_seed(seed);
        let draw = first_draw(seed);
        assert!(!site.eval(&random_rule("0"), &req).first());
        assert!(site.eval(&random_rule("1"), &req).first());
        assert!(
            site.eval(&random_rule("50"), &req).first(),
            "traffic 50 = always"
        );
        assert!(!site.eval(&random_rule("-1"), &req).first());
        assert_eq!(site.eval(&random_rule("0.5"), &req).first(), draw < 0.5);
        assert_eq!(
            site.eval(&random_rule(r#""0.9""#), &req).first(),
            draw < 0.5,
            "non-number → 0.5"
        );
        assert_eq!(
            site.eval(r#"{"__resolveType":"website/matchers/random.ts"}"#, &req)
                .first(),
            draw < 0.5
        );
    }
}

#[test]
fn inline_random_is_sticky_under_the_shared_name() {
    let site = Site::new("{}");
    let low = seed_drawing(true);
    let out = site.eval(&random_rule("0.5"), &request("/").with_seed(low));
    assert!(out.first());
    assert_eq!(out.effects.varies, vec!["cohort"]);
    assert_eq!(
        out.segment.cache_token().unwrap(),
        format!("{RANDOM_NAME}:1:50")
    );
    let set = out.segment.set_cookie().unwrap();
    assert!(set.ends_with("; Path=/; Max-Age=31536000; SameSite=Lax"));
    // The next request carries the cookie: the decision sticks whatever it draws, and no
    // cookie is written again.
    let high = seed_drawing(false);
    let next = request("/")
        .with_seed(high)
        .with_cookie(SEGMENT_COOKIE, cookie_value(&set));
    let out = site.eval(&random_rule("0.5"), &next);
    assert!(out.first());
    assert_eq!(out.segment.set_cookie(), None);
    // Two inline random rules on one page share the name and the decision.
    let out = site.run(
        &[&random_rule("0.5"), &random_rule("0.5")],
        &request("/").with_seed(high),
    );
    assert_eq!(out.results, vec![false, false]);
}

#[test]
fn traffic_change_rerolls_once() {
    let site = Site::new("{}");
    let set = site
        .eval(
            &random_rule("0.5"),
            &request("/").with_seed(seed_drawing(true)),
        )
        .segment
        .set_cookie()
        .unwrap();
    // Traffic lowered to 0: the stored fingerprint (50) is stale → re-rolled → false.
    let req = request("/").with_cookie(SEGMENT_COOKIE, cookie_value(&set));
    let out = site.eval(&random_rule("0"), &req);
    assert!(!out.first());
    assert_eq!(
        out.segment.cache_token().unwrap(),
        format!("{RANDOM_NAME}:0:0")
    );
    let set2 = out.segment.set_cookie().expect("rewritten");
    // Then it sticks under the new fingerprint.
    let req = request("/").with_cookie(SEGMENT_COOKIE, cookie_value(&set2));
    let out = site.eval(&random_rule("0"), &req);
    assert!(!out.first());
    assert_eq!(out.segment.set_cookie(), None);
}

#[test]
fn saved_random_uses_its_own_name_and_traffic() {
    let site = Site::new(
        r#"{
        "HeroTest": {"__resolveType":"website/matchers/random.ts","traffic":1},
        "HeroAlias": {"__resolveType":"HeroTest"}
    }"#,
    );
    let out = site.eval(r#"{"__resolveType":"HeroTest","traffic":0}"#, &request("/"));
    assert!(
        out.first(),
        "the saved traffic decides, the reference's extra is ignored"
    );
    assert_eq!(out.segment.cache_token().unwrap(), "HeroTest:1:100");
    // One-level lookup: a saved block naming a saved random block is not sticky.
    let out = site.eval(r#"{"__resolveType":"HeroAlias"}"#, &request("/"));
    assert!(out.first());
    assert_eq!(out.segment.cache_token(), None);
    assert_eq!(out.effects.varies, vec!["cohort"]);
}

#[test]
fn legacy_cookie_without_pct_is_honoured() {
    use base64::Engine;
    let site =
        Site::new(r#"{"HeroTest":{"__resolveType":"website/matchers/random.ts","traffic":0}}"#);
    // {"active":["HeroTest"],"inactiveDrawn":[]} as written by the classic runtime.
    let classic = base64::engine::general_purpose::STANDARD
        .encode("%7B%22active%22%3A%5B%22HeroTest%22%5D%2C%22inactiveDrawn%22%3A%5B%5D%7D");
    let out = site.eval(
        r#"{"__resolveType":"HeroTest"}"#,
        &request("/").with_cookie(SEGMENT_COOKIE, &classic),
    );
    assert!(out.first(), "kept although traffic is now 0");
    assert_eq!(out.segment.cache_token().unwrap(), "HeroTest:1:0");
}

#[test]
fn any_override_disables_stickiness() {
    let site = Site::new(r#"{"Other":{"__resolveType":"website/matchers/always.ts"}}"#);
    let req = request("/")
        .with_seed(seed_drawing(true))
        .with_header(OVERRIDE_HEADER, "Other=0");
    let out = site.eval(&random_rule("0.5"), &req);
    assert!(out.first(), "still drawn");
    assert_eq!(out.segment.set_cookie(), None);
    assert_eq!(out.segment.cache_token(), None);
    // Even a cookie decision is ignored: the rule re-rolls.
    let stuck = site
        .eval(&random_rule("1"), &request("/"))
        .segment
        .set_cookie()
        .unwrap();
    let req = request("/")
        .with_seed(seed_drawing(false))
        .with_cookie(SEGMENT_COOKIE, cookie_value(&stuck))
        .with_header(OVERRIDE_HEADER, "Other=0");
    assert!(!site.eval(&random_rule("0.5"), &req).first());
}

#[test]
fn random_inside_multi_or_negate_is_not_sticky() {
    let site = Site::new("{}");
    let multi = format!(
        r#"{{"__resolveType":"website/matchers/multi.ts","matchers":[{}]}}"#,
        random_rule("0.5")
    );
    let negate = format!(
        r#"{{"__resolveType":"website/matchers/negate.ts","matcher":{}}}"#,
        random_rule("0.5")
    );
    for seed in 0..10 {
        let req = request("/").with_seed(seed);
        let low = first_draw(seed) < 0.5;
        let out = site.eval(&multi, &req);
        assert_eq!(out.first(), low);
        assert_eq!(out.segment.set_cookie(), None);
        assert_eq!(out.effects.varies, vec!["cohort"]);
        assert_eq!(site.eval(&negate, &req).first(), !low);
    }
}

/// A host whose custom matchers are one closure.
struct Custom<F>(F);

impl<F> Host for Custom<F>
where
    F: Fn(&str, &Value, &crate::host::MatcherContext<'_>) -> Result<bool, String>,
{
    fn custom_matcher(
        &self,
        key: &str,
        rule: &Value,
        context: &crate::host::MatcherContext<'_>,
    ) -> Result<bool, String> {
        (self.0)(key, rule, context)
    }
}

#[test]
fn custom_matchers_see_the_merged_rule_and_the_context() {
    let mut site = Site::new(
        r#"{"VIP":{"__resolveType":"site/matchers/vip.ts","tier":"gold","result":true}}"#,
    );
    site.registry.register("site/matchers/vip.ts");
    let host = Custom(
        |key: &str, rule: &Value, ctx: &crate::host::MatcherContext<'_>| {
            Ok(key == "site/matchers/vip.ts"
                && rule.get("__resolveType").and_then(Value::as_str)
                    == Some("site/matchers/vip.ts")
                && rule.get("tier").and_then(Value::as_str) == ctx.cookie("tier")
                && ctx.path == "/vip"
                && rule.get("result").and_then(Value::as_bool).unwrap_or(false))
        },
    );
    let eval = |rule: &str, req: &Request| site.run_with(&[rule], req, &host).first();
    let gold = request("https://shop.example/vip").with_cookie("tier", "gold");
    let silver = request("https://shop.example/vip").with_cookie("tier", "silver");
    assert!(eval(r#"{"__resolveType":"VIP"}"#, &gold));
    assert!(!eval(r#"{"__resolveType":"VIP"}"#, &silver));
    assert!(eval(r#"{"__resolveType":"VIP","tier":"silver"}"#, &silver));
    assert!(!eval(r#"{"__resolveType":"VIP","result":false}"#, &gold));
    assert!(site.registry.is_matcher("site/matchers/vip.ts"));
}

#[test]
fn a_failing_custom_matcher_is_false_with_an_error_naming_it() {
    let mut site = Site::new("{}");
    site.registry.register("site/matchers/boom.ts");
    let host = Custom(|_: &str, _: &Value, _: &crate::host::MatcherContext<'_>| Err("boom".into()));
    let out = site.run_with(
        &[
            r#"{"__resolveType":"site/matchers/boom.ts"}"#,
            r#"{"__resolveType":"website/matchers/always.ts"}"#,
        ],
        &request("/"),
        &host,
    );
    assert_eq!(out.results, vec![false, true]);
    assert_eq!(out.effects.errors.len(), 1);
    assert_eq!(out.effects.errors[0].resolve_type, "site/matchers/boom.ts");
    assert_eq!(out.effects.errors[0].message, "boom");
    // A host without the callback fails the same way.
    let out = site.run(
        &[r#"{"__resolveType":"site/matchers/boom.ts"}"#],
        &request("/"),
    );
    assert!(!out.first());
    assert_eq!(out.effects.errors[0].resolve_type, "site/matchers/boom.ts");
}

#[test]
fn custom_registration_replaces_a_builtin() {
    let mut site = Site::new("{}");
    let yes = Custom(|_: &str, _: &Value, _: &crate::host::MatcherContext<'_>| Ok(true));
    site.registry.register(keys::NEVER);
    assert!(
        site.run_with(
            &[r#"{"__resolveType":"website/matchers/never.ts"}"#],
            &request("/"),
            &yes
        )
        .first()
    );
    // A replaced random.ts is a plain matcher: never sticky.
    site.registry.register(keys::RANDOM);
    let out = site.run_with(&[&random_rule("0")], &request("/"), &yes);
    assert!(out.first());
    assert_eq!(out.segment.cache_token(), None);
}

struct Flags;

impl FeatureFlagAdapter for Flags {
    fn is_feature_enabled(&self, key: &str) -> Result<bool, String> {
        Ok(key == "new-checkout")
    }
    fn feature_flag_variant(&self, key: &str) -> Result<Option<String>, String> {
        if key == "broken" {
            return Err("adapter failure".into());
        }
        Ok((key == "exp").then(|| "b".to_string()))
    }
}

impl Host for Flags {
    fn feature_flags(&self) -> Option<&dyn FeatureFlagAdapter> {
        Some(self)
    }
}

#[test]
fn feature_flag_bridge() {
    let mut site = Site::new("{}");
    let key = "posthog/matchers/featureFlag.ts";
    site.registry.register_feature_flag_bridge(key);
    let rule = |fields: &str| format!(r#"{{"__resolveType":"{key}"{fields}}}"#);
    let req = request("/");
    let with = |r: &str| site.run_with(&[r], &req, &Flags);
    assert!(with(&rule(r#","flagKey":"new-checkout""#)).first());
    assert!(!with(&rule(r#","flagKey":"old-checkout""#)).first());
    assert!(with(&rule(r#","flagKey":"exp","variant":"b""#)).first());
    assert!(!with(&rule(r#","flagKey":"exp","variant":"a""#)).first());
    assert!(!with(&rule(r#","flagKey":"new-checkout","variant":"a""#)).first());
    assert!(!with(&rule("")).first());
    let out = with(&rule(r#","flagKey":"broken","variant":"a""#));
    assert!(!out.first());
    assert_eq!(out.effects.errors[0].resolve_type, key);
    assert_eq!(out.effects.errors[0].message, "adapter failure");
    let out = site.run(&[&rule(r#","flagKey":"new-checkout""#)], &req);
    assert!(!out.first());
    assert_eq!(
        out.effects.warnings,
        vec![format!(
            "feature flag matcher {key}: no feature flag adapter configured"
        )]
    );
}

#[test]
fn varies_record_what_was_consulted() {
    let site = Site::new("{}");
    let req = request_at("https://shop.example/?q=1", "2026-01-01T00:00:00Z")
        .with_header("user-agent", MAC)
        .with_header("cf-ipcountry", "BR");
    let out = site.run(
        &[
            r#"{"__resolveType":"website/matchers/device.ts","desktop":true}"#,
            r#"{"__resolveType":"website/matchers/cookie.ts","name":"a"}"#,
            r#"{"__resolveType":"website/matchers/queryString.ts","key":"q"}"#,
            r#"{"__resolveType":"website/matchers/host.ts","host":"shop.example"}"#,
            r#"{"__resolveType":"website/matchers/userAgent.ts","includes":"Mac"}"#,
            r#"{"__resolveType":"website/matchers/cron.ts","end":"2030-01-01T00:00:00Z"}"#,
            r#"{"__resolveType":"website/matchers/location.ts","includeLocations":[{"country":"BR"}]}"#,
            r#"{"__resolveType":"website/matchers/pathname.ts","case":{"type":"Equals","pathname":"/"}}"#,
        ],
        &req,
    );
    assert_eq!(
        out.results,
        vec![true, false, true, true, true, true, true, true]
    );
    assert_eq!(
        out.effects.varies,
        vec![
            "cookie",
            "device",
            "host",
            "path",
            "query",
            "region",
            "time",
            "user-agent"
        ]
    );
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}", seed in 0u64..1000) {
        let site = Site::new(r#"{"Saved":{"__resolveType":"website/matchers/random.ts"}}"#);
        let s = Value::string(&text).to_json_string();
        let rules = [
            format!(r#"{{"__resolveType":"website/matchers/date.ts","start":{s},"end":{s}}}"#),
            format!(r#"{{"__resolveType":"website/matchers/cron.ts","start":{s}}}"#),
            format!(r#"{{"__resolveType":"website/matchers/pathname.ts","pattern":{s},"includes":[{s}]}}"#),
            format!(r#"{{"__resolveType":"website/matchers/userAgent.ts","match":{s},"includes":{s}}}"#),
            format!(r#"{{"__resolveType":"website/matchers/location.ts","includeLocations":[{{"coordinates":{s},"country":{s},"city":{s}}}]}}"#),
            format!(r#"{{"__resolveType":"website/matchers/queryString.ts","conditions":[{{"param":{s},"case":{{"type":"Greater","value":{s}}}}}]}}"#),
            format!(r#"{{"__resolveType":"website/matchers/host.ts","host":{s}}}"#),
            format!(r#"{{"__resolveType":{s}}}"#),
            r#"{"__resolveType":"Saved"}"#.to_string(),
        ];
        let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
        let req = request("/")
            .with_seed(seed)
            .with_header("user-agent", &text)
            .with_header("cf-iplatitude", &text)
            .with_cookie(SEGMENT_COOKIE, &text)
            .with_cookie("__cf_geo_country", &text);
        let out = site.run(&rules, &req);
        let _ = (out.segment.set_cookie(), out.segment.cache_token());
        let forced = req.with_header(OVERRIDE_HEADER, &text);
        let _ = site.run(&rules, &forced);
    }
}
