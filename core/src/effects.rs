//! What a resolution did besides producing JSON: cookies to set, warnings, errors and what the
//! page varies on. Effects leave the core as data; the host applies them.

use serde::Serialize;

/// One `onResolveError` event: something failed while resolving, the page still renders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolveErrorEvent {
    /// The `__resolveType` (or block name) that failed.
    #[serde(rename = "resolveType")]
    pub resolve_type: String,
    /// Where it failed: `Commerce loader`, `Section resolution`, `cycle`, `depth`, ...
    pub context: String,
    /// A human-readable explanation.
    pub message: String,
}

/// Side effects of resolving one request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Effects {
    /// Complete `Set-Cookie` header values the response must carry.
    #[serde(rename = "setCookies")]
    pub set_cookies: Vec<String>,
    /// Warnings (unknown matcher, dangling reference, unregistered section, ...), deduplicated.
    pub warnings: Vec<String>,
    /// Request facets the resolved page depends on (`device`, `region`, `cohort`, `cookie`, ...),
    /// sorted and deduplicated; hosts fold them into the cache key.
    pub varies: Vec<String>,
    /// `onResolveError` events, in the order they happened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ResolveErrorEvent>,
    /// A loader failed: the edge must not store this response.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub degraded: bool,
}

impl Effects {
    /// Records a warning once (identical warnings are kept a single time).
    pub fn warn(&mut self, message: impl Into<String>) {
        let message = message.into();
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
    }

    /// Records that the page depends on `facet` of the request.
    pub fn vary(&mut self, facet: &str) {
        if let Err(at) = self.varies.binary_search_by(|v| v.as_str().cmp(facet)) {
            self.varies.insert(at, facet.to_string());
        }
    }

    /// Records an `onResolveError` event.
    pub fn error(&mut self, resolve_type: &str, context: &str, message: impl Into<String>) {
        self.errors.push(ResolveErrorEvent {
            resolve_type: resolve_type.to_string(),
            context: context.to_string(),
            message: message.into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varies_stay_sorted_and_unique() {
        let mut e = Effects::default();
        e.vary("region");
        e.vary("device");
        e.vary("region");
        assert_eq!(e.varies, vec!["device", "region"]);
    }

    #[test]
    fn warnings_are_deduplicated() {
        let mut e = Effects::default();
        e.warn("a");
        e.warn("a");
        e.warn("b");
        assert_eq!(e.warnings, vec!["a", "b"]);
    }
}
