//! The geography part of the edge cache key: how much geography goes in (`geoCacheKey`) and the
//! part written for a request's location.

use crate::request::Geo;

/// How much geography goes into the cache key (`geoCacheKey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GeoCacheKey {
    /// `region` when the content uses the location matcher, else `off`.
    #[default]
    Auto,
    /// No geography.
    Off,
    /// Country.
    Country,
    /// Country and region.
    Region,
    /// Country, region and city.
    City,
}

impl GeoCacheKey {
    /// The granularity in force given whether the content uses the location matcher.
    pub fn effective(self, uses_location: bool) -> GeoCacheKey {
        match self {
            GeoCacheKey::Auto if uses_location => GeoCacheKey::Region,
            GeoCacheKey::Auto => GeoCacheKey::Off,
            other => other,
        }
    }
}

/// The geography part: `COUNTRY|REGION|city` up to the granularity, positions kept (an unknown
/// field is empty), `None` when every field is unknown or geography is off. Codes are upper-cased,
/// the region is its code (falling back to its name), the city is lower-cased.
pub fn geo_part(geo: &Geo, granularity: GeoCacheKey) -> Option<String> {
    let depth = match granularity {
        GeoCacheKey::Auto | GeoCacheKey::Off => return None,
        GeoCacheKey::Country => 1,
        GeoCacheKey::Region => 2,
        GeoCacheKey::City => 3,
    };
    fn field(s: &Option<String>) -> Option<&str> {
        s.as_deref().map(str::trim).filter(|s| !s.is_empty())
    }
    let region = field(&geo.region_code).or_else(|| field(&geo.region));
    let fields = [field(&geo.country), region, field(&geo.city)];
    let fields = &fields[..depth];
    if fields.iter().all(Option::is_none) {
        return None;
    }
    let mut out = String::with_capacity(32);
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push('|');
        }
        let f = f.unwrap_or("");
        if i == 2 {
            out.push_str(&f.to_lowercase());
        } else {
            out.push_str(&f.to_uppercase());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;

    #[test]
    fn the_part_goes_as_deep_as_the_granularity() {
        let geo = Request::new("https://s.com/")
            .unwrap()
            .with_header("cf-ipcountry", "BR")
            .with_header("cf-region-code", "SP")
            .with_header("cf-ipcity", "Campinas")
            .geo();
        assert_eq!(geo_part(&geo, GeoCacheKey::Off), None);
        assert_eq!(geo_part(&geo, GeoCacheKey::Country).as_deref(), Some("BR"));
        assert_eq!(
            geo_part(&geo, GeoCacheKey::Region).as_deref(),
            Some("BR|SP")
        );
        assert_eq!(
            geo_part(&geo, GeoCacheKey::City).as_deref(),
            Some("BR|SP|campinas")
        );
        let region_name_only = Request::new("https://s.com/")
            .unwrap()
            .with_header("cf-region", "Sao Paulo")
            .geo();
        assert_eq!(
            geo_part(&region_name_only, GeoCacheKey::Region).as_deref(),
            Some("|SAO PAULO")
        );
        assert_eq!(geo_part(&Geo::default(), GeoCacheKey::City), None);
    }
}
