//! Which admin route a path names, and the methods it takes.

use crate::edge::SPECULATION_RULES_PATH;

/// An admin route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/live/_meta`, `/platform/meta`.
    Meta,
    /// `/.sitefile`, `/platform/sitefile`.
    Sitefile,
    /// `/live/previews`, `/platform/previews` (with or without a trailing slash).
    PreviewShell,
    /// `/live/previews/<target>`, `/platform/previews/<target>` (target still encoded).
    Preview(String),
    /// `/platform/render`.
    Render,
    /// `/platform/invoke/<key>` (key still encoded).
    Invoke(String),
    /// `/platform/invoke`.
    InvokeBatch,
    /// `/platform/_liveness`.
    Liveness,
    /// `/_cache/purge`.
    Purge,
    /// `/_cache/purge-loaders`.
    PurgeLoaders,
    /// `/_cache/speculation-rules.json`: the `speculationRules` option's rules, which page
    /// responses name in their `Speculation-Rules` header.
    SpeculationRules,
}

const PREVIEW_PREFIXES: [&str; 2] = ["/live/previews", "/platform/previews"];

/// Whether `path` is an admin route at all (a host can tell before reading any body).
pub fn is_admin_route(path: &str) -> bool {
    Route::parse(path).is_some()
}

/// Whether `path` is one of the edge cache's purge routes (`/_cache/purge`,
/// `/_cache/purge-loaders`), which a worker entry serves with or without the `admin` option.
pub fn is_purge_route(path: &str) -> bool {
    matches!(Route::parse(path), Some(Route::Purge | Route::PurgeLoaders))
}

/// Whether `path` is where the edge serves speculation rules, which a worker entry serves with
/// or without the `admin` option when the option is on.
pub fn is_speculation_rules_route(path: &str) -> bool {
    path == SPECULATION_RULES_PATH
}

impl Route {
    /// The route `path` names; `None` for a path that is not an admin route.
    pub(crate) fn parse(path: &str) -> Option<Route> {
        let route = match path {
            "/.sitefile" | "/platform/sitefile" => Route::Sitefile,
            "/live/_meta" | "/platform/meta" => Route::Meta,
            "/platform/render" => Route::Render,
            "/platform/invoke" | "/platform/invoke/" => Route::InvokeBatch,
            "/platform/_liveness" => Route::Liveness,
            "/_cache/purge" => Route::Purge,
            "/_cache/purge-loaders" => Route::PurgeLoaders,
            SPECULATION_RULES_PATH => Route::SpeculationRules,
            _ => {
                if let Some(key) = path.strip_prefix("/platform/invoke/") {
                    return Some(Route::Invoke(key.to_string()));
                }
                let rest = PREVIEW_PREFIXES
                    .iter()
                    .find_map(|prefix| path.strip_prefix(prefix))?;
                return match rest {
                    "" | "/" => Some(Route::PreviewShell),
                    _ => rest
                        .strip_prefix('/')
                        .map(|target| Route::Preview(target.to_string())),
                };
            }
        };
        Some(route)
    }

    /// The methods the route takes (besides `OPTIONS`, which every route answers).
    pub(crate) fn methods(&self) -> &'static [&'static str] {
        match self {
            Route::Meta | Route::PreviewShell | Route::Liveness => &["GET"],
            Route::SpeculationRules => &["GET", "HEAD"],
            Route::Sitefile | Route::Preview(_) | Route::Render => &["GET", "POST"],
            Route::Invoke(_) | Route::InvokeBatch | Route::Purge | Route::PurgeLoaders => &["POST"],
        }
    }

    /// The `Allow` header of a 405: the route's methods and `OPTIONS`.
    pub(crate) fn allow(&self) -> String {
        let mut methods = self.methods().to_vec();
        methods.push("OPTIONS");
        methods.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_passes() {
        assert_eq!(Route::parse("/live/_meta"), Some(Route::Meta));
        assert_eq!(Route::parse("/platform/sitefile"), Some(Route::Sitefile));
        assert_eq!(Route::parse("/live/previews/"), Some(Route::PreviewShell));
        assert_eq!(
            Route::parse("/platform/previews/a%2Fb"),
            Some(Route::Preview("a%2Fb".into()))
        );
        assert_eq!(
            Route::parse("/platform/invoke/site/loaders/x.ts"),
            Some(Route::Invoke("site/loaders/x.ts".into()))
        );
        for path in [
            "/",
            "/live/previewsx",
            "/platform/other",
            "/_cache",
            "/.sitefile/x",
        ] {
            assert_eq!(Route::parse(path), None, "{path}");
        }
    }
}
