//! What the Next.js root layout renders besides the app: the analytics tag and the
//! live-controls script, as the core decides them from the environment.

use crate::error::{Code, fail, guarded, thrown};
use napi_derive::napi;
use sitefile_core::{ErrorCode, PlatformConfig, analytics_tag, live_controls_script};
use std::collections::HashMap;

/// The root layout's extras (JSON `{analytics: {src, siteKey} | null, liveControls: string |
/// null}`) for the environment `env` (JSON object of variables) and the site's name (else
/// `PLATFORM_SITE_NAME`). An invalid variable is `INVALID_CONFIG` naming it.
#[napi]
pub fn root_layout(env: String, site_name: Option<String>) -> Result<String, napi::Error<Code>> {
    guarded(|| {
        let vars: HashMap<String, String> = serde_json::from_str(&env)
            .map_err(|e| fail(ErrorCode::InvalidJson, format!("invalid environment: {e}")))?;
        let config = PlatformConfig::from_env(&vars).map_err(|e| thrown(&e))?;
        let site = site_name.or(config.runtime.site_name.clone());
        let layout = serde_json::json!({
            "analytics": analytics_tag(&config.analytics),
            "liveControls": live_controls_script(site.as_deref()),
        });
        Ok(layout.to_string())
    })
}
