//! Layout sections after their section loaders, shared across pages: the spec's layout cache
//! ("resolved output cached for a few minutes, shared across pages and keyed by device") for
//! the output the visitor sees, not only the resolution step before the loaders.
//!
//! An entry is keyed by the content revision, the device class, the section's component and a
//! digest of the props its loaders start from. A saved layout block (a header every page
//! references) has the same props on every page, so every page shares one entry; an inline
//! layout section with other props gets an entry of its own, never another page's output (the
//! reference keys by section alone, sharing one device's output with another and one page's
//! inline props with the next). A request that forces matchers or renders a draft neither reads
//! nor keeps outputs, as the resolution's layout cache does not. Entries live [`LAYOUT_TTL_SECONDS`](crate::resolve::layout_cache::LAYOUT_TTL_SECONDS) and are dropped on every
//! content swap and loader purge. An output any of whose loaders failed is not kept.

use crate::device::Device;
use crate::resolve::{LayoutCache, ResolvedSection};
use crate::value::Value;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Where one run of section loaders reads and keeps layout sections' outputs.
pub(crate) struct LayoutOutputs {
    cache: Arc<LayoutCache>,
    /// The cache's generation when the run began: a purge or swap since then keeps nothing.
    generation: u64,
    revision: String,
    device: Device,
    now: DateTime<Utc>,
    /// The sections (by index) whose output is kept when the run ends, under their keys.
    keeping: HashMap<usize, String>,
    /// The sections whose loaders (their own or nested ones) failed.
    failed: HashSet<usize>,
}

impl LayoutOutputs {
    /// Outputs for a run on content `revision` for a visitor on `device` at `now`.
    pub(crate) fn new(
        cache: Arc<LayoutCache>,
        revision: &str,
        device: Device,
        now: DateTime<Utc>,
    ) -> LayoutOutputs {
        LayoutOutputs {
            generation: cache.generation(),
            cache,
            revision: revision.to_string(),
            device,
            now,
            keeping: HashMap::new(),
            failed: HashSet::new(),
        }
    }

    /// The kept output of layout section `index` when one is fresh; otherwise `None`, and the
    /// section's output is kept when the run ends.
    pub(crate) fn cached(&mut self, index: usize, section: &ResolvedSection) -> Option<Value> {
        let key = key(section);
        let found = self.cache.get(&self.revision, &key, self.device, self.now);
        if found.is_none() {
            self.keeping.insert(index, key);
        }
        found
    }

    /// A loader of section `index`, or of a section nested in it, failed: its output is not kept.
    pub(crate) fn failed(&mut self, index: usize) {
        self.failed.insert(index);
    }

    /// Keeps the outputs of the layout sections that ran without a failure, unless the cache was
    /// cleared (a loader purge, a content swap) while the run was under way.
    pub(crate) fn keep(self, sections: &[ResolvedSection]) {
        for (index, key) in self.keeping {
            if let Some(section) = sections.get(index)
                && !self.failed.contains(&index)
            {
                let key = (self.revision.as_str(), key.as_str(), self.device);
                let value = section.props.clone();
                self.cache
                    .put_if_current(self.generation, key, self.now, value);
            }
        }
    }
}

/// The key of a layout section: its component and the digest of the props it starts from.
fn key(section: &ResolvedSection) -> String {
    let digest = Sha256::digest(section.props.to_json_string().as_bytes());
    format!("{}\n{}", section.component, hex::encode(digest))
}
