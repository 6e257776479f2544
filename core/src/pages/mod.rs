//! Page blocks and URL routing: which page block serves a path.

mod metadata;
mod recognition;
mod route_table;
mod specificity;

#[cfg(feature = "internals")]
pub use metadata::Robots;
pub use metadata::{MetadataDefaults, PageMetadata};
pub use recognition::{
    NOT_FOUND_FIELD, PAGE_RESOLVE_TYPE, is_not_found_page, is_page_block, page_path,
};
#[cfg(feature = "internals")]
pub use route_table::PageMatch;
pub use route_table::{Route, RouteTable};
#[cfg(feature = "internals")]
pub use specificity::Specificity;
