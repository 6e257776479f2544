//! How long a loader result stays fresh, and how long after that it may still be served.

/// Freshness of one loader result, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    /// Served as a hit up to this age.
    pub max_age_ms: u64,
    /// After `max_age_ms`, served stale for this long: while a refresh runs, and when the loader
    /// fails. Past it the entry is gone.
    pub stale_ms: u64,
}

impl Freshness {
    /// Whether results are kept at all.
    pub fn is_cacheable(&self) -> bool {
        self.max_age_ms > 0
    }
}
