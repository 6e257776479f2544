//! `CDN-Cache-Control`: what a CDN in front of the edge may keep.

use super::profile::{CacheProfile, ProfileTimings};
use std::fmt;
use std::sync::Arc;

/// The query parameter a client adds to data fetches so a CDN can key them by segment:
/// `__cseg=<device>.<deploy version>`.
pub const SEGMENT_TOKEN_PARAM: &str = "__cseg";

/// The `cdnCacheControl` policy.
#[derive(Clone, Default)]
pub enum CdnCacheControl {
    /// Default. Documents always `no-store`; a non-document fetch whose URL carries the matching
    /// segment token (and no login, cohort, custom segment or bot) may be kept for the edge TTL.
    #[default]
    ServerFnSegment,
    /// Always `no-store`.
    NoStore,
    /// `public, max-age=<edge fresh>` for public profiles, else `no-store`.
    MatchProfile,
    /// The host decides per profile; `None` means `no-store`.
    Custom(Arc<dyn Fn(CacheProfile) -> Option<String> + Send + Sync>),
}

impl fmt::Debug for CdnCacheControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CdnCacheControl::ServerFnSegment => "ServerFnSegment",
            CdnCacheControl::NoStore => "NoStore",
            CdnCacheControl::MatchProfile => "MatchProfile",
            CdnCacheControl::Custom(_) => "Custom(..)",
        })
    }
}

/// The segment token of a device and deploy version; `None` without a usable version
/// (empty or `dev`), when the token would never be trusted.
pub fn segment_token(device: &str, version: Option<&str>) -> Option<String> {
    let version = version.filter(|v| !v.is_empty() && *v != "dev")?;
    Some(format!("{device}.{version}"))
}

/// What the `CDN-Cache-Control` value depends on besides the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CdnContext {
    /// The request is for an HTML document (not a `Sec-Fetch-Dest: empty` fetch).
    pub is_document: bool,
    /// The URL's segment token matches this visitor and nothing else personalises the response.
    pub segment_token_ok: bool,
}

impl CdnCacheControl {
    /// The header value for a response of `profile`.
    pub fn value(
        &self,
        profile: CacheProfile,
        timings: &ProfileTimings,
        ctx: CdnContext,
    ) -> String {
        let shared = || format!("public, max-age={}", timings.edge.fresh);
        match self {
            CdnCacheControl::NoStore => "no-store".into(),
            CdnCacheControl::MatchProfile if timings.edge_cacheable() => shared(),
            CdnCacheControl::MatchProfile => "no-store".into(),
            CdnCacheControl::ServerFnSegment
                if !ctx.is_document && ctx.segment_token_ok && timings.edge_cacheable() =>
            {
                shared()
            }
            CdnCacheControl::ServerFnSegment => "no-store".into(),
            CdnCacheControl::Custom(f) => f(profile).unwrap_or_else(|| "no-store".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        let listing = ProfileTimings::builtin(CacheProfile::Listing);
        let private = ProfileTimings::builtin(CacheProfile::Private);
        let doc = CdnContext {
            is_document: true,
            segment_token_ok: true,
        };
        let fetch = CdnContext {
            is_document: false,
            segment_token_ok: true,
        };
        let untrusted = CdnContext {
            is_document: false,
            segment_token_ok: false,
        };
        let p = CacheProfile::Listing;
        assert_eq!(
            CdnCacheControl::NoStore.value(p, &listing, fetch),
            "no-store"
        );
        assert_eq!(
            CdnCacheControl::MatchProfile.value(p, &listing, doc),
            "public, max-age=120"
        );
        assert_eq!(
            CdnCacheControl::MatchProfile.value(CacheProfile::Private, &private, doc),
            "no-store"
        );
        assert_eq!(
            CdnCacheControl::ServerFnSegment.value(p, &listing, doc),
            "no-store"
        );
        assert_eq!(
            CdnCacheControl::ServerFnSegment.value(p, &listing, fetch),
            "public, max-age=120"
        );
        assert_eq!(
            CdnCacheControl::ServerFnSegment.value(p, &listing, untrusted),
            "no-store"
        );
        let custom = CdnCacheControl::Custom(Arc::new(|p| {
            (p == CacheProfile::Listing).then(|| "max-age=5".to_string())
        }));
        assert_eq!(custom.value(p, &listing, doc), "max-age=5");
        assert_eq!(
            custom.value(CacheProfile::Static, &listing, doc),
            "no-store"
        );
        assert_eq!(format!("{custom:?}"), "Custom(..)");
    }

    #[test]
    fn tokens() {
        assert_eq!(
            segment_token("mobile", Some("abc")).as_deref(),
            Some("mobile.abc")
        );
        assert_eq!(segment_token("mobile", Some("dev")), None);
        assert_eq!(segment_token("mobile", None), None);
    }
}
