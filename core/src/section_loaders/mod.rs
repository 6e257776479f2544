//! Section loaders (`runSectionLoaders`): after a page resolved and before it renders, each
//! section whose module exports a loader has its props replaced by what the loader returns,
//! then the nested sections in those props (`{"Component", "props"}`, directly or in lists)
//! have theirs run, one round per nesting level. The host runs the loaders; this module decides
//! which to call, with which props, and what their answers do to the page.

mod form;
mod layout_outputs;
mod run;

pub use form::sections_from_json;
pub(crate) use layout_outputs::LayoutOutputs;
#[cfg(feature = "internals")]
pub use run::{MAX_NESTING, SectionStep, SectionsDone};
pub use run::{SectionContext, SectionLoaderRun};
