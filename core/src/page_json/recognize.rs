//! Which requests are page JSON: `?renderJson` (wins) or `?asJson`, each while its option is on;
//! `GET` asks for the JSON, `OPTIONS` is the CORS preflight, any other method is not page JSON.

use crate::edge::WorkerOptions;
use crate::request::Request;
use serde::Serialize;

/// The query parameter of the lean page JSON.
pub const RENDER_JSON_PARAM: &str = "renderJson";
/// The query parameter of the legacy page JSON.
pub const AS_JSON_PARAM: &str = "asJson";
/// The query parameter naming one section of a `?renderJson` page by its index.
pub const SECTION_PARAM: &str = "__section";

/// The two page JSON shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PageJsonKind {
    /// `?renderJson`: `{name, path, sections: [{component, props} | {component, lazyUrl}]}`.
    RenderJson,
    /// `?asJson`: the legacy shape with `resolveChain` metadata that editor tooling reads.
    AsJson,
}

/// What a page JSON request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// `OPTIONS`: the CORS preflight.
    Preflight,
    /// `GET`: the page of this kind; for `?renderJson`, maybe one section (`None` inside: an
    /// index that is not a number, which no section has).
    Page {
        kind: PageJsonKind,
        section: Option<Option<usize>>,
    },
}

/// Whether the query carries `name` (with any value, or none).
fn has_param(request: &Request, name: &str) -> bool {
    request.url().query_pairs().any(|(k, _)| k == name)
}

/// What `request` asks of page JSON under `options`; `None`: it is not page JSON.
pub(crate) fn recognize(request: &Request, options: &WorkerOptions) -> Option<Asked> {
    let kind = if options.render_json && has_param(request, RENDER_JSON_PARAM) {
        PageJsonKind::RenderJson
    } else if options.as_json && has_param(request, AS_JSON_PARAM) {
        PageJsonKind::AsJson
    } else {
        return None;
    };
    match request.method() {
        "OPTIONS" => Some(Asked::Preflight),
        "GET" => {
            let section = match kind {
                PageJsonKind::RenderJson => request.query(SECTION_PARAM).map(|s| {
                    Some(s.as_str())
                        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|s| s.parse().ok())
                }),
                PageJsonKind::AsJson => None,
            };
            Some(Asked::Page { kind, section })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(url: &str, method: &str, options: &WorkerOptions) -> Option<Asked> {
        let request = Request::new(url).unwrap().with_method(method);
        recognize(&request, options)
    }

    #[test]
    fn render_json_wins_and_options_turn_kinds_off() {
        let on = WorkerOptions::default();
        let page = |kind| {
            Some(Asked::Page {
                kind,
                section: None,
            })
        };
        assert_eq!(
            asked("/?asJson&renderJson", "GET", &on),
            page(PageJsonKind::RenderJson)
        );
        assert_eq!(asked("/?asJson=0", "GET", &on), page(PageJsonKind::AsJson));
        assert_eq!(asked("/?renderjson", "GET", &on), None);
        assert_eq!(asked("/?renderJson", "POST", &on), None);
        assert_eq!(
            asked("/?renderJson", "OPTIONS", &on),
            Some(Asked::Preflight)
        );
        let off = WorkerOptions {
            render_json: false,
            ..WorkerOptions::default()
        };
        assert_eq!(
            asked("/?asJson&renderJson", "GET", &off),
            page(PageJsonKind::AsJson)
        );
        assert_eq!(asked("/?renderJson", "GET", &off), None);
    }

    #[test]
    fn sections_are_indexes_of_render_json_only() {
        let on = WorkerOptions::default();
        let section = |s| {
            Some(Asked::Page {
                kind: PageJsonKind::RenderJson,
                section: Some(s),
            })
        };
        assert_eq!(
            asked("/?renderJson&__section=2", "GET", &on),
            section(Some(2))
        );
        assert_eq!(
            asked("/?renderJson&__section=-1", "GET", &on),
            section(None)
        );
        assert_eq!(asked("/?renderJson&__section=", "GET", &on), section(None));
        assert_eq!(
            asked("/?asJson&__section=1", "GET", &on),
            Some(Asked::Page {
                kind: PageJsonKind::AsJson,
                section: None
            })
        );
    }
}
