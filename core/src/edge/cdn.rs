//! `CDN-Cache-Control`: what a CDN in front of the edge may keep.

use super::profile::{CacheProfile, ProfileTimings};

/// The query parameter a client adds to data fetches so a CDN can key them by segment:
/// `__cseg=<device>.<deploy version>`.
pub const SEGMENT_TOKEN_PARAM: &str = "__cseg";

/// The `cdnCacheControl` policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CdnCacheControl {
    /// Default. Documents always `no-store`; a non-document fetch whose URL carries the matching
    /// segment token (and no login, cohort, custom segment or bot) may be kept for the edge TTL.
    #[default]
    ServerFnSegment,
    /// Always `no-store`.
    NoStore,
    /// `public, max-age=<edge fresh>` for public profiles, else `no-store`.
    MatchProfile,
    /// The site's `(profile) => string | null` function, answered once per profile by the host
    /// (JSON: `{"<profile>": "<value>" | null}`); a profile without a value is `no-store`.
    PerProfile(Vec<(CacheProfile, String)>),
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
            CdnCacheControl::PerProfile(values) => values
                .iter()
                .find(|(p, _)| *p == profile)
                .map_or_else(|| "no-store".into(), |(_, v)| v.clone()),
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
        let custom = CdnCacheControl::PerProfile(vec![(CacheProfile::Listing, "max-age=5".into())]);
        assert_eq!(custom.value(p, &listing, doc), "max-age=5");
        assert_eq!(
            custom.value(CacheProfile::Static, &listing, doc),
            "no-store"
        );
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
