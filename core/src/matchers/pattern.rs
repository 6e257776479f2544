//! Regular expressions written in content (`pathname.ts` `pattern`, `userAgent.ts` `match`).
//!
//! They run on every request, so compiled expressions are cached (bounded, keyed by pattern and
//! case sensitivity; an invalid or rejected pattern is cached as such). A pattern longer than
//! 500 UTF-16 code units, or one with two adjacent unbounded quantifiers (the reference's ReDoS
//! heuristic), is rejected even though this regex engine runs in linear time: the same content
//! must select the same variants everywhere.

use parking_lot::Mutex;
use regex::{Regex, RegexBuilder};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// Longest accepted pattern, in UTF-16 code units (JavaScript `length`).
const MAX_PATTERN_LENGTH: usize = 500;

/// Entries kept per case-sensitivity before the cache is cleared.
const CACHE_CAPACITY: usize = 1024;

/// Upper bound on the compiled program, so a pathological pattern cannot take much memory.
const COMPILED_SIZE_LIMIT: usize = 1 << 20;

/// Two adjacent unbounded quantifiers. A constant pattern:
/// `heuristic_rejects_nested_unbounded_quantifiers` proves it compiles; were it ever invalid,
/// every content pattern would be rejected (failing closed).
static REDOS_HEURISTIC: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(\+|\*|\{[^}]*,\})\s*(\+|\*|\{[^}]*,\})").ok());

type Cache = [HashMap<Box<str>, Option<Arc<Regex>>>; 2];

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(Default::default()));

/// Whether a pattern passes the length limit and the ReDoS heuristic.
fn is_safe(pattern: &str) -> bool {
    pattern.encode_utf16().count() <= MAX_PATTERN_LENGTH
        && REDOS_HEURISTIC
            .as_ref()
            .is_some_and(|heuristic| !heuristic.is_match(pattern))
}

/// The compiled pattern (unanchored), or `None` when it is unsafe or invalid.
pub(crate) fn compile(pattern: &str, case_insensitive: bool) -> Option<Arc<Regex>> {
    let slot = usize::from(case_insensitive);
    if let Some(hit) = CACHE.lock()[slot].get(pattern) {
        return hit.clone();
    }
    let compiled = is_safe(pattern)
        .then(|| {
            RegexBuilder::new(pattern)
                .case_insensitive(case_insensitive)
                .size_limit(COMPILED_SIZE_LIMIT)
                .build()
                .ok()
                .map(Arc::new)
        })
        .flatten();
    let mut cache = CACHE.lock();
    let map = &mut cache[slot];
    // Full: one entry makes room, so a site with more patterns than the cache holds still
    // keeps most of them compiled instead of starting over.
    if map.len() >= CACHE_CAPACITY
        && let Some(evicted) = map.keys().next().cloned()
    {
        map.remove(&evicted);
    }
    map.insert(pattern.into(), compiled.clone());
    compiled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heuristic_rejects_nested_unbounded_quantifiers() {
        for unsafe_pattern in ["a++", ".*+", "a{1,}+", "a+ +", "x{2,} *", "a*{3,}"] {
            assert!(!is_safe(unsafe_pattern), "{unsafe_pattern}");
        }
        // Only adjacent quantifiers are caught (the reference's exact heuristic); the regex
        // engine runs in linear time, so what slips through is still safe to run.
        for safe in ["^/p/\\d+$", "(a|b)+", "a{2}+", "iphone|ipad", "(a+)+"] {
            assert!(is_safe(safe), "{safe}");
        }
        assert!(is_safe(&"a".repeat(500)));
        assert!(!is_safe(&"a".repeat(501)));
        assert!(!is_safe(&"é".repeat(501)), "UTF-16 length");
    }

    #[test]
    fn compiles_once_and_remembers_failures() {
        let a = compile("^/cached/[0-9]+$", false).unwrap();
        let b = compile("^/cached/[0-9]+$", false).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(a.is_match("/cached/12"));
        assert!(compile("(unclosed", false).is_none());
        assert!(compile("(unclosed", false).is_none());
        assert!(compile("CASE", true).unwrap().is_match("case"));
        assert!(!compile("CASE", false).unwrap().is_match("case"));
        assert!(
            compile("\\/p\\/", false).unwrap().is_match("/p/"),
            "JS-style escaped slash"
        );
    }

    #[test]
    fn cache_stays_bounded() {
        for i in 0..(CACHE_CAPACITY * 2 + 3) {
            assert!(compile(&format!("^bounded{i}$"), true).is_some());
        }
        assert!(CACHE.lock()[1].len() <= CACHE_CAPACITY);
    }
}
