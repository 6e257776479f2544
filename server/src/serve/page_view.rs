//! The built-in HTML view of a resolved page: what a newcomer sees at `/` before any renderer
//! exists — what the view is, every page of the site, the page that serves the path with each
//! section and its props, the variant each flag chose and why, a way to look as another device
//! or with a rule forced, and what did not run or failed.

use sitefile_core::{Device, OVERRIDE_HEADER, ResolvedPage, Route, escape_html as escape};
use std::fmt::Write;

/// The view's style: readable without any asset.
const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:60rem;\
padding:0 1rem;color:#1d1d1f}h1{font-size:1.5rem}h2{font-size:1.1rem}\
code,pre{font:13px/1.4 ui-monospace,monospace}\
pre{background:#f5f5f7;padding:.75rem;border-radius:6px;overflow:auto;max-height:24rem}\
section{border:1px solid #d2d2d7;border-radius:8px;padding:.5rem 1rem;margin:1rem 0}\
header{border-bottom:1px solid #d2d2d7;padding-bottom:.5rem}nav{margin:.25rem 0}\
nav a,nav strong{margin-right:.75rem}\
.note{background:#fff4e5;border:1px solid #f5a623;border-radius:6px;padding:.5rem 1rem}\
.calm{background:#f5f5f7;border-radius:6px;padding:.5rem 1rem}\
.muted{color:#6e6e73}";

/// What the view shows beside the page.
pub struct View<'a> {
    /// Every routable page of the site, in the order to list them.
    pub routes: &'a [&'a Route],
    /// The device the page was resolved as, when the view was asked to look as one
    /// (`?deviceHint=`); `None`: the visitor's own user agent decided.
    pub device_hint: Option<Device>,
    /// The device the page was resolved as.
    pub device: Device,
    /// The loader keys the page asked for that did not run because no origin is configured.
    pub loaders_not_run: &'a [String],
}

/// The HTML document for `page`, resolved for `path`.
pub fn render(page: &ResolvedPage, path: &str, view: &View<'_>) -> String {
    let mut html = String::with_capacity(8192);
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
    header(page, path, view, &mut html);
    match &page.page {
        Some(name) => {
            let _ = write!(
                html,
                "<h1>{}</h1><p class=\"muted\">Page block <code>{}</code>, path pattern \
                 <code>{}</code>, resolved as a <strong>{}</strong> visitor. The same page as \
                 JSON: <a href=\"?asJson\">?asJson</a>.</p>",
                escape(path),
                escape(name),
                escape(page.path.as_deref().unwrap_or("")),
                view.device.as_str(),
            );
            if page.not_found {
                html.push_str(
                    "<p class=\"note\">This is the site's not-found page (its block says \
                     <code>\"notFound\": true</code>): no other page serves this URL, so it \
                     answers with status 404.</p>",
                );
            }
        }
        None => {
            let _ = write!(
                html,
                "<h1>No page serves {}</h1><p class=\"muted\">No page block's <code>path</code> \
                 matches this URL; the pages above are the ones this site has.</p>",
                escape(path),
            );
        }
    }
    variants(page, path, &mut html);
    notes(page, view, &mut html);
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

/// What the view is, the site's pages and the devices to look as.
fn header(page: &ResolvedPage, path: &str, view: &View<'_>, html: &mut String) {
    let _ = write!(
        html,
        "<header><p><strong>sitefile serve</strong> <span class=\"muted\">content revision \
         <code>{}</code></span></p><p class=\"muted\">This is the built-in view of the \
         content: for each URL, the page block whose <code>path</code> fits it, and each of its \
         sections with the props a renderer receives once every <code>__resolveType</code> is \
         followed (saved blocks, variants, loaders). To see the site rendered, run this server \
         in front of the app that renders it: <code>sitefile serve &lt;site&gt; --origin \
         http://127.0.0.1:3000</code>.</p><nav>Pages:",
        escape(&page.revision),
    );
    for route in view.routes {
        let label = format!(
            "{} <code>{}</code>",
            escape(&route.name),
            escape(&route.pattern)
        );
        match example_path(&route.pattern) {
            Some(href) if href == path => {
                let _ = write!(html, " <strong>{label}</strong>");
            }
            Some(href) => {
                let _ = write!(html, " <a href=\"{}\">{label}</a>", escape(&href));
            }
            None => {
                let _ = write!(html, " <span class=\"muted\">{label}</span>");
            }
        }
    }
    html.push_str("</nav><nav>Look as:");
    for device in [Device::Desktop, Device::Mobile, Device::Tablet] {
        if view.device_hint == Some(device) {
            let _ = write!(html, " <strong>{}</strong>", device.as_str());
        } else {
            let _ = write!(
                html,
                " <a href=\"{}?deviceHint={}\">{}</a>",
                escape(path),
                device.as_str(),
                device.as_str()
            );
        }
    }
    if view.device_hint.is_some() {
        let _ = write!(html, " <a href=\"{}\">your own browser</a>", escape(path));
    }
    html.push_str("</nav></header>");
}

/// A path that the pattern matches, for a link: each `:name` group becomes its name, a `*`
/// becomes `any`; `None` for a pattern with other syntax (regular expressions, braces).
fn example_path(pattern: &str) -> Option<String> {
    if !pattern.starts_with('/') || pattern.contains(['(', '{', '\\', '?', '+']) {
        return None;
    }
    let segments: Vec<String> = pattern
        .split('/')
        .map(|segment| match segment.strip_prefix(':') {
            Some(name) => name.to_string(),
            None if segment == "*" => "any".to_string(),
            None => segment.to_string(),
        })
        .collect();
    Some(segments.join("/"))
}

/// The variant each flag chose and the rules it tried, with a link forcing each rule the
/// override can name.
fn variants(page: &ResolvedPage, path: &str, html: &mut String) {
    let flags = &page.effects.flags;
    if flags.is_empty() {
        return;
    }
    html.push_str("<section><h2>Variants</h2><ul>");
    for flag in flags {
        let block = flag.at.split('@').next().unwrap_or(&flag.at);
        let _ = write!(html, "<li>A flag in <code>{}</code>: ", escape(block));
        match flag.chosen {
            Some(chosen) => {
                let rule = flag
                    .tried
                    .iter()
                    .find(|t| t.variant == chosen)
                    .and_then(|t| t.rule.as_deref());
                let _ = write!(
                    html,
                    "variant {} of {} chosen, {}.",
                    chosen + 1,
                    flag.variants,
                    match rule {
                        Some(rule) => format!("its rule <code>{}</code> matched", escape(rule)),
                        None => "it has no rule, so it always matches".to_string(),
                    }
                );
            }
            None => {
                let _ = write!(
                    html,
                    "no rule of its {} variants matched, so it shows nothing.",
                    flag.variants
                );
            }
        }
        let passed: Vec<_> = flag
            .tried
            .iter()
            .filter(|t| Some(t.variant) != flag.chosen)
            .collect();
        if !passed.is_empty() {
            html.push_str(" Tried before it:");
            for tried in passed {
                let _ = write!(
                    html,
                    " variant {} (<code>{}</code>, did not match",
                    tried.variant + 1,
                    escape(tried.rule.as_deref().unwrap_or("no rule"))
                );
                if let Some(name) = &tried.override_name {
                    let _ = write!(
                        html,
                        "; <a href=\"{}?{OVERRIDE_HEADER}={}\">force it</a>",
                        escape(path),
                        escape(&percent_encode(&format!("{name}=1")))
                    );
                }
                html.push(')');
            }
            html.push('.');
        }
        html.push_str("</li>");
    }
    let _ = write!(
        html,
        "</ul><p class=\"muted\">A rule that names a device is seen by looking as that device \
         (above); a saved matcher is forced with <code>?{OVERRIDE_HEADER}=&lt;name&gt;=1</code> \
         (or the header of that name).</p></section>"
    );
}

/// A query value, form-encoded.
fn percent_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// What the page depends on, what did not run and what went wrong while resolving it.
fn notes(page: &ResolvedPage, view: &View<'_>, html: &mut String) {
    let effects = &page.effects;
    if !view.loaders_not_run.is_empty() {
        let keys: Vec<String> = view
            .loaders_not_run
            .iter()
            .map(|key| format!("<code>{}</code>", escape(key)))
            .collect();
        let _ = write!(
            html,
            "<p class=\"calm\">Loaders are not run without an origin: {} answered nothing here, \
             so the props that would hold their data are <code>null</code>. With \
             <code>--origin</code>, each round of loaders runs on the app.</p>",
            keys.join(", ")
        );
    }
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
