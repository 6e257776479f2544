//! The preview document: `setRenderShell({css, fonts, theme, bodyClass, lang})` and
//! `createAdminSetup`'s `css` and `fonts`.

use super::html::escape;
use serde::Deserialize;

/// How previews and renders are wrapped into a whole HTML document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderShell {
    /// URL of the site's stylesheet, linked after the fonts.
    #[serde(default)]
    pub css: Option<String>,
    /// URLs of font stylesheets, linked first, in order.
    #[serde(default)]
    pub fonts: Vec<String>,
    /// The `data-theme` attribute of `<html>` (component libraries' color variables need it).
    #[serde(default)]
    pub theme: Option<String>,
    /// The `class` of `<body>`.
    #[serde(default)]
    pub body_class: Option<String>,
    /// The `lang` of `<html>` (default `en`).
    #[serde(default)]
    pub lang: Option<String>,
}

/// What `setRenderShell` changes: each field given replaces the shell's, each one left out (or
/// `null`) keeps what it was, so `setRenderShell({theme})` after `createAdminSetup({css, fonts})`
/// keeps the stylesheet and fonts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenderShellUpdate {
    /// Replaces [`RenderShell::css`].
    #[serde(default)]
    pub css: Option<String>,
    /// Replaces [`RenderShell::fonts`] (the whole list).
    #[serde(default)]
    pub fonts: Option<Vec<String>>,
    /// Replaces [`RenderShell::theme`].
    #[serde(default)]
    pub theme: Option<String>,
    /// Replaces [`RenderShell::body_class`].
    #[serde(default)]
    pub body_class: Option<String>,
    /// Replaces [`RenderShell::lang`].
    #[serde(default)]
    pub lang: Option<String>,
}

impl RenderShell {
    /// Sets the fields `update` gives and keeps the others.
    pub fn apply(&mut self, update: RenderShellUpdate) {
        let RenderShellUpdate {
            css,
            fonts,
            theme,
            body_class,
            lang,
        } = update;
        if css.is_some() {
            self.css = css;
        }
        if let Some(fonts) = fonts {
            self.fonts = fonts;
        }
        if theme.is_some() {
            self.theme = theme;
        }
        if body_class.is_some() {
            self.body_class = body_class;
        }
        if lang.is_some() {
            self.lang = lang;
        }
    }

    /// A whole document around `body`; every attribute value is escaped.
    pub(crate) fn document(&self, body: &str) -> String {
        let lang = escape(self.lang.as_deref().unwrap_or("en"));
        let theme = self
            .theme
            .as_deref()
            .map(|t| format!(" data-theme=\"{}\"", escape(t)))
            .unwrap_or_default();
        let links: String = self
            .fonts
            .iter()
            .chain(&self.css)
            .map(|href| format!("<link rel=\"stylesheet\" href=\"{}\">", escape(href)))
            .collect();
        let body_class = self
            .body_class
            .as_deref()
            .map(|c| format!(" class=\"{}\"", escape(c)))
            .unwrap_or_default();
        format!(
            "<!DOCTYPE html><html lang=\"{lang}\"{theme}><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">{links}</head>\
             <body{body_class}>{body}</body></html>"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_links_fonts_then_css_and_escapes_every_attribute() {
        let shell: RenderShell = serde_json::from_value(serde_json::json!({
            "css": "/styles.css?v=\"1\"", "fonts": ["https://fonts.example/a.css"],
            "theme": "dark\"><script>", "bodyClass": "bg-base-100", "lang": "pt-BR"
        }))
        .unwrap();
        let html = shell.document("<p>x</p>");
        assert!(html.starts_with(
            "<!DOCTYPE html><html lang=\"pt-BR\" data-theme=\"dark&quot;&gt;&lt;script&gt;\">"
        ));
        let font = html.find("fonts.example").unwrap();
        let css = html.find("/styles.css?v=&quot;1&quot;").unwrap();
        assert!(font < css, "fonts first");
        assert!(html.contains("<body class=\"bg-base-100\"><p>x</p></body>"));
        let plain = RenderShell::default().document("");
        assert!(plain.starts_with("<!DOCTYPE html><html lang=\"en\"><head>"));
        assert!(plain.contains("<body></body>"));
        assert!(serde_json::from_value::<RenderShell>(serde_json::json!({"colour": 1})).is_err());
    }

    #[test]
    fn an_update_sets_the_fields_it_gives_and_keeps_the_others() {
        let mut shell = RenderShell {
            css: Some("/styles.css".into()),
            fonts: vec!["https://fonts.example/a.css".into()],
            ..RenderShell::default()
        };
        let update: RenderShellUpdate = serde_json::from_value(serde_json::json!({
            "theme": "dark", "bodyClass": "bg-base-100", "lang": "pt-BR", "css": null
        }))
        .unwrap();
        shell.apply(update);
        assert_eq!(
            shell,
            RenderShell {
                css: Some("/styles.css".into()),
                fonts: vec!["https://fonts.example/a.css".into()],
                theme: Some("dark".into()),
                body_class: Some("bg-base-100".into()),
                lang: Some("pt-BR".into()),
            }
        );
        shell.apply(RenderShellUpdate {
            css: Some("/v2.css".into()),
            fonts: Some(Vec::new()),
            ..RenderShellUpdate::default()
        });
        assert_eq!(shell.css.as_deref(), Some("/v2.css"));
        assert!(shell.fonts.is_empty(), "a list given replaces the list");
        assert_eq!(shell.theme.as_deref(), Some("dark"), "kept");
        assert!(
            serde_json::from_value::<RenderShellUpdate>(serde_json::json!({"colour": 1})).is_err()
        );
    }
}
