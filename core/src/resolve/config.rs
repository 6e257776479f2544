//! How a runtime resolves: what the host registered and the setup options that shape pages.

use super::registry::KeyRegistry;
use crate::config::PlatformConfig;
use crate::config::SecretKey;
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

    /// Sets the production origins, trailing `/` removed.
    pub fn with_production_origins(mut self, origins: &[&str]) -> ResolveConfig {
        self.production_origins = origins
            .iter()
            .map(|o| o.trim_end_matches('/').to_string())
            .filter(|o| !o.is_empty())
            .collect();
        self
    }

    pub(crate) fn depth_limit(&self) -> usize {
        if self.max_depth == 0 {
            DEFAULT_MAX_DEPTH
        } else {
            self.max_depth
        }
    }
}
