//! The HTML documents of previews: the shell, section wrappers and inline errors.

/// Escapes text for HTML content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// An error shown in place of what failed to render.
pub(crate) fn inline_error(message: &str) -> String {
    format!(
        "<div class=\"platform-render-error\" role=\"alert\">{}</div>",
        escape(message)
    )
}

/// One previewed section, wrapped so the editor can map clicks to its block.
pub(crate) fn section(key: &str, inner: &str) -> String {
    format!(
        "<section data-manifest-key=\"{}\">{inner}</section>",
        escape(key)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_text_and_attributes() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(
            section("a\"b", "x"),
            "<section data-manifest-key=\"a&quot;b\">x</section>"
        );
    }
}
