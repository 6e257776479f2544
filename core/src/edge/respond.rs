//! After the origin answered: the headers the visitor gets, whether (and what) to store, and
//! how a stored copy is served as it ages. Pure: the host fetches, stores and keeps the clock.
//!
//! Refusals (reference §5.5, §5.9): a response the edge does not store — a status other than
//! `200`, a `Set-Cookie` outside `safeCookies`, a degraded page (`X-Platform-Degraded`) or a
//! profile the edge may not keep — gets the private `Cache-Control`, loses `CDN-Cache-Control`,
//! and says `X-Cache: BYPASS` with `X-Cache-Reason` (`status:<code>`, `private-set-cookie`,
//! `degraded`, `profile:<name>`). `X-Platform-Degraded` never reaches the client. A stored copy
//! leaves out the safe cookies the visitor who caused the fetch still receives.
//!
//! The security headers (`Content-Security-Policy` or its report-only form,
//! `Strict-Transport-Security`, `X-Content-Type-Options`, `Referrer-Policy`,
//! `Permissions-Policy`, the site's own `securityHeaders`) go on an answer only when the origin's
//! `Content-Type` is HTML (spec: "headers on HTML responses"), and so on its stored copy; a JSON
//! answer neither gets nor stores them. A redirect the edge answers itself has no HTML body and
//! gets none either.

use super::assets::asset_status;
use super::cacheability::{OriginResponse, StoreVerdict, store_verdict};
use super::headers::{add_vary, find, remove, set};
use super::plan::{EdgeAction, EdgePlan, EdgePolicy, names};
use super::profile::{PRIVATE_CACHE_CONTROL, Window};
use super::security::is_html;

/// What the origin answered.
#[derive(Debug, Clone, Copy)]
pub struct OriginFacts<'a> {
    /// The status code.
    pub status: u16,
    /// Every header, in order (repeated `Set-Cookie` entries kept apart).
    pub headers: &'a [(String, String)],
}

/// The edge's answer once the origin responded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The status to answer (an HTML `200` under an asset URL becomes `404`).
    pub status: u16,
    /// The headers the visitor gets.
    pub headers: Vec<(String, String)>,
    /// The headers of the copy to store (safe cookies left out); `None`: do not store.
    pub store: Option<Vec<(String, String)>>,
    /// Why the response was not stored, when it was not (`X-Cache-Reason`).
    pub reason: Option<String>,
}

pub(crate) fn is_degraded(headers: &[(String, String)]) -> bool {
    find(headers, names::X_PLATFORM_DEGRADED)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true") || v.trim() == "1")
}

/// Whether the origin failed in a way a stale copy may cover: it threw (`status: None`), answered
/// `5xx` or `429`, or answered a degraded page.
pub fn origin_failed(status: Option<u16>, degraded: bool) -> bool {
    match status {
        None => true,
        Some(s) => s >= 500 || s == 429 || degraded,
    }
}

/// How a stored copy of this age is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredState {
    /// Younger than `fresh`: serve it.
    Hit,
    /// Younger than `fresh + swr`: serve it and revalidate in the background.
    Stale,
    /// The origin failed and the copy is younger than `fresh + sie`: serve it instead.
    StaleError,
    /// Too old (or not usable): go to the origin and answer what it says.
    Miss,
}

impl StoredState {
    /// The `X-Cache` value.
    pub fn x_cache(self) -> &'static str {
        match self {
            StoredState::Hit => "HIT",
            StoredState::Stale => "STALE",
            StoredState::StaleError => "STALE-ERROR",
            StoredState::Miss => "MISS",
        }
    }

    /// Headers added to a served copy: `X-Cache`, and for stale ones `X-Cache-Age`; a
    /// `STALE-ERROR` also says `X-Cache-Reason: degraded` and the failed origin status, if any.
    pub fn headers(self, age_secs: u64, origin_status: Option<u16>) -> Vec<(String, String)> {
        let mut out = vec![(names::X_CACHE.to_string(), self.x_cache().to_string())];
        if matches!(self, StoredState::Stale | StoredState::StaleError) {
            out.push(("X-Cache-Age".into(), age_secs.to_string()));
        }
        if self == StoredState::StaleError {
            out.push((names::X_CACHE_REASON.into(), "degraded".into()));
            if let Some(s) = origin_status {
                out.push(("X-Cache-Origin-Status".into(), s.to_string()));
            }
        }
        out
    }
}

/// How a stored copy of `age_secs` is served under the profile's edge window: `HIT` below
/// `fresh`, `STALE` below `fresh + swr`, `STALE-ERROR` below `fresh + sie` when the origin failed
/// (see [`origin_failed`]), else `MISS`. A window with `fresh = 0` never serves a copy.
pub fn stored_state(age_secs: u64, edge: &Window, origin_failed: bool) -> StoredState {
    let fresh = u64::from(edge.fresh);
    if fresh == 0 {
        StoredState::Miss
    } else if age_secs < fresh {
        StoredState::Hit
    } else if age_secs < fresh + u64::from(edge.swr) {
        StoredState::Stale
    } else if origin_failed && age_secs < fresh + u64::from(edge.sie) {
        StoredState::StaleError
    } else {
        StoredState::Miss
    }
}

/// The origin's headers with the plan's laid over them: the plan's values replace the origin's
/// (`Vary` tokens and `Set-Cookie` entries are added instead), and so do the plan's HTML-only
/// headers when the origin answered HTML; the degraded marker is dropped.
fn merged(plan: &EdgePlan, origin: &[(String, String)]) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = origin
        .iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case(names::X_PLATFORM_DEGRADED))
        .cloned()
        .collect();
    for (name, value) in &plan.headers {
        if name.eq_ignore_ascii_case("vary") {
            add_vary(&mut headers, value);
        } else if name.eq_ignore_ascii_case("set-cookie") {
            headers.push((name.clone(), value.clone()));
        } else {
            set(&mut headers, name, value);
        }
    }
    if is_html(origin) {
        for (name, value) in &plan.html_headers {
            set(&mut headers, name, value);
        }
    }
    headers
}

fn refuse(headers: &mut Vec<(String, String)>, reason: &str) {
    set(headers, "Cache-Control", PRIVATE_CACHE_CONTROL);
    remove(headers, "CDN-Cache-Control");
    set(headers, names::X_CACHE, "BYPASS");
    set(headers, names::X_CACHE_REASON, reason);
}

impl EdgePolicy {
    /// The after-origin decision for a plan: final headers, status, and the copy to store.
    pub fn after_origin(&self, plan: &EdgePlan, origin: OriginFacts<'_>) -> Finished {
        let mut headers = merged(plan, origin.headers);
        match &plan.action {
            EdgeAction::Redirect(r) => Finished {
                status: r.status,
                headers: plan.headers.clone(),
                store: None,
                reason: plan.reason.clone(),
            },
            EdgeAction::Asset(_) => {
                let status = asset_status(origin.status, find(origin.headers, "content-type"));
                if status != 200 {
                    // Not found (or an HTML fallback): not the asset, so not immutable.
                    headers = origin
                        .headers
                        .iter()
                        .filter(|(n, _)| !n.eq_ignore_ascii_case(names::X_PLATFORM_DEGRADED))
                        .cloned()
                        .collect();
                    if origin.status != status {
                        set(&mut headers, "Cache-Control", PRIVATE_CACHE_CONTROL);
                        remove(&mut headers, "content-type");
                    }
                }
                let store = (status == 200 && plan.cacheable).then(|| headers.clone());
                Finished {
                    status,
                    headers,
                    store,
                    reason: plan.reason.clone(),
                }
            }
            EdgeAction::Bypass => {
                // The plan's private `Cache-Control` (a draft's `no-store, private`) is already
                // laid over the origin's; nothing bypassed may be kept by a CDN.
                remove(&mut headers, "CDN-Cache-Control");
                if find(&plan.headers, "Cache-Control").is_none() {
                    set(&mut headers, "Cache-Control", PRIVATE_CACHE_CONTROL);
                }
                Finished {
                    status: origin.status,
                    headers,
                    store: None,
                    reason: plan.reason.clone(),
                }
            }
            EdgeAction::Cache => {
                let set_cookies: Vec<String> = origin
                    .headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
                    .map(|(_, v)| v.clone())
                    .collect();
                let verdict = store_verdict(
                    OriginResponse {
                        status: origin.status,
                        set_cookies: &set_cookies,
                        degraded: is_degraded(origin.headers),
                    },
                    plan.profile,
                    self.options().profiles.get(plan.profile),
                    self.options(),
                );
                match verdict {
                    StoreVerdict::Store { .. } => {
                        set(&mut headers, names::X_CACHE, "MISS");
                        // Every cookie left is safe (else the verdict is a skip): none is stored.
                        let mut stored = headers.clone();
                        remove(&mut stored, "set-cookie");
                        Finished {
                            status: origin.status,
                            headers,
                            store: Some(stored),
                            reason: None,
                        }
                    }
                    StoreVerdict::Skip(skip) => {
                        let reason = skip.to_string();
                        refuse(&mut headers, &reason);
                        Finished {
                            status: origin.status,
                            headers,
                            store: None,
                            reason: Some(reason),
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PreviewHostsSetting;
    use crate::draft::PreviewHosts;
    use crate::edge::{CacheProfile, RedirectTable, RequestInputs, SiteFacts, WorkerOptions};
    use crate::request::Request;

    fn plan_for(url: &str, method: &str) -> (EdgePolicy, EdgePlan) {
        let policy = EdgePolicy::new(WorkerOptions::default(), Some("b1".into()), false);
        let redirects = RedirectTable::default();
        let hosts = PreviewHosts::new(&PreviewHostsSetting::Off, None, None);
        let facts = SiteFacts {
            uses_location: false,
            redirects: &redirects,
            preview_hosts: &hosts,
        };
        let plan = policy.plan(
            &Request::new(url).unwrap().with_method(method),
            &facts,
            &RequestInputs::default(),
        );
        (policy, plan)
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn get<'a>(f: &'a Finished, name: &str) -> Option<&'a str> {
        find(&f.headers, name)
    }

    #[test]
    fn stores_a_clean_200_without_its_safe_cookies() {
        let (policy, plan) = plan_for("https://shop.com/camisetas", "GET");
        let origin = h(&[
            ("Content-Type", "text/html"),
            ("Set-Cookie", "vtex_segment=abc; Path=/"),
            ("Cache-Control", "no-cache"),
        ]);
        let f = policy.after_origin(
            &plan,
            OriginFacts {
                status: 200,
                headers: &origin,
            },
        );
        assert_eq!(get(&f, "x-cache"), Some("MISS"));
        assert!(get(&f, "cache-control").unwrap().contains("s-maxage=120"));
        assert_eq!(
            get(&f, "set-cookie"),
            Some("vtex_segment=abc; Path=/"),
            "the visitor still gets it"
        );
        let stored = f.store.expect("stored");
        assert_eq!(
            find(&stored, "set-cookie"),
            None,
            "a later hit carries none"
        );
        assert_eq!(find(&stored, "content-type"), Some("text/html"));
        assert_eq!(f.reason, None);
    }

    const SECURITY: [&str; 5] = [
        "Content-Security-Policy",
        "Strict-Transport-Security",
        "X-Content-Type-Options",
        "Referrer-Policy",
        "Permissions-Policy",
    ];

    #[test]
    fn security_headers_go_on_html_answers_only_and_on_their_stored_copies() {
        for method in ["GET", "POST"] {
            let (policy, plan) = plan_for("https://shop.com/camisetas", method);
            for content_type in ["text/html", "Text/HTML; charset=utf-8"] {
                let origin = h(&[("Content-Type", content_type)]);
                let f = policy.after_origin(
                    &plan,
                    OriginFacts {
                        status: 200,
                        headers: &origin,
                    },
                );
                for name in SECURITY {
                    assert!(get(&f, name).is_some(), "{method} {content_type}: {name}");
                    if let Some(stored) = &f.store {
                        assert!(find(stored, name).is_some(), "stored {name}");
                    }
                }
                assert_eq!(f.store.is_some(), method == "GET");
            }
            for origin in [
                h(&[("Content-Type", "application/json")]),
                h(&[("Content-Type", "text/plain")]),
                h(&[]),
            ] {
                let f = policy.after_origin(
                    &plan,
                    OriginFacts {
                        status: 200,
                        headers: &origin,
                    },
                );
                for name in SECURITY {
                    assert_eq!(get(&f, name), None, "{method} {origin:?}: {name}");
                    if let Some(stored) = &f.store {
                        assert_eq!(find(stored, name), None, "stored {name}");
                    }
                }
            }
        }
        // An origin's own security headers on a JSON answer are its own: passed through.
        let (policy, plan) = plan_for("https://shop.com/api/x", "GET");
        let origin = h(&[
            ("Content-Type", "application/json"),
            ("Strict-Transport-Security", "max-age=60"),
        ]);
        let f = policy.after_origin(
            &plan,
            OriginFacts {
                status: 200,
                headers: &origin,
            },
        );
        assert_eq!(get(&f, "strict-transport-security"), Some("max-age=60"));
    }

    #[test]
    fn refusals_are_private_and_say_why() {
        let (policy, plan) = plan_for("https://shop.com/camisetas", "GET");
        type Case<'a> = (u16, &'a [(&'a str, &'a str)], &'a str);
        let cases: [Case<'_>; 4] = [
            (200, &[("Set-Cookie", "session=1")], "private-set-cookie"),
            (
                200,
                &[
                    ("Set-Cookie", "vtex_segment=1"),
                    ("Set-Cookie", "platform_segment=x"),
                ],
                "private-set-cookie",
            ),
            (200, &[("X-Platform-Degraded", "true")], "degraded"),
            (
                404,
                &[("CDN-Cache-Control", "public, max-age=60")],
                "status:404",
            ),
        ];
        for (status, origin, reason) in cases {
            let origin = h(origin);
            let f = policy.after_origin(
                &plan,
                OriginFacts {
                    status,
                    headers: &origin,
                },
            );
            assert!(f.store.is_none(), "{reason}");
            assert_eq!(f.reason.as_deref(), Some(reason));
            assert_eq!(
                get(&f, "cache-control"),
                Some(PRIVATE_CACHE_CONTROL),
                "{reason}"
            );
            assert_eq!(get(&f, "cdn-cache-control"), None, "{reason}");
            assert_eq!(get(&f, "x-cache"), Some("BYPASS"));
            assert_eq!(get(&f, "x-cache-reason"), Some(reason));
            assert_eq!(
                get(&f, "x-platform-degraded"),
                None,
                "internal marker stripped"
            );
        }
    }

    #[test]
    fn bypassed_and_asset_responses() {
        let (policy, plan) = plan_for("https://shop.com/camisetas", "POST");
        let origin = h(&[
            ("CDN-Cache-Control", "public, max-age=60"),
            ("Cache-Control", "public, s-maxage=600"),
            ("X-Platform-Degraded", "1"),
        ]);
        let f = policy.after_origin(
            &plan,
            OriginFacts {
                status: 200,
                headers: &origin,
            },
        );
        assert!(f.store.is_none());
        assert_eq!(get(&f, "cache-control"), Some(PRIVATE_CACHE_CONTROL));
        assert_eq!(get(&f, "cdn-cache-control"), None);
        assert_eq!(get(&f, "x-platform-degraded"), None);
        assert_eq!(f.reason.as_deref(), Some("method:POST"));

        let (policy, plan) = plan_for("https://shop.com/assets/app-3f9a1b2c.js", "GET");
        let html = h(&[("Content-Type", "text/html")]);
        let f = policy.after_origin(
            &plan,
            OriginFacts {
                status: 200,
                headers: &html,
            },
        );
        assert_eq!(f.status, 404);
        assert!(f.store.is_none());
        assert_ne!(
            get(&f, "cache-control"),
            Some("public, max-age=31536000, immutable")
        );
        let js = h(&[("Content-Type", "text/javascript")]);
        let f = policy.after_origin(
            &plan,
            OriginFacts {
                status: 200,
                headers: &js,
            },
        );
        assert_eq!(f.status, 200);
        assert_eq!(
            get(&f, "cache-control"),
            Some("public, max-age=31536000, immutable")
        );
    }

    #[test]
    fn freshness_by_age() {
        let edge = crate::edge::ProfileTimings::builtin(CacheProfile::Listing).edge; // 120/900/3600
        assert_eq!(stored_state(0, &edge, false), StoredState::Hit);
        assert_eq!(stored_state(119, &edge, false), StoredState::Hit);
        assert_eq!(stored_state(120, &edge, false), StoredState::Stale);
        assert_eq!(stored_state(1019, &edge, true), StoredState::Stale);
        assert_eq!(stored_state(1020, &edge, false), StoredState::Miss);
        assert_eq!(stored_state(1020, &edge, true), StoredState::StaleError);
        assert_eq!(stored_state(3719, &edge, true), StoredState::StaleError);
        assert_eq!(stored_state(3720, &edge, true), StoredState::Miss);
        let none = Window::default();
        assert_eq!(stored_state(0, &none, true), StoredState::Miss);
        assert!(origin_failed(None, false));
        assert!(origin_failed(Some(503), false) && origin_failed(Some(429), false));
        assert!(origin_failed(Some(200), true));
        assert!(!origin_failed(Some(200), false) && !origin_failed(Some(404), false));
        let hdrs = StoredState::StaleError.headers(1500, Some(502));
        assert!(hdrs.contains(&("X-Cache".into(), "STALE-ERROR".into())));
        assert!(hdrs.contains(&("X-Cache-Age".into(), "1500".into())));
        assert!(hdrs.contains(&("X-Cache-Origin-Status".into(), "502".into())));
        assert_eq!(StoredState::Hit.headers(3, None).len(), 1);
    }
}
