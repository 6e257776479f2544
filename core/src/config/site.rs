//! Typed `createSiteSetup` data options (modules and callbacks stay with the host).

use super::error::ConfigError;
use serde_json::Value as Json;
use url::Url;

/// The data options of `createSiteSetup`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SiteSetupOptions {
    /// `productionOrigins`: absolute URLs on these origins in content are made relative.
    /// Each is an origin (`https://www.shop.com`), stored without a trailing slash.
    pub production_origins: Vec<String>,
}

impl SiteSetupOptions {
    /// Reads the options from their JSON form; unknown keys (the function-valued options) are
    /// ignored, an invalid `productionOrigins` entry is an error naming the option.
    pub fn from_json(json: &Json) -> Result<SiteSetupOptions, ConfigError> {
        let mut out = SiteSetupOptions::default();
        let Some(origins) = json.get("productionOrigins").filter(|v| !v.is_null()) else {
            return Ok(out);
        };
        let bad = || {
            ConfigError::new(
                "productionOrigins",
                &origins.to_string(),
                "an array of http(s) origins",
            )
        };
        for entry in origins.as_array().ok_or_else(bad)? {
            let url = entry
                .as_str()
                .and_then(|s| Url::parse(s).ok())
                .ok_or_else(bad)?;
            if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
                return Err(bad());
            }
            out.production_origins
                .push(url.origin().ascii_serialization());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn production_origins() {
        let o = SiteSetupOptions::from_json(&json!({"productionOrigins": ["https://www.shop.com/", "http://a.com:8080/x"], "sections": {}})).unwrap();
        assert_eq!(
            o.production_origins,
            vec!["https://www.shop.com", "http://a.com:8080"]
        );
        assert_eq!(
            SiteSetupOptions::from_json(&json!({})).unwrap(),
            SiteSetupOptions::default()
        );
        for bad in [json!("x"), json!(["nope"]), json!(["ftp://x.com"])] {
            assert_eq!(
                SiteSetupOptions::from_json(&json!({"productionOrigins": bad}))
                    .unwrap_err()
                    .variable,
                "productionOrigins"
            );
        }
    }
}
