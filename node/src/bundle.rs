//! The content bundle `blocks.gen.json` as `sitefile bundle` writes it: the core's canonical
//! bundle (`sitefile_core::Snapshot::canonical_bytes` of the loaded snapshot) of a site's blocks
//! directory, for `npx sitefile generate`.

use crate::error::{Code, fail, guarded, thrown};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use sitefile_core::{ErrorCode, FastDeployBuild, PlatformConfig, Snapshot};
use std::path::Path;

/// A site's content bundle, not yet written.
#[napi(object)]
pub struct ContentBundle {
    /// Where `sitefile bundle` writes it: `blocks.gen.json` beside the blocks directory.
    pub out: String,
    /// The bundle's bytes, identical to `sitefile bundle`'s.
    pub bytes: Buffer,
    /// How many blocks it holds.
    pub blocks: u32,
    /// The content's revision.
    pub revision: String,
    /// The files skipped (invalid JSON, symbolic links, ...), one message each.
    pub problems: Vec<String>,
}

/// The content bundle of the site at `site_dir` (a site root holding `.platform/blocks/` or
/// `blocks/`, or a blocks directory): read, checked and serialised exactly as `sitefile bundle`
/// does; with `withoutContent` (Fast Deploy leaving the content out of the build), the bundle of
/// no blocks, written where the site's would be. Throws `NOT_FOUND` when there is no blocks
/// directory.
#[napi]
pub fn content_bundle(
    site_dir: String,
    without_content: Option<bool>,
) -> Result<ContentBundle, napi::Error<Code>> {
    guarded(|| {
        let Some(blocks) = sitefile_site_dir::blocks_dir(Path::new(&site_dir)) else {
            return Err(fail(
                ErrorCode::NotFound,
                format!("{site_dir}: no blocks directory"),
            ));
        };
        let (snapshot, problems) = if without_content == Some(true) {
            (Snapshot::empty(), Vec::new())
        } else {
            sitefile_site_dir::load_directory(&blocks).map_err(|e| thrown(&e))?
        };
        let out = blocks.parent().unwrap_or(&blocks).join("blocks.gen.json");
        Ok(ContentBundle {
            out: out.display().to_string(),
            bytes: Buffer::from(snapshot.canonical_bytes().to_vec()),
            blocks: u32::try_from(snapshot.len()).unwrap_or(u32::MAX),
            revision: snapshot.revision().to_string(),
            problems: problems.iter().map(ToString::to_string).collect(),
        })
    })
}

/// Whether a production build leaves the content bundle out of the server bundle, for the build
/// plugin option `fast_deploy` (`"true"`, `"false"` or `"auto"`) and the build's environment
/// `env` (JSON object of variables; `auto` follows `PLATFORM_SEEDED_DEPLOY`). A bad option or
/// variable is `INVALID_CONFIG` naming it.
#[napi]
pub fn fast_deploy_strips_content(
    fast_deploy: String,
    env: String,
) -> Result<bool, napi::Error<Code>> {
    guarded(|| {
        let vars: std::collections::HashMap<String, String> = serde_json::from_str(&env)
            .map_err(|e| fail(ErrorCode::InvalidJson, format!("invalid environment: {e}")))?;
        let option = fast_deploy
            .parse::<FastDeployBuild>()
            .map_err(|e| thrown(&e))?;
        let config = PlatformConfig::from_env(&vars).map_err(|e| thrown(&e))?;
        Ok(config.build_strips_content(option))
    })
}
