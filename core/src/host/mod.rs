//! Host callbacks: what the host answers during one resolution, on the calling thread.
//!
//! A binding implements [`Host`] over its own functions (JS functions, C callbacks, Rust
//! closures) and passes it into each call; nothing here is `Send` or `Sync`, and nothing is
//! kept after the call. Every callback may fail: a failed matcher counts as false and
//! `effects.errors` names the key and the message.

mod matcher_context;

pub use matcher_context::MatcherContext;

use crate::effects::ResolveErrorEvent;
use crate::value::Value;

/// The per-request feature-flag adapter of a flag bridge (spec: `isFeatureEnabled` /
/// `getFeatureFlagVariant`). Flags must already be loaded: both calls are synchronous.
pub trait FeatureFlagAdapter {
    /// Whether the flag `key` is on for this visitor.
    fn is_feature_enabled(&self, key: &str) -> Result<bool, String>;
    /// The variant of the multivariate flag `key` for this visitor, if any.
    fn feature_flag_variant(&self, key: &str) -> Result<Option<String>, String>;
}

/// The callbacks a host offers one resolution. Every method has a default: a host implements
/// only what it registered.
pub trait Host {
    /// Evaluates the custom matcher registered under `key` (`registerMatcher`) with its rule
    /// (merged with a saved matcher's settings when the rule references one).
    fn custom_matcher(
        &self,
        key: &str,
        rule: &Value,
        context: &MatcherContext<'_>,
    ) -> Result<bool, String> {
        let _ = (rule, context);
        Err(format!("the host has no custom matcher {key}"))
    }

    /// The feature-flag adapter of this request, when the host has one.
    fn feature_flags(&self) -> Option<&dyn FeatureFlagAdapter> {
        None
    }

    /// `onDanglingReference`: what a loader or action key nothing registered resolves to.
    /// `None` means the host has no hook: a warning is recorded and the value is `null`.
    fn on_dangling_reference(&self, resolve_type: &str) -> Option<Result<Value, String>> {
        let _ = resolve_type;
        None
    }

    /// `onResolveError`: told of every error as the resolution records it (they are also in
    /// `effects.errors`).
    fn on_resolve_error(&self, event: &ResolveErrorEvent) {
        let _ = event;
    }
}

/// A host with no callbacks: custom matchers fail, no feature flags, default dangling
/// references.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHost;

impl Host for NoHost {}
