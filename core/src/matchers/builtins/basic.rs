//! `device.ts` (and `$live/matchers/MatchDevice.ts`) and `environment.ts`.

use super::{Inputs, RuleFields};
use crate::device::Device;

/// True when the user agent is one of the checked devices; with none checked, always.
pub(super) fn device(rule: &dyn RuleFields, inputs: &mut Inputs) -> bool {
    let (mobile, tablet, desktop) = (
        rule.truthy("mobile"),
        rule.truthy("tablet"),
        rule.truthy("desktop"),
    );
    if !mobile && !tablet && !desktop {
        return true;
    }
    inputs.effects.vary("device");
    match inputs.request.device() {
        Device::Mobile => mobile,
        Device::Tablet => tablet,
        Device::Desktop => desktop,
    }
}

/// `production` iff the host runs with `NODE_ENV=production`; `development` otherwise (unset and
/// `test` count as development); no setting → true; anything else → false.
pub(super) fn environment(rule: &dyn RuleFields, production: bool) -> bool {
    match rule.text("environment") {
        None => true,
        Some("production") => production,
        Some("development") => !production,
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::matchers::builtins::Builtin;
    use crate::matchers::test_support::{IPAD, IPHONE, MAC, builtin, request};

    #[test]
    fn device_classes() {
        let cases = [
            (r#"{"mobile":true}"#, IPHONE, true),
            (r#"{"mobile":true}"#, IPAD, false),
            (r#"{"tablet":true}"#, IPAD, true),
            (r#"{"tablet":true}"#, IPHONE, false),
            (r#"{"desktop":true}"#, MAC, true),
            (r#"{"desktop":true}"#, "", true),
            (r#"{"mobile":true,"desktop":true}"#, MAC, true),
            (r#"{"mobile":true,"tablet":false}"#, IPAD, false),
            (r#"{"mobile":1}"#, IPHONE, true),
            (r#"{"tablet":"yes"}"#, IPAD, true),
        ];
        for (rule, ua, want) in cases {
            let req = request("/").with_header("user-agent", ua);
            let (got, effects) = builtin(Builtin::Device, rule, &req);
            assert_eq!(got, want, "{rule} on {ua:?}");
            assert_eq!(effects.varies, vec!["device"]);
        }
        let mac = request("/").with_header("user-agent", MAC);
        assert!(
            builtin(Builtin::Device, r#"{"mobile":0}"#, &mac).0,
            "falsy flags"
        );
    }

    #[test]
    fn device_without_flags_matches_everyone_and_varies_on_nothing() {
        let (got, effects) = builtin(
            Builtin::Device,
            r#"{"mobile":false}"#,
            &request("/").with_header("user-agent", IPHONE),
        );
        assert!(got);
        assert!(effects.varies.is_empty());
    }

    #[test]
    fn environment_follows_node_env() {
        use super::environment;
        use crate::value::Value;
        let rule = |s: &str| Value::from_json_str(s).unwrap();
        let check = |s: &str, prod: bool| environment(rule(s).as_object().unwrap(), prod);
        assert!(check(r#"{"environment":"production"}"#, true));
        assert!(!check(r#"{"environment":"production"}"#, false));
        assert!(check(r#"{"environment":"development"}"#, false));
        assert!(!check(r#"{"environment":"development"}"#, true));
        assert!(check(r#"{}"#, true));
        assert!(check(r#"{"environment":""}"#, false));
        assert!(!check(r#"{"environment":"staging"}"#, false));
        assert!(!check(r#"{"environment":"Production"}"#, true));
    }
}
