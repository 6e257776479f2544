//! The edge cache key: the normalised URL plus the variant parts the page may differ by.
//!
//! Shape: `<scheme>://<host><path>[?<sorted query without tracking params>][#<parts>]`, where the
//! parts (in this order, each only when present) are `v=<deploy version>`, `geo=<country|region|city>`,
//! `bot=1`, `fetch=1`, `cohort=<A/B token>`, then `seg=<segment hash>` or `device=<class>`.
//! The parts live in the fragment, which no request can carry, so a client cannot forge them.

use super::geo_key::{GeoCacheKey, geo_part};
use super::normalize::normalize_query;
use super::options::WorkerOptions;
use super::segment_key::SegmentKey;
use crate::request::Request;
use sha2::{Digest, Sha256};
use url::form_urlencoded::byte_serialize;

/// Longest cohort token written into a key as it is; longer ones (a client controls the
/// cookie) are written as a digest so keys stay short.
pub const MAX_COHORT_TOKEN: usize = 256;

fn bounded_cohort(token: &str) -> std::borrow::Cow<'_, str> {
    if token.len() <= MAX_COHORT_TOKEN {
        return token.into();
    }
    format!("sha256:{}", hex::encode(Sha256::digest(token.as_bytes()))).into()
}

/// Per-request and per-snapshot inputs of the key that the edge policy does not compute itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyContext<'a> {
    /// The deploy version (`BUILD_HASH` or the variable named by `cacheVersionEnv`).
    pub version: Option<&'a str>,
    /// The content uses the location matcher (drives `geoCacheKey: auto`).
    pub uses_location: bool,
    /// The A/B cohort token of the `platform_segment` cookie.
    pub cohort: Option<&'a str>,
    /// The site's `buildSegment` result.
    pub segment: Option<&'a SegmentKey>,
}

/// A built cache key, with the normalised path and query it was built from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    key: String,
    path: (usize, usize),
    query: (usize, usize),
}

impl CacheKey {
    /// The key text.
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The URL path the key belongs to.
    pub fn path(&self) -> &str {
        self.key.get(self.path.0..self.path.1).unwrap_or("")
    }

    /// The normalised query (sorted, tracking parameters removed), without `?`.
    pub fn query(&self) -> &str {
        self.key.get(self.query.0..self.query.1).unwrap_or("")
    }

    /// The variant parts (after `#`), empty when there are none.
    pub fn parts(&self) -> &str {
        self.key.split_once('#').map_or("", |(_, p)| p)
    }
}

impl std::fmt::Display for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.key)
    }
}

/// The query parameter that carries a key's variant parts in [`storage_url`].
pub const STORAGE_KEY_PARAM: &str = "__platform_key";

/// A cache key (the text of [`CacheKey::as_str`]) as a URL without a fragment, for storages
/// that key by URL and drop fragments (the Web Cache API): the variant parts move into a last
/// query parameter ([`STORAGE_KEY_PARAM`]), percent-encoded so they add no `&` of their own.
/// Distinct keys give distinct URLs: every key the edge builds has variant parts, and the
/// parameter is always the last one.
pub fn storage_url(key: &str) -> String {
    let Some((url, parts)) = key.split_once('#') else {
        return key.to_string();
    };
    let joiner = if url.contains('?') { '&' } else { '?' };
    let parts: String = byte_serialize(parts.as_bytes()).collect();
    format!("{url}{joiner}{STORAGE_KEY_PARAM}={parts}")
}

/// The segment actually keyed: the site's segment with `regionId` back-filled from the visitor's
/// region code when geography is keyed and the site left it empty.
pub fn effective_segment(
    segment: &SegmentKey,
    request: &Request,
    granularity: GeoCacheKey,
) -> SegmentKey {
    let mut seg = segment.clone();
    if seg.region_id.is_none() && !matches!(granularity, GeoCacheKey::Off | GeoCacheKey::Auto) {
        seg.region_id = request.geo().region_code.filter(|r| !r.is_empty());
    }
    seg
}

/// Whether the request is a non-document fetch (`Sec-Fetch-Dest: empty`).
pub fn is_fetch(request: &Request) -> bool {
    request
        .header("sec-fetch-dest")
        .is_some_and(|d| d.eq_ignore_ascii_case("empty"))
}

/// The URL part of a key alone (`<scheme>://<host><path>[?<normalised query>]`): the key of
/// responses that do not vary by visitor, such as fingerprinted assets.
pub fn url_key(request: &Request, options: &WorkerOptions) -> CacheKey {
    let url = request.url();
    let mut key = String::with_capacity(96 + url.as_str().len());
    key.push_str(url.scheme());
    key.push_str("://");
    key.push_str(url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        key.push(':');
        key.push_str(&port.to_string());
    }
    let path_start = key.len();
    key.push_str(if url.path().is_empty() {
        "/"
    } else {
        url.path()
    });
    let path_end = key.len();
    let query = normalize_query(
        url.query(),
        options.strip_tracking_params,
        &options.extra_tracking_params,
    );
    if !query.is_empty() {
        key.push('?');
        key.push_str(&query);
    }
    let query_start = if query.is_empty() {
        path_end
    } else {
        path_end + 1
    };
    let query_end = key.len();
    CacheKey {
        key,
        path: (path_start, path_end),
        query: (query_start, query_end),
    }
}

/// Builds the cache key of a request.
pub fn build_cache_key(
    request: &Request,
    options: &WorkerOptions,
    ctx: &KeyContext<'_>,
) -> CacheKey {
    let mut cache_key = url_key(request, options);
    let key = &mut cache_key.key;
    let mut first = true;
    let mut part = |key: &mut String, name: &str, value: &str| {
        key.push(if first { '#' } else { '&' });
        first = false;
        key.push_str(name);
        key.push('=');
        key.extend(byte_serialize(value.as_bytes()));
    };
    if let Some(v) = ctx.version.filter(|v| !v.is_empty()) {
        part(key, "v", v);
    }
    let granularity = options.geo_cache_key.effective(ctx.uses_location);
    if granularity != GeoCacheKey::Off
        && let Some(geo) = geo_part(&request.geo(), granularity)
    {
        part(key, "geo", &geo);
    }
    if request.is_bot() {
        part(key, "bot", "1");
    }
    if is_fetch(request) {
        part(key, "fetch", "1");
    }
    if let Some(c) = ctx.cohort.filter(|c| !c.is_empty()) {
        part(key, "cohort", &bounded_cohort(c));
    }
    match ctx.segment {
        Some(seg) => {
            let hash = effective_segment(seg, request, granularity).hash();
            part(key, "seg", &hash);
        }
        None if options.device_specific_keys => part(key, "device", request.device().as_str()),
        None => {}
    }
    cache_key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_urls_have_no_fragment_and_keep_keys_apart() {
        assert_eq!(
            storage_url("https://shop.com/p?a=1#v=b1&device=mobile"),
            "https://shop.com/p?a=1&__platform_key=v%3Db1%26device%3Dmobile"
        );
        assert_eq!(
            storage_url("https://shop.com/#device=desktop"),
            "https://shop.com/?__platform_key=device%3Ddesktop"
        );
        assert_eq!(
            storage_url("https://shop.com/a.js"),
            "https://shop.com/a.js"
        );
        // A client cannot make its URL's key collide with another's: its own parameter stays
        // in the query part and the variant parts follow it.
        let forged = storage_url("https://shop.com/?__platform_key=device%3Ddesktop#device=mobile");
        assert_ne!(forged, storage_url("https://shop.com/#device=desktop"));
        assert!(!forged.contains('#'));
    }
    use proptest::prelude::*;

    const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148";
    const IPAD: &str = "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) Mobile/15E148";

    fn key(req: &Request, ctx: KeyContext<'_>) -> CacheKey {
        build_cache_key(req, &WorkerOptions::default(), &ctx)
    }

    fn get(url: &str) -> Request {
        Request::new(url).unwrap()
    }

    #[test]
    fn full_recipe() {
        let req = get("https://Shop.COM/camisetas?utm_source=x&b=2&a=1")
            .with_header("user-agent", IPHONE)
            .with_header("cf-ipcountry", "br")
            .with_header("cf-region-code", "sp")
            .with_header("sec-fetch-dest", "empty");
        let k = key(
            &req,
            KeyContext {
                version: Some("abc"),
                uses_location: true,
                cohort: Some("Hero:1:50"),
                segment: None,
            },
        );
        assert_eq!(
            k.as_str(),
            "https://shop.com/camisetas?a=1&b=2#v=abc&geo=BR%7CSP&fetch=1&cohort=Hero%3A1%3A50&device=mobile"
        );
        assert_eq!(k.path(), "/camisetas");
        assert_eq!(k.query(), "a=1&b=2");
        assert_eq!(
            k.parts(),
            "v=abc&geo=BR%7CSP&fetch=1&cohort=Hero%3A1%3A50&device=mobile"
        );
    }

    #[test]
    fn minimal_key_is_the_url_and_device() {
        let k = key(&get("https://shop.com/"), KeyContext::default());
        assert_eq!(k.as_str(), "https://shop.com/#device=desktop");
        assert_eq!(k.query(), "");
        let opts = WorkerOptions {
            device_specific_keys: false,
            ..WorkerOptions::default()
        };
        assert_eq!(
            build_cache_key(&get("https://shop.com/x"), &opts, &KeyContext::default()).as_str(),
            "https://shop.com/x"
        );
    }

    #[test]
    fn tablets_and_phones_get_different_keys() {
        let phone = key(
            &get("https://s.com/").with_header("user-agent", IPHONE),
            KeyContext::default(),
        );
        let tablet = key(
            &get("https://s.com/").with_header("user-agent", IPAD),
            KeyContext::default(),
        );
        assert!(phone.as_str().ends_with("device=mobile"));
        assert!(tablet.as_str().ends_with("device=tablet"));
    }

    #[test]
    fn geo_auto_only_with_location_matcher() {
        let req = get("https://s.com/")
            .with_header("cf-ipcountry", "BR")
            .with_header("cf-region-code", "SP")
            .with_header("cf-ipcity", "Campinas");
        assert!(!key(&req, KeyContext::default()).as_str().contains("geo="));
        assert!(
            key(
                &req,
                KeyContext {
                    uses_location: true,
                    ..Default::default()
                }
            )
            .as_str()
            .contains("geo=BR%7CSP&")
        );
        let opts = WorkerOptions {
            geo_cache_key: GeoCacheKey::Country,
            ..WorkerOptions::default()
        };
        assert!(
            build_cache_key(&req, &opts, &KeyContext::default())
                .as_str()
                .contains("geo=BR&")
        );
    }

    #[test]
    fn long_cohort_tokens_are_digested_not_truncated() {
        let req = Request::new("https://shop.com/").unwrap();
        let with = |c: &str| {
            key(
                &req,
                KeyContext {
                    cohort: Some(c),
                    ..KeyContext::default()
                },
            )
        };
        let (a, b) = ("A:1:50|".repeat(60), "A:1:50|".repeat(61));
        assert!(with(&a).as_str().len() < 400 && with(&b).as_str().len() < 400);
        assert_ne!(
            with(&a).as_str(),
            with(&b).as_str(),
            "distinct cohorts stay apart"
        );
        assert!(with("A:1:50").as_str().contains("cohort=A%3A1%3A50"));
    }

    #[test]
    fn bot_and_cohort_parts() {
        let bot = get("https://s.com/").with_header("user-agent", "Googlebot/2.1");
        assert!(
            key(&bot, KeyContext::default())
                .as_str()
                .contains("#bot=1&")
        );
        let a = key(
            &get("https://s.com/"),
            KeyContext {
                cohort: Some("A:1:50"),
                ..Default::default()
            },
        );
        let b = key(
            &get("https://s.com/"),
            KeyContext {
                cohort: Some("A:0:50"),
                ..Default::default()
            },
        );
        let none = key(
            &get("https://s.com/"),
            KeyContext {
                cohort: Some(""),
                ..Default::default()
            },
        );
        assert_ne!(a, b);
        assert_eq!(none.as_str(), "https://s.com/#device=desktop");
    }

    #[test]
    fn segment_replaces_device_and_backfills_region() {
        let seg = SegmentKey {
            device: Some("mobile".into()),
            sales_channel: Some("1".into()),
            ..Default::default()
        };
        let req = get("https://s.com/")
            .with_header("user-agent", IPAD)
            .with_header("cf-region-code", "RJ");
        let k = key(
            &req,
            KeyContext {
                segment: Some(&seg),
                ..Default::default()
            },
        );
        assert_eq!(k.parts(), "seg=d%3Dmobile%7Csc%3D1");
        let k = key(
            &req,
            KeyContext {
                segment: Some(&seg),
                uses_location: true,
                ..Default::default()
            },
        );
        assert_eq!(k.parts(), "geo=%7CRJ&seg=d%3Dmobile%7Csc%3D1%7Cr%3DRJ");
    }

    #[test]
    fn client_cannot_forge_parts() {
        let forged = key(
            &get("https://s.com/?__v=x&device=mobile"),
            KeyContext::default(),
        );
        assert_eq!(forged.parts(), "device=desktop");
        let with_fragment = key(&get("https://s.com/a#device=mobile"), KeyContext::default());
        assert_eq!(with_fragment.as_str(), "https://s.com/a#device=desktop");
    }

    proptest! {
        #[test]
        fn tracking_params_never_split_the_cache(
            path in "(/[a-z0-9-]{1,8}){0,3}",
            utm in "[a-zA-Z0-9]{0,8}",
            gclid in "[a-zA-Z0-9]{0,8}",
        ) {
            let plain = key(&get(&format!("https://s.com{path}?a=1")), KeyContext::default());
            let tracked = key(&get(&format!("https://s.com{path}?utm_source={utm}&a=1&GCLID={gclid}")), KeyContext::default());
            prop_assert_eq!(plain, tracked);
        }

        #[test]
        fn key_never_panics(url in "https://[a-z]{1,5}\\.com(/[ -~]{0,10}){0,3}", ua in ".{0,40}", country in "[ -~]{0,4}") {
            if let Ok(req) = Request::new(&url) {
                let req = req.with_header("user-agent", &ua).with_header("cf-ipcountry", &country);
                let k = key(&req, KeyContext { uses_location: true, version: Some("v 1"), cohort: Some("a&b"), segment: None });
                prop_assert!(k.as_str().starts_with("https://"));
                prop_assert_eq!(k.parts().matches("device=").count(), 1);
            }
        }
    }
}
