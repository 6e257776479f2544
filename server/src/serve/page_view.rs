//! The built-in HTML view of a resolved page: what a newcomer sees at `/` before any renderer
//! exists — the page that serves the path, each section with its props, what the page varies
//! on, and what failed.

use sitefile_core::admin::escape_html as escape;
use sitefile_core::resolve::ResolvedPage;
use std::fmt::Write;

/// The view's style: readable without any asset.
const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;\
padding:0 1rem;color:#1d1d1f}h1{font-size:1.5rem}code,pre{font:13px/1.4 ui-monospace,monospace}\
pre{background:#f5f5f7;padding:.75rem;border-radius:6px;overflow:auto;max-height:24rem}\
section{border:1px solid #d2d2d7;border-radius:8px;padding:.5rem 1rem;margin:1rem 0}\
.note{background:#fff4e5;border:1px solid #f5a623;border-radius:6px;padding:.5rem 1rem}\
.muted{color:#6e6e73}";

/// The HTML document for `page`, resolved for `path`.
pub fn render(page: &ResolvedPage, path: &str) -> String {
    let mut html = String::with_capacity(4096);
    let title = match &page.page {
        Some(name) => format!("{} — sitefile", name),
        None => format!("No page serves {path} — sitefile"),
    };
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{}</title><style>{STYLE}</style>\
         </head><body>",
        escape(&title)
    );
    match &page.page {
        Some(name) => {
            let _ = write!(
                html,
                "<h1>{}</h1><p class=\"muted\">Block <code>{}</code>, path pattern <code>{}</code>, \
                 content revision <code>{}</code>. The same page as JSON: \
                 <a href=\"?asJson\">?asJson</a>.</p>",
                escape(path),
                escape(name),
                escape(page.path.as_deref().unwrap_or("")),
                escape(&page.revision),
            );
        }
        None => {
            let _ = write!(
                html,
                "<h1>No page serves {}</h1><p class=\"muted\">No page block's <code>path</code> \
                 matches this URL (content revision <code>{}</code>).</p>",
                escape(path),
                escape(&page.revision)
            );
        }
    }
    notes(page, &mut html);
    for (index, section) in page.sections.iter().enumerate() {
        let props = serde_json::to_string_pretty(&serde_json::Value::from(&section.props))
            .unwrap_or_default();
        let deferred = if section.deferred {
            " <span class=\"muted\">(deferred: rendered after the page)</span>"
        } else {
            ""
        };
        let _ = write!(
            html,
            "<section><h2><code>{}</code>{deferred}</h2><p class=\"muted\">Section {index}</p>\
             <pre>{}</pre></section>",
            escape(&section.component),
            escape(&props)
        );
    }
    html.push_str("</body></html>");
    html
}

/// What the page depends on and what went wrong while resolving it.
fn notes(page: &ResolvedPage, html: &mut String) {
    let effects = &page.effects;
    if effects.degraded {
        html.push_str(
            "<p class=\"note\">This page is <strong>degraded</strong>: some of its data could not \
             be loaded (see below), so it would not be cached.</p>",
        );
    }
    if !effects.varies.is_empty() {
        let _ = write!(
            html,
            "<p>Varies on: {}.</p>",
            escape(&effects.varies.join(", "))
        );
    }
    if !effects.errors.is_empty() {
        html.push_str("<ul class=\"note\">");
        for error in &effects.errors {
            let _ = write!(
                html,
                "<li><code>{}</code> ({}): {}</li>",
                escape(&error.resolve_type),
                escape(&error.context),
                escape(&error.message)
            );
        }
        html.push_str("</ul>");
    }
    for warning in &effects.warnings {
        let _ = write!(html, "<p class=\"note\">{}</p>", escape(warning));
    }
}
