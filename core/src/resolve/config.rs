//! How a runtime resolves: what the host registered and the setup options that shape pages.

use super::registry::KeyRegistry;
use crate::config::SecretKey;
use crate::config::{ConfigError, PlatformConfig};
use crate::loader_cache::Freshness;
use crate::matchers::MatcherRegistry;
use std::collections::HashMap;
use std::collections::HashSet;

/// Default bound on `__resolveType` nesting (a second guard behind cycle detection).
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// Everything fixed at setup that resolution reads.
#[derive(Default)]
pub struct ResolveConfig {
    /// Built-in and custom matchers.
    pub matchers: MatcherRegistry,
    /// Registered section keys (page sections of other types are dropped).
    pub sections: KeyRegistry,
    /// Registered loader keys (calls handed to the host).
    pub loaders: KeyRegistry,
    /// Loaders whose results the loader cache keeps (`createCachedLoader`, opt-in per loader),
    /// by registered key, with their freshness.
    pub cached_loaders: HashMap<String, Freshness>,
    /// Section keys marked `layout = true` / `registerLayoutSections`.
    pub layout_sections: HashSet<String>,
    /// Section keys whose loader's failure does not degrade the page
    /// (`registerNonCriticalSections`): the page renders without that section's data.
    pub non_critical_sections: HashSet<String>,
    /// Origins whose absolute URLs in resolved pages become relative (`productionOrigins`).
    pub production_origins: Vec<String>,
    /// Merge the Site block's theme and global sections into every page (`resolveGlobals`).
    pub resolve_globals: bool,
    /// Mark lazy-wrapped sections as deferred for non-bot requests.
    pub async_rendering: bool,
    /// Key for encrypted app credentials (`PLATFORM_CRYPTO_KEY`).
    pub secret_key: Option<SecretKey>,
    /// `NODE_ENV` is `production`.
    pub production: bool,
    /// Bound on `__resolveType` nesting; 0 means [`DEFAULT_MAX_DEPTH`].
    pub max_depth: usize,
}

impl ResolveConfig {
    /// The configuration the command line uses: every `/sections/` key is a section and every
    /// `/loaders/`, `/functions/` or `/actions/` key a loader; site globals merged.
    pub fn by_convention() -> ResolveConfig {
        ResolveConfig {
            sections: KeyRegistry::by_convention(&["/sections/"]),
            loaders: KeyRegistry::by_convention(&["/loaders/", "/functions/", "/actions/"]),
            resolve_globals: true,
            ..ResolveConfig::default()
        }
    }

    /// Applies the environment: `NODE_ENV=production` for the environment matcher and
    /// `PLATFORM_CRYPTO_KEY` for encrypted secrets.
    pub fn with_platform(mut self, platform: &PlatformConfig) -> Self {
        self.production = platform.runtime.node_env.as_deref() == Some("production");
        self.secret_key = platform.runtime.crypto_key.clone();
        self
    }

    /// Sets the production origins (`productionOrigins`): each an http(s) URL reduced to its
    /// origin (`https://www.shop.com/br/` → `https://www.shop.com`). Anything else is an error
    /// naming the option.
    pub fn with_production_origins(mut self, origins: &[&str]) -> Result<Self, ConfigError> {
        self.production_origins = origins
            .iter()
            .map(|entry| {
                url::Url::parse(entry)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
                    .map(|u| u.origin().ascii_serialization())
                    .ok_or_else(|| {
                        ConfigError::new("productionOrigins", entry, "an http(s) origin")
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(self)
    }

    pub(crate) fn depth_limit(&self) -> usize {
        if self.max_depth == 0 {
            DEFAULT_MAX_DEPTH
        } else {
            self.max_depth
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_origins_are_http_origins() {
        let config = ResolveConfig::default()
            .with_production_origins(&["https://www.shop.com/", "http://a.com:8080/x"])
            .unwrap();
        assert_eq!(
            config.production_origins,
            vec!["https://www.shop.com", "http://a.com:8080"],
            "a path is not part of an origin"
        );
        for bad in ["nope", "ftp://x.com", "shop.com", ""] {
            let error = ResolveConfig::default()
                .with_production_origins(&[bad])
                .err()
                .unwrap();
            assert_eq!(error.variable, "productionOrigins", "{bad}");
        }
    }
}
