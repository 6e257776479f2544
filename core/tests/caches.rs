//! The layout and page caches seen from the public API: what one request leaves behind must
//! never change what another request gets.

use serde_json::{Value as Json, json};
use sitefile_core::Request;
use sitefile_core::content::Snapshot;
use sitefile_core::loader_cache::LoaderCache;
use sitefile_core::resolve::{ResolveConfig, Runtime};
use sitefile_core::value::{Value, intern};

fn runtime(blocks: Json, layout_sections: &[&str]) -> Runtime {
    let blocks: Vec<_> = blocks
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (intern(k), Value::from(v.clone())))
        .collect();
    let mut config = ResolveConfig::by_convention();
    config
        .layout_sections
        .extend(layout_sections.iter().map(|s| s.to_string()));
    Runtime::new(Snapshot::from_blocks(blocks), config)
}

fn first_section_props(runtime: &Runtime, url: &str) -> Json {
    let page = runtime
        .resolve_page(Request::new(url).unwrap())
        .run(|_| Ok(Value::Null));
    Json::from(&page.sections[0].props)
}

#[test]
fn a_forced_variant_neither_reads_nor_fills_the_layout_cache() {
    let runtime = runtime(
        json!({
            "pages-home": {"path": "/", "sections": [{"__resolveType": "Header"}]},
            "Header": {"__resolveType": "site/sections/Header.tsx", "label": {
                "__resolveType": "website/flags/multivariate.ts",
                "variants": [
                    {"rule": {"__resolveType": "Promo"}, "value": "promo"},
                    {"rule": {"__resolveType": "website/matchers/always.ts"}, "value": "plain"}
                ]}},
            "Promo": {"__resolveType": "website/matchers/never.ts"}
        }),
        &["site/sections/Header.tsx"],
    );
    let forced = "https://shop.example/?x-platform-matchers-override=Promo%3D1";
    assert_eq!(
        first_section_props(&runtime, forced),
        json!({"label": "promo"})
    );
    assert!(
        runtime.layout_cache().is_empty(),
        "a forced render is not stored"
    );
    assert_eq!(
        first_section_props(&runtime, "https://shop.example/"),
        json!({"label": "plain"})
    );
    assert_eq!(runtime.layout_cache().len(), 1);
    assert_eq!(
        first_section_props(&runtime, forced),
        json!({"label": "promo"}),
        "a forced render is not served from the cache"
    );
}

#[test]
fn a_pathname_matcher_keeps_paths_of_one_page_apart() {
    let runtime = runtime(
        json!({
            "pages-sale": {"path": "/sale{/70-off}?", "sections": [{
                "__resolveType": "site/sections/Hero.tsx",
                "title": {
                    "__resolveType": "website/flags/multivariate.ts",
                    "variants": [
                        {"rule": {"__resolveType": "website/matchers/pathname.ts",
                                  "case": {"type": "Includes", "pathname": "70-off"}},
                         "value": "70% off"},
                        {"rule": {"__resolveType": "website/matchers/always.ts"}, "value": "sale"}
                    ]}}]}
        }),
        &[],
    );
    for _ in 0..2 {
        assert_eq!(
            first_section_props(&runtime, "https://shop.example/sale"),
            json!({"title": "sale"})
        );
        assert_eq!(
            first_section_props(&runtime, "https://shop.example/sale/70-off"),
            json!({"title": "70% off"})
        );
    }
}

#[test]
fn every_content_swap_clears_the_loader_cache() {
    use sitefile_core::loader_cache::{Freshness, LoaderKey, Lookup};
    let blocks = vec![(
        intern("pages-home"),
        Value::from(json!({"path": "/", "sections": []})),
    )];
    let runtime = Runtime::with_loader_cache(
        Snapshot::from_blocks(blocks),
        ResolveConfig::by_convention(),
        LoaderCache::new(1 << 20),
    );
    let key = LoaderKey::new("site/loaders/menu.ts", &Value::from(json!({"depth": 2})));
    let fresh = Freshness {
        max_age_ms: 60_000,
        stale_ms: 0,
    };
    let fill = |now: u64| {
        let Lookup::Miss(ticket) = runtime.loader_cache().lookup(&key, now) else {
            panic!("an empty cache misses");
        };
        assert!(
            runtime
                .loader_cache()
                .store(&key, Value::from("menu"), fresh, ticket, now)
        );
        assert_eq!(
            runtime.loader_cache().lookup(&key, now + 1),
            Lookup::Hit(Value::from("menu"))
        );
    };

    fill(0);
    runtime
        .reload(
            br#"{"blocks": {"Other": {"a": 1}}}"#,
            "2026-06-01T12:00:00Z".parse().unwrap(),
        )
        .unwrap();
    assert_eq!(
        runtime.loader_cache().stats().entries,
        0,
        "a delta reload clears it"
    );

    fill(10);
    let replacement = vec![(
        intern("pages-home"),
        Value::from(json!({"path": "/", "sections": []})),
    )];
    runtime
        .store()
        .swap(std::sync::Arc::new(Snapshot::from_blocks(replacement)));
    assert_eq!(
        runtime.loader_cache().stats().entries,
        0,
        "a swap by the store clears it"
    );

    // A loader that started before the swap cannot fill the cache with old content's data.
    let Lookup::Miss(stale_ticket) = runtime.loader_cache().lookup(&key, 20) else {
        panic!("empty after the swap");
    };
    runtime
        .reload(
            br#"{"blocks": {"Other": null}}"#,
            "2026-06-01T12:00:00Z".parse().unwrap(),
        )
        .unwrap();
    assert!(
        !runtime
            .loader_cache()
            .store(&key, Value::from("old"), fresh, stale_ticket, 21)
    );
    assert!(runtime.layout_cache().is_empty());
}

/// A runtime whose `site/loaders/menu.ts` results `loaders` keeps for 60 s, then serves stale
/// for 60 s more.
fn cached_loader_runtime(loaders: LoaderCache) -> Runtime {
    use sitefile_core::loader_cache::Freshness;
    let blocks = vec![(
        intern("pages-home"),
        Value::from(json!({"path": "/", "sections": [
            {"__resolveType": "site/sections/Menu.tsx",
             "items": {"__resolveType": "site/loaders/menu.ts", "depth": 2}}
        ]})),
    )];
    let mut config = ResolveConfig::by_convention();
    config.cached_loaders.insert(
        "site/loaders/menu.ts".into(),
        Freshness {
            max_age_ms: 60_000,
            stale_ms: 60_000,
        },
    );
    Runtime::with_loader_cache(Snapshot::from_blocks(blocks), config, loaders)
}

/// Resolves `/` at `secs` seconds past the epoch, answering loaders with `answer`; returns the
/// calls handed out (key, refresh) and the menu items on the page.
fn resolve_at(
    runtime: &Runtime,
    secs: i64,
    answer: Result<&str, &str>,
) -> (Vec<(String, bool)>, Json) {
    use sitefile_core::NoHost;
    use sitefile_core::resolve::Step;
    let now = chrono::DateTime::from_timestamp(secs, 0).unwrap();
    let mut resolution =
        runtime.resolve_page(Request::new("https://shop.example/").unwrap().with_now(now));
    let mut handed = Vec::new();
    loop {
        match resolution.next(&NoHost).unwrap() {
            Step::NeedLoaders(calls) => {
                for call in calls {
                    handed.push((call.key.clone(), call.refresh));
                    let result = answer.map(Value::from).map_err(str::to_string);
                    resolution.provide(call.id, result).unwrap();
                }
            }
            Step::Done(page) => {
                return (handed, Json::from(&page.sections[0].props)["items"].clone());
            }
        }
    }
}

#[test]
fn the_loader_cache_answers_fresh_hits_inside_the_loop() {
    let runtime = cached_loader_runtime(LoaderCache::new(1 << 20));
    let menu = ("site/loaders/menu.ts".to_string(), false);
    assert_eq!(
        resolve_at(&runtime, 0, Ok("v1")),
        (vec![menu.clone()], json!("v1"))
    );
    // Fresh: answered by the core, nothing handed out.
    assert_eq!(resolve_at(&runtime, 30, Ok("v2")), (vec![], json!("v1")));
    // Stale: the page gets the cached value, the host gets one refresh call.
    let refresh = ("site/loaders/menu.ts".to_string(), true);
    assert_eq!(
        resolve_at(&runtime, 90, Ok("v3")),
        (vec![refresh], json!("v1"))
    );
    assert_eq!(resolve_at(&runtime, 100, Ok("v4")), (vec![], json!("v3")));
    // A failed miss past every window is a degraded page; a failed refresh keeps the stale value.
    assert_eq!(
        resolve_at(&runtime, 500, Err("down")),
        (vec![menu.clone()], json!(null))
    );
    assert_eq!(
        resolve_at(&runtime, 600, Ok("v5")),
        (vec![menu], json!("v5"))
    );
    let refresh = ("site/loaders/menu.ts".to_string(), true);
    assert_eq!(
        resolve_at(&runtime, 670, Err("down")),
        (vec![refresh], json!("v5"))
    );
}

#[test]
fn a_disabled_loader_cache_hands_out_every_call() {
    let uncached = cached_loader_runtime(LoaderCache::disabled());
    let menu = ("site/loaders/menu.ts".to_string(), false);
    assert_eq!(resolve_at(&uncached, 0, Ok("v1")).0, vec![menu.clone()]);
    assert_eq!(
        resolve_at(&uncached, 1, Ok("v2")),
        (vec![menu], json!("v2"))
    );
}

#[test]
fn misuse_of_a_resolution_is_an_error() {
    use sitefile_core::resolve::{ResolutionMisuse, Step};
    use sitefile_core::{ErrorCode, HasErrorCode, NoHost};
    let runtime = cached_loader_runtime(LoaderCache::new(1 << 20));
    let mut resolution = runtime.resolve_page(Request::new("https://shop.example/").unwrap());
    let Step::NeedLoaders(calls) = resolution.next(&NoHost).unwrap() else {
        panic!("the menu loader is asked for");
    };
    let id = calls[0].id;
    assert_eq!(
        resolution.provide(id + 7, Ok(Value::Null)),
        Err(ResolutionMisuse::UnknownCall(id + 7))
    );
    resolution.provide(id, Ok(Value::from("m"))).unwrap();
    let again = resolution.provide(id, Ok(Value::from("m")));
    assert_eq!(again, Err(ResolutionMisuse::AlreadyAnswered(id)));
    assert_eq!(again.unwrap_err().code(), ErrorCode::AlreadyAnswered);
    assert!(matches!(resolution.next(&NoHost), Ok(Step::Done(_))));
    let after = resolution.next(&NoHost).map(|_| ()).unwrap_err();
    assert_eq!(after, ResolutionMisuse::Finished);
    assert_eq!(after.code().as_str(), "FINISHED");
    assert_eq!(
        resolution.provide(id, Ok(Value::Null)),
        Err(ResolutionMisuse::Finished)
    );
}
