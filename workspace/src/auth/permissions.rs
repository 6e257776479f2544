//! Permission maps `{ resource: [action, ...] }`, checked for every key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The resource holding the management (tool endpoint) permissions.
pub const SELF_RESOURCE: &str = "self";
/// Wildcard: any action of a resource, or (as a resource) any resource.
const ANY: &str = "*";

/// A permission map: resource (`self`, a connection id, an agent id or `*`) to actions
/// (tool names or `*`). Matching is exact and case-sensitive.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions(pub BTreeMap<String, Vec<String>>);

impl Permissions {
    /// Everything: what the owner key made by `workspace init` holds.
    pub fn all() -> Self {
        Self(BTreeMap::from([(ANY.to_string(), vec![ANY.to_string()])]))
    }

    /// What a member of `role` may do when signed in with OAuth: everything for `owner`,
    /// nothing beyond organization membership otherwise.
    pub fn of_role(role: &str) -> Self {
        if role == "owner" {
            Self::all()
        } else {
            Self::default()
        }
    }

    /// Whether `action` on `resource` is granted, by that resource's entry or by `*`.
    pub fn grants(&self, resource: &str, action: &str) -> bool {
        let covers = |actions: &Vec<String>| actions.iter().any(|a| a == ANY || a == action);
        self.0.get(resource).is_some_and(covers) || self.0.get(ANY).is_some_and(covers)
    }

    /// Whether any action at all is granted on `resource` (by its entry or by `*`).
    pub fn any_on(&self, resource: &str) -> bool {
        let some = |actions: &Vec<String>| !actions.is_empty();
        self.0.get(resource).is_some_and(some) || self.0.get(ANY).is_some_and(some)
    }

    /// Whether every grant in `other` is also granted here (no escalation by minting).
    pub fn contains(&self, other: &Permissions) -> bool {
        other.0.iter().all(|(resource, actions)| {
            actions.iter().all(|action| {
                let covers =
                    |granted: &Vec<String>| granted.iter().any(|a| a == ANY || a == action);
                if resource == ANY {
                    self.0.get(ANY).is_some_and(covers)
                } else {
                    self.grants(resource, action)
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perms(json: &str) -> Permissions {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn grants_exact_and_wildcards() {
        let p = perms(r#"{"self":["COLLECTION_THREADS_GET"],"c1":["*"]}"#);
        assert!(p.grants("self", "COLLECTION_THREADS_GET"));
        assert!(!p.grants("self", "collection_threads_get"));
        assert!(!p.grants("self", "API_KEY_CREATE"));
        assert!(p.grants("c1", "anything"));
        assert!(!p.grants("c2", "anything"));
        assert!(Permissions::all().grants("c2", "x"));
    }

    #[test]
    fn any_grant_on_a_resource() {
        let p = perms(r#"{"c1":["echo"],"c2":[]}"#);
        assert!(p.any_on("c1"));
        assert!(!p.any_on("c2"));
        assert!(!p.any_on("c3"));
        assert!(perms(r#"{"*":["echo"]}"#).any_on("c3"));
    }

    #[test]
    fn minting_is_a_subset_check() {
        let caller = perms(r#"{"self":["API_KEY_CREATE","COLLECTION_THREADS_GET"],"c1":["*"]}"#);
        assert!(caller.contains(&perms(r#"{"self":["COLLECTION_THREADS_GET"],"c1":["t"]}"#)));
        assert!(caller.contains(&perms(r#"{"c1":["*"]}"#)));
        assert!(!caller.contains(&perms(r#"{"self":["*"]}"#)));
        assert!(!caller.contains(&perms(r#"{"*":["COLLECTION_THREADS_GET"]}"#)));
        assert!(!caller.contains(&perms(r#"{"c2":["t"]}"#)));
        assert!(Permissions::all().contains(&perms(r#"{"*":["*"]}"#)));
    }
}
