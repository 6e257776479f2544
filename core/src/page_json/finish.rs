//! A page JSON job carried beside the resolution of its page until the host finishes it: the
//! state every binding keeps with a resolution, kept here once.

use super::job::{PageJsonJob, PageJsonResponse};
use crate::resolve::{ResolvedPage, ResolvedSection};

/// Where a resolution's page JSON job is.
#[derive(Debug, Default)]
pub enum PageJsonFinish {
    /// Not a page JSON resolution.
    #[default]
    None,
    /// Resolving: the job, and the sections whose module exports `renderJson = false`.
    Pending {
        /// The job.
        job: PageJsonJob,
        /// The dropped section keys.
        dropped: Vec<String>,
    },
    /// The page is resolved: the job can be finished with it.
    Resolved {
        /// The job.
        job: PageJsonJob,
        /// The dropped section keys.
        dropped: Vec<String>,
        /// The page the resolution returned.
        page: Box<ResolvedPage>,
    },
}

impl PageJsonFinish {
    /// A job waiting for its page; `dropped` are the sections whose module exports
    /// `renderJson = false`.
    pub fn pending(job: PageJsonJob, dropped: Vec<String>) -> PageJsonFinish {
        PageJsonFinish::Pending { job, dropped }
    }

    /// Keeps `page`, the page the resolution returned, when a job waits for it; a resolution
    /// that is not page JSON has nothing to keep it for.
    pub fn page_resolved(&mut self, page: Box<ResolvedPage>) {
        if let PageJsonFinish::Pending { job, dropped } = std::mem::take(self) {
            *self = PageJsonFinish::Resolved { job, dropped, page };
        }
    }

    /// The indexes of the resolved page's sections whose props the body writes (the sections
    /// whose section loaders, and `renderJson` projections, the host runs); `None` before the
    /// page is resolved, or when this is no page JSON resolution.
    pub fn written_sections(&self) -> Option<Vec<usize>> {
        match self {
            PageJsonFinish::Resolved { job, dropped, page } => {
                Some(job.written_sections(page, dropped))
            }
            _ => None,
        }
    }

    /// Finishes the job: the response, with `sections` (the page's sections after their
    /// section loaders ran; `None`: as resolved) in place of the resolved ones. `None`, and the
    /// state left as it was, before the page is resolved or when this is no page JSON
    /// resolution; after a finish the state is [`PageJsonFinish::None`].
    pub fn finish(&mut self, sections: Option<Vec<ResolvedSection>>) -> Option<PageJsonResponse> {
        match std::mem::take(self) {
            PageJsonFinish::Resolved {
                job,
                dropped,
                mut page,
            } => {
                if let Some(sections) = sections {
                    page.sections = sections;
                }
                Some(job.finish(&page, &dropped))
            }
            other => {
                *self = other;
                None
            }
        }
    }
}
