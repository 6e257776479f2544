//! Matchers: the rules that choose a multivariate flag's variant for one request.
//!
//! A rule is an object whose `__resolveType` is a matcher key (one of the 15 built-ins, a legacy
//! `$live/matchers/*` alias, a custom matcher registered by the site, a feature-flag bridge) or
//! the name of a saved matcher block. [`Evaluator::variant_rule`] evaluates the rule of one flag
//! variant: forced values from `x-platform-matchers-override` first, then saved matcher
//! references (merged, followed recursively, cycle-safe), then the matcher itself. A `random.ts`
//! rule that is the variant's rule is sticky: the decision is kept in the `platform_segment`
//! cookie ([`Segment`]).
//!
//! Everything here is synchronous and pure: time, randomness, geo and the environment come from
//! the request and the evaluator; what an evaluation consulted is recorded in
//! [`Effects::vary`](crate::effects::Effects::vary) for the edge cache key.

mod builtins;
mod country_names;
mod evaluator;
mod experiments;
mod overrides;
mod pattern;
mod registry;
mod segment;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

#[cfg(feature = "internals")]
pub use builtins::keys;
pub use evaluator::Evaluator;
#[cfg(feature = "internals")]
pub use experiments::ExperimentVariant;
pub use experiments::{Experiment, ExperimentAssignment, ExperimentsConfig};
pub use overrides::{OVERRIDE_HEADER, Overrides};
pub use registry::MatcherRegistry;
#[cfg(feature = "internals")]
pub use registry::MatcherSchema;
#[cfg(feature = "internals")]
pub use segment::SEGMENT_COOKIE;
pub use segment::Segment;

use crate::value::Value;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// Looks blocks up by name (the content snapshot implements it).
pub trait BlockLookup {
    /// The block called `name`, if the content has one.
    fn block(&self, name: &str) -> Option<&Value>;
}

impl<K, S> BlockLookup for HashMap<K, Value, S>
where
    K: Borrow<str> + Hash + Eq,
    S: BuildHasher,
{
    fn block(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}
