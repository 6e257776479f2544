//! Sites for the admin tests: the real `Site` facade, and helpers that fill its loader cache
//! and its edge purge index the way serving requests does.

use serde_json::Value as Json;
use sitefile_core::admin::{AdminSettings, Schema};
use sitefile_core::content::Snapshot;
use sitefile_core::edge::WorkerOptions;
use sitefile_core::loader_cache::{Freshness, LoaderKey, Lookup};
use sitefile_core::resolve::ResolveConfig;
use sitefile_core::site::OriginAnswer;
use sitefile_core::value::Value;
use sitefile_core::{Request, Site, SiteSetup};
use std::collections::HashMap;

/// A site serving `blocks` (a JSON object of blocks) with `resolve`, the worker `options`, the
/// environment `vars` and the admin `settings`.
pub fn site(
    blocks: &Json,
    resolve: ResolveConfig,
    options: WorkerOptions,
    vars: HashMap<String, String>,
    settings: AdminSettings,
) -> Site {
    let blocks = Value::from(blocks.clone())
        .as_object()
        .map(|o| o.entries().to_vec())
        .unwrap_or_default();
    let setup = SiteSetup {
        admin: settings,
        ..SiteSetup::new(resolve, options, vars)
    };
    Site::new(Snapshot::from_blocks(blocks), setup).expect("a valid test setup")
}

/// Sets the schema document.
pub fn set_schema(site: &Site, doc: &Json) {
    site.set_schema(Schema::from_json(doc.to_string().as_bytes()).expect("test schema"));
}

/// Stores a loader result under `loader` (no props).
pub fn cache_loader(site: &Site, loader: &str) {
    let cache = site.runtime().loader_cache();
    let key = LoaderKey::new(loader, &Value::Null);
    let Lookup::Miss(ticket) = cache.lookup(&key, 0) else {
        panic!("{loader} cached twice");
    };
    let fresh = Freshness {
        max_age_ms: 60_000,
        stale_ms: 0,
    };
    assert!(
        cache.store(&key, Value::Bool(true), fresh, ticket, 0),
        "the loader cache keeps {loader}"
    );
}

/// Serves `url` once from the origin, so the edge stores it and records its key.
pub fn cache_edge(site: &Site, url: &str) {
    let plan = site.edge_plan(&Request::new(url).expect("test URL"));
    let origin = OriginAnswer {
        status: 200,
        headers: vec![("Content-Type".into(), "text/html".into())],
    };
    assert!(
        site.after_origin(&plan, &origin).store.is_some(),
        "{url} is stored"
    );
}
