//! What a page's document head says — title, description, canonical URL, robots — read from
//! its resolved SEO block, with the host's defaults: Next.js `generateMetadata`, and any host
//! that writes a `<head>` for a resolved page.

use crate::value::Value;
use serde::{Deserialize, Serialize};

/// The host's fallbacks for a page whose SEO lacks a field (`createDecoPage`'s `siteName`,
/// `defaultTitle`, `defaultDescription`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MetadataDefaults {
    /// The site's name: the title when neither the page nor `default_title` gives one.
    #[serde(default)]
    pub site_name: Option<String>,
    /// The title of a page whose SEO has none.
    #[serde(default)]
    pub default_title: Option<String>,
    /// The description of a page whose SEO has none.
    #[serde(default)]
    pub default_description: Option<String>,
}

/// Whether search engines may index the page and follow its links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Robots {
    /// May the page be indexed.
    pub index: bool,
    /// May its links be followed.
    pub follow: bool,
}

/// A page's document head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageMetadata {
    /// The SEO `title`, else the default title, else the site name.
    pub title: Option<String>,
    /// The SEO `description`, else the default description.
    pub description: Option<String>,
    /// The SEO `canonical` URL.
    pub canonical: Option<String>,
    /// `{index: false, follow: false}` when the SEO says `noIndexing: true`; absent otherwise
    /// (the host's default, indexable).
    pub robots: Option<Robots>,
}

impl PageMetadata {
    /// The head of a page whose resolved SEO block is `seo` (`None`: the page has none). Only
    /// non-empty strings count; SEO templates (`titleTemplate`) are the site globals' and are
    /// not applied here.
    pub fn of(seo: Option<&Value>, defaults: &MetadataDefaults) -> PageMetadata {
        let text = |key: &str| {
            seo.and_then(|s| s.get(key))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let no_indexing = seo
            .and_then(|s| s.get("noIndexing"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        PageMetadata {
            title: text("title")
                .or_else(|| defaults.default_title.clone())
                .or_else(|| defaults.site_name.clone()),
            description: text("description").or_else(|| defaults.default_description.clone()),
            canonical: text("canonical"),
            robots: no_indexing.then_some(Robots {
                index: false,
                follow: false,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seo(json: &str) -> Value {
        Value::from_json_str(json).unwrap()
    }

    #[test]
    fn the_pages_seo_first_then_the_hosts_defaults() {
        let defaults = MetadataDefaults {
            site_name: Some("Shop".into()),
            default_title: Some("Shop — home of shoes".into()),
            default_description: Some("Shoes and bags".into()),
        };
        let full = seo(
            r#"{"title":"Sale","description":"50% off","canonical":"https://shop.example/sale","noIndexing":true}"#,
        );
        assert_eq!(
            PageMetadata::of(Some(&full), &defaults),
            PageMetadata {
                title: Some("Sale".into()),
                description: Some("50% off".into()),
                canonical: Some("https://shop.example/sale".into()),
                robots: Some(Robots {
                    index: false,
                    follow: false
                }),
            }
        );
        let blank = seo(r#"{"title":"  ","description":null,"noIndexing":false}"#);
        let head = PageMetadata::of(Some(&blank), &defaults);
        assert_eq!(head.title.as_deref(), Some("Shop — home of shoes"));
        assert_eq!(head.description.as_deref(), Some("Shoes and bags"));
        assert_eq!((head.canonical, head.robots), (None, None));
        let named = MetadataDefaults {
            site_name: Some("Shop".into()),
            ..MetadataDefaults::default()
        };
        assert_eq!(
            PageMetadata::of(None, &named).title.as_deref(),
            Some("Shop")
        );
        assert_eq!(
            PageMetadata::of(None, &MetadataDefaults::default()).title,
            None
        );
    }
}
