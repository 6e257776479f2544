//! Fast Deploy for a host whose key-value store is reached asynchronously (an edge worker's KV
//! namespace): the core's `Replica` decides what to read and what a read changes; the JS side
//! reads and writes the store.

use crate::convert::{instant, to_json};
use crate::error::{Code, guarded};
use napi::bindgen_prelude::{Buffer, Function};
use napi_derive::napi;
use sitefile_core::fast_deploy::{KvStep, KvSync, Replica};
use sitefile_core::{Site, Snapshot};
use std::sync::Arc;

/// The Fast Deploy hook over an optional JS function `(revision) => boolean`; without one the
/// reload is in memory only (`kvWritten: false`).
pub(crate) fn swap_hook<'f>(
    hook: Option<&'f Function<'f, String, bool>>,
) -> impl FnMut(&Arc<Snapshot>) -> Result<bool, String> + 'f {
    move |snapshot| match hook {
        Some(f) => f
            .call(snapshot.revision().to_string())
            .map_err(|e| e.reason.clone()),
        None => Ok(false),
    }
}

/// A site's standing with its deployment's snapshot in the key-value store
/// (`NativeSite.fastDeploy`).
#[napi]
pub struct NativeFastDeploy {
    pub(crate) site: Arc<Site>,
    pub(crate) replica: Arc<Replica>,
}

/// One key-value write of a reload, in order.
#[napi(object)]
pub struct KvWrite {
    /// The key.
    pub key: String,
    /// Its new value.
    pub value: Buffer,
}

impl From<(String, Vec<u8>)> for KvWrite {
    fn from((key, value): (String, Vec<u8>)) -> KvWrite {
        KvWrite {
            key,
            value: value.into(),
        }
    }
}

#[napi]
impl NativeFastDeploy {
    /// The deployment whose snapshot this site reads and writes.
    #[napi(getter)]
    pub fn deployment_id(&self) -> String {
        self.replica.id().to_string()
    }

    /// The pass over the store to run at `nowMs`, or `null` when none is due: the first reads
    /// the deployment's snapshot (a request waits for it), later ones its revision, at most
    /// every 10 seconds and one at a time (in the background).
    #[napi]
    pub fn due(&self, now_ms: f64) -> Result<Option<NativeKvSync>, napi::Error<Code>> {
        guarded(|| {
            Ok(self.replica.due(instant(now_ms)?).map(|sync| NativeKvSync {
                site: self.site.clone(),
                replica: self.replica.clone(),
                sync,
            }))
        })
    }
}

/// One pass over the store, a read at a time.
#[napi]
pub struct NativeKvSync {
    site: Arc<Site>,
    replica: Arc<Replica>,
    sync: KvSync,
}

#[napi]
impl NativeKvSync {
    /// The next step as JSON text: `{"step": "get", "key"}` (read it, then `answer`), or
    /// `{"step": "done", "synced": "unchanged" | "loaded" | "empty" | "failed", "revision"?,
    /// "message"?}` (`loaded`: the store's snapshot serves now; `failed`: the content serving
    /// keeps serving and reloads are refused until a pass reads the store).
    #[napi]
    pub fn next_step(&self) -> Result<String, napi::Error<Code>> {
        guarded(|| match self.sync.step(&self.replica) {
            KvStep::Get(key) => to_json(&serde_json::json!({"step": "get", "key": key})),
            KvStep::Done(synced) => {
                let mut done = serde_json::to_value(synced).unwrap_or_default();
                done["step"] = "done".into();
                to_json(&done)
            }
        })
    }

    /// Answers the read `nextStep` asked for: the key's value (`null` when it holds nothing),
    /// or, with `failure`, why the store could not be read.
    #[napi]
    pub fn answer(
        &mut self,
        value: Option<Buffer>,
        failure: Option<String>,
    ) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let read = match failure {
                Some(why) => Err(why),
                None => Ok(value.map(|v| v.to_vec())),
            };
            self.sync.answer(&self.replica, &self.site, read);
            Ok(())
        })
    }
}
