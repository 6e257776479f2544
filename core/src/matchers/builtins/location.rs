//! `location.ts`: the visitor's location (from the geo headers, see [`Request::geo`]) is in an
//! included location and in no excluded one.
//!
//! [`Request::geo`]: crate::request::Request::geo

use super::{Inputs, RuleFields};
use crate::matchers::country_names::country_code;
use crate::request::Geo;
use crate::value::Value;
use std::borrow::Cow;

/// Mean Earth radius used by the haversine distance, in meters.
const EARTH_RADIUS_M: f64 = 6_371_000.0;

/// Excludes first (any match → false); then no includes → true, else any include matches.
pub(super) fn location(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let include = entries(rule.field("includeLocations"));
    let exclude = entries(rule.field("excludeLocations"));
    if include.is_empty() && exclude.is_empty() {
        return true;
    }
    inputs.effects.vary("region");
    let geo = inputs.request.geo();
    if exclude
        .iter()
        .any(|entry| entry_matches(entry, &geo, false))
    {
        return false;
    }
    include.is_empty() || include.iter().any(|entry| entry_matches(entry, &geo, true))
}

fn entries(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).unwrap_or_default()
}

/// Every field the entry sets must hold; an entry that sets none yields `if_empty` (true for
/// includes, false for excludes). An entry that is not an object matches nothing.
fn entry_matches(entry: &Value, geo: &Geo, if_empty: bool) -> bool {
    let Some(entry) = entry.as_object() else {
        return false;
    };
    let text = |key: &str| -> Option<Cow<'_, str>> {
        match entry.get(key)? {
            Value::String(s) if !s.is_empty() => Some(Cow::Borrowed(&**s)),
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            _ => None,
        }
    };
    let region = text("regionCode");
    let city = text("city");
    let country = text("country");
    let coordinates = text("coordinates");
    if region.is_none() && city.is_none() && country.is_none() && coordinates.is_none() {
        return if_empty;
    }
    region.is_none_or(|r| eq_ignore_case(&r, or_empty(&geo.region_code)))
        && coordinates.is_none_or(|c| within_radius(geo, &c))
        && city.is_none_or(|c| eq_ignore_case(&c, or_empty(&geo.city)))
        && country.is_none_or(|c| {
            country_code(&c).to_uppercase() == or_empty(&geo.country).to_uppercase()
        })
}

fn or_empty(field: &Option<String>) -> &str {
    field.as_deref().unwrap_or("")
}

/// Unicode case-insensitive equality (JavaScript `toLowerCase` on both sides).
fn eq_ignore_case(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// `target` is `lat,lng,radius-in-meters`; the visitor needs both coordinates. Any number that is
/// missing or not finite makes it false.
fn within_radius(geo: &Geo, target: &str) -> bool {
    let (Some(lat), Some(lng)) = (geo.latitude, geo.longitude) else {
        return false;
    };
    let mut parts = target.split(',').map(|p| p.trim().parse::<f64>().ok());
    let (Some(Some(t_lat)), Some(Some(t_lng)), Some(Some(radius))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    if ![lat, lng, t_lat, t_lng, radius]
        .iter()
        .all(|f| f.is_finite())
    {
        return false;
    }
    haversine_m(lat, lng, t_lat, t_lng) <= radius
}

/// Great-circle distance in meters.
fn haversine_m(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let d_lat = (lat2 - lat1).to_radians();
    let d_lng = (lng2 - lng1).to_radians();
    let a = (d_lat / 2.0).sin().powi(2)
        + lat1.to_radians().cos() * lat2.to_radians().cos() * (d_lng / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchers::builtins::Builtin;
    use crate::matchers::test_support::{builtin, request};
    use crate::request::Request;

    fn sao_paulo() -> Request {
        request("/")
            .with_header("cf-ipcountry", "BR")
            .with_header("cf-region-code", "SP")
            .with_header("cf-region", "Sao Paulo")
            .with_header("cf-ipcity", "São Paulo")
            .with_header("cf-iplatitude", "-23.5505")
            .with_header("cf-iplongitude", "-46.6333")
    }

    fn check(rule: &str, req: &Request) -> bool {
        builtin(Builtin::Location, rule, req).0
    }

    #[test]
    fn fields_are_anded_entries_ored() {
        let req = sao_paulo();
        assert!(check(r#"{"includeLocations":[{"country":"BR"}]}"#, &req));
        assert!(check(
            r#"{"includeLocations":[{"country":"Brasil"}]}"#,
            &req
        ));
        assert!(check(r#"{"includeLocations":[{"country":"br"}]}"#, &req));
        assert!(!check(r#"{"includeLocations":[{"country":"US"}]}"#, &req));
        assert!(check(r#"{"includeLocations":[{"regionCode":"sp"}]}"#, &req));
        assert!(
            !check(r#"{"includeLocations":[{"regionCode":"Sao Paulo"}]}"#, &req),
            "a region name never matches"
        );
        assert!(check(
            r#"{"includeLocations":[{"city":"SÃO PAULO"}]}"#,
            &req
        ));
        assert!(check(
            r#"{"includeLocations":[{"country":"BR","regionCode":"SP"}]}"#,
            &req
        ));
        assert!(!check(
            r#"{"includeLocations":[{"country":"BR","regionCode":"RJ"}]}"#,
            &req
        ));
        assert!(check(
            r#"{"includeLocations":[{"regionCode":"RJ"},{"city":"São Paulo"}]}"#,
            &req
        ));
        assert!(check(r#"{"includeLocations":[]}"#, &req));
        assert!(check(r#"{}"#, &req));
        assert!(
            check(r#"{"includeLocations":[{}]}"#, &req),
            "an empty include matches everyone"
        );
        assert!(
            check(r#"{"excludeLocations":[{}]}"#, &req),
            "an empty exclude excludes no one"
        );
        assert!(!check(r#"{"includeLocations":[null]}"#, &req));
    }

    #[test]
    fn excludes_are_checked_before_includes() {
        let req = sao_paulo();
        assert!(!check(
            r#"{"includeLocations":[{"country":"BR"}],"excludeLocations":[{"regionCode":"SP"}]}"#,
            &req
        ));
        assert!(check(
            r#"{"includeLocations":[{"country":"BR"}],"excludeLocations":[{"regionCode":"RJ"}]}"#,
            &req
        ));
        assert!(!check(
            r#"{"excludeLocations":[{"country":"Brazil"}]}"#,
            &req
        ));
        assert!(check(r#"{"excludeLocations":[{"country":"AR"}]}"#, &req));
    }

    #[test]
    fn numeric_region_codes_and_empty_geo() {
        let req = request("/").with_header("cf-region-code", "47");
        assert!(check(r#"{"includeLocations":[{"regionCode":"47"}]}"#, &req));
        assert!(check(r#"{"includeLocations":[{"regionCode":47}]}"#, &req));
        let nowhere = request("/");
        assert!(!check(
            r#"{"includeLocations":[{"regionCode":"SP"}]}"#,
            &nowhere
        ));
        assert!(!check(
            r#"{"includeLocations":[{"country":"BR"}]}"#,
            &nowhere
        ));
        assert!(check(
            r#"{"excludeLocations":[{"country":"BR"}]}"#,
            &nowhere
        ));
    }

    #[test]
    fn geo_falls_back_to_cookies() {
        let req = request("/").with_header(
            "cookie",
            "__cf_geo_country=BR; __cf_geo_city=S%C3%A3o%20Paulo",
        );
        assert!(check(
            r#"{"includeLocations":[{"country":"BR","city":"são paulo"}]}"#,
            &req
        ));
        let both = request("/")
            .with_header("cf-ipcountry", "AR")
            .with_header("cookie", "__cf_geo_country=BR");
        assert!(
            !check(r#"{"includeLocations":[{"country":"BR"}]}"#, &both),
            "headers win"
        );
    }

    #[test]
    fn coordinates_radius() {
        let req = sao_paulo();
        // Paulista Avenue is about 2.4 km from the visitor.
        let d = haversine_m(-23.5505, -46.6333, -23.5614, -46.6559);
        assert!((2_500.0..2_700.0).contains(&d), "{d}");
        let inside = format!(
            r#"{{"includeLocations":[{{"coordinates":"-23.5614,-46.6559,{}"}}]}}"#,
            d.ceil()
        );
        let outside = format!(
            r#"{{"includeLocations":[{{"coordinates":"-23.5614,-46.6559,{}"}}]}}"#,
            d.floor()
        );
        assert!(check(&inside, &req));
        assert!(!check(&outside, &req));
        let same = r#"{"includeLocations":[{"coordinates":"-23.5505,-46.6333,0"}]}"#;
        assert!(check(same, &req), "distance 0 <= radius 0");
        assert!(check(
            r#"{"includeLocations":[{"coordinates":" -23.5505 , -46.6333 , 10 "}]}"#,
            &req
        ));
        for bad in [
            "-23.5,-46.6",
            "a,b,c",
            "-23.5,-46.6,inf",
            "-23.5,-46.6,NaN",
            ",,",
        ] {
            let rule = format!(r#"{{"includeLocations":[{{"coordinates":"{bad}"}}]}}"#);
            assert!(!check(&rule, &req), "{bad}");
        }
        let with_region =
            r#"{"includeLocations":[{"coordinates":"-23.5505,-46.6333,10","regionCode":"RJ"}]}"#;
        assert!(
            !check(with_region, &req),
            "coordinates AND-ed with regionCode"
        );
        let no_coords = request("/").with_header("cf-ipcountry", "BR");
        assert!(!check(
            r#"{"includeLocations":[{"coordinates":"-23.5505,-46.6333,100000000"}]}"#,
            &no_coords
        ));
    }

    #[test]
    fn region_is_a_vary_facet_when_locations_are_set() {
        let (_, e) = builtin(
            Builtin::Location,
            r#"{"includeLocations":[{"country":"BR"}]}"#,
            &sao_paulo(),
        );
        assert_eq!(e.varies, vec!["region"]);
        let (_, e) = builtin(Builtin::Location, r#"{}"#, &sao_paulo());
        assert!(e.varies.is_empty());
    }
}
