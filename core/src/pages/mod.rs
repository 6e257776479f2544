//! Page blocks and URL routing: which page block serves a path.

mod metadata;
mod recognition;
mod route_table;
mod specificity;

pub use metadata::{MetadataDefaults, PageMetadata, Robots};
pub use recognition::{PAGE_RESOLVE_TYPE, is_page_block, page_path};
pub use route_table::{PageMatch, Route, RouteTable};
pub use specificity::Specificity;
