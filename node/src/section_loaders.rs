//! `NativeSectionLoaders`: the section loaders of a resolved page, driven one napi call per
//! round like a resolution.

use crate::convert::to_json;
use crate::error::{Code, fail, guarded, thrown};
use napi_derive::napi;
use sitefile_core::{ErrorCode, LoaderAnswer, SectionLoaderRun};

/// One run of section loaders.
#[napi]
pub struct NativeSectionLoaders {
    pub(crate) run: SectionLoaderRun,
}

#[napi]
impl NativeSectionLoaders {
    /// The third argument of every loader of this run, as JSON (`{"device": "mobile"}`).
    #[napi(getter)]
    pub fn context(&self) -> Result<String, napi::Error<Code>> {
        guarded(|| to_json(&self.run.context()))
    }

    /// Provides the previous round's answers (JSON `[{id, value} | {id, error}]`; `null` on the
    /// first call) and returns the next step as JSON: `{"step": "needLoaders", "value":
    /// [calls]}` (a call's `key` is the section key) or `{"step": "done", "value": {sections,
    /// effects}}`.
    #[napi]
    pub fn advance(&mut self, answers: Option<String>) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            if let Some(answers) = answers {
                let answers: Vec<LoaderAnswer> = serde_json::from_str(&answers).map_err(|e| {
                    fail(
                        ErrorCode::InvalidJson,
                        format!("invalid loader answers: {e}"),
                    )
                })?;
                for answer in answers {
                    self.run
                        .provide(answer.id, answer.into_result())
                        .map_err(|e| thrown(&e))?;
                }
            }
            let step = self.run.next().map_err(|e| thrown(&e))?;
            serde_json::to_string(&step).map_err(|e| fail(ErrorCode::InvalidContent, e))
        })
    }
}
