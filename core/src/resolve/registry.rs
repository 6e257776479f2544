//! Which keys the host has registered as sections or loaders.

use rustc_hash::FxHashSet as HashSet;

/// A set of registered keys, optionally widened by a naming convention (any key containing one
/// of the given path fragments, e.g. `/sections/`).
#[derive(Debug, Clone, Default)]
pub struct KeyRegistry {
    keys: HashSet<String>,
    conventions: Vec<String>,
}

impl KeyRegistry {
    /// A registry that accepts every key containing one of `fragments`.
    pub fn by_convention(fragments: &[&str]) -> KeyRegistry {
        KeyRegistry {
            keys: HashSet::default(),
            conventions: fragments.iter().map(|f| f.to_string()).collect(),
        }
    }

    /// Registers `key`.
    pub fn register(&mut self, key: &str) {
        self.keys.insert(key.to_string());
    }

    /// The registered key `rt` refers to: the exact key, else `rt` with `.ts`/`.tsx` stripped,
    /// else `rt` itself when a convention accepts it.
    pub fn lookup<'a>(&'a self, rt: &'a str) -> Option<&'a str> {
        if let Some(k) = self.keys.get(rt) {
            return Some(k);
        }
        let stem = rt
            .strip_suffix(".tsx")
            .or_else(|| rt.strip_suffix(".ts"))
            .unwrap_or(rt);
        if let Some(k) = self.keys.get(stem) {
            return Some(k);
        }
        self.conventions
            .iter()
            .any(|c| rt.contains(c.as_str()))
            .then_some(rt)
    }

    /// Registers a section module the way `createSiteSetup`'s `sections` names it: the module
    /// key `./sections/<path>.tsx` is registered as `site/sections/<path>.tsx`; any other key
    /// (already a `__resolveType`, say `site/sections/Hero.tsx`) is registered as given.
    /// Returns the registered key.
    pub fn register_section_module(&mut self, module: &str) -> String {
        let key = KeyRegistry::section_key(module);
        self.register(&key);
        key
    }

    /// The key a section module registers under: `./sections/<path>.tsx` is
    /// `site/sections/<path>.tsx`; any other key is itself.
    pub fn section_key(module: &str) -> String {
        match module.strip_prefix("./sections/") {
            Some(path) => format!("site/sections/{path}"),
            None => module.to_string(),
        }
    }

    /// Whether `rt` refers to a registered key.
    pub fn contains(&self, rt: &str) -> bool {
        self.lookup(rt).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_modules_register_under_their_site_key() {
        let mut r = KeyRegistry::default();
        assert_eq!(
            r.register_section_module("./sections/Product/Shelf.tsx"),
            "site/sections/Product/Shelf.tsx"
        );
        assert_eq!(
            r.register_section_module("other/sections/X.tsx"),
            "other/sections/X.tsx"
        );
        assert!(r.contains("site/sections/Product/Shelf.tsx"));
        assert!(r.contains("other/sections/X.tsx"));
        assert!(!r.contains("./sections/Product/Shelf.tsx"));
    }

    #[test]
    fn exact_stripped_and_convention() {
        let mut r = KeyRegistry::by_convention(&["/sections/"]);
        r.register("vtex/loaders/list");
        assert_eq!(r.lookup("vtex/loaders/list.ts"), Some("vtex/loaders/list"));
        assert_eq!(r.lookup("vtex/loaders/list"), Some("vtex/loaders/list"));
        assert_eq!(
            r.lookup("site/sections/Hero.tsx"),
            Some("site/sections/Hero.tsx")
        );
        assert_eq!(r.lookup("site/loaders/other.ts"), None);
    }
}
