//! What a resolution did besides producing JSON: cookies to set, warnings, errors and what the
//! page varies on. Effects leave the core as data; the host applies them.

use serde::Serialize;
use std::sync::Arc;

/// One `onResolveError` event: something failed while resolving, the page still renders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ResolveErrorEvent {
    /// The `__resolveType` (or block name) that failed.
    #[serde(rename = "resolveType")]
    pub resolve_type: String,
    /// Where it failed: `Commerce loader`, `Section resolution`, `cycle`, `depth`, ...
    pub context: String,
    /// A human-readable explanation.
    pub message: String,
}

/// A way content is lost when it is resolved: one definition that both the resolver's
/// `onResolveError` events and the problems of `sitefile check` are made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss<'a> {
    /// A page section stands for saved block `block`, which is `kind` (a string, a number, ...),
    /// not an object: the section is dropped.
    SectionNotObject {
        /// The saved block.
        block: &'a str,
        /// What it is (`Value::kind`).
        kind: &'static str,
    },
    /// `__resolveType` nested `levels` deep, past the depth limit `limit`: it resolves to
    /// `null`, with everything beneath it.
    TooDeep {
        /// The depth limit.
        limit: usize,
        /// How deep it nests.
        levels: usize,
        /// The saved block it was reached through, if any.
        through: Option<&'a str>,
    },
    /// Saved blocks reference each other in a loop (`A -> B -> A`): the reference that closes
    /// it resolves to `null`.
    Cycle {
        /// The blocks, first to last, the first one repeated at the end.
        chain: &'a str,
    },
}

impl Loss<'_> {
    /// The `onResolveError` context of the loss.
    pub fn context(&self) -> &'static str {
        match self {
            Loss::SectionNotObject { .. } => "Section resolution",
            Loss::TooDeep { .. } => "depth",
            Loss::Cycle { .. } => "cycle",
        }
    }

    /// The stable `sitefile check` problem kind of the loss.
    pub fn kind(&self) -> &'static str {
        match self {
            Loss::SectionNotObject { .. } => "sectionNotObject",
            Loss::TooDeep { .. } => "tooDeep",
            Loss::Cycle { .. } => "cycle",
        }
    }

    /// The message of the resolver's event, which names the `__resolveType` and not where it
    /// lies.
    pub fn message(&self) -> String {
        match self {
            Loss::SectionNotObject { block, kind } => {
                format!("{block:?} resolves to {kind}, not an object; the page section is dropped")
            }
            Loss::TooDeep { limit, through, .. } => match through {
                Some(block) => {
                    format!("nesting deeper than {limit} levels, reached through block {block:?}")
                }
                None => format!("nesting deeper than {limit} levels"),
            },
            Loss::Cycle { chain } => format!("cyclic reference: {chain}"),
        }
    }

    /// The message of `sitefile check`'s problem for the loss at `at` (a dotted path in a
    /// block); a cycle is between blocks, not at a place in one.
    pub fn message_at(&self, at: &str) -> String {
        match self {
            Loss::SectionNotObject { block, kind } => format!(
                "{at} uses block {block:?} as a section, but it is {kind}; the section is dropped"
            ),
            Loss::TooDeep {
                limit,
                levels,
                through,
            } => {
                let through = through
                    .map(|b| format!(" (through block {b:?})"))
                    .unwrap_or_default();
                format!(
                    "{at}{through} nests {levels} levels of __resolveType, more than the limit \
                     of {limit}; what lies deeper resolves to null"
                )
            }
            Loss::Cycle { .. } => self.message(),
        }
    }
}

/// Why a page was cut short: past a bound of the resolver, every value is `null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PageCut {
    /// Which bound: `size` (more values than the page may hold) or `depth` (nesting).
    #[cfg_attr(feature = "ts", ts(type = r#""size" | "depth""#))]
    pub reason: &'static str,
    /// The bound, in words.
    pub message: String,
}

/// Side effects of resolving one request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub errors: Vec<ResolveErrorEvent>,
    /// A loader failed, or the page was cut short: the edge must not store this response.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional = nullable, type = "true"))]
    pub degraded: bool,
    /// The page was cut short at a bound: what lies past it resolved to `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cut: Option<PageCut>,
    /// The instants at which every time rule read so far answers as it did (not written: it
    /// says how long the page holds, for the page cache).
    #[serde(skip)]
    pub steady: TimeWindow,
    /// Every multivariate flag decided, in the order resolved (not written: it explains the
    /// page, as `sitefile serve`'s page view does).
    #[serde(skip)]
    pub flags: Vec<FlagChoice>,
}

/// A multivariate flag the resolution decided: where it sits, the rules it tried and the variant
/// chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagChoice {
    /// The flag's place in the content as the resolution knows it: `<block>@<path>`, the path
    /// within the block where known (`pages-offers@`, `Header@alert`).
    pub at: String,
    /// How many variants the flag has.
    pub variants: usize,
    /// Each variant tried, in order up to the chosen one.
    pub tried: Vec<TriedRule>,
    /// The chosen variant's index; `None` when no rule matched (the flag resolves to nothing).
    pub chosen: Option<usize>,
}

/// One variant's rule, as a flag tried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriedRule {
    /// The variant's index.
    pub variant: usize,
    /// The rule's `__resolveType`; `None` for a variant without a rule, which always matches.
    pub rule: Option<Arc<str>>,
    /// What forces this rule in `x-platform-matchers-override`: a saved matcher's block name,
    /// else the inline rule's id (`<block>@<path>`).
    pub override_name: Option<String>,
}

/// A span of request instants, in epoch milliseconds: `from` inclusive, `until` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    /// The first instant in the span.
    pub from: i64,
    /// The first instant after it.
    pub until: i64,
}

impl Default for TimeWindow {
    /// Every instant.
    fn default() -> Self {
        TimeWindow {
            from: i64::MIN,
            until: i64::MAX,
        }
    }
}

impl TimeWindow {
    /// Narrows the span to the side of `threshold` that `now` is on: a rule comparing `now >=
    /// threshold` answers the same for every instant left in it.
    pub fn split_at(&mut self, threshold: i64, now: i64) {
        if now >= threshold {
            self.from = self.from.max(threshold);
        } else {
            self.until = self.until.min(threshold);
        }
    }

    /// Whether `now` lies in the span.
    pub fn holds(&self, now: i64) -> bool {
        self.from <= now && now < self.until
    }
}

impl Effects {
    /// Records that the page was cut short at a bound (`reason`: `size` or `depth`): an
    /// `onResolveError` event for `page`, the cut itself, and the page degraded (not stored).
    pub fn cut(&mut self, reason: &'static str, message: String) {
        self.error("page", reason, message.clone());
        self.degraded = true;
        self.cut = Some(PageCut { reason, message });
    }

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

    /// Records content lost at `resolve_type` as an `onResolveError` event.
    pub fn lose(&mut self, resolve_type: &str, loss: &Loss<'_>) {
        self.error(resolve_type, loss.context(), loss.message());
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
