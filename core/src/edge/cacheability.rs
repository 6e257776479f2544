//! Whether a request may use the edge cache, and whether an origin response may be stored.

use super::options::WorkerOptions;
use super::profile::{CacheProfile, ProfileTimings};
use crate::request::Request;
use std::fmt;

/// The header and query parameter that force matcher outcomes.
pub const MATCHERS_OVERRIDE: &str = "x-platform-matchers-override";

/// Why a request skips the edge cache (`X-Cache-Reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bypass {
    /// Development or `PLATFORM_PREVIEW=true`: the edge cache is off.
    DevMode,
    /// Only `GET` is cached.
    Method(String),
    /// Under a bypass path.
    Path,
    /// The request forces matcher outcomes.
    MatcherOverride,
    /// The request renders a draft.
    Draft,
    /// The profile is `cart`, `private` or `none`.
    Profile(CacheProfile),
    /// The segment says the visitor is logged in.
    LoggedIn,
}

impl fmt::Display for Bypass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bypass::DevMode => f.write_str("dev-mode"),
            Bypass::Method(m) => write!(f, "method:{m}"),
            Bypass::Path => f.write_str("bypass-path"),
            Bypass::MatcherOverride => f.write_str("matcher-override"),
            Bypass::Draft => f.write_str("draft"),
            Bypass::Profile(p) => write!(f, "non-cacheable:{p}"),
            Bypass::LoggedIn => f.write_str("logged-in"),
        }
    }
}

/// Request facts decided elsewhere (draft policy, segment, configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestFacts {
    /// The request carries a matcher override (beyond the header/query check done here).
    pub has_override: bool,
    /// The request renders a draft on an allowed host.
    pub draft: bool,
    /// The visitor's segment is logged in.
    pub logged_in: bool,
    /// The edge cache is off (development or `PLATFORM_PREVIEW`).
    pub dev_mode: bool,
}

/// Whether the request carries `x-platform-matchers-override` as a non-empty header or as a
/// query parameter: such requests never touch the cache, even if the value is malformed.
pub fn carries_matcher_override(request: &Request) -> bool {
    request
        .header(MATCHERS_OVERRIDE)
        .is_some_and(|v| !v.trim().is_empty())
        || request.url().query().is_some_and(|q| {
            url::form_urlencoded::parse(q.as_bytes()).any(|(k, _)| k == MATCHERS_OVERRIDE)
        })
}

/// The reason a request skips the edge cache, or `None` when it may use it. Checked in order:
/// dev mode, method, bypass path, matcher override, draft, private profile, logged-in segment.
pub fn request_bypass(
    request: &Request,
    options: &WorkerOptions,
    profile: CacheProfile,
    facts: RequestFacts,
) -> Option<Bypass> {
    if facts.dev_mode {
        Some(Bypass::DevMode)
    } else if request.method() != "GET" {
        Some(Bypass::Method(request.method().to_string()))
    } else if options.is_bypass_path(request.path()) {
        Some(Bypass::Path)
    } else if facts.has_override || carries_matcher_override(request) {
        Some(Bypass::MatcherOverride)
    } else if facts.draft {
        Some(Bypass::Draft)
    } else if profile.is_private() {
        Some(Bypass::Profile(profile))
    } else if facts.logged_in {
        Some(Bypass::LoggedIn)
    } else {
        None
    }
}

/// What the origin answered, as far as the store decision cares.
#[derive(Debug, Clone, Copy)]
pub struct OriginResponse<'a> {
    /// The status code.
    pub status: u16,
    /// The `Set-Cookie` header values.
    pub set_cookies: &'a [String],
    /// The page is degraded (a critical loader failed; `X-Platform-Degraded`).
    pub degraded: bool,
}

/// Why an origin response is not stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// Only `200` is stored.
    Status(u16),
    /// It sets a cookie that is not in `safeCookies` (named here).
    PrivateSetCookie(String),
    /// A critical loader failed.
    Degraded,
    /// The profile is not shareable at the edge.
    Profile(CacheProfile),
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::Status(s) => write!(f, "status:{s}"),
            Skip::PrivateSetCookie(_) => f.write_str("private-set-cookie"),
            Skip::Degraded => f.write_str("degraded"),
            Skip::Profile(p) => write!(f, "profile:{p}"),
        }
    }
}

/// The store decision for an origin response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreVerdict {
    /// Store it, without the `Set-Cookie` values at these indexes (safe cookies: they still
    /// reach this visitor, but a later hit carries none).
    Store {
        /// Indexes into `set_cookies` to leave out of the stored copy.
        strip: Vec<usize>,
    },
    /// Do not store it.
    Skip(Skip),
}

/// The cookie name of a `Set-Cookie` value: the text before the first `=`, trimmed.
pub fn set_cookie_name(header: &str) -> &str {
    header
        .split(';')
        .next()
        .unwrap_or("")
        .split('=')
        .next()
        .unwrap_or("")
        .trim()
}

/// Decides whether an origin response may be stored: `200`, not degraded, only safe cookies,
/// and a profile the edge may keep.
pub fn store_verdict(
    response: OriginResponse<'_>,
    profile: CacheProfile,
    timings: &ProfileTimings,
    options: &WorkerOptions,
) -> StoreVerdict {
    if response.status != 200 {
        return StoreVerdict::Skip(Skip::Status(response.status));
    }
    if response.degraded {
        return StoreVerdict::Skip(Skip::Degraded);
    }
    for cookie in response.set_cookies {
        let name = set_cookie_name(cookie);
        if name.is_empty() || !options.is_safe_cookie(name) {
            return StoreVerdict::Skip(Skip::PrivateSetCookie(name.to_string()));
        }
    }
    if !timings.edge_cacheable() {
        return StoreVerdict::Skip(Skip::Profile(profile));
    }
    StoreVerdict::Store {
        strip: (0..response.set_cookies.len()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn get(u: &str) -> Request {
        Request::new(u).unwrap()
    }

    #[test]
    fn request_rules_in_order() {
        let o = WorkerOptions::default();
        let f = RequestFacts::default();
        let l = CacheProfile::Listing;
        assert_eq!(request_bypass(&get("/x"), &o, l, f), None);
        assert_eq!(
            request_bypass(
                &get("/x"),
                &o,
                l,
                RequestFacts {
                    dev_mode: true,
                    ..f
                }
            ),
            Some(Bypass::DevMode)
        );
        assert_eq!(
            request_bypass(&get("/x").with_method("post"), &o, l, f),
            Some(Bypass::Method("POST".into()))
        );
        assert_eq!(
            request_bypass(&get("/x").with_method("HEAD"), &o, l, f)
                .map(|b| b.to_string())
                .as_deref(),
            Some("method:HEAD")
        );
        assert_eq!(
            request_bypass(&get("/live/_meta"), &o, l, f),
            Some(Bypass::Path)
        );
        assert_eq!(
            request_bypass(&get("/x").with_header(MATCHERS_OVERRIDE, "A=1"), &o, l, f),
            Some(Bypass::MatcherOverride)
        );
        assert_eq!(
            request_bypass(&get("/x").with_header(MATCHERS_OVERRIDE, " "), &o, l, f),
            None
        );
        assert_eq!(
            request_bypass(&get("/x?x-platform-matchers-override=A%3D0"), &o, l, f),
            Some(Bypass::MatcherOverride)
        );
        assert_eq!(
            request_bypass(
                &get("/x"),
                &o,
                l,
                RequestFacts {
                    has_override: true,
                    ..f
                }
            ),
            Some(Bypass::MatcherOverride)
        );
        assert_eq!(
            request_bypass(&get("/x"), &o, l, RequestFacts { draft: true, ..f }),
            Some(Bypass::Draft)
        );
        assert_eq!(
            request_bypass(&get("/cart"), &o, CacheProfile::Cart, f)
                .unwrap()
                .to_string(),
            "non-cacheable:cart"
        );
        assert_eq!(
            request_bypass(
                &get("/x"),
                &o,
                l,
                RequestFacts {
                    logged_in: true,
                    ..f
                }
            ),
            Some(Bypass::LoggedIn)
        );
    }

    #[test]
    fn store_rules() {
        let o = WorkerOptions::default();
        let listing = ProfileTimings::builtin(CacheProfile::Listing);
        let l = CacheProfile::Listing;
        let ok = |cookies: &[String]| {
            store_verdict(
                OriginResponse {
                    status: 200,
                    set_cookies: cookies,
                    degraded: false,
                },
                l,
                &listing,
                &o,
            )
        };
        assert_eq!(ok(&[]), StoreVerdict::Store { strip: vec![] });
        let safe = vec![
            "vtex_segment=abc; Path=/".to_string(),
            " _platform_bucket=1".to_string(),
        ];
        assert_eq!(ok(&safe), StoreVerdict::Store { strip: vec![0, 1] });
        let sticky = vec![
            "vtex_segment=abc".to_string(),
            "platform_segment=xyz; Max-Age=31536000".to_string(),
        ];
        assert_eq!(
            ok(&sticky),
            StoreVerdict::Skip(Skip::PrivateSetCookie("platform_segment".into()))
        );
        assert_eq!(
            ok(&["__platform_draft=x".to_string()]).clone(),
            StoreVerdict::Skip(Skip::PrivateSetCookie("__platform_draft".into()))
        );
        assert_eq!(
            ok(&["garbage".to_string()]),
            StoreVerdict::Skip(Skip::PrivateSetCookie("garbage".into()))
        );
        let r = |status, degraded| {
            store_verdict(
                OriginResponse {
                    status,
                    set_cookies: &[],
                    degraded,
                },
                l,
                &listing,
                &o,
            )
        };
        assert_eq!(r(404, false).clone(), StoreVerdict::Skip(Skip::Status(404)));
        assert_eq!(r(200, true), StoreVerdict::Skip(Skip::Degraded));
        let private = ProfileTimings::builtin(CacheProfile::Private);
        let v = store_verdict(
            OriginResponse {
                status: 200,
                set_cookies: &[],
                degraded: false,
            },
            CacheProfile::Private,
            &private,
            &o,
        );
        match v {
            StoreVerdict::Skip(s) => assert_eq!(s.to_string(), "profile:private"),
            other => panic!("{other:?}"),
        }
    }

    proptest! {
        #[test]
        fn one_unsafe_cookie_prevents_storing(
            safe in proptest::collection::vec(proptest::sample::select(crate::edge::DEFAULT_SAFE_COOKIES.to_vec()), 0..4),
            unsafe_name in "[a-z_]{1,12}",
            at in 0usize..5,
        ) {
            let o = WorkerOptions::default();
            prop_assume!(!o.is_safe_cookie(&unsafe_name));
            let mut cookies: Vec<String> = safe.iter().map(|n| format!("{n}=1; Path=/")).collect();
            let stored = store_verdict(OriginResponse { status: 200, set_cookies: &cookies, degraded: false }, CacheProfile::Static, &ProfileTimings::builtin(CacheProfile::Static), &o);
            prop_assert_eq!(stored, StoreVerdict::Store { strip: (0..cookies.len()).collect() });
            cookies.insert(at.min(cookies.len()), format!("{unsafe_name}=v"));
            let skipped = store_verdict(OriginResponse { status: 200, set_cookies: &cookies, degraded: false }, CacheProfile::Static, &ProfileTimings::builtin(CacheProfile::Static), &o);
            prop_assert_eq!(skipped, StoreVerdict::Skip(Skip::PrivateSetCookie(unsafe_name)));
        }
    }
}
