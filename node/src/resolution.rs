//! `NativeResolution`: one page resolution, driven one napi call per loader round.

use crate::admin::AdminResponseOutput;
use crate::error::{Code, JsResult, fail, guarded, thrown};
use crate::host::{HostCallbacks, JsHost};
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

/// JSON text (UTF-8) as a JS string, always one-byte (Latin-1), which V8 both copies as is and
/// parses faster than a two-byte string: every character past U+00FF is written as its JSON
/// escape (`\u2192`), which `JSON.parse` reads back as the same character. Only JSON may cross
/// this way: outside JSON's strings there is no character past U+007F to escape.
fn js_json<'env>(env: &'env Env, utf8: &[u8]) -> JsResult<JsString<'env>> {
    env.create_string_latin1(latin1_json(utf8))
        .map_err(|e| fail(ErrorCode::InvalidContent, e))
}

/// `utf8` (JSON text, UTF-8) as Latin-1 JSON text of the same value. One pass: runs of ASCII
/// are found eight bytes at a time and copied whole, each accented letter between them (a
/// two-byte sequence led by `0xC2` or `0xC3`) becomes its one byte, and any other character
/// becomes its `\uXXXX` escape (two for a character past U+FFFF; a malformed sequence, which a
/// serializer never writes, is U+FFFD).
fn latin1_json(utf8: &[u8]) -> Vec<u8> {
    let mut latin1 = Vec::with_capacity(utf8.len() + ESCAPES_ROOM);
    let mut rest = utf8;
    loop {
        let (ascii, after) = rest.split_at(ascii_run(rest));
        latin1.extend_from_slice(ascii);
        rest = match after {
            [] => return latin1,
            [lead @ (0xC2 | 0xC3), next, tail @ ..] => {
                latin1.push(((lead & 0x1F) << 6) | (next & 0x3F));
                tail
            }
            _ => {
                let (c, len) = first_char(after);
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write_escape(&mut latin1, *unit);
                }
                &after[len..]
            }
        };
    }
}

/// Room reserved for escapes beyond the text's length: pages hold a few (arrows, quotes).
const ESCAPES_ROOM: usize = 64;

/// The character `bytes` (not empty, not ASCII) starts with and its length in bytes; U+FFFD and
/// one byte when the sequence is malformed.
fn first_char(bytes: &[u8]) -> (char, usize) {
    let width = match bytes.first() {
        Some(0xC0..=0xDF) => 2,
        Some(0xE0..=0xEF) => 3,
        Some(0xF0..=0xF7) => 4,
        _ => 1,
    };
    bytes
        .get(..width)
        .and_then(|seq| std::str::from_utf8(seq).ok())
        .and_then(|s| s.chars().next())
        .map_or((char::REPLACEMENT_CHARACTER, 1), |c| (c, width))
}

/// Writes the JSON escape `\uXXXX` of one UTF-16 code unit.
fn write_escape(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    out.extend(
        (0..4)
            .rev()
            .map(|nibble| HEX[usize::from((unit >> (nibble * 4)) & 0xF)]),
    );
}

/// The length of the ASCII run `bytes` starts with.
fn ascii_run(bytes: &[u8]) -> usize {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let high = u64::from_le_bytes(eight) & HIGH_BITS;
        if high != 0 {
            return at + (high.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let tail = words.remainder();
    at + tail
        .iter()
        .position(|b| !b.is_ascii())
        .unwrap_or(tail.len())
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
