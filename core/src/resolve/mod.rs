//! Resolution: turning a request into a page of resolved sections, as a sans-IO state machine.

mod caches;
mod config;
mod engine;
mod entry;
mod first_pass;
mod keys;
mod layout_cache;
mod loader_props;
mod node;
mod origins;
mod page;
mod page_cache;
mod registry;
mod resolution;
mod rules;
mod runtime;
mod section_props;
mod sections;
mod static_walk;
mod steps;

#[cfg(feature = "internals")]
pub use config::DEFAULT_MAX_DEPTH;
pub use config::ResolveConfig;
#[cfg(feature = "internals")]
pub use engine::{MAX_PAGE_NODES, MAX_RESOLVED_NESTING};
pub(crate) use keys::SECRET as SECRET_RESOLVE_TYPE;
#[cfg(feature = "internals")]
pub use keys::SKIP_RESOLVE_TYPES;
pub use keys::is_flag;
#[cfg(feature = "internals")]
pub use layout_cache::LAYOUT_TTL_SECONDS;
pub use layout_cache::LayoutCache;
pub use loader_props::{PAGE_PATH, PAGE_URL};
pub use node::CallId;
#[cfg(feature = "internals")]
pub use origins::relativize;
/// The wire shapes of a page and a section, for the TypeScript declarations (`crate::ts_types`).
#[cfg(feature = "ts")]
pub(crate) use page::{PageJson, SectionJson};
pub use page::{ResolvedPage, ResolvedSection};
pub use registry::KeyRegistry;
#[cfg(feature = "internals")]
pub use resolution::RequestOptions;
#[cfg(not(feature = "internals"))]
pub(crate) use resolution::RequestOptions;
pub use resolution::{Resolution, ResolutionMisuse};
pub use runtime::Runtime;
pub(crate) use sections::{EveryVariant, RawSection, globals, sections_list};
pub(crate) use static_walk::{StaticDepth, non_object_sections};
pub use steps::{LoaderAnswer, LoaderCall, Step};
