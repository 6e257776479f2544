//! A runtime: the current content, the setup configuration and the caches that follow the
//! content's revision.

use super::caches::Caches;
use super::config::ResolveConfig;
use super::layout_cache::LayoutCache;
use super::resolution::{RequestOptions, Resolution};
use crate::content::{ContentStore, ReloadError, ReloadResponse, Snapshot};
use crate::host::{Host, NoHost};
use crate::loader_cache::LoaderCache;
use crate::request::Request;
use crate::value::{Key, Value};
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// Resolves requests against the current content.
pub struct Runtime {
    store: ContentStore,
    config: Arc<ResolveConfig>,
    caches: Arc<Caches>,
}

impl Runtime {
    /// A runtime serving `snapshot` with `config`; its loader cache is disabled.
    pub fn new(snapshot: Snapshot, config: ResolveConfig) -> Runtime {
        Runtime::with_loader_cache(snapshot, config, LoaderCache::disabled())
    }

    /// A runtime whose hosts cache loader results in `loaders` (for example
    /// [`LoaderCache::from_config`]). Every content swap, through [`Runtime::reload`] or the
    /// store itself, clears the loader, layout and page caches.
    pub fn with_loader_cache(
        snapshot: Snapshot,
        config: ResolveConfig,
        loaders: LoaderCache,
    ) -> Runtime {
        let caches = Arc::new(Caches {
            loaders,
            ..Caches::default()
        });
        let store = ContentStore::new(snapshot);
        let on_swap = caches.clone();
        store.observe(Box::new(move |_| on_swap.clear()));
        Runtime {
            store,
            config: Arc::new(config),
            caches,
        }
    }

    /// The content store (current snapshot, observers, swaps).
    pub fn store(&self) -> &ContentStore {
        &self.store
    }

    /// The setup configuration.
    pub fn config(&self) -> &ResolveConfig {
        &self.config
    }

    /// The setup configuration, shared (for work that outlives a borrow of the runtime).
    pub(crate) fn shared_config(&self) -> Arc<ResolveConfig> {
        self.config.clone()
    }

    /// Starts resolving the page for `request` with no host callbacks (the synchronous pass
    /// runs now).
    pub fn resolve_page(&self, request: Request) -> Resolution {
        self.resolve_page_with(request, RequestOptions::default(), &NoHost)
    }

    /// Starts resolving with per-request options and the host's callbacks.
    pub fn resolve_page_with(
        &self,
        request: Request,
        options: RequestOptions,
        host: &dyn Host,
    ) -> Resolution {
        self.resolve_page_on(self.store.current(), request, options, host)
    }

    /// Starts resolving against `snapshot`, which served when the request came (page JSON
    /// writes the page with that snapshot's names and secrets, so it resolves on it too, even
    /// when a reload swapped the content meanwhile).
    pub(crate) fn resolve_page_on(
        &self,
        snapshot: Arc<Snapshot>,
        request: Request,
        options: RequestOptions,
        host: &dyn Host,
    ) -> Resolution {
        Resolution::for_page(
            snapshot,
            self.config.clone(),
            request,
            &self.caches,
            options,
            host,
        )
    }

    /// Starts resolving the site's not-found page (`"notFound": true`) for `request`, whatever
    /// its path: what a host shows on its own not-found screen. No page when the site has none.
    pub fn resolve_not_found_page(&self, request: Request, host: &dyn Host) -> Resolution {
        let options = RequestOptions {
            not_found_page: true,
            ..RequestOptions::default()
        };
        self.resolve_page_on(self.store.current(), request, options, host)
    }

    /// Starts resolving one value (a saved block, a section or props) against the current
    /// content: previews, `/platform/render` and invoke props. Never cached.
    pub fn resolve_value(&self, request: Request, value: &Value, host: &dyn Host) -> Resolution {
        self.resolve_value_in_draft(request, value, &[], host)
    }

    /// Starts resolving one value against `draft` blocks laid over the current content (a
    /// `null` block deletes it), as [`Runtime::resolve_page_in_draft`] does for a page.
    pub fn resolve_value_in_draft(
        &self,
        request: Request,
        value: &Value,
        draft: &[(Key, Value)],
        host: &dyn Host,
    ) -> Resolution {
        Resolution::for_value(
            self.store.current().overlaid(draft),
            self.config.clone(),
            request,
            value,
            &self.caches,
            host,
        )
    }

    /// Starts resolving the page for `request` against `draft` blocks laid over the current
    /// content (a `null` block deletes it). The overlay lives in this resolution only: the
    /// layout and page caches are neither read nor written, and no other request sees it.
    pub fn resolve_page_in_draft(
        &self,
        request: Request,
        draft: &[(Key, Value)],
        host: &dyn Host,
    ) -> Resolution {
        Resolution::for_page(
            self.store.current().overlaid(draft),
            self.config.clone(),
            request,
            &self.caches,
            RequestOptions {
                bypass_caches: true,
                ..RequestOptions::default()
            },
            host,
        )
    }

    /// Applies a reload body; caches derived from the old content are dropped.
    pub fn reload(&self, body: &[u8], now: DateTime<Utc>) -> Result<ReloadResponse, ReloadError> {
        self.store.reload(body, now)
    }

    #[cfg(test)]
    pub(crate) fn caches_for_tests(&self) -> &Caches {
        &self.caches
    }

    /// The layout cache (for inspection and purges).
    pub fn layout_cache(&self) -> &LayoutCache {
        &self.caches.layout
    }

    /// The loader cache hosts consult before running a loader (`/_cache/purge-loaders` clears
    /// it).
    pub fn loader_cache(&self) -> &LoaderCache {
        &self.caches.loaders
    }

    /// Layout sections' outputs after their section loaders, shared across pages (a loader purge
    /// clears them with the loader cache).
    pub(crate) fn layout_outputs(&self) -> &Arc<LayoutCache> {
        &self.caches.layout_outputs
    }
}
