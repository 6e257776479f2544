//! The layout-section cache: resolved output of layout sections (header, footer) shared across
//! pages for a few minutes, keyed by revision, block and device class.

use crate::device::Device;
use crate::value::Value;
use chrono::{DateTime, Duration, Utc};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// How long a layout section stays fresh.
pub const LAYOUT_TTL_SECONDS: i64 = 300;

/// Most entries kept; the oldest are dropped first when full.
const MAX_ENTRIES: usize = 1024;

type LayoutKey = (String, String, Device);

/// Cached layout sections. Entries of an older revision are never read and are dropped on the
/// next write.
#[derive(Debug, Default)]
pub struct LayoutCache {
    entries: Mutex<HashMap<LayoutKey, (DateTime<Utc>, Value)>>,
    /// Bumped by every [`LayoutCache::clear`]: work begun before a clear keeps nothing after it.
    generation: AtomicU64,
}

impl LayoutCache {
    /// The cached output of `block` for this revision and device, when still fresh at `now`.
    pub fn get(
        &self,
        revision: &str,
        block: &str,
        device: Device,
        now: DateTime<Utc>,
    ) -> Option<Value> {
        let entries = self.entries.lock();
        let (stored, value) = entries.get(&(revision.to_string(), block.to_string(), device))?;
        (now - *stored < Duration::seconds(LAYOUT_TTL_SECONDS)).then(|| value.clone())
    }

    /// Stores the output of `block`.
    pub fn put(
        &self,
        revision: &str,
        block: &str,
        device: Device,
        now: DateTime<Utc>,
        value: Value,
    ) {
        insert(
            &mut self.entries.lock(),
            (revision, block, device),
            now,
            value,
        );
    }

    /// Drops everything, and refuses what work begun before keeps ([`LayoutCache::generation`]).
    pub fn clear(&self) {
        let mut entries = self.entries.lock();
        self.generation.fetch_add(1, Ordering::SeqCst);
        entries.clear();
    }

    /// The current generation: hand it to [`LayoutCache::put_if_current`] to keep an output only
    /// if no clear (a purge, a content swap) came in between.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// [`LayoutCache::put`], unless the cache was cleared since `generation` was read (checked
    /// under the lock a clear takes).
    pub fn put_if_current(
        &self,
        generation: u64,
        key: (&str, &str, Device),
        now: DateTime<Utc>,
        value: Value,
    ) {
        let mut entries = self.entries.lock();
        if self.generation() == generation {
            insert(&mut entries, key, now, value);
        }
    }

    /// How many entries are held.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Stores `value` under `key` in `entries`, dropping entries of other revisions and expired
/// ones, and the oldest when full.
fn insert(
    entries: &mut HashMap<LayoutKey, (DateTime<Utc>, Value)>,
    (revision, block, device): (&str, &str, Device),
    now: DateTime<Utc>,
    value: Value,
) {
    entries.retain(|(r, _, _), (t, _)| {
        r == revision && now - *t < Duration::seconds(LAYOUT_TTL_SECONDS)
    });
    if entries.len() >= MAX_ENTRIES
        && let Some(oldest) = entries
            .iter()
            .min_by_key(|(_, (t, _))| *t)
            .map(|(k, _)| k.clone())
    {
        entries.remove(&oldest);
    }
    entries.insert(
        (revision.to_string(), block.to_string(), device),
        (now, value),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_by_revision_and_device_and_expires() {
        let cache = LayoutCache::default();
        let t0: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
        cache.put("r1", "Header", Device::Mobile, t0, Value::from("m"));
        assert_eq!(
            cache.get("r1", "Header", Device::Mobile, t0),
            Some(Value::from("m"))
        );
        assert_eq!(cache.get("r1", "Header", Device::Desktop, t0), None);
        assert_eq!(cache.get("r2", "Header", Device::Mobile, t0), None);
        let later = t0 + Duration::seconds(LAYOUT_TTL_SECONDS);
        assert_eq!(cache.get("r1", "Header", Device::Mobile, later), None);
        cache.put("r2", "Footer", Device::Desktop, t0, Value::Null);
        assert_eq!(cache.len(), 1, "older revisions are dropped on write");
    }
}
