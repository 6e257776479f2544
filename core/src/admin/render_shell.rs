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

impl RenderShell {
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
}
