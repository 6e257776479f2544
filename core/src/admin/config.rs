//! What the admin protocol needs from the configuration: the development flag, the tokens and
//! the body limits.

use super::render_shell::RenderShell;
use crate::config::{PlatformConfig, Secret};
use crate::edge::WorkerOptions;
use std::collections::HashMap;

/// Default largest `POST /.sitefile` body: 64 MiB (the largest real site is about 7 MB).
pub const DEFAULT_RELOAD_MAX_BYTES: usize = 64 * 1024 * 1024;
/// Default largest body of the other admin endpoints: 16 MiB (a preview may carry a whole
/// content overlay).
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// The purge token's state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PurgeToken {
    /// `purgeTokenEnv: false`: the purge endpoints answer 404.
    Disabled,
    /// The variable is unset or empty: every purge is refused with 401.
    #[default]
    Unset,
    /// Purges need `Authorization: Bearer <token>`.
    Token(Secret),
}

/// The admin protocol's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminConfig {
    /// `NODE_ENV=development`: no reload token needed, stack traces in invoke errors.
    pub development: bool,
    /// `PLATFORM_RELEASE_RELOAD_TOKEN`.
    pub reload_token: Option<Secret>,
    /// The value of the variable named by `purgeTokenEnv`.
    pub purge_token: PurgeToken,
    /// Largest `POST /.sitefile` body ([`DEFAULT_RELOAD_MAX_BYTES`]).
    pub reload_max_bytes: usize,
    /// Largest body of the other endpoints ([`DEFAULT_MAX_BODY_BYTES`]).
    pub max_body_bytes: usize,
    /// The empty preview frame served by `GET /live/previews` (`previewShell`); `None` builds one
    /// from `render_shell`.
    pub preview_shell: Option<String>,
    /// The document every preview and render is wrapped in.
    pub render_shell: RenderShell,
    /// The body of the speculation rules the edge serves (`speculationRules`); `None` when the
    /// option is off, and the route is then not the edge's.
    pub speculation_rules: Option<String>,
}

impl Default for AdminConfig {
    fn default() -> AdminConfig {
        AdminConfig {
            development: false,
            reload_token: None,
            purge_token: PurgeToken::Unset,
            reload_max_bytes: DEFAULT_RELOAD_MAX_BYTES,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            preview_shell: None,
            render_shell: RenderShell::default(),
            speculation_rules: None,
        }
    }
}

/// What the host sets of the admin protocol besides the environment: body limits and the HTML
/// placed in every preview's `<head>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminSettings {
    /// Largest `POST /.sitefile` body.
    pub reload_max_bytes: usize,
    /// Largest body of the other endpoints.
    pub max_body_bytes: usize,
    /// The document previews and renders are wrapped in (`createAdminSetup`'s `css` and
    /// `fonts`, `setRenderShell`).
    pub render_shell: RenderShell,
}

impl Default for AdminSettings {
    fn default() -> AdminSettings {
        AdminSettings {
            reload_max_bytes: DEFAULT_RELOAD_MAX_BYTES,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            render_shell: RenderShell::default(),
        }
    }
}

impl AdminConfig {
    /// The configuration with the host's `settings`.
    pub fn with_settings(self, settings: AdminSettings) -> AdminConfig {
        AdminConfig {
            reload_max_bytes: settings.reload_max_bytes,
            max_body_bytes: settings.max_body_bytes,
            render_shell: settings.render_shell,
            ..self
        }
    }

    /// The configuration from the environment (`platform`, read from `vars`), the worker options
    /// and the raw variables (the purge token lives in the variable `purgeTokenEnv` names).
    pub fn new(
        platform: &PlatformConfig,
        worker: &WorkerOptions,
        vars: &HashMap<String, String>,
    ) -> AdminConfig {
        AdminConfig {
            development: platform.is_development(),
            reload_token: platform.runtime.release_reload_token.clone(),
            purge_token: match worker.purge_token(vars) {
                Err(()) => PurgeToken::Disabled,
                Ok(None) => PurgeToken::Unset,
                Ok(Some(token)) => PurgeToken::Token(Secret::new(token)),
            },
            preview_shell: worker.preview_shell.clone(),
            speculation_rules: worker.speculation_rules.as_ref().map(|r| r.to_json()),
            ..AdminConfig::default()
        }
    }
}
