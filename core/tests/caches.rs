//! The layout and page caches seen from the public API: what one request leaves behind must
//! never change what another request gets.

use serde_json::{Value as Json, json};
use sitefile_core::Request;
use sitefile_core::content::Snapshot;
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
    use sitefile_core::loader_cache::{Freshness, LoaderCache, LoaderKey, Lookup};
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
