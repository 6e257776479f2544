//! How long a loader result stays fresh, and how long after that it may still be served.

use crate::edge::ProfileTimings;

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
    /// The loader-layer timings of a cache profile.
    pub fn from_profile(timings: &ProfileTimings) -> Freshness {
        Freshness {
            max_age_ms: timings.loader_fresh_ms,
            stale_ms: timings.loader_stale_ms,
        }
    }

    /// Whether results are kept at all.
    pub fn is_cacheable(&self) -> bool {
        self.max_age_ms > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::CacheProfile;

    #[test]
    fn from_profiles() {
        let f = Freshness::from_profile(&ProfileTimings::builtin(CacheProfile::Product));
        assert_eq!(
            f,
            Freshness {
                max_age_ms: 30_000,
                stale_ms: 600_000
            }
        );
        assert!(
            !Freshness::from_profile(&ProfileTimings::builtin(CacheProfile::Private))
                .is_cacheable()
        );
    }
}
