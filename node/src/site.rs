//! `NativeSite`: one site — its content, setup, reloads and the resolutions started from it.

use crate::admin::{AdminRequestInput, NativeAdminOutcome, flat_headers, header_pairs};
use crate::error::{Code, JsResult, fail, guarded, thrown};
use crate::resolution::{NativeResolution, State};
use chrono::{DateTime, Utc};
use napi_derive::napi;
use sitefile_core::admin::{self, AdminRequest, AdminSite, RenderShell, Schema};
use sitefile_core::resolve::KeyRegistry;
use sitefile_core::{ErrorCode, RequestForm, Site, SiteSetup};
use std::path::Path;
use std::sync::Arc;

fn instant(ms: f64) -> JsResult<DateTime<Utc>> {
    if !ms.is_finite() {
        return Err(fail(
            ErrorCode::InvalidRequest,
            "the time is not a finite number",
        ));
    }
    DateTime::from_timestamp_millis(ms as i64).ok_or_else(|| {
        fail(
            ErrorCode::InvalidRequest,
            format!("the time {ms} is out of range"),
        )
    })
}

/// One site: its content, setup and the resolutions started from it.
#[napi]
pub struct NativeSite {
    site: Arc<Site>,
}

#[napi]
impl NativeSite {
    /// A site read from a site directory (`.platform/blocks/`, `blocks/`, a directory of block
    /// files, or `.platform/blocks.gen.json`), set up with `setup` (JSON). `overlay`, when
    /// given, is a content map (JSON) laid over the directory's blocks as a delta.
    #[napi(factory)]
    pub fn from_dir(
        dir: String,
        setup: String,
        overlay: Option<String>,
    ) -> Result<NativeSite, napi::Error<Code>> {
        guarded(|| {
            let loaded = sitefile_site_dir::load(Path::new(&dir)).map_err(|e| thrown(&e))?;
            let setup = SiteSetup::from_json(&setup).map_err(|e| thrown(&e))?;
            let site = Site::new(loaded.snapshot, setup).map_err(|e| thrown(&e))?;
            if let Some(blocks) = overlay {
                // The delta form of a reload is exactly "these blocks over the current ones".
                let body = format!("{{\"blocks\":{blocks}}}");
                site.reload(body.as_bytes(), DateTime::<Utc>::UNIX_EPOCH)
                    .map_err(|e| thrown(&e))?;
            }
            Ok(NativeSite {
                site: Arc::new(site),
            })
        })
    }

    /// A site serving a content map (a JSON object of blocks), set up with `setup` (JSON).
    #[napi(factory)]
    pub fn from_content(content: String, setup: String) -> Result<NativeSite, napi::Error<Code>> {
        guarded(|| {
            let snapshot = sitefile_core::content::load_bundle(content.into_bytes())
                .map_err(|e| thrown(&e))?;
            let setup = SiteSetup::from_json(&setup).map_err(|e| thrown(&e))?;
            let site = Site::new(snapshot, setup).map_err(|e| thrown(&e))?;
            Ok(NativeSite {
                site: Arc::new(site),
            })
        })
    }

    /// The content revision serving now.
    #[napi(getter)]
    pub fn revision(&self) -> String {
        self.site.revision()
    }

    /// Applies a reload body (delta or full, JSON text) at `nowMs` (milliseconds since the
    /// epoch); returns the reload response as JSON text. A refused body leaves the content
    /// serving.
    #[napi]
    pub fn reload(&self, body: String, now_ms: f64) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let now = instant(now_ms)?;
            let response = self
                .site
                .reload(body.as_bytes(), now)
                .map_err(|e| thrown(&e))?;
            serde_json::to_string(&response).map_err(|e| fail(ErrorCode::InvalidContent, e))
        })
    }

    /// Starts resolving the page for a request (JSON: `{url, method?, headers?: [[name,
    /// value]...], cookies?: [[name, value]...], now?: RFC 3339, seed?}`, the core's `RequestForm`); the first
    /// `NativeResolution.advance` runs the synchronous pass. A bad request throws
    /// `INVALID_REQUEST` here.
    #[napi]
    pub fn resolve(&self, request: String) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let request = RequestForm::from_json(&request)
                .and_then(RequestForm::into_request)
                .map_err(|e| thrown(&e))?;
            let site = self.site.clone();
            Ok(NativeResolution {
                state: State::Ready(Box::new(move |host| Ok(site.resolve_page(request, host)))),
            })
        })
    }

    /// Hands an admin request to the core at `nowMs` (the time a reload records): the outcome is
    /// a response or the host work it needs.
    #[napi]
    pub fn handle_admin(
        &self,
        request: AdminRequestInput,
        now_ms: f64,
    ) -> Result<NativeAdminOutcome, napi::Error<Code>> {
        guarded(|| {
            NativeAdminOutcome::new(self.site.clone(), request.into_request()?, instant(now_ms)?)
        })
    }

    /// Sets the schema `/live/_meta` serves (JSON text of the generated meta document).
    #[napi]
    pub fn set_schema(&self, schema: String) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let schema = Schema::from_json(schema.as_bytes()).map_err(|e| thrown(&e))?;
            self.site.set_schema(schema);
            Ok(())
        })
    }

    /// Whether a schema is set.
    #[napi(getter)]
    pub fn has_schema(&self) -> bool {
        AdminSite::schema(self.site.as_ref()).is_some()
    }

    /// Sets the document previews are wrapped in (JSON: `{css?, fonts?, theme?, bodyClass?,
    /// lang?}`).
    #[napi]
    pub fn set_render_shell(&self, shell: String) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let shell: RenderShell = serde_json::from_str(&shell).map_err(|e| {
                fail(
                    ErrorCode::InvalidConfig,
                    format!("invalid render shell: {e}"),
                )
            })?;
            self.site.set_render_shell(shell);
            Ok(())
        })
    }

    /// How many body bytes an admin request to `path` may carry; a host stops reading past it.
    #[napi]
    pub fn body_limit(&self, path: String) -> f64 {
        self.site.admin_config().body_limit(&path) as f64
    }

    /// The registered section key a resolved section's `component` names, or `null`.
    #[napi]
    pub fn registered_section(&self, component: String) -> Option<String> {
        self.site.registered_section(&component).map(str::to_string)
    }
}

/// The CORS headers of an admin response to a request with these headers (alternating names
/// and values), alternating names and values.
#[napi]
pub fn cors_headers(headers: Vec<String>) -> Result<Vec<String>, napi::Error<Code>> {
    guarded(|| {
        let request = AdminRequest {
            headers: header_pairs(headers)?,
            ..AdminRequest::default()
        };
        Ok(flat_headers(&admin::cors_headers(&request)))
    })
}

/// The section key a `sections` module key registers under (`./sections/Hero.tsx` →
/// `site/sections/Hero.tsx`).
#[napi]
pub fn section_key(module: String) -> String {
    KeyRegistry::section_key(&module)
}
