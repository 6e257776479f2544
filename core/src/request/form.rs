//! The JSON form of a request, what every binding hands core: `{"url", "method"?, "headers"?,
//! "cookies"?, "now"?, "seed"?, "draws"?, "geo"?}`.

use super::{Geo, Request, RequestError};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A request as JSON. `headers` and `cookies` are `[[name, value]...]` pairs (names may repeat,
/// order kept) or an object; `now` is RFC 3339 (absent: the Unix epoch, so a host that wants
/// the wall clock says so); `seed` seeds the random source of `random.ts` draws (default 0);
/// `draws` are numbers in `[0, 1)` that source returns first, in order, before its generator.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestForm {
    /// The absolute URL.
    pub url: String,
    /// The method (default `GET`).
    #[serde(default)]
    pub method: Option<String>,
    /// The headers.
    #[serde(default)]
    pub headers: Pairs,
    /// Cookies beside any `Cookie` header.
    #[serde(default)]
    pub cookies: Pairs,
    /// The instant matchers compare dates against.
    #[serde(default)]
    pub now: Option<DateTime<Utc>>,
    /// The seed of the request's random source.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Draws the random source returns first, in order, before its seeded generator: each a
    /// number in `[0, 1)`, else the form is an `INVALID_REQUEST`.
    #[serde(default)]
    pub draws: Option<Vec<f64>>,
    /// The visitor's location as the host's edge reported it beside the request (Cloudflare's
    /// `request.cf`: `country`, `regionCode`, `region`, `city`, `latitude`, `longitude`; the
    /// coordinates as numbers or numeric strings).
    #[serde(default)]
    pub geo: Option<GeoForm>,
}

/// The location fields of a request form (see [`RequestForm::geo`]).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct GeoForm {
    /// ISO country code.
    #[serde(default)]
    pub country: Option<String>,
    /// Region code (`SP`).
    #[serde(default)]
    pub region_code: Option<String>,
    /// Region name (`Sao Paulo`).
    #[serde(default)]
    pub region: Option<String>,
    /// City name.
    #[serde(default)]
    pub city: Option<String>,
    /// Latitude in degrees.
    #[serde(default)]
    pub latitude: Option<Coordinate>,
    /// Longitude in degrees.
    #[serde(default)]
    pub longitude: Option<Coordinate>,
}

/// A coordinate as a number or as the numeric string Cloudflare gives.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Coordinate {
    /// A number.
    Number(f64),
    /// A numeric string; one that is not a number counts as absent.
    Text(String),
}

impl Coordinate {
    fn degrees(&self) -> Option<f64> {
        match self {
            Coordinate::Number(n) => Some(*n),
            Coordinate::Text(t) => t.trim().parse().ok(),
        }
        .filter(|n: &f64| n.is_finite())
    }
}

impl From<GeoForm> for Geo {
    fn from(form: GeoForm) -> Geo {
        Geo {
            country: form.country,
            region_code: form.region_code,
            region: form.region,
            city: form.city,
            latitude: form.latitude.as_ref().and_then(Coordinate::degrees),
            longitude: form.longitude.as_ref().and_then(Coordinate::degrees),
        }
    }
}

/// Name–value pairs, as a list of pairs or as an object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Pairs {
    /// `[[name, value]...]`, in order.
    List(Vec<(String, String)>),
    /// `{name: value}`.
    Object(BTreeMap<String, String>),
}

impl Default for Pairs {
    fn default() -> Pairs {
        Pairs::List(Vec::new())
    }
}

impl Pairs {
    fn iter(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        match self {
            Pairs::List(pairs) => Box::new(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str()))),
            Pairs::Object(map) => Box::new(map.iter().map(|(n, v)| (n.as_str(), v.as_str()))),
        }
    }
}

impl RequestForm {
    /// Reads the JSON form; a malformed one is an `INVALID_REQUEST` error naming the problem.
    pub fn from_json(text: &str) -> Result<RequestForm, RequestError> {
        serde_json::from_str(text).map_err(|e| RequestError::InvalidForm(e.to_string()))
    }

    /// The request the form describes.
    pub fn into_request(self) -> Result<Request, RequestError> {
        let mut request = Request::new(&self.url)?;
        if let Some(method) = &self.method {
            request = request.with_method(method);
        }
        for (name, value) in self.headers.iter() {
            request = request.with_header(name, value);
        }
        for (name, value) in self.cookies.iter() {
            request = request.with_cookie(name, value);
        }
        if let Some(geo) = self.geo {
            request = request.with_host_geo(geo.into());
        }
        let request = request
            .with_now(self.now.unwrap_or_default())
            .with_seed(self.seed.unwrap_or(0));
        match self.draws {
            Some(draws) => request.with_draws(draws),
            None => Ok(request),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::{ErrorCode, HasErrorCode};

    #[test]
    fn the_form_builds_the_request_it_describes() {
        let request = RequestForm::from_json(
            r#"{"url": "https://shop.example/p?x=1", "method": "POST",
                "headers": [["User-Agent", "UA/1"], ["X-A", "1"], ["X-A", "2"]],
                "cookies": {"a": "1"}, "now": "2026-06-01T12:00:00Z", "seed": 7}"#,
        )
        .unwrap()
        .into_request()
        .unwrap();
        assert_eq!(request.url().as_str(), "https://shop.example/p?x=1");
        assert_eq!(request.method(), "POST");
        assert_eq!(request.user_agent(), "UA/1");
        assert_eq!(
            request.headers().iter().filter(|(n, _)| n == "x-a").count(),
            2
        );
        assert_eq!(request.cookie("a"), Some("1"));
        assert_eq!(request.now.to_rfc3339(), "2026-06-01T12:00:00+00:00");
        let mut seeded = crate::request::RandomSource::new(7);
        assert_eq!(request.random.clone().next_f64(), seeded.next_f64());
        let plain = RequestForm::from_json(r#"{"url": "https://shop.example/"}"#)
            .unwrap()
            .into_request()
            .unwrap();
        assert_eq!(plain.method(), "GET");
        assert_eq!(plain.now.timestamp(), 0);
    }

    #[test]
    fn a_bad_form_is_an_invalid_request_naming_the_problem() {
        for (text, says) in [
            (
                r#"{"url": "https://x/", "now": "yesterday"}"#,
                "input contains invalid",
            ),
            (
                r#"{"url": "https://x/", "colour": 1}"#,
                "unknown field `colour`",
            ),
            (r#"{"headers": []}"#, "missing field `url`"),
            ("[", "EOF"),
            (r#"{"url": "https://x/", "draws": ["0.4"]}"#, "invalid type"),
        ] {
            let error = RequestForm::from_json(text).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidRequest);
            assert!(error.to_string().contains(says), "{error}");
        }
        let relative = RequestForm::from_json(r#"{"url": "http://exa mple/"}"#).unwrap();
        assert_eq!(
            relative.into_request().unwrap_err().code(),
            ErrorCode::InvalidRequest
        );
        let out_of_range = RequestForm::from_json(r#"{"url": "https://x/", "draws": [0.2, 1]}"#)
            .unwrap()
            .into_request()
            .unwrap_err();
        assert_eq!(out_of_range.code(), ErrorCode::InvalidRequest);
        assert!(
            out_of_range.to_string().contains("draws[1] is 1"),
            "{out_of_range}"
        );
    }

    #[test]
    fn the_forms_draws_come_before_its_seeded_generator() {
        let request = RequestForm::from_json(r#"{"url": "https://x/", "seed": 7, "draws": [0.4]}"#)
            .unwrap()
            .into_request()
            .unwrap();
        let mut random = request.random.clone();
        let mut seeded = crate::request::RandomSource::new(7);
        assert_eq!(random.next_f64(), 0.4);
        assert_eq!(random.next_f64(), seeded.next_f64());
    }
}
