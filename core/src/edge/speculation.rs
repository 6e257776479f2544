//! Speculation rules (`<script type="speculationrules">`) for faster navigations.

use serde::{Deserialize, Serialize};

/// Prefetch or prerender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SpeculationMode {
    /// Fetch the document only.
    #[default]
    Prefetch,
    /// Render the document in the background.
    Prerender,
}

/// When the browser speculates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Eagerness {
    /// On pointer down.
    Conservative,
    /// On hover.
    #[default]
    Moderate,
    /// As soon as possible for matching links.
    Eager,
}

/// The `speculationRules` option.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpeculationRules {
    /// Prefetch or prerender.
    pub mode: SpeculationMode,
    /// How eagerly.
    pub eagerness: Eagerness,
    /// Extra `href_matches` patterns never speculated (e.g. `/logout`).
    pub exclude: Vec<String>,
}

/// Where the edge serves the rules; page responses name it in their `Speculation-Rules`
/// header, so the rules reach cached pages too and need no script (nor CSP nonce) in the HTML.
pub const SPECULATION_RULES_PATH: &str = "/_cache/speculation-rules.json";

/// The `Speculation-Rules` header of a page response: the rules' path as a structured-field
/// string.
pub fn speculation_rules_header() -> String {
    format!("\"{SPECULATION_RULES_PATH}\"")
}

/// Patterns never speculated: per-visitor pages and platform endpoints.
const ALWAYS_EXCLUDED: [&str; 9] = [
    "/cart*",
    "/checkout*",
    "/account*",
    "/login*",
    "/logout*",
    "/api/*",
    "/platform/*",
    "/live/*",
    "/_cache/*",
];

impl SpeculationRules {
    /// The JSON body of the speculation rules script: same-site links, minus the exclusions.
    pub fn to_json(&self) -> String {
        let mut conditions = vec![serde_json::json!({ "href_matches": "/*" })];
        for pattern in ALWAYS_EXCLUDED
            .iter()
            .copied()
            .chain(self.exclude.iter().map(String::as_str))
        {
            conditions.push(serde_json::json!({ "not": { "href_matches": pattern } }));
        }
        let mode = match self.mode {
            SpeculationMode::Prefetch => "prefetch",
            SpeculationMode::Prerender => "prerender",
        };
        serde_json::json!({
            mode: [{ "source": "document", "where": { "and": conditions }, "eagerness": self.eagerness }]
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_json() {
        let r = SpeculationRules {
            mode: SpeculationMode::Prerender,
            eagerness: Eagerness::Eager,
            exclude: vec!["/x*".into()],
        };
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        let rule = &v["prerender"][0];
        assert_eq!(rule["eagerness"], "eager");
        let and = rule["where"]["and"].as_array().unwrap();
        assert_eq!(and[0]["href_matches"], "/*");
        assert!(and.iter().any(|c| c["not"]["href_matches"] == "/checkout*"));
        assert!(and.iter().any(|c| c["not"]["href_matches"] == "/x*"));
        let d: SpeculationRules = serde_json::from_str("{}").unwrap();
        assert_eq!(d, SpeculationRules::default());
        assert!(serde_json::from_str::<SpeculationRules>(r#"{"bogus":1}"#).is_err());
    }
}
