//! The Next.js binding's preview page: section and page previews opened with `GET` are
//! redirected to a page of the app (`/platform/preview/<target>`), which renders them as the app
//! renders its pages, so client components hydrate in previews. The page hands the preview back
//! to [`handle`](super::handle) as the admin route it came from.

use super::cors::Cors;
use super::request::AdminRequest;
use super::response::AdminResponse;
use super::route::Route;
use crate::uri::encode_uri_component;

/// The path of the preview page (`app/platform/preview/[[...path]]/page.tsx`).
pub const PREVIEW_PAGE_PATH: &str = "/platform/preview";

/// The admin route a preview page request stands for.
const PREVIEW_ROUTE: &str = "/platform/previews";

/// The answer to a preview `GET` (`/live/previews/<target>`, `/platform/previews/<target>`) when
/// the host has a preview page: 307 to `/platform/preview/<target>` with the query kept, with
/// CORS. `None` for every other request: previews sent with `POST` (the editor's props are in
/// the body, which a redirect would drop), `/platform/render`, the empty preview frame and
/// every other route are answered by [`Site::handle_admin`](crate::Site::handle_admin).
pub fn preview_page_redirect(request: &AdminRequest) -> Option<AdminResponse> {
    if !request.is("GET") {
        return None;
    }
    let Some(Route::Preview(target)) = Route::parse(&request.path) else {
        return None;
    };
    let mut location = format!("{PREVIEW_PAGE_PATH}/{target}");
    if !request.query.is_empty() {
        location.push('?');
        location.push_str(&request.query);
    }
    let mut response = AdminResponse::empty(307, &Cors::for_request(request));
    response.set_header("Location", &location);
    Some(response)
}

/// The admin path of the preview the preview page shows, from the page's path segments
/// (decoded, as the app's router hands them over): `/platform/previews/<segments>`, each segment
/// encoded again. No segments: the empty preview frame's path.
pub fn preview_page_admin_path(segments: &[String]) -> String {
    let encoded: Vec<String> = segments.iter().map(|s| encode_uri_component(s)).collect();
    format!("{PREVIEW_ROUTE}/{}", encoded.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_gets_redirect_to_the_page_with_their_query() {
        for path in [
            "/live/previews/site%2Fsections%2FHero.tsx",
            "/platform/previews/site%2Fsections%2FHero.tsx",
        ] {
            let request = AdminRequest::new("GET", path)
                .with_query("path=%2Fabout&deviceHint=mobile")
                .with_header("origin", "https://editor.example");
            let response = preview_page_redirect(&request).expect("a redirect");
            assert_eq!(response.status, 307);
            assert_eq!(
                response.header("location"),
                Some(
                    "/platform/preview/site%2Fsections%2FHero.tsx?path=%2Fabout&deviceHint=mobile"
                )
            );
            assert_eq!(
                response.header("access-control-allow-origin"),
                Some("https://editor.example")
            );
        }
        let bare = AdminRequest::new("GET", "/live/previews/Footer");
        assert_eq!(
            preview_page_redirect(&bare).unwrap().header("location"),
            Some("/platform/preview/Footer")
        );
    }

    #[test]
    fn other_requests_are_not_redirected() {
        for (method, path) in [
            ("POST", "/live/previews/Footer"),
            ("GET", "/live/previews"),
            ("GET", "/live/previews/"),
            ("GET", "/platform/render"),
            ("GET", "/platform/meta"),
            ("GET", "/about"),
        ] {
            assert!(
                preview_page_redirect(&AdminRequest::new(method, path)).is_none(),
                "{method} {path}"
            );
        }
    }

    #[test]
    fn the_page_path_goes_back_to_the_preview_route() {
        let path = preview_page_admin_path(&["site/sections/Hero.tsx".to_string()]);
        assert_eq!(path, "/platform/previews/site%2Fsections%2FHero.tsx");
        assert_eq!(
            Route::parse(&path),
            Some(Route::Preview("site%2Fsections%2FHero.tsx".into()))
        );
        let split = ["site", "sections", "Hero.tsx"].map(String::from);
        assert_eq!(
            preview_page_admin_path(&split),
            "/platform/previews/site/sections/Hero.tsx"
        );
        assert_eq!(preview_page_admin_path(&[]), "/platform/previews/");
        assert_eq!(
            Route::parse("/platform/previews/"),
            Some(Route::PreviewShell)
        );
    }
}
