//! The draft preview state machine of one request.
//!
//! | state | trigger | condition | next |
//! |---|---|---|---|
//! | normal | `?__draft=<pointer>` | host allowed | preview (cookie set) |
//! | preview | `?__draft=off` | host allowed | normal (cookie cleared) |
//! | normal | `?__draft=<pointer>` | host not allowed | normal, completely inert |
//!
//! A previewing response is never cached, gets `Cache-Control: no-store, private`,
//! `Vary: Cookie` and `X-Robots-Tag: noindex, nofollow`.

use super::hosts::{PreviewHosts, request_host_behind_proxy};
use super::pointer::DraftPointer;
use crate::request::Request;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

/// The draft cookie.
pub const DRAFT_COOKIE: &str = "__platform_draft";
/// The header a trusted front (the Next.js middleware) forwards the pointer in.
pub const DRAFT_HEADER: &str = "x-platform-draft";
/// The query parameter that enters (`<pointer>`) or leaves (`off`) draft preview.
pub const DRAFT_PARAM: &str = "__draft";
/// Lifetime of the draft cookie, seconds.
pub const DRAFT_COOKIE_MAX_AGE: u32 = 1800;
/// The headers of a response that renders a draft: never stored by a shared cache, varied by
/// cookie, never indexed (`Vary` is merged into the response's, the others replace).
pub const PREVIEW_HEADERS: [(&str, &str); 3] = [
    ("Cache-Control", "no-store, private"),
    ("Vary", "Cookie"),
    ("X-Robots-Tag", "noindex, nofollow"),
];

/// The two states of the spec's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftState {
    /// Published content.
    Normal,
    /// A draft is rendered.
    Preview,
}

/// What this request does to the draft state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftTransition {
    /// No draft involved (or the host is not allowed): nothing happens.
    Inert,
    /// `?__draft=<pointer>`: enter preview and set the cookie.
    Enter(DraftPointer),
    /// The cookie (or a trusted forwarded header) keeps the preview going.
    Continue(DraftPointer),
    /// `?__draft=off`: leave preview and clear the cookie.
    Exit,
    /// `?__draft=` with a malformed pointer on an allowed host: no draft, not cached, no cookie change.
    Rejected,
}

/// The draft decision of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftDecision {
    /// The transition.
    pub transition: DraftTransition,
}

impl DraftDecision {
    /// The state after this request.
    pub fn state(&self) -> DraftState {
        match self.transition {
            DraftTransition::Enter(_) | DraftTransition::Continue(_) => DraftState::Preview,
            _ => DraftState::Normal,
        }
    }

    /// The draft to render, if any.
    pub fn pointer(&self) -> Option<&DraftPointer> {
        match &self.transition {
            DraftTransition::Enter(p) | DraftTransition::Continue(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the edge cache must not be read or written (any draft activity on an allowed host).
    pub fn bypasses_cache(&self) -> bool {
        self.transition != DraftTransition::Inert
    }

    /// The `Set-Cookie` value this response carries, if any.
    pub fn set_cookie(&self) -> Option<String> {
        let attrs = "Path=/; HttpOnly; Secure; SameSite=None; Partitioned";
        match &self.transition {
            DraftTransition::Enter(p) => Some(format!(
                "{DRAFT_COOKIE}={}; {attrs}; Max-Age={DRAFT_COOKIE_MAX_AGE}",
                utf8_percent_encode(&p.to_string(), NON_ALPHANUMERIC)
            )),
            DraftTransition::Exit => Some(format!("{DRAFT_COOKIE}=; {attrs}; Max-Age=0")),
            _ => None,
        }
    }

    /// Headers of a previewing response (merge `Vary`, do not replace it). A malformed
    /// `?__draft=` renders no draft but is still kept out of caches and search engines;
    /// `?__draft=off`'s answer clears the cookie, so it is no shared copy either.
    pub fn response_headers(&self) -> Vec<(String, String)> {
        if self.transition == DraftTransition::Exit {
            return vec![("Cache-Control".into(), "no-store, private".into())];
        }
        if self.transition == DraftTransition::Rejected {
            return vec![
                ("Cache-Control".into(), "no-store, private".into()),
                ("X-Robots-Tag".into(), "noindex, nofollow".into()),
            ];
        }
        if self.state() != DraftState::Preview {
            return Vec::new();
        }
        PREVIEW_HEADERS
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    /// The header to forward to the renderer (`x-platform-draft: <pointer>`); a front must strip
    /// any client-supplied one first.
    pub fn forward_header(&self) -> Option<(&'static str, String)> {
        self.pointer().map(|p| (DRAFT_HEADER, p.to_string()))
    }
}

/// Whether `request` carries a draft signal at all (`?__draft`, the draft cookie or the forwarded
/// header), whatever the host decides of it: such a request keeps out of caches shared between
/// visitors.
pub(crate) fn carries_draft(request: &Request) -> bool {
    request.query(DRAFT_PARAM).is_some()
        || request.cookie(DRAFT_COOKIE).is_some()
        || request.header(DRAFT_HEADER).is_some()
}

/// Decides the draft transition of a request. Only allowed hosts see drafts (the allow-list
/// comes from the published content). Pointer precedence: `?__draft`, then the forwarded
/// `x-platform-draft` header when `trust_forwarded_header` (set only behind a front that strips
/// client copies), then the `__platform_draft` cookie.
pub fn decide_draft(
    request: &Request,
    hosts: &PreviewHosts,
    trust_forwarded_header: bool,
) -> DraftDecision {
    let inert = DraftDecision {
        transition: DraftTransition::Inert,
    };
    if !hosts.is_enabled()
        || !hosts.allows(&request_host_behind_proxy(
            request,
            hosts.trusts_forwarded_host(),
        ))
    {
        return inert;
    }
    let transition = if let Some(param) = request.query(DRAFT_PARAM) {
        if param.trim() == "off" {
            DraftTransition::Exit
        } else {
            DraftPointer::parse(&param).map_or(DraftTransition::Rejected, DraftTransition::Enter)
        }
    } else {
        let forwarded = trust_forwarded_header
            .then(|| request.header(DRAFT_HEADER))
            .flatten()
            .and_then(DraftPointer::parse);
        match forwarded.or_else(|| request.cookie(DRAFT_COOKIE).and_then(DraftPointer::parse)) {
            Some(p) => DraftTransition::Continue(p),
            None => DraftTransition::Inert,
        }
    };
    DraftDecision { transition }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PreviewHostsSetting;

    fn hosts() -> PreviewHosts {
        PreviewHosts::new(
            &PreviewHostsSetting::Hosts(vec!["preview.shop.com".into()]),
            None,
            None,
        )
    }

    fn req(url: &str) -> Request {
        Request::new(url).unwrap()
    }

    const PTR: &str = "api.platformcms.com/drafts/x@v1";

    #[test]
    fn enter_continue_exit() {
        let h = hosts();
        let enter = decide_draft(
            &req(&format!("https://preview.shop.com/?__draft={PTR}")),
            &h,
            false,
        );
        assert_eq!(enter.state(), DraftState::Preview);
        assert!(enter.bypasses_cache());
        let cookie = enter.set_cookie().unwrap();
        assert!(
            cookie.starts_with("__platform_draft=api%2Eplatformcms%2Ecom%2Fdrafts%2Fx%40v1;"),
            "{cookie}"
        );
        assert!(
            cookie.contains("Max-Age=1800")
                && cookie.contains("HttpOnly")
                && cookie.contains("SameSite=None")
                && cookie.contains("Partitioned")
        );
        assert_eq!(enter.response_headers().len(), 3);
        assert_eq!(
            enter.forward_header(),
            Some((DRAFT_HEADER, PTR.to_string()))
        );

        // The cookie header is percent-decoded by the request, so the cookie round-trips.
        let value = cookie.split(';').next().unwrap().split_once('=').unwrap().1;
        let cont = decide_draft(
            &req("https://preview.shop.com/p")
                .with_header("cookie", &format!("{DRAFT_COOKIE}={value}")),
            &h,
            false,
        );
        assert_eq!(
            cont.transition,
            DraftTransition::Continue(DraftPointer::parse(PTR).unwrap())
        );
        assert_eq!(cont.set_cookie(), None);

        let exit = decide_draft(
            &req("https://preview.shop.com/?__draft=off").with_cookie(DRAFT_COOKIE, PTR),
            &h,
            false,
        );
        assert_eq!(exit.transition, DraftTransition::Exit);
        assert_eq!(exit.state(), DraftState::Normal);
        assert!(exit.set_cookie().unwrap().contains("Max-Age=0"));
        assert!(
            exit.response_headers()
                .contains(&("Cache-Control".into(), "no-store, private".into())),
            "the answer that clears the cookie is no shared copy"
        );
    }

    #[test]
    fn param_beats_cookie_and_header_needs_trust() {
        let h = hosts();
        let r = req("https://preview.shop.com/?__draft=api.platformcms.com/new@v2")
            .with_cookie(DRAFT_COOKIE, PTR);
        assert_eq!(
            decide_draft(&r, &h, false).pointer().unwrap().version(),
            "v2"
        );
        let forged = req("https://preview.shop.com/").with_header(DRAFT_HEADER, PTR);
        assert_eq!(
            decide_draft(&forged, &h, false).transition,
            DraftTransition::Inert
        );
        assert_eq!(decide_draft(&forged, &h, true).state(), DraftState::Preview);
    }

    #[test]
    fn disallowed_hosts_are_inert() {
        let h = hosts();
        let r = req(&format!("https://www.shop.com/?__draft={PTR}")).with_cookie(DRAFT_COOKIE, PTR);
        let d = decide_draft(&r, &h, true);
        assert_eq!(d.transition, DraftTransition::Inert);
        assert!(!d.bypasses_cache() && d.set_cookie().is_none());
        let off = PreviewHosts::new(&PreviewHostsSetting::Off, None, None);
        assert_eq!(
            decide_draft(
                &req(&format!("https://preview.shop.com/?__draft={PTR}")),
                &off,
                false
            )
            .transition,
            DraftTransition::Inert
        );
    }

    #[test]
    fn malformed_pointer_is_rejected_but_never_cached() {
        let d = decide_draft(
            &req("https://preview.shop.com/?__draft=%3Cscript%3E"),
            &hosts(),
            false,
        );
        assert_eq!(d.transition, DraftTransition::Rejected);
        assert!(d.bypasses_cache() && d.set_cookie().is_none() && d.pointer().is_none());
        assert!(
            d.response_headers()
                .contains(&("X-Robots-Tag".into(), "noindex, nofollow".into())),
            "a rejected draft link is not indexed either"
        );
        let bad_cookie = decide_draft(
            &req("https://preview.shop.com/").with_cookie(DRAFT_COOKIE, "junk"),
            &hosts(),
            false,
        );
        assert_eq!(bad_cookie.transition, DraftTransition::Inert);
    }
}
