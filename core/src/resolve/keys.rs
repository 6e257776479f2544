//! The `__resolveType` values the resolver treats specially.

/// Types that always resolve to `null` (analytics, SEO and proxy blocks that only the reference
/// framework's renderer understands).
pub const SKIP_RESOLVE_TYPES: &[&str] = &[
    "Deco",
    "htmx/sections/htmx.tsx",
    "website/sections/Analytics/Analytics.tsx",
    "algolia/sections/Analytics/Algolia.tsx",
    "shopify/loaders/proxy.ts",
    "vtex/loaders/proxy.ts",
    "website/loaders/pages.ts",
    "website/loaders/redirects.ts",
    "website/loaders/fonts/googleFonts.ts",
    "commerce/sections/Seo/SeoPDP.tsx",
    "commerce/sections/Seo/SeoPDPV2.tsx",
    "commerce/sections/Seo/SeoPLP.tsx",
    "commerce/sections/Seo/SeoPLPV2.tsx",
    "website/sections/Seo/Seo.tsx",
    "website/sections/Seo/SeoV2.tsx",
    "deco-sites/std/sections/SEO.tsx",
];

/// Already-resolved data: `{"__resolveType": "resolved", "data": ...}`.
pub const RESOLVED: &str = "resolved";
/// The lazy wrapper around one section.
pub const LAZY: &str = "website/sections/Rendering/Lazy.tsx";
/// The deferred wrapper around a list of sections.
pub const DEFERRED: &str = "website/sections/Rendering/Deferred.tsx";
/// Reads a route parameter of the matched page.
pub const REQUEST_TO_PARAM: &str = "website/functions/requestToParam.ts";
/// Commerce extensions whose `data` is used as is.
pub const COMMERCE_EXTENSIONS: &[&str] = &[
    "commerce/loaders/product/extensions/detailsPage.ts",
    "commerce/loaders/product/extensions/listingPage.ts",
];
/// Admin previews: `{"__resolveType": "preview", "block": <name>, ...props}`.
pub const PREVIEW: &str = "preview";
/// Encrypted app credentials.
pub const SECRET: &str = "website/loaders/secret.ts";

/// Whether `rt` is a multivariate flag: every `website/flags/multivariate*.ts` and the classic
/// `$live/flags/multivariate.ts`.
pub fn is_flag(rt: &str) -> bool {
    rt == "$live/flags/multivariate.ts"
        || (rt.starts_with("website/flags/multivariate") && rt.ends_with(".ts"))
}

/// Whether an unregistered `rt` is a dangling loader or action reference.
pub fn is_dangling_candidate(rt: &str) -> bool {
    rt.contains("/loaders/") || rt.contains("/actions/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        assert!(is_flag("website/flags/multivariate.ts"));
        assert!(is_flag("website/flags/multivariate/section.ts"));
        assert!(is_flag("website/flags/multivariate/image.ts"));
        assert!(is_flag("$live/flags/multivariate.ts"));
        assert!(!is_flag("$live/flags/everyone.ts"));
        assert!(!is_flag("website/flags/audience.ts"));
    }
}
