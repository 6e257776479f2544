//! Resolution: turning a request into a page of resolved sections, as a sans-IO state machine.

mod config;
mod engine;
mod keys;
mod layout_cache;
mod loader_props;
mod node;
mod origins;
mod page;
mod page_cache;
mod registry;
mod resolution;
mod runtime;

pub use config::{DEFAULT_MAX_DEPTH, ResolveConfig};
pub use engine::{MAX_PAGE_NODES, MAX_RESOLVED_NESTING};
pub(crate) use engine::{StaticDepth, non_object_sections};
pub(crate) use keys::SECRET as SECRET_RESOLVE_TYPE;
pub use keys::{SKIP_RESOLVE_TYPES, is_flag};
pub use layout_cache::{LAYOUT_TTL_SECONDS, LayoutCache};
pub use loader_props::{PAGE_PATH, PAGE_URL};
pub use node::CallId;
pub use origins::relativize;
pub use page::{ResolvedPage, ResolvedSection};
pub use registry::KeyRegistry;
pub(crate) use resolution::{EveryVariant, RawSection, globals, sections_list};
pub use resolution::{
    LoaderAnswer, LoaderCall, RequestOptions, Resolution, ResolutionMisuse, Step,
};
pub use runtime::Runtime;
