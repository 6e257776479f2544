//! `pathname.ts`: the request path (as received, not decoded, no query) fits the rule.

use super::RuleFields;
use crate::matchers::pattern;
use crate::value::Value;

/// The editor shape `case: {type, pathname}` (`Equals`, `Starts With`, `Not Includes`;
/// `Includes` and any other type mean includes), else `pattern` (regular expression),
/// `includes` and `excludes` (exact paths, or prefixes when they contain `*`). A rule with no
/// constraint at all is false.
pub(super) fn pathname(rule: &dyn RuleFields, path: &str) -> bool {
    let case = rule.field("case");
    if let Some(wanted) = case
        .and_then(|c| c.get("pathname"))
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
    {
        return match case.and_then(|c| c.get("type")).and_then(Value::as_str) {
            Some("Equals") => path == wanted,
            Some("Starts With") => path.starts_with(wanted),
            Some("Not Includes") => !path.contains(wanted),
            _ => path.contains(wanted),
        };
    }

    let pattern = rule.field("pattern").filter(|p| p.is_truthy());
    let includes = list(rule.field("includes"));
    let excludes = list(rule.field("excludes"));
    if pattern.is_none() && includes.is_empty() && excludes.is_empty() {
        return false;
    }
    if let Some(pattern) = pattern {
        let Some(re) = pattern.as_str().and_then(|p| pattern::compile(p, false)) else {
            return false;
        };
        if !re.is_match(path) {
            return false;
        }
    }
    if !includes.is_empty() && !includes.iter().any(|entry| fits(entry, path)) {
        return false;
    }
    !excludes.iter().any(|entry| fits(entry, path))
}

fn list(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).unwrap_or_default()
}

/// An `includes`/`excludes` entry: with a `*`, its text before the trailing `*`s is a prefix;
/// otherwise the path must equal it.
fn fits(entry: &Value, path: &str) -> bool {
    let Some(entry) = entry.as_str() else {
        return false;
    };
    if entry.contains('*') {
        path.starts_with(entry.trim_end_matches('*'))
    } else {
        path == entry
    }
}

#[cfg(test)]
mod tests {
    use super::pathname;
    use crate::value::Value;

    fn check(rule: &str, path: &str) -> bool {
        let rule = Value::from_json_str(rule).unwrap();
        pathname(rule.as_object().unwrap(), path)
    }

    #[test]
    fn case_shape() {
        let case = |t: &str, p: &str| format!(r#"{{"case":{{"type":"{t}","pathname":"{p}"}}}}"#);
        assert!(check(&case("Equals", "/allblack"), "/allblack"));
        assert!(!check(&case("Equals", "/allblack"), "/allblack/"));
        assert!(check(&case("Starts With", "/p/"), "/p/shoe"));
        assert!(!check(&case("Starts With", "/p/"), "/x/p/shoe"));
        assert!(check(&case("Includes", "sale"), "/big-sale/x"));
        assert!(!check(&case("Includes", "sale"), "/new"));
        assert!(check(&case("Not Includes", "sale"), "/new"));
        assert!(!check(&case("Not Includes", "sale"), "/sale"));
        assert!(
            check(&case("Template", "sale"), "/sale"),
            "unknown type → includes"
        );
        assert!(
            check(r#"{"case":{"pathname":"sale"}}"#, "/sale"),
            "missing type → includes"
        );
        assert!(
            !check(r#"{"case":{"type":"Equals","pathname":""}}"#, "/"),
            "no constraint"
        );
    }

    #[test]
    fn pattern_includes_excludes() {
        assert!(check(r#"{"pattern":"^/p/\\d+$"}"#, "/p/12"));
        assert!(!check(r#"{"pattern":"^/p/\\d+$"}"#, "/p/x"));
        assert!(
            check(r#"{"pattern":"shoe"}"#, "/category/shoes"),
            "unanchored"
        );
        assert!(!check(r#"{"pattern":"SHOE"}"#, "/shoes"), "case-sensitive");
        assert!(!check(r#"{"pattern":"["}"#, "/"), "invalid");
        assert!(!check(r#"{"pattern":"a{1,} *"}"#, "/aa"), "ReDoS heuristic");
        assert!(
            check(r#"{"pattern":"(a+)+$"}"#, "/aa"),
            "not adjacent: accepted"
        );
        assert!(!check(r#"{"pattern":7}"#, "/7"), "not a string");
        assert!(check(r#"{"includes":["/a","/b"]}"#, "/b"));
        assert!(!check(r#"{"includes":["/a","/b"]}"#, "/b/c"));
        assert!(check(r#"{"includes":["/b/*"]}"#, "/b/c"));
        assert!(check(r#"{"includes":["/b**"]}"#, "/bc"));
        assert!(!check(r#"{"includes":["/b/*"]}"#, "/b"));
        assert!(check(r#"{"excludes":["/checkout*"]}"#, "/home"));
        assert!(!check(r#"{"excludes":["/checkout*"]}"#, "/checkout/cart"));
        assert!(!check(
            r#"{"includes":["/*"],"excludes":["/admin"]}"#,
            "/admin"
        ));
        assert!(check(
            r#"{"includes":["/*"],"excludes":["/admin"]}"#,
            "/shop"
        ));
        assert!(!check(r#"{"pattern":"^/p","includes":["/x"]}"#, "/p"));
        assert!(!check(r#"{}"#, "/"), "no constraint");
        assert!(
            !check(r#"{"includes":[],"excludes":[]}"#, "/"),
            "no constraint"
        );
    }
}
