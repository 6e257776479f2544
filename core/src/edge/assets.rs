//! Static and fingerprinted assets: long-lived immutable caching, no HTML fallbacks.

use regex::Regex;

/// Default `fingerprintedAssetPattern`: a `-` and at least eight hash characters before the
/// extension, under `/assets/` (optionally below `/_build`).
pub const DEFAULT_FINGERPRINT_PATTERN: &str = r"(?:/_build)?/assets/.*-[a-zA-Z0-9_-]{8,}\.\w+$";

/// `Cache-Control` of static and fingerprinted assets: one year, immutable.
pub const IMMUTABLE_CACHE_CONTROL: &str = "public, max-age=31536000, immutable";

/// Which asset rule a path falls under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetKind {
    /// Matches `fingerprintedAssetPattern`.
    Fingerprinted,
    /// Under one of `staticPaths`.
    Static,
}

/// The asset kind of a path, if any (`fingerprint`: `fingerprintedAssetPattern`, if any).
pub fn classify_asset(
    path: &str,
    fingerprint: Option<&Regex>,
    static_paths: &[String],
) -> Option<AssetKind> {
    if fingerprint.is_some_and(|re| re.is_match(path)) {
        Some(AssetKind::Fingerprinted)
    } else if static_paths
        .iter()
        .any(|p| !p.is_empty() && path.starts_with(p.as_str()))
    {
        Some(AssetKind::Static)
    } else {
        None
    }
}

/// The status to answer for an asset: an origin `200` that is HTML (a single-page-app fallback
/// for a missing file) becomes `404`, so HTML is never cached for a year under an asset URL.
pub fn asset_status(origin_status: u16, content_type: Option<&str>) -> u16 {
    let html =
        content_type.is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("text/html"));
    if origin_status == 200 && html {
        404
    } else {
        origin_status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let re = Regex::new(DEFAULT_FINGERPRINT_PATTERN).unwrap();
        let statics = vec!["/fonts/".to_string()];
        assert_eq!(
            classify_asset("/assets/app-3f9a1b2c.js", Some(&re), &statics),
            Some(AssetKind::Fingerprinted)
        );
        assert_eq!(
            classify_asset("/_build/assets/index-AbCdEf_12.css", Some(&re), &statics),
            Some(AssetKind::Fingerprinted)
        );
        assert_eq!(
            classify_asset("/assets/app-1234.js", Some(&re), &statics),
            None,
            "hash too short"
        );
        assert_eq!(
            classify_asset("/assets/logo.png", Some(&re), &statics),
            None
        );
        assert_eq!(
            classify_asset("/fonts/inter.woff2", Some(&re), &statics),
            Some(AssetKind::Static)
        );
        assert_eq!(classify_asset("/camisetas", Some(&re), &statics), None);
    }

    #[test]
    fn html_fallback_becomes_404() {
        assert_eq!(asset_status(200, Some("text/html; charset=utf-8")), 404);
        assert_eq!(asset_status(200, Some("application/javascript")), 200);
        assert_eq!(asset_status(304, Some("text/html")), 304);
        assert_eq!(asset_status(200, None), 200);
    }
}
