//! A site for the admin tests, built on the core's own pieces: a content store, a loader cache
//! cleared on every swap, and an edge purge index.

use chrono::{DateTime, Utc};
use serde_json::Value as Json;
use sitefile_core::Request;
use sitefile_core::admin::{AdminSite, Schema};
use sitefile_core::content::{ContentStore, ReloadRefused, ReloadResponse, Snapshot};
use sitefile_core::edge::WorkerOptions;
use sitefile_core::edge::{KeyContext, PurgeIndex, build_cache_key};
use sitefile_core::loader_cache::{Freshness, LoaderCache, LoaderKey, Lookup};
use sitefile_core::value::Value;
use std::sync::Arc;

/// The test site.
pub struct TestSite {
    pub store: ContentStore,
    pub loaders: Arc<LoaderCache>,
    pub index: PurgeIndex,
    pub options: WorkerOptions,
    pub schema: Option<Arc<Schema>>,
}

impl TestSite {
    /// A site serving `blocks` (a JSON object of blocks).
    pub fn new(blocks: &Json, options: WorkerOptions) -> TestSite {
        let blocks = Value::from(blocks.clone())
            .as_object()
            .map(|o| o.entries().to_vec())
            .unwrap_or_default();
        let store = ContentStore::new(Snapshot::from_blocks(blocks));
        let loaders = Arc::new(LoaderCache::new(1 << 20));
        let on_swap = loaders.clone();
        store.observe(Box::new(move |_| on_swap.clear()));
        TestSite {
            store,
            loaders,
            index: PurgeIndex::new(),
            options,
            schema: None,
        }
    }

    /// Sets the schema document.
    pub fn with_schema(mut self, doc: &Json) -> TestSite {
        let schema = Schema::from_json(doc.to_string().as_bytes()).expect("test schema");
        self.schema = Some(Arc::new(schema));
        self
    }

    /// Stores a loader result under `loader` (no props).
    pub fn cache_loader(&self, loader: &str) {
        let key = LoaderKey::new(loader, &Value::Null);
        let Lookup::Miss(ticket) = self.loaders.lookup(&key, 0) else {
            panic!("{loader} cached twice");
        };
        let fresh = Freshness {
            max_age_ms: 60_000,
            stale_ms: 0,
        };
        assert!(
            self.loaders
                .store(&key, Value::Bool(true), fresh, ticket, 0)
        );
    }

    /// Records the edge cache key of a request to `url` in the purge index.
    pub fn cache_edge(&self, url: &str) {
        let request = Request::new(url).expect("test URL");
        let key = build_cache_key(&request, &self.options, &KeyContext::default());
        self.index.record(&key);
    }
}

impl AdminSite for TestSite {
    fn snapshot(&self) -> Arc<Snapshot> {
        self.store.current()
    }

    fn schema(&self) -> Option<Arc<Schema>> {
        self.schema.clone()
    }

    fn reload(
        &self,
        body: &[u8],
        now: DateTime<Utc>,
        before_swap: &mut dyn FnMut(&Arc<Snapshot>) -> Result<bool, String>,
    ) -> Result<ReloadResponse, ReloadRefused> {
        self.store.reload_with(body, now, before_swap)
    }

    fn purge_edge(&self, target: &str) -> Vec<String> {
        self.index.purge(target, &self.options)
    }

    fn purge_loaders(&self) {
        self.loaders.clear();
    }
}
