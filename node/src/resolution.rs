//! `NativeResolution`: one page resolution, driven one napi call per loader round.

use crate::convert::js_json;
use crate::error::{Code, JsResult, fail, guarded, thrown};
use crate::host::{HostCallbacks, JsHost};
use crate::response::AdminResponseOutput;
use napi::bindgen_prelude::Either;
use napi::{Env, JsString};
use napi_derive::napi;
use sitefile_core::{
    ErrorCode, ExperimentsConfig, Host, LoaderAnswer, PageJsonFinish, Resolution, Step, Value,
    sections_from_json,
};

/// Starts a resolution with the first call's host callbacks.
pub(crate) type Start = Box<dyn FnOnce(&dyn Host) -> JsResult<Resolution>>;

/// Where a resolution is.
pub(crate) enum State {
    /// Not started: the first `advance` starts it and runs the synchronous pass.
    Ready(Start),
    Running(Box<Resolution>),
    /// Between states, or after a panic.
    Gone,
}

/// One page resolution, driven one call per loader round.
#[napi]
pub struct NativeResolution {
    pub(crate) state: State,
    /// The page JSON job it finishes (`NativePageJson.resolve`), if any.
    pub(crate) page_json: PageJsonFinish,
    /// The step already taken (JSON), which the first `advance` returns.
    taken: Option<Vec<u8>>,
}

/// What `NativeSite.resolvePage` answers: the finished page's step as JSON text, or, when
/// loaders must run, the resolution, whose first `advance(null, host)` returns its first step.
pub type FirstStep<'env> = Either<JsString<'env>, NativeResolution>;

impl NativeResolution {
    /// A resolution that `start` begins at the first `advance`.
    pub(crate) fn starting(start: Start) -> NativeResolution {
        NativeResolution {
            state: State::Ready(start),
            page_json: PageJsonFinish::None,
            taken: None,
        }
    }

    /// Takes the first step of `resolution` now: a finished page crosses as text and no
    /// resolution object is made (most pages: no loaders, or every loader answered from the
    /// loader cache).
    pub(crate) fn first_step<'env>(
        env: &'env Env,
        mut resolution: Resolution,
        host: &dyn Host,
    ) -> JsResult<FirstStep<'env>> {
        match resolution.next(host).map_err(|e| thrown(&e))? {
            step @ Step::Done(_) => js_json(env, &step.to_json_bytes()).map(Either::A),
            step @ Step::NeedLoaders(_) => Ok(Either::B(NativeResolution {
                state: State::Running(Box::new(resolution)),
                page_json: PageJsonFinish::None,
                taken: Some(step.to_json_bytes()),
            })),
        }
    }
}

#[napi]
impl NativeResolution {
    /// Provides the previous round's answers (JSON: `[{id, value} | {id, error}]`; `null` on
    /// the first call) and returns the next step as JSON text: `{"step": "needLoaders",
    /// "value": [calls]}` or `{"step": "done", "value": <page>}`. Custom matchers and the
    /// feature-flag adapter in `host` are called synchronously during the call.
    #[napi]
    pub fn advance<'env>(
        &mut self,
        env: &'env Env,
        answers: Option<String>,
        host: HostCallbacks,
    ) -> Result<JsString<'env>, napi::Error<Code>> {
        guarded(|| {
            if let Some(step) = self.taken.take() {
                if answers.is_some() {
                    self.taken = Some(step);
                    return Err(fail(
                        ErrorCode::InvalidRequest,
                        "answers given before the first step was read: advance(null) first",
                    ));
                }
                return js_json(env, &step);
            }
            let host = JsHost::new(&host);
            let mut resolution = match std::mem::replace(&mut self.state, State::Gone) {
                State::Ready(start) => Box::new(start(&host)?),
                State::Running(resolution) => resolution,
                State::Gone => {
                    return Err(fail(
                        ErrorCode::Finished,
                        "the resolution is finished: its page was already returned",
                    ));
                }
            };
            let provided = provide_answers(&mut resolution, answers.as_deref());
            let step = provided.and_then(|()| resolution.next(&host).map_err(|e| thrown(&e)));
            let step = match step {
                Ok(step) => step,
                Err(e) => {
                    self.state = State::Running(resolution);
                    return Err(e);
                }
            };
            let json = js_json(env, &step.to_json_bytes());
            match step {
                Step::NeedLoaders(_) => self.state = State::Running(resolution),
                Step::Done(page) => self.page_json.page_resolved(page),
            }
            json
        })
    }
}

#[napi]
impl NativeResolution {
    /// The visitor's arm of experiment `key` in `config` (JSON: `{"version", "experiments":
    /// [{key, variants: [{id, weight, payload}]}]}`), as JSON `{experimentKey, variantId,
    /// payload, isFresh}`, or `null` when the configuration has no such experiment. Sticky
    /// through the page's `platform_segment` cookie; asked by a loader of this resolution, before
    /// the page is returned.
    #[napi]
    pub fn assign_experiment(
        &mut self,
        config: String,
        key: String,
    ) -> Result<Option<String>, napi::Error<Code>> {
        guarded(|| {
            let State::Running(resolution) = &mut self.state else {
                return Err(fail(
                    ErrorCode::Finished,
                    "experiments are assigned while the page resolves, by its loaders",
                ));
            };
            let config = Value::from_json_str(&config).map_err(|e| thrown(&e))?;
            let config = ExperimentsConfig::from_value(&config);
            let Some(experiment) = config.experiment(&key) else {
                return Ok(None);
            };
            let assignment = resolution
                .assign_experiment(experiment)
                .map_err(|e| thrown(&e))?;
            assignment
                .map(|a| serde_json::to_string(&a).map_err(|e| fail(ErrorCode::InvalidContent, e)))
                .transpose()
        })
    }

    /// The indexes of the finished page's sections whose props the page JSON writes: the
    /// sections whose section loaders (and `renderJson` projection) the host runs.
    #[napi]
    pub fn page_json_sections(&self) -> Result<Vec<u32>, napi::Error<Code>> {
        guarded(|| match self.page_json.written_sections() {
            Some(written) => Ok(written
                .into_iter()
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect()),
            None => Err(fail(
                ErrorCode::InvalidRequest,
                "no page JSON sections: this is not a finished page-JSON resolution",
            )),
        })
    }

    /// The response of a page-JSON resolution (`NativePageJson.resolve`), once `advance`
    /// returned its page; `sections` (JSON, as the page has them) are the page's sections after
    /// their section loaders ran (`null`: as resolved).
    #[napi]
    pub fn page_json_response(
        &mut self,
        sections: Option<String>,
    ) -> Result<AdminResponseOutput, napi::Error<Code>> {
        guarded(|| {
            let sections = sections
                .map(|s| sections_from_json(&s).map_err(|e| thrown(&e)))
                .transpose()?;
            match self.page_json.finish(sections) {
                Some(response) => Ok(response.into()),
                None => Err(fail(
                    ErrorCode::InvalidRequest,
                    "no page JSON response: this is not a finished page-JSON resolution",
                )),
            }
        })
    }
}

fn provide_answers(resolution: &mut Resolution, answers: Option<&str>) -> JsResult<()> {
    let Some(answers) = answers else {
        return Ok(());
    };
    let answers: Vec<LoaderAnswer> = serde_json::from_str(answers).map_err(|e| {
        fail(
            ErrorCode::InvalidJson,
            format!("invalid loader answers: {e}"),
        )
    })?;
    for answer in answers {
        resolution
            .provide(answer.id, answer.into_result())
            .map_err(|e| thrown(&e))?;
    }
    Ok(())
}
