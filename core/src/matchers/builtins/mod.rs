//! The built-in matchers (spec "Matcher rules"), always registered.
//!
//! The stateless ones live here and in the submodules; `random.ts`, `multi.ts` and `negate.ts`
//! need the evaluator (randomness, recursion) and are evaluated there.

mod basic;
mod location;
mod pathname;
mod request;
mod time;

use crate::effects::Effects;
use crate::request::Request;
use crate::value::{Object, Value};

/// The keys of the built-in matchers and of the legacy aliases.
pub mod keys {
    /// Always true.
    pub const ALWAYS: &str = "website/matchers/always.ts";
    /// Never true.
    pub const NEVER: &str = "website/matchers/never.ts";
    /// Device class of the user agent.
    pub const DEVICE: &str = "website/matchers/device.ts";
    /// A (sticky) random draw under `traffic`.
    pub const RANDOM: &str = "website/matchers/random.ts";
    /// Now strictly between `start` and `end`.
    pub const DATE: &str = "website/matchers/date.ts";
    /// Now between `start` and `end`, inclusive.
    pub const CRON: &str = "website/matchers/cron.ts";
    /// A cookie exists (and equals `value`).
    pub const COOKIE: &str = "website/matchers/cookie.ts";
    /// A query parameter exists (and equals `value`), or the classic `conditions`.
    pub const QUERY_STRING: &str = "website/matchers/queryString.ts";
    /// The request path fits.
    pub const PATHNAME: &str = "website/matchers/pathname.ts";
    /// The request host equals `host`.
    pub const HOST: &str = "website/matchers/host.ts";
    /// The user agent contains `includes` and matches `match`.
    pub const USER_AGENT: &str = "website/matchers/userAgent.ts";
    /// The visitor's location is included and not excluded.
    pub const LOCATION: &str = "website/matchers/location.ts";
    /// `NODE_ENV` is `production` or not.
    pub const ENVIRONMENT: &str = "website/matchers/environment.ts";
    /// All (`and`) or any (`or`) inner rules match.
    pub const MULTI: &str = "website/matchers/multi.ts";
    /// The inner rule does not match.
    pub const NEGATE: &str = "website/matchers/negate.ts";
    /// Legacy alias of [`ALWAYS`].
    pub const LIVE_ALWAYS: &str = "$live/matchers/MatchAlways.ts";
    /// Legacy alias of [`DEVICE`].
    pub const LIVE_DEVICE: &str = "$live/matchers/MatchDevice.ts";
    /// Legacy alias of [`DATE`].
    pub const LIVE_DATE: &str = "$live/matchers/MatchDate.ts";
}

/// One built-in matcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Always,
    Never,
    Device,
    Random,
    Date,
    Cron,
    Cookie,
    QueryString,
    Pathname,
    Host,
    UserAgent,
    Location,
    Environment,
    Multi,
    Negate,
}

/// Every key registered by default, with the matcher it names.
pub(crate) const BUILTINS: [(&str, Builtin); 18] = [
    (keys::ALWAYS, Builtin::Always),
    (keys::NEVER, Builtin::Never),
    (keys::DEVICE, Builtin::Device),
    (keys::RANDOM, Builtin::Random),
    (keys::DATE, Builtin::Date),
    (keys::CRON, Builtin::Cron),
    (keys::COOKIE, Builtin::Cookie),
    (keys::QUERY_STRING, Builtin::QueryString),
    (keys::PATHNAME, Builtin::Pathname),
    (keys::HOST, Builtin::Host),
    (keys::USER_AGENT, Builtin::UserAgent),
    (keys::LOCATION, Builtin::Location),
    (keys::ENVIRONMENT, Builtin::Environment),
    (keys::MULTI, Builtin::Multi),
    (keys::NEGATE, Builtin::Negate),
    (keys::LIVE_ALWAYS, Builtin::Always),
    (keys::LIVE_DEVICE, Builtin::Device),
    (keys::LIVE_DATE, Builtin::Date),
];

/// The settings of a rule as a matcher reads them (a saved matcher's fields merged with the
/// referencing rule's).
pub(crate) trait RuleFields {
    /// The raw value of a setting.
    fn field(&self, key: &str) -> Option<&Value>;

    /// A setting that is a non-empty string (a JavaScript-truthy string).
    fn text(&self, key: &str) -> Option<&str> {
        self.field(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Whether a setting is JavaScript-truthy.
    fn truthy(&self, key: &str) -> bool {
        self.field(key).is_some_and(Value::is_truthy)
    }
}

impl RuleFields for Object {
    fn field(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }
}

/// What a stateless built-in may read and record.
pub(crate) struct Inputs<'e> {
    pub request: &'e Request,
    pub effects: &'e mut Effects,
    pub production: bool,
}

/// Evaluates a stateless built-in; `None` for the ones the evaluator handles itself.
pub(crate) fn evaluate(
    builtin: Builtin,
    rule: &dyn RuleFields,
    inputs: &mut Inputs,
) -> Option<bool> {
    Some(match builtin {
        Builtin::Always => true,
        Builtin::Never => false,
        Builtin::Device => basic::device(rule, inputs),
        Builtin::Environment => basic::environment(rule, inputs.production),
        Builtin::Date => time::date(rule, inputs),
        Builtin::Cron => time::cron(rule, inputs),
        Builtin::Cookie => request::cookie(rule, inputs),
        Builtin::QueryString => request::query_string(rule, inputs),
        Builtin::Host => request::host(rule, inputs),
        Builtin::UserAgent => request::user_agent(rule, inputs),
        Builtin::Pathname => {
            inputs.effects.vary("path");
            pathname::pathname(rule, inputs.request.path())
        }
        Builtin::Location => location::location(rule, inputs),
        Builtin::Random | Builtin::Multi | Builtin::Negate => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn fifteen_builtins_and_three_aliases() {
        let keys: HashSet<&str> = BUILTINS.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys.len(), 18);
        let kinds: HashSet<String> = BUILTINS.iter().map(|(_, b)| format!("{b:?}")).collect();
        assert_eq!(kinds.len(), 15);
    }
}
