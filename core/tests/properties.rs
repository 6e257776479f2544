//! Property tests of the core's public API: the content revision is a function of the content
//! only, override parsing and request building never panic, and resolving arbitrary content
//! never panics, terminates and is deterministic.
//!
//! Sizes are bounded so the whole file runs in a few seconds in a debug build; set
//! `PROPTEST_CASES` to run more cases locally.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value as Json, json};
use sitefile_core::content::Snapshot;
use sitefile_core::matchers::{OVERRIDE_HEADER, Overrides};
use sitefile_core::resolve::{KeyRegistry, ResolveConfig, Runtime, Step};
use sitefile_core::value::{Key, Value, intern};
use sitefile_core::{NoHost, Request};
use std::collections::BTreeMap;

/// 256 cases per property unless `PROPTEST_CASES` says otherwise.
#[allow(
    clippy::disallowed_methods,
    reason = "the harness reads its own setting; the core under test does not"
)]
fn config() -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            default.cases
        } else {
            256
        },
        failure_persistence: None,
        ..default
    }
}

// ---------------------------------------------------------------------------------------------
// (a) The revision depends on the content only.
// ---------------------------------------------------------------------------------------------

/// Arbitrary JSON: every kind of scalar (unicode strings, floats), nested arrays and objects
/// whose keys come in generation order (not sorted).
fn arb_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Json::from),
        "\\PC{0,8}".prop_map(Json::from),
        "[a\"\\\\\n\t\u{0}\u{1f}é😀]{0,4}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec(("[a-c_]{0,3}|\\PC{0,4}", inner), 0..6).prop_map(|entries| {
                let mut map = Map::new();
                for (k, v) in entries {
                    // A repeated key keeps its first position and its last value.
                    map.insert(k, v);
                }
                Json::Object(map)
            }),
        ]
    })
}

/// The same value with the entries of every object reordered (rotated, sometimes reversed).
fn reorder(value: &Json, seed: u64) -> Json {
    match value {
        Json::Array(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| reorder(v, mix(seed, i as u64)))
                .collect(),
        ),
        Json::Object(map) => {
            let mut entries: Vec<(&String, &Json)> = map.iter().collect();
            if !entries.is_empty() {
                let by = (seed % entries.len() as u64) as usize;
                entries.rotate_left(by);
            }
            if seed & 0x100 != 0 {
                entries.reverse();
            }
            Json::Object(
                entries
                    .into_iter()
                    .enumerate()
                    .map(|(i, (k, v))| (k.clone(), reorder(v, mix(seed, i as u64 + 17))))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

fn mix(seed: u64, n: u64) -> u64 {
    let mut x = seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 29)
}

/// Compact JSON with every non-ASCII character written as a `\uXXXX` escape.
fn ascii_escaped(value: &Json) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// How one formatting of the content writes a block's JSON text.
#[derive(Debug, Clone, Copy)]
enum Format {
    Compact,
    Pretty,
    Ascii,
}

fn snapshot_of(blocks: &[(String, Json)], format: Format) -> Snapshot {
    Snapshot::from_blocks(blocks.iter().map(|(name, json)| {
        let text = match format {
            Format::Compact => serde_json::to_string(json).unwrap(),
            Format::Pretty => serde_json::to_string_pretty(json).unwrap(),
            Format::Ascii => ascii_escaped(json),
        };
        let value = Value::from_json_str(&text)
            .unwrap_or_else(|e| panic!("serde_json output must parse: {e}\n{text}"));
        (intern(name), value)
    }))
}

/// Changes one scalar (or empty container) somewhere in `value`, chosen by `path`.
fn mutate(value: &mut Json, path: &[usize]) {
    match value {
        Json::Array(items) if !items.is_empty() => {
            let i = path.first().copied().unwrap_or(0) % items.len();
            mutate(&mut items[i], path.get(1..).unwrap_or_default());
        }
        Json::Array(items) => items.push(Json::Null),
        Json::Object(map) if !map.is_empty() => {
            let i = path.first().copied().unwrap_or(0) % map.len();
            let (_, v) = map.iter_mut().nth(i).unwrap();
            mutate(v, path.get(1..).unwrap_or_default());
        }
        Json::Object(map) => {
            map.insert("added".into(), Json::Null);
        }
        Json::String(s) if s == "mutated" => *value = Json::Null,
        _ => *value = Json::from("mutated"),
    }
}

fn arb_blocks() -> impl Strategy<Value = Vec<(String, Json)>> {
    prop::collection::btree_map("[A-Za-z0-9 _-]{1,8}", arb_json(), 1..6)
        .prop_map(|m| m.into_iter().collect())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn revision_ignores_key_order_block_order_and_formatting(
        blocks in arb_blocks(),
        seed in any::<u64>(),
    ) {
        let base = snapshot_of(&blocks, Format::Compact).revision().to_string();
        prop_assert_eq!(base.len(), 64, "a SHA-256 in hex");

        let mut shuffled: Vec<(String, Json)> = blocks
            .iter()
            .enumerate()
            .map(|(i, (n, v))| (n.clone(), reorder(v, mix(seed, i as u64))))
            .collect();
        shuffled.reverse();
        let rotate = (seed % shuffled.len() as u64) as usize;
        shuffled.rotate_left(rotate);

        for format in [Format::Compact, Format::Pretty, Format::Ascii] {
            let snapshot = snapshot_of(&shuffled, format);
            prop_assert_eq!(snapshot.revision(), base.as_str(), "{:?}", format);
        }
    }

    #[test]
    fn revision_changes_when_content_changes(
        blocks in arb_blocks(),
        which in any::<usize>(),
        path in prop::collection::vec(any::<usize>(), 0..6),
        kind in 0..4u8,
    ) {
        let base = snapshot_of(&blocks, Format::Compact).revision().to_string();
        let mut changed = blocks.clone();
        let i = which % changed.len();
        match kind {
            // A value somewhere inside a block.
            0 | 1 => mutate(&mut changed[i].1, &path),
            // A block renamed.
            2 => changed[i].0.push('~'),
            // A block added (names are at most 8 characters, so this one is new).
            _ => changed.push(("a block added".into(), Json::Null)),
        }
        let after = snapshot_of(&changed, Format::Compact);
        prop_assert_ne!(after.revision(), base.as_str());
    }
}

/// A block of a small site: a page (one of a few patterns, maybe the not-found page), a block
/// using the location matcher, or neither.
fn arb_site_block() -> impl Strategy<Value = Json> {
    prop_oneof![
        (
            select(vec!["/", "/x", "/:slug", "/:slug/p", "/*", "/x/*", "/(["]),
            any::<bool>()
        )
            .prop_map(|(path, not_found)| {
                let mut page = json!({ "path": path, "sections": [] });
                if not_found {
                    page["notFound"] = json!(true);
                }
                page
            }),
        Just(json!({ "m": { "__resolveType": "website/matchers/location.ts" } })),
        Just(json!({ "x": 1 })),
    ]
}

/// Blocks named like pages or not, from a small set so that deltas hit existing names.
fn arb_named_blocks() -> impl Strategy<Value = BTreeMap<String, Json>> {
    prop::collection::btree_map("(pages-)?[a-e]", arb_site_block(), 0..8)
}

proptest! {
    #![proptest_config(config())]

    /// A delta reload derives its snapshot from the one before it, for the changed blocks
    /// only; whatever it derives must be what a full reload of the same content derives.
    #[test]
    fn a_delta_reload_derives_what_a_full_reload_derives(
        before in arb_named_blocks(),
        delta in prop::collection::btree_map("(pages-)?[a-e]", prop::option::of(arb_site_block()), 0..5),
    ) {
        use sitefile_core::content::{load_bundle, plan_reload, write_bundle};
        let now = "2026-06-01T12:00:00Z".parse().unwrap();
        let full_body = |blocks: &BTreeMap<String, Json>| serde_json::to_vec(blocks).unwrap();
        let current = plan_reload(&Snapshot::empty(), &full_body(&before), now).unwrap().snapshot;
        let changes: Map<String, Json> = delta
            .iter()
            .map(|(name, block)| (name.clone(), block.clone().unwrap_or(Json::Null)))
            .collect();
        let by_delta = plan_reload(&current, &serde_json::to_vec(&json!({ "blocks": changes })).unwrap(), now)
            .unwrap()
            .snapshot;
        let mut after = before.clone();
        for (name, block) in &delta {
            match block {
                Some(block) => after.insert(name.clone(), block.clone()),
                None => after.remove(name),
            };
        }
        // A full body whose only key is `blocks` would read as a delta.
        prop_assume!(!(after.len() == 1 && after.contains_key("blocks")));
        let by_full = plan_reload(&current, &full_body(&after), now).unwrap().snapshot;
        // The same delta over content held lazily (a bundle, as Fast Deploy stores it), whose
        // revision was taken first, and as a draft laid over the content.
        let lazy = load_bundle(write_bundle(current.blocks())).unwrap();
        lazy.revision();
        let body = serde_json::to_vec(&json!({ "blocks": changes })).unwrap();
        let over_lazy = plan_reload(&lazy, &body, now).unwrap().snapshot;
        let draft: Vec<(Key, Value)> = delta
            .iter()
            .map(|(name, block)| {
                let json = block.clone().unwrap_or(Json::Null);
                (intern(name), Value::from_json_str(&json.to_string()).unwrap())
            })
            .collect();
        let overlaid = current.overlaid(&draft);
        let routes = |s: &Snapshot| -> Vec<(String, String)> {
            s.routes().routes().iter().map(|r| (r.name.clone(), r.pattern.clone())).collect()
        };
        for derived in [&by_delta, &over_lazy, &overlaid] {
            prop_assert_eq!(routes(derived), routes(&by_full));
            prop_assert_eq!(derived.not_found_page(), by_full.not_found_page());
            prop_assert_eq!(derived.uses_location(), by_full.uses_location());
            prop_assert_eq!(derived.revision(), by_full.revision());
            prop_assert_eq!(derived.len(), by_full.len());
            for path in ["/", "/x", "/y", "/x/p", "/x/y/z"] {
                prop_assert_eq!(
                    derived.routes().find(path).map(|m| m.name),
                    by_full.routes().find(path).map(|m| m.name),
                    "{}", path
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (b) Override parsing and request building never panic.
// ---------------------------------------------------------------------------------------------

/// Text rich in what override parsing splits on: spaces, `=`, `&`, `%` sequences, `+`.
fn arb_override_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-zA-Z@.0-9 =%&+#?/;]{0,40}",
        prop::collection::vec(
            prop_oneof![
                Just(" ".to_string()),
                Just("=".to_string()),
                Just("=1".to_string()),
                Just("=0".to_string()),
                Just("%".to_string()),
                Just("%3D".to_string()),
                Just("%20".to_string()),
                Just("%E2%82".to_string()),
                Just("%ff".to_string()),
                Just("+".to_string()),
                Just("&".to_string()),
                "[a-z@.0-9]{1,6}",
                "\\PC{1,3}",
            ],
            0..16,
        )
        .prop_map(|parts| parts.concat()),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn request_new_never_panics(url in prop_oneof![
        any::<String>(),
        "(https?://|/|//)?[a-z0-9.:@%\\[\\]/?#&= \\\\-]{0,40}",
        "https://s\\.example/[\\PC%]{0,30}",
    ]) {
        if let Ok(request) = Request::new(&url) {
            let _ = (request.query(OVERRIDE_HEADER), request.device(), request.geo());
            let _ = Overrides::from_request(&request);
            // Whatever the URL (`a:`, `mailto:x`, `http://h/%zz`), resolving it is safe.
            let runtime = Runtime::new(
                snapshot(&[("pages-any".into(), json!({"path": "/*", "sections": []}))]),
                ResolveConfig::by_convention(),
            );
            let _ = runtime.resolve_page(request).run(|_| Ok(Value::Null));
        }
    }

    #[test]
    fn override_parsing_never_panics(
        header in prop::option::of(arb_override_text()),
        query in prop::collection::vec(arb_override_text(), 0..4),
        raw_query in arb_override_text(),
        probe in arb_override_text(),
    ) {
        let mut url = "https://s.example/page?".to_string();
        for q in &query {
            url.push_str(OVERRIDE_HEADER);
            url.push('=');
            url.push_str(q);
            url.push('&');
        }
        url.push_str(&raw_query);
        let Ok(mut request) = Request::new(&url) else {
            return Ok(());
        };
        if let Some(h) = &header {
            request = request.with_header(OVERRIDE_HEADER, h);
        }
        let overrides = Overrides::from_request(&request);
        let _ = overrides.get(&probe);
        let _ = overrides.get("");
        prop_assert_eq!(overrides.get(""), None, "an empty name is never forced");
    }

    /// Well-formed header pairs are read back; the last pair for a name wins; only `1` is true.
    #[test]
    fn header_pairs_round_trip(
        pairs in prop::collection::vec(("[A-Za-z0-9@._-]{1,8}", "[01]|true|yes|"), 1..8),
        query in arb_override_text(),
    ) {
        let header: Vec<String> = pairs.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let url = format!("https://s.example/?{OVERRIDE_HEADER}={}", urlencode(&query));
        let request = Request::new(&url).unwrap().with_header(OVERRIDE_HEADER, &header.join(" "));
        let overrides = Overrides::from_request(&request);
        prop_assert!(!overrides.is_empty());
        let mut expected: BTreeMap<&str, bool> = BTreeMap::new();
        for (n, v) in &pairs {
            expected.insert(n, v == "1");
        }
        for (n, v) in expected {
            prop_assert_eq!(overrides.get(n), Some(v), "{}", n);
        }
    }

    /// Query pairs are URL-decoded one per occurrence, so names may hold spaces and `&`.
    #[test]
    fn query_pairs_round_trip(
        pairs in prop::collection::vec(("[A-Za-z0-9@. &+%_-]{1,8}", "[01]"), 1..6),
    ) {
        let mut url = "https://s.example/?".to_string();
        for (n, v) in &pairs {
            url.push_str(&format!("{OVERRIDE_HEADER}={}&", urlencode(&format!("{n}={v}"))));
        }
        let overrides = Overrides::from_request(&Request::new(&url).unwrap());
        let mut expected: BTreeMap<&str, bool> = BTreeMap::new();
        for (n, v) in &pairs {
            expected.insert(n, v == "1");
        }
        for (n, v) in expected {
            prop_assert_eq!(overrides.get(n), Some(v), "{:?} in {}", n, url);
        }
    }

    /// A non-empty header wins outright: the query is then ignored.
    #[test]
    fn a_header_hides_the_query(name in "[a-z]{1,6}", other in "[A-Z]{1,6}") {
        let url = format!("https://s.example/?{OVERRIDE_HEADER}={name}%3D1");
        let request = Request::new(&url).unwrap();
        prop_assert_eq!(Overrides::from_request(&request).get(&name), Some(true));
        let with_header = request.with_header(OVERRIDE_HEADER, &format!("{other}=1"));
        let overrides = Overrides::from_request(&with_header);
        prop_assert_eq!(overrides.get(&name), None);
        prop_assert_eq!(overrides.get(&other), Some(true));
    }
}

/// `application/x-www-form-urlencoded` percent-encoding of a query value.
fn urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// (c) Resolving arbitrary content never panics, terminates and is deterministic.
// ---------------------------------------------------------------------------------------------

const FLAG: &str = "website/flags/multivariate.ts";
const LAZY: &str = "website/sections/Rendering/Lazy.tsx";
const DEFERRED: &str = "website/sections/Rendering/Deferred.tsx";
const HERO: &str = "site/sections/Hero.tsx";

/// Saved block names content refers to (pages are added separately).
const NAMES: &[&str] = &["A", "B", "C", "Shelf", "Rule", "site", "Site"];

/// Registered loaders (a `/loaders/` key outside this list is a dangling reference).
const LOADERS: &[&str] = &["a/loaders/x.ts", "a/loaders/y.ts", "a/actions/z.ts"];

const MATCHERS: &[&str] = &[
    "website/matchers/always.ts",
    "website/matchers/never.ts",
    "website/matchers/random.ts",
    "website/matchers/device.ts",
    "website/matchers/multi.ts",
    "website/matchers/negate.ts",
    "website/matchers/queryString.ts",
    "website/matchers/cookie.ts",
    "website/matchers/pathname.ts",
    "website/matchers/location.ts",
    "$live/matchers/MatchDevice.ts",
    "Rule",
    "A",
];

const TYPES: &[&str] = &[
    "A",
    "B",
    "C",
    "Shelf",
    "Rule",
    "site",
    "pages-home",
    FLAG,
    "website/flags/multivariate/section.ts",
    "$live/flags/multivariate.ts",
    "website/matchers/always.ts",
    "website/matchers/never.ts",
    "website/matchers/random.ts",
    "website/matchers/multi.ts",
    "a/loaders/x.ts",
    "a/loaders/y.ts",
    "a/actions/z.ts",
    "b/loaders/dangling.ts",
    HERO,
    "site/sections/Other.tsx",
    "resolved",
    LAZY,
    DEFERRED,
    "website/functions/requestToParam.ts",
    "preview",
    "commerce/loaders/product/extensions/detailsPage.ts",
    "Deco",
    "website/loaders/secret.ts",
    "unknown/Thing.tsx",
    "",
];

const KEYS: &[&str] = &[
    "title", "section", "sections", "variants", "rule", "value", "data", "param", "block",
    "matchers", "matcher", "op", "traffic", "count", "items", "key", "name", "theme", "global",
];

/// An object `{"__resolveType": rt, ...props}`.
fn typed(rt: &str, props: Vec<(&str, Json)>) -> Json {
    let mut map = Map::new();
    map.insert("__resolveType".into(), Json::from(rt));
    for (k, v) in props {
        map.insert(k.into(), v);
    }
    Json::Object(map)
}

fn obj(entries: Vec<(&str, Json)>) -> Json {
    Json::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// A matcher rule: inline with random settings, a saved name, or something malformed.
fn arb_rule(inner: BoxedStrategy<Json>) -> impl Strategy<Value = Json> {
    prop_oneof![
        3 => (select(MATCHERS), prop::collection::vec((select(KEYS), inner.clone()), 0..3))
            .prop_map(|(rt, extra)| typed(rt, extra)),
        1 => Just(json!({"__resolveType": "website/matchers/random.ts", "traffic": 0.5})),
        1 => inner,
    ]
}

fn arb_content() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        (-3i64..100).prop_map(Json::from),
        select(&["", "/", "and", "or", "slug", "A", "x"][..]).prop_map(Json::from),
        "\\PC{0,6}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 40, 4, |inner| {
        let inner = inner.boxed();
        prop_oneof![
            2 => prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            4 => (
                prop::option::of(select(TYPES)),
                prop::collection::vec((select(KEYS), inner.clone()), 0..4),
            )
                .prop_map(|(rt, entries)| {
                    let mut map = Map::new();
                    if let Some(rt) = rt {
                        map.insert("__resolveType".into(), Json::from(rt));
                    }
                    for (k, v) in entries {
                        map.insert(k.into(), v);
                    }
                    Json::Object(map)
                }),
            2 => (
                select(&[FLAG, "website/flags/multivariate/section.ts", ""][..]),
                prop::collection::vec(
                    (arb_rule(inner.clone()), prop::option::of(inner.clone())),
                    0..3,
                ),
            )
                .prop_map(|(rt, variants)| {
                    let variants: Vec<Json> = variants
                        .into_iter()
                        .map(|(rule, value)| match value {
                            Some(value) => obj(vec![("rule", rule), ("value", value)]),
                            None => obj(vec![("rule", rule)]),
                        })
                        .collect();
                    if rt.is_empty() {
                        // The page-level wrapper form: `variants` without a type.
                        obj(vec![("variants", Json::Array(variants))])
                    } else {
                        obj(vec![("__resolveType", rt.into()), ("variants", Json::Array(variants))])
                    }
                }),
            1 => inner.clone().prop_map(|s| obj(vec![("__resolveType", LAZY.into()), ("section", s)])),
            1 => prop::collection::vec(inner.clone(), 0..3).prop_map(|s| {
                obj(vec![("__resolveType", DEFERRED.into()), ("sections", Json::Array(s))])
            }),
            2 => (select(LOADERS), prop::collection::vec((select(KEYS), inner.clone()), 0..3))
                .prop_map(|(rt, props)| typed(rt, props)),
            1 => inner.clone().prop_map(|v| obj(vec![("__resolveType", HERO.into()), ("child", v)])),
        ]
    })
}

/// Something that should end up as page sections: a section with random props, a reference
/// to a saved block (with extra props), Lazy/Deferred wrappers, a flag choosing sections or
/// lists of sections, or any content at all.
fn arb_section() -> BoxedStrategy<Json> {
    let content = arb_content().boxed();
    let section = (
        select(&[HERO, "site/sections/Other.tsx"][..]),
        prop::collection::vec((select(KEYS), content.clone()), 0..4),
    )
        .prop_map(|(rt, props)| typed(rt, props))
        .boxed();
    let list = prop::collection::vec(section.clone(), 0..3).prop_map(Json::Array);
    prop_oneof![
        4 => section.clone(),
        3 => (select(NAMES), prop::collection::vec((select(KEYS), content.clone()), 0..2))
            .prop_map(|(name, extra)| typed(name, extra)),
        1 => section.clone().prop_map(|s| obj(vec![("__resolveType", LAZY.into()), ("section", s)])),
        1 => list.clone().prop_map(|l| obj(vec![("__resolveType", DEFERRED.into()), ("sections", l)])),
        2 => prop::collection::vec(
            (arb_rule(content.clone().boxed()), prop_oneof![section.clone(), list]),
            0..3,
        )
        .prop_map(|variants| {
            let variants: Vec<Json> = variants
                .into_iter()
                .map(|(rule, value)| obj(vec![("rule", rule), ("value", value)]))
                .collect();
            obj(vec![("__resolveType", FLAG.into()), ("variants", Json::Array(variants))])
        }),
        2 => content,
    ]
    .boxed()
}

/// A content map: random saved blocks (sections, loaders, matchers, a Site block with globals;
/// cycles through the name pool), a home page at `/` and sometimes a parameterised page.
fn arb_site() -> impl Strategy<Value = Vec<(String, Json)>> {
    let saved = prop_oneof![
        3 => arb_section(),
        2 => arb_content(),
        1 => (
            prop::option::of(arb_section()),
            prop::collection::vec(arb_section(), 0..3),
        )
            .prop_map(|(theme, global)| {
                let mut site = Map::new();
                if let Some(theme) = theme {
                    site.insert("theme".into(), theme);
                }
                site.insert("global".into(), Json::Array(global));
                Json::Object(site)
            }),
    ];
    (
        prop::collection::btree_map(select(NAMES), saved, 0..6),
        prop_oneof![
            4 => prop::collection::vec(arb_section(), 0..5).prop_map(Json::Array),
            1 => arb_section(),
        ],
        prop::option::of(arb_content()),
        prop::option::of(prop::collection::vec(arb_section(), 0..3)),
    )
        .prop_map(|(saved, sections, seo, param_page)| {
            let mut blocks: Vec<(String, Json)> =
                saved.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            let mut home = Map::new();
            home.insert("path".into(), "/".into());
            home.insert("sections".into(), sections);
            if let Some(seo) = seo {
                home.insert("seo".into(), seo);
            }
            blocks.push(("pages-home".into(), Json::Object(home)));
            if let Some(sections) = param_page {
                blocks.push((
                    "pages-param".into(),
                    json!({"path": "/p/:slug", "sections": sections}),
                ));
            }
            blocks
        })
}

fn resolve_config(layout: bool, async_rendering: bool) -> ResolveConfig {
    let mut config = ResolveConfig::by_convention();
    let mut loaders = KeyRegistry::default();
    for key in LOADERS {
        loaders.register(key);
    }
    config.loaders = loaders;
    config.async_rendering = async_rendering;
    if layout {
        config.layout_sections.insert(HERO.to_string());
    }
    config
        .with_production_origins(&["https://s.example"])
        .expect("a valid origin")
}

fn request(kind: u8) -> Request {
    let base = "https://s.example";
    match kind % 6 {
        0 => Request::new(&format!("{base}/")).unwrap(),
        1 => Request::new(&format!(
            "{base}/?count=abc&pageOffset=2&page=3&x-platform-matchers-override=Rule%3D1"
        ))
        .unwrap(),
        2 => Request::new(&format!("{base}/")).unwrap().with_header(
            OVERRIDE_HEADER,
            "Rule=0 pages-home@sections.0.variants.0.rule=1 A@variants.1.rule=1",
        ),
        3 => Request::new(&format!("{base}/p/x%20y?slug=q"))
            .unwrap()
            .with_header("user-agent", "Googlebot/2.1"),
        4 => Request::new(&format!("{base}/"))
            .unwrap()
            .with_header("user-agent", "Mozilla/5.0 (iPhone; Mobile)")
            .with_cookie("platform_segment", "not base64"),
        _ => Request::new(&format!("{base}/p/slug"))
            .unwrap()
            .with_seed(7),
    }
}

/// A bound on rounds: each round answers at least one new call, so rounds <= calls + 1.
const MAX_ROUNDS: usize = 10_000;

/// Drives a resolution to the end, checking what the host is handed on the way.
fn drive(
    runtime: &Runtime,
    request: Request,
    fail_odd: bool,
) -> Result<(serde_json::Value, usize), TestCaseError> {
    let mut resolution = runtime.resolve_page(request);
    let mut rounds = 0;
    let mut calls = 0;
    let page = loop {
        match resolution.next(&NoHost).expect("driven in order") {
            Step::NeedLoaders(round) => {
                rounds += 1;
                prop_assert!(!round.is_empty(), "an empty round");
                prop_assert!(rounds <= MAX_ROUNDS, "resolution does not terminate");
                for call in round {
                    calls += 1;
                    prop_assert!(LOADERS.contains(&call.key.as_str()), "{}", call.key);
                    prop_assert!(
                        call.props.get("__pagePath").is_some(),
                        "loader props carry the page path: {}",
                        call.props.to_json_string()
                    );
                    let result = if fail_odd && call.id % 2 == 1 {
                        Err("failed".to_string())
                    } else {
                        Ok(Value::Null)
                    };
                    resolution
                        .provide(call.id, result)
                        .expect("each call answered once");
                }
            }
            Step::Done(page) => break page,
        }
    };
    prop_assert!(rounds <= calls + 1);
    for section in &page.sections {
        prop_assert!(
            section.component.contains("/sections/"),
            "{}",
            section.component
        );
        prop_assert!(section.props.as_object().is_some());
        prop_assert!(section.props.get("__resolveType").is_none());
    }
    let json = serde_json::to_value(&*page).expect("pages serialize");
    Ok((json, rounds))
}

/// Drops the extra props of the named references listed directly in pages' `sections`.
fn without_extra_props_on_page_references(mut blocks: Vec<(String, Json)>) -> Vec<(String, Json)> {
    for (name, block) in &mut blocks {
        if !name.starts_with("pages-") {
            continue;
        }
        for item in block["sections"].as_array_mut().into_iter().flatten() {
            let reference = item["__resolveType"]
                .as_str()
                .filter(|rt| NAMES.contains(rt))
                .map(str::to_string);
            if let Some(rt) = reference {
                *item = json!({ "__resolveType": rt });
            }
        }
    }
    blocks
}

fn js_truthy(value: &Json) -> bool {
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64() != Some(0.0),
        Json::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn snapshot(blocks: &[(String, Json)]) -> Snapshot {
    Snapshot::from_blocks(
        blocks
            .iter()
            .map(|(k, v)| (intern(k), Value::from(v.clone())))
            .collect::<Vec<(Key, Value)>>(),
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn resolving_random_content_terminates_and_is_deterministic(
        blocks in arb_site(),
        kind in any::<u8>(),
        fail_odd in any::<bool>(),
        async_rendering in any::<bool>(),
    ) {
        let first = Runtime::new(snapshot(&blocks), resolve_config(false, async_rendering));
        let (page, _) = drive(&first, request(kind), fail_odd)?;
        // A page needs a truthy `sections` to be routed (anchor §1.4).
        let routed = blocks
            .iter()
            .any(|(name, block)| name == "pages-home" && js_truthy(&block["sections"]));
        if routed && (kind % 6 <= 2 || kind % 6 == 4) {
            prop_assert_eq!(&page["page"], &json!("pages-home"));
        }
        // A second runtime (fresh hash maps) over the same content gives the same page.
        let second = Runtime::new(snapshot(&blocks), resolve_config(false, async_rendering));
        let (again, _) = drive(&second, request(kind), fail_odd)?;
        prop_assert_eq!(page, again);
    }

    /// Top-level references carry no extra props here: the layout cache is keyed by the
    /// referenced block's name only (anchor §2.7), so `{"__resolveType": "Header", "x": 1}`
    /// and `{"__resolveType": "Header"}` share an entry (see the review report).
    #[test]
    fn the_layout_cache_serves_what_was_resolved(
        blocks in arb_site().prop_map(without_extra_props_on_page_references),
        kind in any::<u8>(),
    ) {
        let runtime = Runtime::new(snapshot(&blocks), resolve_config(true, false));
        let (cold, _) = drive(&runtime, request(kind), false)?;
        let (warm, _) = drive(&runtime, request(kind), false)?;
        prop_assert_eq!(&cold["sections"], &warm["sections"]);
        prop_assert_eq!(&cold["seo"], &warm["seo"]);
    }

    #[test]
    fn resolving_arbitrary_json_never_panics(
        blocks in prop::collection::vec(
            (select(&["pages-home", "site", "A", "B"][..]), arb_json()),
            0..5,
        ),
        sections in arb_json(),
    ) {
        let mut map: Vec<(Key, Value)> = blocks
            .into_iter()
            .map(|(k, v)| (intern(k), Value::from(v)))
            .collect();
        map.push((
            intern("pages-root"),
            Value::from(json!({"path": "/", "sections": sections})),
        ));
        let runtime = Runtime::new(Snapshot::from_blocks(map), ResolveConfig::by_convention());
        let _ = runtime
            .resolve_page(request(0))
            .run(|_call| Ok(Value::Null));
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed inputs the generators reach only rarely.
// ---------------------------------------------------------------------------------------------

#[test]
fn absurd_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["[", "{\"a\":"] {
        let text = open.repeat(100_000);
        assert!(Value::from_json_str(&text).is_err());
    }
}

#[test]
fn a_long_named_block_chain_is_cut_by_the_depth_bound() {
    let mut blocks: Vec<(Key, Value)> = (0..500)
        .map(|i| {
            (
                intern(&format!("b{i}")),
                Value::from(json!({"__resolveType": format!("b{}", i + 1), "n": i})),
            )
        })
        .collect();
    blocks.push((
        intern("b500"),
        Value::from(json!({"__resolveType": HERO, "end": true})),
    ));
    blocks.push((
        intern("pages-home"),
        Value::from(json!({"path": "/", "sections": [{"__resolveType": "b0"}]})),
    ));
    let runtime = Runtime::new(
        Snapshot::from_blocks(blocks),
        ResolveConfig::by_convention(),
    );
    let page = runtime.resolve_page(request(0)).run(|_| Ok(Value::Null));
    assert!(page.sections.is_empty());
    assert!(page.effects.errors.iter().any(|e| e.context == "depth"));
}

/// Blocks `d0 .. d{levels-1}`, each a section whose props `l` and `r` both reference the next
/// level, ending in `bottom`; and a home page showing `d0`.
fn diamond(levels: usize, bottom: Json) -> Runtime {
    let mut blocks: Vec<(Key, Value)> = (0..levels)
        .map(|i| {
            let next = format!("d{}", i + 1);
            (
                intern(&format!("d{i}")),
                Value::from(json!({
                    "__resolveType": HERO,
                    "l": {"__resolveType": next},
                    "r": {"__resolveType": next},
                })),
            )
        })
        .collect();
    blocks.push((intern(&format!("d{levels}")), Value::from(bottom)));
    blocks.push((
        intern("pages-home"),
        Value::from(json!({"path": "/", "sections": [{"__resolveType": "d0"}]})),
    ));
    Runtime::new(
        Snapshot::from_blocks(blocks),
        ResolveConfig::by_convention(),
    )
}

#[test]
fn a_diamond_of_static_references_resolves_without_copying() {
    // 2^14 paths through the references: memoised named blocks and shared subtrees keep the
    // work linear, and the page (about 50,000 values) is far below the size limit.
    let runtime = diamond(14, json!({"__resolveType": HERO, "leaf": true}));
    let page = runtime.resolve_page(request(0)).run(|_| Ok(Value::Null));
    assert_eq!(page.sections.len(), 1);
    assert!(page.effects.errors.is_empty(), "{:?}", page.effects.errors);
    // Each level below the page section is a nested section: `{"Component", "props"}`.
    let mut at = &page.sections[0].props;
    for _ in 0..13 {
        at = at
            .get("l")
            .and_then(|s| s.get("props"))
            .expect("each level keeps its props");
    }
    assert!(at.get("r").is_some());
}

#[test]
fn a_wide_diamond_ends_in_a_size_error_instead_of_an_exponential_page() {
    // 2^30 paths: the page would hold over a billion values once written out, so resolution
    // stops at the size limit and reports it; the page still answers.
    let runtime = diamond(30, json!({"__resolveType": HERO, "leaf": true}));
    let page = runtime.resolve_page(request(0)).run(|_| Ok(Value::Null));
    assert_eq!(page.sections.len(), 1);
    assert!(
        page.effects.errors.iter().any(|e| e.context == "size"),
        "{:?}",
        page.effects.errors
    );
    let written = serde_json::to_vec(&page).unwrap().len();
    assert!(written < 200_000_000, "{written} bytes");
}

#[test]
fn a_shared_loader_block_under_a_diamond_runs_once() {
    // Kept small: with a loader at the bottom the partly resolved tree is copied per path
    // (see the review report), so 2^levels grows quickly.
    let runtime = diamond(10, json!({"__resolveType": "a/loaders/x.ts"}));
    let mut calls = 0;
    let page = runtime.resolve_page(request(0)).run(|_| {
        calls += 1;
        Ok(Value::from(json!([1, 2])))
    });
    assert_eq!(calls, 1, "the shared loader block runs once");
    assert_eq!(page.sections.len(), 1);
    // Each level below the page section is a nested section: `{"Component", "props"}`.
    let mut at = &page.sections[0].props;
    for _ in 0..9 {
        at = at
            .get("r")
            .and_then(|s| s.get("props"))
            .expect("each level keeps its props");
    }
    assert_eq!(
        at.get("l").map(Value::to_json_string).as_deref(),
        Some("[1,2]")
    );
}
