//! A request as the core sees it: URL, headers, cookies, and the injected clock and random source.

mod form;

pub use form::RequestForm;
#[cfg(feature = "internals")]
pub use form::{Coordinate, GeoForm, Pairs};

use crate::device::Device;
use chrono::{DateTime, Utc};
use percent_encoding::percent_decode_str;
use std::sync::OnceLock;
use url::Url;

/// A request to resolve. Time and randomness are inputs, so resolution is deterministic.
#[derive(Debug, Clone)]
pub struct Request {
    url: Url,
    method: String,
    headers: Vec<(String, String)>,
    cookies: Vec<(String, String)>,
    /// The visitor's location as the host's edge reported it beside the request (Cloudflare's
    /// `request.cf`), when it did.
    host_geo: Option<Box<Geo>>,
    /// The instant matchers compare dates against.
    pub now: DateTime<Utc>,
    /// The random source for `random.ts` draws.
    pub random: RandomSource,
    /// The device class and crawler verdict of the `User-Agent`, read once: matchers, caches
    /// and the assembly of the page each ask.
    agent: OnceLock<(Device, bool)>,
}

/// Why a request could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    /// The JSON form of a request is malformed.
    #[error("invalid request: {0}")]
    InvalidForm(String),
    /// The URL is not an absolute URL.
    #[error("invalid request URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What the parser said.
        reason: String,
    },
}

impl Request {
    /// A `GET` of an absolute URL (or a path, taken relative to `http://localhost`).
    pub fn new(url: &str) -> Result<Request, RequestError> {
        let parsed = if url.starts_with('/') {
            Url::parse("http://localhost").and_then(|base| base.join(url))
        } else {
            Url::parse(url)
        };
        let url = parsed.map_err(|e| RequestError::InvalidUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Request {
            url,
            method: "GET".into(),
            headers: Vec::new(),
            cookies: Vec::new(),
            host_geo: None,
            now: DateTime::<Utc>::UNIX_EPOCH,
            random: RandomSource::new(0),
            agent: OnceLock::new(),
        })
    }

    /// Sets the method.
    pub fn with_method(mut self, method: &str) -> Request {
        self.method = method.to_ascii_uppercase();
        self
    }

    /// Adds a header; a `Cookie` header also adds its cookies.
    pub fn with_header(mut self, name: &str, value: &str) -> Request {
        let name = name.trim().to_ascii_lowercase();
        if name == "cookie" {
            self.cookies.extend(parse_cookie_header(value));
        }
        self.headers.push((name, value.trim().to_string()));
        self.agent = OnceLock::new();
        self
    }

    /// Adds a cookie (as if sent in the `Cookie` header).
    pub fn with_cookie(mut self, name: &str, value: &str) -> Request {
        self.cookies.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the location the host's edge reported beside the request (Cloudflare's
    /// `request.cf`): read after the geo headers and before the `__cf_geo_*` cookies.
    pub fn with_host_geo(mut self, geo: Geo) -> Request {
        self.host_geo = Some(Box::new(geo));
        self
    }

    /// Sets the clock.
    pub fn with_now(mut self, now: DateTime<Utc>) -> Request {
        self.now = now;
        self
    }

    /// Seeds the random source (dropping any scripted draws).
    pub fn with_seed(mut self, seed: u64) -> Request {
        self.random = RandomSource::new(seed);
        self
    }

    /// Scripts the random source: `draws` are returned first, in order, then the seeded
    /// generator continues (call after [`Request::with_seed`]). A draw outside `[0, 1)` (or
    /// not a number) is an `INVALID_REQUEST` error.
    pub fn with_draws(mut self, draws: Vec<f64>) -> Result<Request, RequestError> {
        self.random = RandomSource::with_draws(self.random.state, draws)?;
        Ok(self)
    }

    /// The full URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The path, percent-encoded as received.
    pub fn path(&self) -> &str {
        self.url.path()
    }

    /// The method, upper case.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The first value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All headers, names lower case, in arrival order.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The value of a cookie; the last one wins when a name repeats.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.cookies
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// All cookies in arrival order.
    pub fn cookies(&self) -> &[(String, String)] {
        &self.cookies
    }

    /// The `User-Agent` header, or `""`.
    pub fn user_agent(&self) -> &str {
        self.header("user-agent").unwrap_or("")
    }

    /// The device class of the user agent.
    pub fn device(&self) -> Device {
        self.agent().0
    }

    fn agent(&self) -> (Device, bool) {
        *self.agent.get_or_init(|| {
            let ua = self.user_agent();
            (Device::from_user_agent(ua), is_bot_user_agent(ua))
        })
    }

    /// The first value of a query parameter, decoded (`+` is a space).
    pub fn query(&self, name: &str) -> Option<String> {
        self.url
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }

    /// Whether the user agent looks like a crawler.
    pub fn is_bot(&self) -> bool {
        self.agent().1
    }

    /// Whether every section must render at once: a crawler, `?__bot=1` or
    /// `?__platform_ssr=1`, or a programmatic fetch (`Sec-Fetch-Dest: empty`).
    pub fn is_eager(&self) -> bool {
        self.is_bot()
            || self.query("__bot").as_deref() == Some("1")
            || self.query("__platform_ssr").as_deref() == Some("1")
            || self
                .header("sec-fetch-dest")
                .is_some_and(|d| d.eq_ignore_ascii_case("empty"))
    }

    /// The visitor's location: each field from the geo headers, else the location the host's
    /// edge reported ([`Request::with_host_geo`]), else the `__cf_geo_*` cookies.
    pub fn geo(&self) -> Geo {
        let host = self.host_geo.as_deref();
        let pick = |headers: &[&str], from_host: Option<&String>, cookie: &str| -> Option<String> {
            headers
                .iter()
                .find_map(|h| self.header(h).filter(|v| !v.is_empty()))
                .or(from_host.map(String::as_str).filter(|v| !v.is_empty()))
                .or_else(|| self.cookie(cookie).filter(|v| !v.is_empty()))
                .map(str::to_string)
        };
        let number = |headers: &[&str], from_host: Option<f64>, cookie: &str| -> Option<f64> {
            let parse = |v: &str| v.trim().parse::<f64>().ok();
            headers
                .iter()
                .find_map(|h| self.header(h).and_then(parse))
                .or(from_host)
                .or_else(|| self.cookie(cookie).and_then(parse))
        };
        Geo {
            country: pick(
                &["cf-ipcountry", "x-vercel-ip-country"],
                host.and_then(|g| g.country.as_ref()),
                GEO_COOKIES.country,
            ),
            region_code: pick(
                &["cf-region-code", "x-vercel-ip-country-region"],
                host.and_then(|g| g.region_code.as_ref()),
                GEO_COOKIES.region_code,
            ),
            region: pick(
                &["cf-region"],
                host.and_then(|g| g.region.as_ref()),
                GEO_COOKIES.region,
            ),
            city: pick(
                &["cf-ipcity", "x-vercel-ip-city"],
                host.and_then(|g| g.city.as_ref()),
                GEO_COOKIES.city,
            ),
            latitude: number(
                &["cf-iplatitude", "x-vercel-ip-latitude"],
                host.and_then(|g| g.latitude),
                GEO_COOKIES.latitude,
            ),
            longitude: number(
                &["cf-iplongitude", "x-vercel-ip-longitude"],
                host.and_then(|g| g.longitude),
                GEO_COOKIES.longitude,
            ),
        }
    }
}

/// The cookies that carry a location to code that sees cookies but not the edge's headers.
struct GeoCookieNames {
    country: &'static str,
    region_code: &'static str,
    region: &'static str,
    city: &'static str,
    latitude: &'static str,
    longitude: &'static str,
}

/// The `__cf_geo_*` cookie names (the reference's).
const GEO_COOKIES: GeoCookieNames = GeoCookieNames {
    country: "__cf_geo_country",
    region_code: "__cf_geo_region_code",
    region: "__cf_geo_region",
    city: "__cf_geo_city",
    latitude: "__cf_geo_lat",
    longitude: "__cf_geo_lng",
};

impl Geo {
    /// The location as `__cf_geo_*` cookies, one per known field (values not yet encoded).
    pub fn cookies(&self) -> Vec<(&'static str, String)> {
        let text = [
            (GEO_COOKIES.country, self.country.clone()),
            (GEO_COOKIES.region_code, self.region_code.clone()),
            (GEO_COOKIES.region, self.region.clone()),
            (GEO_COOKIES.city, self.city.clone()),
        ];
        let numbers = [
            (GEO_COOKIES.latitude, self.latitude),
            (GEO_COOKIES.longitude, self.longitude),
        ];
        text.into_iter()
            .filter_map(|(name, v)| Some((name, v?)))
            .chain(
                numbers
                    .into_iter()
                    .filter_map(|(name, v)| Some((name, v?.to_string()))),
            )
            .collect()
    }
}

/// Where the visitor is, as far as the edge told us.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Geo {
    /// ISO country code.
    pub country: Option<String>,
    /// Region code (e.g. `SP`).
    pub region_code: Option<String>,
    /// Region name (e.g. `Sao Paulo`), used by the cache key.
    pub region: Option<String>,
    /// City name.
    pub city: Option<String>,
    /// Latitude in degrees.
    pub latitude: Option<f64>,
    /// Longitude in degrees.
    pub longitude: Option<f64>,
}

/// Splits a `Cookie` header into pairs; values are percent-decoded when valid UTF-8.
pub fn parse_cookie_header(header: &str) -> Vec<(String, String)> {
    header
        .split(';')
        .filter_map(|part| {
            let (k, v) = part.split_once('=')?;
            let k = k.trim();
            if k.is_empty() {
                return None;
            }
            let v = v.trim().trim_matches('"');
            let decoded = percent_decode_str(v)
                .decode_utf8()
                .map(|c| c.into_owned())
                .unwrap_or_else(|_| v.to_string());
            Some((k.to_string(), decoded))
        })
        .collect()
}

/// Known crawlers, search engines, link unfurlers and audit tools, matched anywhere in a user
/// agent ignoring ASCII case (the reference's edge list plus link unfurlers). A constant pattern:
/// `bots_are_recognised_ignoring_case` proves it compiles; were it ever invalid, no user agent
/// would count as a bot.
static BOT_USER_AGENT: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
    regex::RegexBuilder::new(
        "bot|crawl|spider|slurp|lighthouse|headlesschrome|facebookexternalhit|mediapartners\
         |google|bing|yandex|baidu|duckduck|teoma|ia_archiver|semrush|ahrefs|embedly\
         |quora link preview|whatsapp|pinterest",
    )
    .case_insensitive(true)
    .unicode(false)
    .build()
    .ok()
});

/// Whether a user agent is a known crawler, search engine, link unfurler or audit tool.
pub fn is_bot_user_agent(ua: &str) -> bool {
    BOT_USER_AGENT.as_ref().is_some_and(|r| r.is_match(ua))
}

/// A deterministic random source: the host's scripted draws first, in order, then SplitMix64
/// seeded by the host per request.
#[derive(Debug, Clone)]
pub struct RandomSource {
    state: u64,
    /// Draws the host supplied ([`Request::with_draws`]), returned before the generator's.
    draws: std::sync::Arc<[f64]>,
    /// How many of `draws` were returned.
    taken: usize,
}

impl RandomSource {
    /// A source seeded with `seed`.
    pub fn new(seed: u64) -> RandomSource {
        RandomSource {
            state: seed,
            draws: std::sync::Arc::from([]),
            taken: 0,
        }
    }

    /// A source that returns `draws` first, in order, then continues as `RandomSource::new(seed)`.
    /// Every draw must be a number in `[0, 1)`; the error names the first that is not.
    pub fn with_draws(seed: u64, draws: Vec<f64>) -> Result<RandomSource, RequestError> {
        if let Some((i, x)) = draws
            .iter()
            .enumerate()
            .find(|(_, x)| !(0.0..1.0).contains(*x))
        {
            return Err(RequestError::InvalidForm(format!(
                "draws[{i}] is {x}: every draw must be a number in [0, 1)"
            )));
        }
        Ok(RandomSource {
            draws: draws.into(),
            ..RandomSource::new(seed)
        })
    }

    /// The next draw in `[0, 1)`: the next scripted draw while any remain, else the generator's.
    pub fn next_f64(&mut self) -> f64 {
        if let Some(&x) = self.draws.get(self.taken) {
            self.taken += 1;
            return x;
        }
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl crate::errors::HasErrorCode for RequestError {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidRequest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bots_are_recognised_ignoring_case() {
        for ua in [
            "Mozilla/5.0 (compatible; Googlebot/2.1)",
            "Googlebot-Image/1.0",
            "Mozilla/5.0 (compatible; bingbot/2.0)",
            "Mediapartners-Google",
            "facebookexternalhit/1.1",
            "WhatsApp/2.23",
            "ia_archiver",
            "Mozilla/5.0 (compatible; AhrefsBot/7.0)",
            "Mozilla/5.0 Chrome-Lighthouse",
        ] {
            assert!(is_bot_user_agent(ua), "{ua}");
        }
        for ua in [
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 Safari/537.36 Édition",
            "",
        ] {
            assert!(!is_bot_user_agent(ua), "{ua}");
        }
    }

    #[test]
    fn cookies_come_from_header_and_builder() {
        let r = Request::new("https://shop.example/a?x=1")
            .unwrap()
            .with_header("Cookie", "a=1; b=hello%20world; =bad; c")
            .with_cookie("d", "4");
        assert_eq!(r.cookie("a"), Some("1"));
        assert_eq!(r.cookie("b"), Some("hello world"));
        assert_eq!(r.cookie("d"), Some("4"));
        assert_eq!(r.cookie("c"), None);
        assert_eq!(r.query("x").as_deref(), Some("1"));
    }

    #[test]
    fn geo_prefers_headers_over_cookies() {
        let r = Request::new("/")
            .unwrap()
            .with_header("cf-ipcountry", "BR")
            .with_cookie("__cf_geo_country", "US")
            .with_cookie("__cf_geo_city", "S%C3%A3o Paulo")
            .with_header("cf-iplatitude", "-23.5");
        let g = r.geo();
        assert_eq!(g.country.as_deref(), Some("BR"));
        assert_eq!(g.city.as_deref(), Some("S%C3%A3o Paulo"));
        assert_eq!(g.latitude, Some(-23.5));
    }

    #[test]
    fn geo_reads_headers_then_the_hosts_location_then_cookies_field_by_field() {
        let r = Request::new("/")
            .unwrap()
            .with_header("cf-ipcountry", "BR")
            .with_host_geo(Geo {
                country: Some("US".into()),
                city: Some("Campinas".into()),
                latitude: Some(-22.9),
                ..Geo::default()
            })
            .with_cookie("__cf_geo_city", "Santos")
            .with_cookie("__cf_geo_region_code", "SP")
            .with_cookie("__cf_geo_lng", "-47.06");
        let g = r.geo();
        assert_eq!(g.country.as_deref(), Some("BR"), "a header first");
        assert_eq!(
            g.city.as_deref(),
            Some("Campinas"),
            "then the host's location"
        );
        assert_eq!(g.region_code.as_deref(), Some("SP"), "then a cookie");
        assert_eq!((g.latitude, g.longitude), (Some(-22.9), Some(-47.06)));
        assert_eq!(
            g.cookies(),
            vec![
                ("__cf_geo_country", "BR".to_string()),
                ("__cf_geo_region_code", "SP".to_string()),
                ("__cf_geo_city", "Campinas".to_string()),
                ("__cf_geo_lat", "-22.9".to_string()),
                ("__cf_geo_lng", "-47.06".to_string()),
            ]
        );
    }

    #[test]
    fn random_source_is_deterministic_and_in_range() {
        let mut a = RandomSource::new(7);
        let mut b = RandomSource::new(7);
        for _ in 0..1000 {
            let x = a.next_f64();
            assert_eq!(x, b.next_f64());
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn scripted_draws_come_first_then_the_seeded_generator() {
        let mut scripted = Request::new("/")
            .unwrap()
            .with_seed(7)
            .with_draws(vec![0.4, 0.0, 0.999])
            .unwrap()
            .random;
        let mut seeded = RandomSource::new(7);
        assert_eq!(scripted.next_f64(), 0.4);
        assert_eq!(scripted.next_f64(), 0.0);
        assert_eq!(scripted.next_f64(), 0.999);
        for _ in 0..3 {
            assert_eq!(scripted.next_f64(), seeded.next_f64());
        }
        for bad in [1.0, -0.1, f64::NAN, f64::INFINITY] {
            let error = Request::new("/")
                .unwrap()
                .with_draws(vec![0.5, bad])
                .unwrap_err();
            assert!(error.to_string().contains("draws[1]"), "{error}");
            assert!(error.to_string().contains("[0, 1)"), "{error}");
        }
    }
}
