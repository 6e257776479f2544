//! The caches a runtime shares between requests: layouts, page passes and loader results.

use super::layout_cache::LayoutCache;
use super::page_cache::PageCache;
use crate::loader_cache::LoaderCache;
use std::sync::Arc;

/// The caches a runtime shares between requests; all of them follow the content.
#[derive(Debug, Default)]
pub(crate) struct Caches {
    /// Layout sections as resolved.
    pub layout: LayoutCache,
    /// Layout sections after their section loaders (`section_loaders::LayoutOutputs`).
    pub layout_outputs: Arc<LayoutCache>,
    /// Pages' synchronous passes.
    pub pages: PageCache,
    /// Loader results.
    pub loaders: LoaderCache,
}

impl Caches {
    /// Forgets everything derived from earlier content (every swap, every purge).
    pub fn clear(&self) {
        self.layout.clear();
        self.layout_outputs.clear();
        self.pages.clear();
        self.loaders.clear();
    }
}
