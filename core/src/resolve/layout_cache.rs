//! The layout-section cache: resolved output of layout sections (header, footer) shared across
//! pages for a few minutes, keyed by revision, block and device class.

use crate::device::Device;
use crate::value::Value;
use chrono::{DateTime, Duration, Utc};
use parking_lot::Mutex;
use std::collections::HashMap;

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
        let mut entries = self.entries.lock();
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

    /// Drops everything.
    pub fn clear(&self) {
        self.entries.lock().clear();
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
