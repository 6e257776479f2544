//! What a site's root layout renders around its pages besides the app's own markup: the
//! first-party analytics tag (exactly when `PLATFORM_ANALYTICS_ENABLED=true`) and the
//! live-controls script (outside the editor, `.` opens the site in the editor; Ctrl or Cmd with
//! `.` in a new tab). A binding renders both as they are.

use crate::config::AnalyticsConfig;
use crate::config::hosts::EDITOR_ORIGINS;
use crate::uri::encode_uri_component;
use serde::Serialize;

/// The path of the first-party analytics script on its origin.
pub const ANALYTICS_SCRIPT_PATH: &str = "/_platform/analytics.js";

/// The first-party analytics tag: `<script defer src=… data-site-key=…>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalyticsTag {
    /// The script's URL: [`ANALYTICS_SCRIPT_PATH`] on `PLATFORM_ANALYTICS_ORIGIN`, or on the
    /// page's own origin (a root-relative URL) when that is unset.
    pub src: String,
    /// `PLATFORM_ANALYTICS_SITE_KEY`, written as `data-site-key` (sites not served through the
    /// platform's edge).
    pub site_key: Option<String>,
}

/// The tag the analytics variables call for: one exactly when `PLATFORM_ANALYTICS_ENABLED` is
/// `true`.
pub fn analytics_tag(config: &AnalyticsConfig) -> Option<AnalyticsTag> {
    if !config.enabled {
        return None;
    }
    let origin = config
        .origin
        .as_ref()
        .map(|o| o.as_str().trim_end_matches('/').to_string())
        .unwrap_or_default();
    Some(AnalyticsTag {
        src: format!("{origin}{ANALYTICS_SCRIPT_PATH}"),
        site_key: config.site_key.clone(),
    })
}

/// The editor's page of a site: `https://studio.platformcms.com/sites/<site>`.
pub fn editor_url(site: &str) -> String {
    format!("{}/sites/{}", EDITOR_ORIGINS[0], encode_uri_component(site))
}

/// The live-controls script of a site named `site` (inline JavaScript, safe inside
/// `<script>`). In a page that is not framed, pressing `.` outside a text field goes to the
/// site in the editor at the current path (`?path=`); Ctrl or Cmd with `.` opens it in a new
/// tab. In a frame (the editor's) it does nothing. Without a site name there is no editor
/// page to open: `None`.
pub fn live_controls_script(site: Option<&str>) -> Option<String> {
    let site = site.map(str::trim).filter(|s| !s.is_empty())?;
    // JSON is a JavaScript string literal; `<` escaped so no `</script>` can end the element.
    let editor = serde_json::to_string(&editor_url(site))
        .unwrap_or_default()
        .replace('<', "\\u003c");
    Some(format!(
        "(()=>{{if(window.top!==window.self)return;const editor={editor};\
         addEventListener(\"keydown\",(e)=>{{if(e.key!==\".\"||e.altKey||e.defaultPrevented)return;\
         const t=e.target;if(t&&(t.isContentEditable||/^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))return;\
         const url=editor+\"?path=\"+encodeURIComponent(location.pathname+location.search);\
         if(e.ctrlKey||e.metaKey)window.open(url,\"_blank\",\"noopener\");else location.href=url}})}})()"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PlatformConfig;

    fn analytics(vars: &[(&str, &str)]) -> Option<AnalyticsTag> {
        analytics_tag(
            &PlatformConfig::from_env(vars.iter().copied())
                .unwrap()
                .analytics,
        )
    }

    #[test]
    fn the_analytics_tag_exactly_when_enabled_is_true() {
        let on = [
            ("PLATFORM_ANALYTICS_ENABLED", "true"),
            ("PLATFORM_ANALYTICS_ORIGIN", "https://analytics.example/"),
            ("PLATFORM_ANALYTICS_SITE_KEY", "key-1"),
        ];
        assert_eq!(
            analytics(&on),
            Some(AnalyticsTag {
                src: "https://analytics.example/_platform/analytics.js".into(),
                site_key: Some("key-1".into()),
            })
        );
        assert_eq!(
            analytics(&[("PLATFORM_ANALYTICS_ENABLED", "true")]),
            Some(AnalyticsTag {
                src: "/_platform/analytics.js".into(),
                site_key: None
            }),
            "same origin"
        );
        for value in ["TRUE", "1", "yes", "false", ""] {
            assert_eq!(
                analytics(&[("PLATFORM_ANALYTICS_ENABLED", value)]),
                None,
                "{value:?}"
            );
        }
        assert_eq!(analytics(&[]), None);
    }

    #[test]
    fn live_controls_open_the_site_in_the_editor() {
        let script = live_controls_script(Some("my-store")).unwrap();
        assert!(
            script.contains(r#"const editor="https://studio.platformcms.com/sites/my-store";"#)
        );
        assert!(script.contains("e.ctrlKey||e.metaKey"));
        assert!(script.contains("window.top!==window.self"));
        let odd = live_controls_script(Some("</script><b>")).unwrap();
        assert!(!odd.contains('<'), "{odd}");
        assert_eq!(live_controls_script(None), None);
        assert_eq!(live_controls_script(Some(" ")), None);
    }
}
