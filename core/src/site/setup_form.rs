//! The JSON form of a site's setup, what every binding hands core (`createSiteSetup` and
//! `createAdminSetup` options that are data; the functions stay with the host).

use super::{SetupError, SiteSetup};
use crate::admin::{AdminSettings, RenderShell};
use crate::edge::WorkerOptions;
use crate::loader_cache::Freshness;
use crate::resolve::{KeyRegistry, ResolveConfig};
use serde::Deserialize;
use std::collections::HashMap;

/// A site's setup as JSON. Every field is optional; unknown fields are refused.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetupForm {
    /// Registered sections: keys (`site/sections/Hero.tsx`) or modules (`./sections/Hero.tsx`).
    /// Absent: every key holding `/sections/` is a section.
    pub sections: Option<Vec<String>>,
    /// Registered loader and action keys (their code stays with the host). Absent: every key
    /// holding `/loaders/`, `/functions/` or `/actions/`.
    pub loaders: Option<Vec<String>>,
    /// Loaders whose results the loader cache keeps: key → freshness.
    #[serde(default)]
    pub cached_loaders: HashMap<String, FreshnessForm>,
    /// Keys of custom matchers (`registerMatcher`); the host answers them.
    #[serde(default)]
    pub custom_matchers: Vec<String>,
    /// The feature-flag bridge's matcher key (`<flag_vendor>/matchers/featureFlag.ts`).
    pub feature_flag_matcher: Option<String>,
    /// `productionOrigins`.
    #[serde(default)]
    pub production_origins: Vec<String>,
    /// `registerLayoutSections`.
    #[serde(default)]
    pub layout_sections: Vec<String>,
    /// `registerNonCriticalSections`.
    #[serde(default)]
    pub non_critical_sections: Vec<String>,
    /// Mark lazy-wrapped sections deferred for non-bot requests.
    #[serde(default)]
    pub async_rendering: bool,
    /// Merge the Site block's globals into every page (default `true`).
    pub resolve_globals: Option<bool>,
    /// The environment variables (`NODE_ENV`, `PLATFORM_*`, …).
    #[serde(default)]
    pub env: HashMap<String, String>,
    /// `createDecoWorkerEntry` options in their JSON spelling.
    pub options: Option<serde_json::Value>,
    /// The admin protocol's settings.
    #[serde(default)]
    pub admin: AdminForm,
}

/// The freshness of a cached loader, in milliseconds.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FreshnessForm {
    /// Served as a hit up to this age.
    pub max_age_ms: u64,
    /// Then served stale for this long.
    #[serde(default)]
    pub stale_ms: u64,
}

/// The admin protocol's settings as JSON.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdminForm {
    /// Largest `POST /.sitefile` body, in bytes.
    pub reload_max_bytes: Option<usize>,
    /// Largest body of the other endpoints, in bytes.
    pub max_body_bytes: Option<usize>,
    /// The preview document (`setRenderShell`, `createAdminSetup`'s `css` and `fonts`).
    #[serde(default)]
    pub render_shell: RenderShell,
}

impl SiteSetup {
    /// The setup a JSON [`SetupForm`] describes; a malformed one is `INVALID_CONFIG` naming the
    /// problem.
    pub fn from_json(text: &str) -> Result<SiteSetup, SetupError> {
        let form: SetupForm =
            serde_json::from_str(text).map_err(|e| SetupError::Form(e.to_string()))?;
        form.into_setup()
    }
}

impl SetupForm {
    /// The setup this form describes.
    pub fn into_setup(self) -> Result<SiteSetup, SetupError> {
        let mut resolve = ResolveConfig::by_convention();
        if let Some(sections) = &self.sections {
            let mut registry = KeyRegistry::default();
            for module in sections {
                registry.register_section_module(module);
            }
            resolve.sections = registry;
        }
        if let Some(loaders) = &self.loaders {
            let mut registry = KeyRegistry::default();
            for key in loaders {
                registry.register(key);
            }
            resolve.loaders = registry;
        }
        resolve.cached_loaders = self
            .cached_loaders
            .into_iter()
            .map(|(key, f)| {
                let freshness = Freshness {
                    max_age_ms: f.max_age_ms,
                    stale_ms: f.stale_ms,
                };
                (key, freshness)
            })
            .collect();
        for key in &self.custom_matchers {
            resolve.matchers.register(key);
        }
        if let Some(key) = &self.feature_flag_matcher {
            resolve.matchers.register_feature_flag_bridge(key);
        }
        let origins: Vec<&str> = self.production_origins.iter().map(String::as_str).collect();
        resolve = resolve.with_production_origins(&origins)?;
        resolve.layout_sections = self.layout_sections.into_iter().collect();
        resolve.non_critical_sections = self.non_critical_sections.into_iter().collect();
        resolve.async_rendering = self.async_rendering;
        resolve.resolve_globals = self.resolve_globals.unwrap_or(true);
        let worker = match &self.options {
            Some(options) => WorkerOptions::from_json(options)?,
            None => WorkerOptions::default(),
        };
        let defaults = AdminSettings::default();
        let admin = AdminSettings {
            reload_max_bytes: self
                .admin
                .reload_max_bytes
                .unwrap_or(defaults.reload_max_bytes),
            max_body_bytes: self.admin.max_body_bytes.unwrap_or(defaults.max_body_bytes),
            render_shell: self.admin.render_shell,
        };
        Ok(SiteSetup {
            resolve,
            worker,
            vars: self.env,
            admin,
        })
    }
}
