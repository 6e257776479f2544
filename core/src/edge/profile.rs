//! Cache profiles: detection from the URL and the timings of each layer.

use crate::loader_cache::Freshness;
use std::fmt;
use std::str::FromStr;
use url::Url;

/// A named cache policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum CacheProfile {
    /// The home page and other rarely changing pages.
    Static,
    /// Product detail pages.
    Product,
    /// Category and landing pages (the fallback).
    Listing,
    /// Search results.
    Search,
    /// Cart and checkout.
    Cart,
    /// Account, login, orders: per-visitor pages.
    Private,
    /// APIs and platform endpoints.
    None,
}

impl CacheProfile {
    /// Every profile.
    pub const ALL: [CacheProfile; 7] = [
        CacheProfile::Static,
        CacheProfile::Product,
        CacheProfile::Listing,
        CacheProfile::Search,
        CacheProfile::Cart,
        CacheProfile::Private,
        CacheProfile::None,
    ];

    /// The profile's name.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheProfile::Static => "static",
            CacheProfile::Product => "product",
            CacheProfile::Listing => "listing",
            CacheProfile::Search => "search",
            CacheProfile::Cart => "cart",
            CacheProfile::Private => "private",
            CacheProfile::None => "none",
        }
    }

    /// `cart`, `private` and `none`: never shared, at any layer.
    pub fn is_private(self) -> bool {
        matches!(
            self,
            CacheProfile::Cart | CacheProfile::Private | CacheProfile::None
        )
    }
}

impl fmt::Display for CacheProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a cache profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown cache profile {0:?} (expected static, product, listing, search, cart, private or none)"
)]
pub struct UnknownProfile(pub String);

impl FromStr for CacheProfile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<CacheProfile, UnknownProfile> {
        CacheProfile::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownProfile(s.to_string()))
    }
}

/// Fresh, stale-while-revalidate and stale-if-error windows, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// Served without revalidation.
    pub fresh: u32,
    /// After `fresh`, served while revalidating.
    pub swr: u32,
    /// After `fresh`, served when the origin fails.
    pub sie: u32,
}

/// Everything a profile sets, for every layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileTimings {
    /// May shared caches keep it.
    pub public: bool,
    /// The edge cache (seconds).
    pub edge: Window,
    /// The browser (`Cache-Control` sent to clients, seconds).
    pub browser: Window,
    /// Loader cache freshness, milliseconds.
    pub loader_fresh_ms: u64,
    /// Loader cache stale window (served while refreshing or when the loader fails), milliseconds.
    pub loader_stale_ms: u64,
    /// Client route cache stale time, milliseconds.
    pub client_stale_ms: u64,
    /// Client route cache garbage-collection time, milliseconds.
    pub client_gc_ms: u64,
}

/// The `Cache-Control` of every non-public profile.
pub const PRIVATE_CACHE_CONTROL: &str = "private, no-cache, no-store, must-revalidate";

impl ProfileTimings {
    /// The loader-layer timings.
    pub fn loader_freshness(&self) -> Freshness {
        Freshness {
            max_age_ms: self.loader_fresh_ms,
            stale_ms: self.loader_stale_ms,
        }
    }

    /// The built-in timings of a profile.
    pub const fn builtin(profile: CacheProfile) -> ProfileTimings {
        const fn w(fresh: u32, swr: u32, sie: u32) -> Window {
            Window { fresh, swr, sie }
        }
        const fn t(
            edge: Window,
            browser: Window,
            loader: (u64, u64),
            client: (u64, u64),
        ) -> ProfileTimings {
            ProfileTimings {
                public: true,
                edge,
                browser,
                loader_fresh_ms: loader.0,
                loader_stale_ms: loader.1,
                client_stale_ms: client.0,
                client_gc_ms: client.1,
            }
        }
        match profile {
            CacheProfile::Static => t(
                w(900, 7200, 21600),
                w(120, 1800, 7200),
                (300_000, 1_800_000),
                (300_000, 1_800_000),
            ),
            CacheProfile::Product => t(
                w(300, 1800, 7200),
                w(60, 600, 3600),
                (30_000, 600_000),
                (60_000, 300_000),
            ),
            CacheProfile::Listing => t(
                w(120, 900, 3600),
                w(30, 300, 1800),
                (60_000, 300_000),
                (60_000, 300_000),
            ),
            CacheProfile::Search => t(
                w(60, 300, 1800),
                w(0, 120, 600),
                (60_000, 180_000),
                (30_000, 120_000),
            ),
            CacheProfile::Cart | CacheProfile::Private | CacheProfile::None => ProfileTimings {
                public: false,
                edge: w(0, 0, 0),
                browser: w(0, 0, 0),
                loader_fresh_ms: 0,
                loader_stale_ms: 0,
                client_stale_ms: 0,
                client_gc_ms: 0,
            },
        }
    }

    /// The client route cache's (stale, gc) times in milliseconds; `shortened` (with
    /// `PLATFORM_CACHE_DISABLE` or in development, see
    /// [`PlatformConfig::shortens_route_cache`](crate::config::PlatformConfig::shortens_route_cache))
    /// caps them at 5 s and 30 s.
    pub fn client_route_cache(&self, shortened: bool) -> (u64, u64) {
        if shortened {
            (
                self.client_stale_ms.min(5_000),
                self.client_gc_ms.min(30_000),
            )
        } else {
            (self.client_stale_ms, self.client_gc_ms)
        }
    }

    /// Whether the edge may store a response of this profile.
    pub fn edge_cacheable(&self) -> bool {
        self.public && self.edge.fresh > 0
    }

    /// The `Cache-Control` sent to clients.
    pub fn cache_control(&self) -> String {
        if !self.public || (self.browser.fresh == 0 && self.edge.fresh == 0) {
            return PRIVATE_CACHE_CONTROL.to_string();
        }
        let mut out = format!("public, max-age={}", self.browser.fresh);
        if self.edge.fresh > 0 {
            out.push_str(&format!(", s-maxage={}", self.edge.fresh));
        }
        if self.browser.swr > 0 {
            out.push_str(&format!(", stale-while-revalidate={}", self.browser.swr));
        }
        if self.browser.sie > 0 {
            out.push_str(&format!(", stale-if-error={}", self.browser.sie));
        }
        out
    }

    /// How long the edge keeps a stored copy: fresh plus the longer stale window.
    pub fn stored_max_age(&self) -> u32 {
        self.edge
            .fresh
            .saturating_add(self.edge.swr.max(self.edge.sie))
    }
}

/// A profile override that would make a private profile shareable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cache profile {0} is private and cannot be made public")]
pub struct PrivateProfileLoosened(pub CacheProfile);

/// The timings of every profile, with site overrides (`setCacheProfile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileTable([ProfileTimings; 7]);

impl Default for ProfileTable {
    fn default() -> ProfileTable {
        ProfileTable(CacheProfile::ALL.map(ProfileTimings::builtin))
    }
}

impl ProfileTable {
    /// The timings of `profile`.
    pub fn get(&self, profile: CacheProfile) -> &ProfileTimings {
        &self.0[profile as usize]
    }

    /// Replaces the timings of `profile`; `cart`, `private` and `none` cannot be made public.
    pub fn set(
        &mut self,
        profile: CacheProfile,
        timings: ProfileTimings,
    ) -> Result<(), PrivateProfileLoosened> {
        if profile.is_private()
            && (timings.public || timings.edge.fresh > 0 || timings.browser.fresh > 0)
        {
            return Err(PrivateProfileLoosened(profile));
        }
        self.0[profile as usize] = timings;
        Ok(())
    }
}

const CART_SEGMENTS: [&str; 3] = ["cart", "checkout", "carrinho"];
const PRIVATE_SEGMENTS: [&str; 16] = [
    "account",
    "myaccount",
    "my-account",
    "minha-conta",
    "meus-pedidos",
    "pedidos",
    "login",
    "logout",
    "orders",
    "order",
    "wishlist",
    "profile",
    "signup",
    "register",
    "returns",
    "api-auth",
];
const NONE_PREFIXES: [&str; 6] = [
    "/api/",
    "/platform/",
    "/_build",
    "/live/",
    "/.sitefile",
    "/_cache/",
];

/// A locale prefix segment: `pt`, `en-us`, `pt_BR`, `zh-hant`.
fn is_locale_segment(s: &str) -> bool {
    let b = s.as_bytes();
    let alpha2 = |x: &[u8]| x.len() == 2 && x.iter().all(u8::is_ascii_alphabetic);
    alpha2(b)
        || (b.len() >= 5
            && b.len() <= 7
            && alpha2(&b[..2])
            && matches!(b[2], b'-' | b'_')
            && b[3..].iter().all(u8::is_ascii_alphabetic))
}

fn private_profile(path: &str) -> Option<CacheProfile> {
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let first = segments.next()?;
    let check = |seg: &str| {
        if CART_SEGMENTS.iter().any(|c| c.eq_ignore_ascii_case(seg)) {
            Some(CacheProfile::Cart)
        } else if PRIVATE_SEGMENTS.iter().any(|c| c.eq_ignore_ascii_case(seg)) {
            Some(CacheProfile::Private)
        } else {
            None
        }
    };
    check(first).or_else(|| {
        if is_locale_segment(first) {
            segments.next().and_then(check)
        } else {
            None
        }
    })
}

fn has_param(query: Option<&str>, name: &str) -> bool {
    query.is_some_and(|q| {
        q.split('&')
            .any(|pair| pair.split('=').next() == Some(name))
    })
}

/// The built-in profile of a path and query.
///
/// 1. first segment (or the one after a locale prefix such as `/pt-br/`) is a cart segment →
///    `cart`, an account/login/orders segment → `private` (case-insensitive);
/// 2. `/api/`, `/platform/`, `/_build`, `/live/`, `/.sitefile`, `/_cache/` → `none`;
/// 3. `/s`, `/s/…`, `/search`, `/search/…` or a `q` parameter → `search`;
/// 4. ends in `/p` (or `/p/`) → `product`;
/// 5. `/` → `static`; else `listing`.
pub fn detect_builtin(path: &str, query: Option<&str>) -> CacheProfile {
    if let Some(p) = private_profile(path) {
        return p;
    }
    if NONE_PREFIXES.iter().any(|p| path.starts_with(p)) {
        return CacheProfile::None;
    }
    let search_path = |prefix: &str| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    if search_path("/s") || search_path("/search") || has_param(query, "q") {
        return CacheProfile::Search;
    }
    if path.ends_with("/p") || path.ends_with("/p/") {
        return CacheProfile::Product;
    }
    if path == "/" || path.is_empty() {
        return CacheProfile::Static;
    }
    CacheProfile::Listing
}

/// The profile of a URL: what the host's `detectProfile(url)` answered (`custom`) first, then
/// the built-in rules. A host cannot loosen a built-in `cart` or `private` path into a
/// shareable profile.
pub fn detect_profile(url: &Url, custom: Option<CacheProfile>) -> CacheProfile {
    let builtin = detect_builtin(url.path(), url.query());
    match custom {
        Some(chosen)
            if matches!(builtin, CacheProfile::Cart | CacheProfile::Private)
                && !chosen.is_private() =>
        {
            builtin
        }
        Some(chosen) => chosen,
        None => builtin,
    }
}

impl crate::errors::HasErrorCode for UnknownProfile {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidConfig
    }
}

impl crate::errors::HasErrorCode for PrivateProfileLoosened {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidConfig
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn loader_freshness_of_profiles() {
        assert_eq!(
            ProfileTimings::builtin(CacheProfile::Product).loader_freshness(),
            Freshness {
                max_age_ms: 30_000,
                stale_ms: 600_000
            }
        );
        assert!(
            !ProfileTimings::builtin(CacheProfile::Private)
                .loader_freshness()
                .is_cacheable()
        );
    }

    fn detect(u: &str) -> CacheProfile {
        let url = Url::parse(&format!("https://shop.com{u}")).unwrap();
        detect_profile(&url, None)
    }

    #[test]
    fn cache_disable_and_development_shorten_client_route_caches() {
        use crate::config::PlatformConfig;
        let timings = ProfileTimings::builtin(CacheProfile::Static);
        let shortened = |vars: &[(&str, &str)]| {
            PlatformConfig::from_env(vars.iter().copied())
                .unwrap()
                .shortens_route_cache()
        };
        assert!(!shortened(&[]));
        assert!(shortened(&[("PLATFORM_CACHE_DISABLE", "true")]));
        assert!(shortened(&[("NODE_ENV", "development")]));
        assert_eq!(timings.client_route_cache(false), (300_000, 1_800_000));
        assert_eq!(timings.client_route_cache(true), (5_000, 30_000));
        let private = ProfileTimings::builtin(CacheProfile::Cart);
        assert_eq!(
            private.client_route_cache(true),
            (0, 0),
            "never longer than the profile"
        );
    }

    #[test]
    fn builtin_detection() {
        assert_eq!(detect("/"), CacheProfile::Static);
        assert_eq!(detect("/camisetas"), CacheProfile::Listing);
        assert_eq!(detect("/camiseta-azul/p"), CacheProfile::Product);
        assert_eq!(detect("/camiseta-azul/p?skuId=1"), CacheProfile::Product);
        assert_eq!(detect("/s?q=shoes"), CacheProfile::Search);
        assert_eq!(detect("/s/shoes"), CacheProfile::Search);
        assert_eq!(detect("/search"), CacheProfile::Search);
        assert_eq!(detect("/sale?q=x"), CacheProfile::Search);
        assert_eq!(
            detect("/sapatos"),
            CacheProfile::Listing,
            "/s needs a segment boundary"
        );
        assert_eq!(detect("/sale?qq=x"), CacheProfile::Listing);
        assert_eq!(detect("/cart"), CacheProfile::Cart);
        assert_eq!(detect("/Checkout/step"), CacheProfile::Cart);
        assert_eq!(detect("/account/orders"), CacheProfile::Private);
        assert_eq!(detect("/MY-ACCOUNT"), CacheProfile::Private);
        assert_eq!(
            detect("/pt-br/minha-conta"),
            CacheProfile::Private,
            "locale prefix tolerated"
        );
        assert_eq!(detect("/pt/checkout"), CacheProfile::Cart);
        assert_eq!(
            detect("/accounting"),
            CacheProfile::Listing,
            "segment boundary"
        );
        assert_eq!(
            detect("/shoes/login"),
            CacheProfile::Listing,
            "only the first segment"
        );
        assert_eq!(detect("/api/x"), CacheProfile::None);
        assert_eq!(detect("/platform/invoke/x"), CacheProfile::None);
        assert_eq!(detect("/_build/app.js"), CacheProfile::None);
    }

    #[test]
    fn custom_detection_cannot_loosen_private() {
        let url = |p: &str| Url::parse(&format!("https://x.com{p}")).unwrap();
        let static_ = Some(CacheProfile::Static);
        assert_eq!(
            detect_profile(&url("/promo/a"), static_),
            CacheProfile::Static
        );
        assert_eq!(detect_profile(&url("/other"), None), CacheProfile::Listing);
        assert_eq!(detect_profile(&url("/cart"), static_), CacheProfile::Cart);
        assert_eq!(
            detect_profile(&url("/"), Some(CacheProfile::Private)),
            CacheProfile::Private,
            "tightening is allowed"
        );
    }

    #[test]
    fn cache_control_strings_are_exact() {
        let cc = |p| ProfileTimings::builtin(p).cache_control();
        assert_eq!(
            cc(CacheProfile::Static),
            "public, max-age=120, s-maxage=900, stale-while-revalidate=1800, stale-if-error=7200"
        );
        assert_eq!(
            cc(CacheProfile::Product),
            "public, max-age=60, s-maxage=300, stale-while-revalidate=600, stale-if-error=3600"
        );
        assert_eq!(
            cc(CacheProfile::Listing),
            "public, max-age=30, s-maxage=120, stale-while-revalidate=300, stale-if-error=1800"
        );
        assert_eq!(
            cc(CacheProfile::Search),
            "public, max-age=0, s-maxage=60, stale-while-revalidate=120, stale-if-error=600"
        );
        for p in [
            CacheProfile::Cart,
            CacheProfile::Private,
            CacheProfile::None,
        ] {
            assert_eq!(cc(p), PRIVATE_CACHE_CONTROL);
            assert!(!ProfileTimings::builtin(p).edge_cacheable());
        }
        assert_eq!(
            ProfileTimings::builtin(CacheProfile::Static).stored_max_age(),
            900 + 21600
        );
    }

    #[test]
    fn table_overrides() {
        let mut t = ProfileTable::default();
        let mut listing = *t.get(CacheProfile::Listing);
        listing.edge.fresh = 10;
        t.set(CacheProfile::Listing, listing).unwrap();
        assert_eq!(t.get(CacheProfile::Listing).edge.fresh, 10);
        let public = ProfileTimings::builtin(CacheProfile::Static);
        assert_eq!(
            t.set(CacheProfile::Private, public),
            Err(PrivateProfileLoosened(CacheProfile::Private))
        );
        for p in CacheProfile::ALL {
            assert_eq!(p.as_str().parse::<CacheProfile>(), Ok(p));
        }
        assert!("bogus".parse::<CacheProfile>().is_err());
    }

    proptest! {
        #[test]
        fn detection_never_panics(path in "(/[a-zA-Z0-9_.%-]{0,8}){0,5}", q in proptest::option::of("[a-z=&]{0,12}")) {
            let _ = detect_builtin(&path, q.as_deref());
        }

        #[test]
        fn private_segments_stay_private(seg in proptest::sample::select(PRIVATE_SEGMENTS.to_vec()), rest in "(/[a-z0-9]{1,6}){0,3}", upper in any::<bool>()) {
            let seg = if upper { seg.to_ascii_uppercase() } else { seg.to_string() };
            prop_assert_eq!(detect_builtin(&format!("/{seg}{rest}"), Some("q=1")), CacheProfile::Private);
            prop_assert_eq!(detect_builtin(&format!("/en-us/{seg}{rest}"), None), CacheProfile::Private);
        }
    }
}
