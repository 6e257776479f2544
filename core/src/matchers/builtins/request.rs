//! Matchers on plain request fields: `cookie.ts`, `queryString.ts`, `host.ts`, `userAgent.ts`.

use super::{Inputs, RuleFields};
use crate::matchers::pattern;
use crate::value::Value;

/// The cookie `name` exists and, when `value` is set, equals it (cookies as parsed, decoded).
pub(super) fn cookie(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let Some(name) = rule.text("name") else {
        return false;
    };
    inputs.effects.vary("cookie");
    let Some(actual) = inputs.request.cookie(name) else {
        return false;
    };
    equals_setting(rule.field("value"), actual)
}

/// No `value` setting → true; a string → equality; anything else never equals a string.
fn equals_setting(setting: Option<&Value>, actual: &str) -> bool {
    match setting {
        None => true,
        Some(v) => v.as_str() == Some(actual),
    }
}

/// The flat shape `{key | param, value?}` (first occurrence of the parameter, decoded) or the
/// classic shape `{conditions: [{param, case: {type, value}}]}` where every condition must hold.
pub(super) fn query_string(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    if let Some(conditions) = rule
        .field("conditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
    {
        inputs.effects.vary("query");
        return conditions.iter().all(|c| classic_condition(c, inputs));
    }
    let key = match rule.field("key").filter(|v| !v.is_null()) {
        Some(key) => Some(key),
        None => rule.field("param"),
    };
    let Some(key) = key.and_then(Value::as_str).filter(|k| !k.is_empty()) else {
        return false;
    };
    inputs.effects.vary("query");
    match inputs.request.query(key) {
        Some(actual) => equals_setting(rule.field("value"), &actual),
        None => false,
    }
}

/// One classic condition: the parameter must be present; `Exists` then holds, the comparisons
/// hold when at least one of the parameter's values compares true against `value`.
fn classic_condition(condition: &Value, inputs: &Inputs) -> bool {
    let Some(param) = condition.get("param").and_then(Value::as_str) else {
        return false;
    };
    let case = condition.get("case");
    let kind = case.and_then(|c| c.get("type")).and_then(Value::as_str);
    let expected = case.and_then(|c| c.get("value")).and_then(Value::as_str);
    let compare: fn(&str, &str) -> bool = match kind {
        Some("Equals") => |a, b| a == b,
        Some("Includes") => |a, b| a.contains(b),
        Some("Greater") => |a, b| a > b,
        Some("GreaterOrEquals") => |a, b| a >= b,
        Some("Lesser") => |a, b| a < b,
        Some("LesserOrEquals") => |a, b| a <= b,
        Some("Exists") => |_, _| true,
        _ => return false,
    };
    let mut values = inputs
        .request
        .url()
        .query_pairs()
        .filter(|(k, _)| k == param)
        .map(|(_, v)| v)
        .peekable();
    if values.peek().is_none() {
        return false;
    }
    if kind == Some("Exists") {
        return true;
    }
    let Some(expected) = expected else {
        return false;
    };
    values.any(|v| compare(&v, expected))
}

/// The request host equals `host`, with or without its port; host names compare
/// case-insensitively.
pub(super) fn host(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let Some(wanted) = rule.text("host") else {
        return false;
    };
    inputs.effects.vary("host");
    let url = inputs.request.url();
    let Some(hostname) = url.host_str() else {
        return false;
    };
    if hostname.eq_ignore_ascii_case(wanted) {
        return true;
    }
    match url.port() {
        Some(port) => wanted
            .rsplit_once(':')
            .is_some_and(|(h, p)| h.eq_ignore_ascii_case(hostname) && p == port.to_string()),
        None => false,
    }
}

/// The user agent contains `includes` (case-sensitive) and matches the regular expression
/// `match` (case-insensitive); neither set → true.
pub(super) fn user_agent(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let includes = rule.text("includes");
    let matches = rule.text("match");
    if includes.is_none() && matches.is_none() {
        return true;
    }
    inputs.effects.vary("user-agent");
    let ua = inputs.request.user_agent();
    if includes.is_some_and(|i| !ua.contains(i)) {
        return false;
    }
    match matches {
        Some(p) => pattern::compile(p, true).is_some_and(|re| re.is_match(ua)),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use crate::matchers::builtins::Builtin;
    use crate::matchers::test_support::{builtin, request};

    fn check(kind: Builtin, rule: &str, req: &crate::request::Request) -> bool {
        builtin(kind, rule, req).0
    }

    #[test]
    fn cookie_presence_and_value() {
        let req = request("/")
            .with_header("cookie", "language=en; theme=dark%20blue")
            .with_cookie("empty", "");
        let c = Builtin::Cookie;
        assert!(check(c, r#"{"name":"language"}"#, &req));
        assert!(check(c, r#"{"name":"language","value":"en"}"#, &req));
        assert!(!check(c, r#"{"name":"language","value":"pt"}"#, &req));
        assert!(check(c, r#"{"name":"theme","value":"dark blue"}"#, &req));
        assert!(!check(c, r#"{"name":"missing"}"#, &req));
        assert!(!check(c, r#"{"name":""}"#, &req));
        assert!(!check(c, r#"{}"#, &req));
        assert!(check(c, r#"{"name":"empty"}"#, &req));
        assert!(check(c, r#"{"name":"empty","value":""}"#, &req));
        assert!(!check(c, r#"{"name":"language","value":null}"#, &req));
        assert!(!check(c, r#"{"name":"language","value":1}"#, &req));
        assert_eq!(builtin(c, r#"{"name":"x"}"#, &req).1.varies, vec!["cookie"]);
        assert!(builtin(c, r#"{}"#, &req).1.varies.is_empty());
    }

    #[test]
    fn query_string_flat_shape() {
        let req = request("/?utm=a&utm=b&q=red+shoes&e=");
        let q = Builtin::QueryString;
        assert!(check(q, r#"{"key":"utm"}"#, &req));
        assert!(check(q, r#"{"key":"utm","value":"a"}"#, &req));
        assert!(
            !check(q, r#"{"key":"utm","value":"b"}"#, &req),
            "first occurrence only"
        );
        assert!(check(q, r#"{"param":"q","value":"red shoes"}"#, &req));
        assert!(
            check(q, r#"{"key":"q","param":"nope"}"#, &req),
            "key wins over param"
        );
        assert!(check(q, r#"{"key":null,"param":"q"}"#, &req));
        assert!(!check(q, r#"{"key":"","param":"q"}"#, &req));
        assert!(check(q, r#"{"key":"e","value":""}"#, &req));
        assert!(!check(q, r#"{"key":"missing"}"#, &req));
        assert!(!check(q, r#"{}"#, &req));
        assert!(!check(q, r#"{"conditions":[]}"#, &req));
    }

    #[test]
    fn query_string_classic_conditions() {
        let req = request("/s?tag=15-OFF&tag=relogios&page=2&size=10");
        let q = Builtin::QueryString;
        let cond = |param: &str, kind: &str, value: &str| {
            format!(
                r#"{{"conditions":[{{"param":"{param}","case":{{"type":"{kind}","value":"{value}"}}}}]}}"#
            )
        };
        assert!(check(q, &cond("tag", "Includes", "OFF"), &req));
        assert!(
            check(q, &cond("tag", "Equals", "relogios"), &req),
            "any value"
        );
        assert!(!check(q, &cond("tag", "Equals", "OFF"), &req));
        assert!(check(q, &cond("page", "Greater", "1"), &req));
        assert!(!check(q, &cond("page", "Greater", "2"), &req));
        assert!(check(q, &cond("page", "GreaterOrEquals", "2"), &req));
        assert!(check(q, &cond("page", "Lesser", "3"), &req));
        assert!(!check(q, &cond("page", "Lesser", "2"), &req));
        assert!(check(q, &cond("page", "LesserOrEquals", "2"), &req));
        assert!(
            !check(q, &cond("size", "Greater", "9"), &req),
            "string comparison"
        );
        assert!(
            check(q, &cond("size", "Lesser", "9"), &req),
            "string comparison"
        );
        assert!(check(
            q,
            r#"{"conditions":[{"param":"page","case":{"type":"Exists"}}]}"#,
            &req
        ));
        assert!(!check(
            q,
            r#"{"conditions":[{"param":"nope","case":{"type":"Exists"}}]}"#,
            &req
        ));
        assert!(
            !check(q, &cond("nope", "Equals", ""), &req),
            "absent param fails"
        );
        assert!(
            !check(q, &cond("tag", "Matches", "x"), &req),
            "unknown type"
        );
        assert!(!check(
            q,
            r#"{"conditions":[{"param":"tag","case":{"type":"Equals"}}]}"#,
            &req
        ));
        assert!(!check(
            q,
            r#"{"conditions":[{"case":{"type":"Exists"}}]}"#,
            &req
        ));
        let both = r#"{"conditions":[
            {"param":"tag","case":{"type":"Includes","value":"OFF"}},
            {"param":"page","case":{"type":"Equals","value":"3"}}]}"#;
        assert!(!check(q, both, &req), "every condition must hold");
        let (_, e) = builtin(q, &cond("tag", "Exists", ""), &req);
        assert_eq!(e.varies, vec!["query"]);
    }

    #[test]
    fn host_with_and_without_port() {
        let h = Builtin::Host;
        let plain = request("https://shop.example/a");
        let port = request("https://shop.example:8443/a");
        let default_port = request("https://shop.example:443/a");
        assert!(check(h, r#"{"host":"shop.example"}"#, &plain));
        assert!(check(h, r#"{"host":"Shop.Example"}"#, &plain));
        assert!(!check(h, r#"{"host":"other.example"}"#, &plain));
        assert!(!check(h, r#"{"host":"shop.example:8443"}"#, &plain));
        assert!(check(h, r#"{"host":"shop.example"}"#, &port));
        assert!(check(h, r#"{"host":"shop.example:8443"}"#, &port));
        assert!(!check(h, r#"{"host":"shop.example:9000"}"#, &port));
        assert!(check(h, r#"{"host":"shop.example"}"#, &default_port));
        assert!(!check(h, r#"{"host":"shop.example:443"}"#, &default_port));
        assert!(!check(h, r#"{}"#, &plain));
        assert!(!check(h, r#"{"host":""}"#, &plain));
        assert_eq!(builtin(h, r#"{"host":"x"}"#, &plain).1.varies, vec!["host"]);
    }

    #[test]
    fn user_agent_includes_and_match() {
        let u = Builtin::UserAgent;
        let req = request("/").with_header("user-agent", "Mozilla/5.0 MyApp/2.1 (iPhone)");
        assert!(check(u, r#"{}"#, &req));
        assert!(check(u, r#"{"includes":"MyApp"}"#, &req));
        assert!(
            !check(u, r#"{"includes":"myapp"}"#, &req),
            "includes is case-sensitive"
        );
        assert!(
            check(u, r#"{"match":"myapp/\\d+"}"#, &req),
            "match is case-insensitive"
        );
        assert!(check(u, r#"{"includes":"MyApp","match":"iphone"}"#, &req));
        assert!(!check(u, r#"{"includes":"MyApp","match":"android"}"#, &req));
        assert!(!check(u, r#"{"match":"("}"#, &req), "invalid regex");
        assert!(!check(u, r#"{"match":"o{1,} *"}"#, &req), "ReDoS heuristic");
        let long = format!(r#"{{"match":"{}"}}"#, "a".repeat(501));
        assert!(!check(u, &long, &req), "longer than 500");
        let (_, e) = builtin(u, r#"{"includes":"x"}"#, &req);
        assert_eq!(e.varies, vec!["user-agent"]);
        assert!(builtin(u, r#"{}"#, &req).1.varies.is_empty());
    }
}
