//! `NativeSite`: one site — its content, setup, reloads and the resolutions started from it.

use crate::admin::{AdminHeadOutput, AdminRequestInput, NativeAdminOutcome};
use crate::convert::{flat_headers, header_pairs, instant, parse, request_of};
use crate::draft::NativeDraft;
use crate::edge::NativeEdgePlan;
use crate::error::{Code, fail, guarded, thrown};
use crate::exchange::NativeEdgeExchange;
use crate::fast_deploy::{NativeFastDeploy, swap_hook};
use crate::host::{HostCallbacks, JsHost};
use crate::page_json::NativePageJson;
use crate::resolution::{FirstStep, NativeResolution};
use crate::section_loaders::NativeSectionLoaders;
use chrono::{DateTime, Utc};
use napi::Env;
use napi::bindgen_prelude::{Buffer, Function};
use napi_derive::napi;
use sitefile_core::fast_deploy::Replica;
use sitefile_core::{
    AdminRequest, AdminSite, DraftSource, EdgeHints, ErrorCode, KeyRegistry, MatcherSchema,
    RenderShellUpdate, Schema, Site, SiteSetup, Value, WorkerOptions, sections_from_json,
};
use std::path::Path;
use std::sync::Arc;

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
            let snapshot =
                sitefile_core::load_bundle(content.into_bytes()).map_err(|e| thrown(&e))?;
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
    /// epoch); returns the reload response as JSON text. `beforeSwap`, when given, is the Fast
    /// Deploy hook: called synchronously with the new revision before it serves, it answers
    /// `kvWritten`, and a throw refuses the reload (`HOOK_FAILED`). A refused body leaves the
    /// content serving.
    #[napi]
    pub fn reload(
        &self,
        body: String,
        now_ms: f64,
        before_swap: Option<Function<String, bool>>,
    ) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let now = instant(now_ms)?;
            let mut hook = swap_hook(before_swap.as_ref());
            let response = self
                .site
                .reload_with(body.as_bytes(), now, &mut hook)
                .map_err(|e| thrown(&e))?;
            serde_json::to_string(&response).map_err(|e| fail(ErrorCode::InvalidContent, e))
        })
    }

    /// Reads `dir` again as `fromDir` does, lays `overlay` (a content map, JSON; `null` deletes a
    /// block) over it, and serves the result as a full reload at `nowMs`; returns the reload
    /// response as JSON text. What development's watching of the blocks directory calls. A
    /// directory that cannot be read, a file in it that is not JSON, or content that cannot be
    /// served, leaves the content serving.
    #[napi]
    pub fn reload_from_dir(
        &self,
        dir: String,
        overlay: Option<String>,
        now_ms: f64,
    ) -> Result<String, napi::Error<Code>> {
        guarded(|| {
            let now = instant(now_ms)?;
            let loaded = sitefile_site_dir::load(Path::new(&dir)).map_err(|e| thrown(&e))?;
            // A file that does not read (an editor's save half-way) would drop its block: the
            // content before it keeps serving instead.
            if !loaded.problems.is_empty() {
                let problems: Vec<String> = loaded.problems.iter().map(|p| p.to_string()).collect();
                return Err(fail(ErrorCode::InvalidJson, problems.join("; ")));
            }
            let bad = |e: serde_json::Error| fail(ErrorCode::InvalidContent, e);
            let mut content: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(&loaded.snapshot.canonical_bytes()).map_err(bad)?;
            if let Some(overlay) = overlay {
                let overlay: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(&overlay).map_err(bad)?;
                for (name, block) in overlay {
                    match block {
                        serde_json::Value::Null => content.remove(&name),
                        block => content.insert(name, block),
                    };
                }
            }
            let body = serde_json::to_vec(&content).map_err(bad)?;
            let response = self.site.reload(&body, now).map_err(|e| thrown(&e))?;
            serde_json::to_string(&response).map_err(|e| fail(ErrorCode::InvalidContent, e))
        })
    }

    /// The whole content as JSON text (a JSON object of blocks, what `GET /.sitefile` serves),
    /// as a Buffer of its UTF-8 bytes.
    #[napi]
    pub fn content(&self) -> Buffer {
        Buffer::from(self.site.snapshot().canonical_bytes().to_vec())
    }

    /// How many blocks the content has.
    #[napi(getter)]
    pub fn block_count(&self) -> u32 {
        u32::try_from(self.site.snapshot().len()).unwrap_or(u32::MAX)
    }

    /// One block of the content as JSON text, or `null` when there is none by that name.
    #[napi]
    pub fn block(&self, name: String) -> Option<String> {
        self.site.snapshot().block(&name).map(Value::to_json_string)
    }

    /// Starts resolving the page for a request (JSON: `{url, method?, headers?: [[name,
    /// value]...], cookies?: [[name, value]...], now?: RFC 3339, seed?}`, the core's `RequestForm`); the first
    /// `NativeResolution.advance` runs the synchronous pass. A bad request throws
    /// `INVALID_REQUEST` here.
    #[napi]
    pub fn resolve(&self, request: String) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let site = self.site.clone();
            Ok(NativeResolution::starting(Box::new(move |host| {
                Ok(site.resolve_page(request, host))
            })))
        })
    }

    /// Resolves the page for a request (as `resolve`) and takes its first step with `host`'s
    /// callbacks: the finished page's step as JSON text (`{"step": "done", ...}`), or the
    /// resolution when loaders must run (its first `advance(null, host)` returns the step).
    #[napi(ts_return_type = "string | NativeResolution")]
    pub fn resolve_page<'env>(
        &self,
        env: &'env Env,
        request: String,
        host: HostCallbacks,
    ) -> Result<FirstStep<'env>, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let host = JsHost::new(&host);
            NativeResolution::first_step(env, self.site.resolve_page(request, &host), &host)
        })
    }

    /// Starts resolving the site's not-found page (`"notFound": true`) for a request, whatever
    /// its path: what an app's own not-found screen renders. `page: null` when there is none.
    #[napi]
    pub fn resolve_not_found(
        &self,
        request: String,
    ) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let site = self.site.clone();
            Ok(NativeResolution::starting(Box::new(move |host| {
                Ok(site.resolve_not_found_page(request, host))
            })))
        })
    }

    /// Starts resolving one value (JSON: a saved block `{"__resolveType": "<name>"}`, a section
    /// or props) for a request, like a page.
    #[napi]
    pub fn resolve_value(
        &self,
        request: String,
        value: String,
    ) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let value = Value::from_json_str(&value).map_err(|e| thrown(&e))?;
            let site = self.site.clone();
            Ok(NativeResolution::starting(Box::new(move |host| {
                Ok(site.resolve_value(request, &value, host))
            })))
        })
    }

    /// Starts resolving the page for a request with draft blocks (JSON object; `null` deletes a
    /// block) laid over the content: never cached, seen by this resolution only.
    #[napi]
    pub fn resolve_in_draft(
        &self,
        request: String,
        draft: String,
    ) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let draft = Value::from_json_str(&draft).map_err(|e| thrown(&e))?;
            let Some(blocks) = draft.as_object().map(|o| o.entries().to_vec()) else {
                return Err(fail(
                    ErrorCode::InvalidContent,
                    "the draft is not a JSON object of blocks",
                ));
            };
            let site = self.site.clone();
            Ok(NativeResolution::starting(Box::new(move |host| {
                Ok(site.resolve_page_in_draft(request, &blocks, host))
            })))
        })
    }

    /// What rendering the draft of a page request (`RequestForm` JSON) needs (core
    /// `Site::page_draft`); `trustForwardedHeader`: the draft middleware stripped any client
    /// copy of `x-platform-draft` and forwarded the pointer in it.
    #[napi]
    pub fn page_draft(
        &self,
        request: String,
        trust_forwarded_header: bool,
    ) -> Result<NativeDraft, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            Ok(NativeDraft {
                site: self.site.clone(),
                source: self.site.page_draft(&request, trust_forwarded_header),
            })
        })
    }

    /// Starts resolving the page for a request over `draft` when it is at hand (never cached,
    /// seen by this resolution only), else over the published content.
    #[napi]
    pub fn resolve_with_draft(
        &self,
        request: String,
        draft: &NativeDraft,
    ) -> Result<NativeResolution, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let site = self.site.clone();
            let draft = match &draft.source {
                DraftSource::Ready(draft) => Some(draft.clone()),
                _ => None,
            };
            Ok(NativeResolution::starting(Box::new(move |host| {
                Ok(match draft {
                    Some(draft) => site.resolve_page_in_draft(request, draft.blocks(), host),
                    None => site.resolve_page(request, host),
                })
            })))
        })
    }

    /// The edge plan for a request (`RequestForm` JSON) with the site's own functions' answers
    /// (JSON `{segment?, profile?, nonce?: [16 bytes]}`); an unknown profile is `INVALID_CONFIG`.
    #[napi]
    pub fn edge_plan(
        &self,
        request: String,
        hints: Option<String>,
    ) -> Result<NativeEdgePlan, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let hints: EdgeHints = match hints {
                Some(h) => parse("edge hints", &h)?,
                None => EdgeHints::default(),
            };
            let plan = self
                .site
                .edge_plan_with(&request, &hints)
                .map_err(|e| thrown(&e))?;
            Ok(NativeEdgePlan {
                site: self.site.clone(),
                plan,
            })
        })
    }

    /// The edge exchange of a request (`RequestForm` JSON) with the site's own functions'
    /// answers (as for `edgePlan`); `cache`: the host has a store. An unknown profile is
    /// `INVALID_CONFIG`.
    #[napi]
    pub fn edge_exchange(
        &self,
        request: String,
        hints: Option<String>,
        cache: bool,
    ) -> Result<NativeEdgeExchange, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let hints: EdgeHints = match hints {
                Some(h) => parse("edge hints", &h)?,
                None => EdgeHints::default(),
            };
            let exchange = self
                .site
                .edge_exchange(&request, &hints, cache)
                .map_err(|e| thrown(&e))?;
            Ok(NativeEdgeExchange { exchange })
        })
    }

    /// Whether a request (`RequestForm` JSON) is page JSON (`?renderJson`, `?asJson`) and what
    /// to do; `null` when it is not (then plan it for the edge). Ask after admin routes.
    #[napi]
    pub fn page_json(&self, request: String) -> Result<Option<NativePageJson>, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            Ok(self.site.page_json(&request).map(|outcome| NativePageJson {
                site: self.site.clone(),
                request,
                outcome: Some(outcome),
            }))
        })
    }

    /// Starts the section loaders of a resolved page's sections (JSON, as the page has them)
    /// for a request (`RequestForm` JSON); `withLoaders` are the section keys whose module
    /// exports a loader.
    #[napi]
    pub fn run_section_loaders(
        &self,
        request: String,
        sections: String,
        with_loaders: Vec<String>,
    ) -> Result<NativeSectionLoaders, napi::Error<Code>> {
        guarded(|| {
            let request = request_of(&request)?;
            let sections = sections_from_json(&sections).map_err(|e| thrown(&e))?;
            let run = self.site.run_section_loaders(
                &request,
                sections,
                with_loaders.into_iter().collect(),
            );
            Ok(NativeSectionLoaders { run })
        })
    }

    /// The User-Agent to add to outgoing fetches that carry none (`outboundUserAgent`), for a
    /// site served at `siteUrl`; `null` when the option is `false`.
    #[napi]
    pub fn outbound_user_agent(&self, site_url: Option<String>) -> Option<String> {
        self.site.outbound_user_agent(site_url.as_deref())
    }

    /// Purges a target (`/path` or `/path?query`) from the edge: the stored keys to delete.
    #[napi]
    pub fn purge(&self, target: String) -> Vec<String> {
        self.site.purge(&target)
    }

    /// Empties the loader cache.
    #[napi]
    pub fn purge_loaders(&self) {
        self.site.purge_loaders();
    }

    /// Entries in the loader cache.
    #[napi(getter)]
    pub fn loader_cache_entries(&self) -> u32 {
        u32::try_from(self.site.runtime().loader_cache().stats().entries).unwrap_or(u32::MAX)
    }

    /// Origin requests leading a flight of collapsed misses now (see `edgeExchange`).
    #[napi(getter)]
    pub fn edge_flights_in_air(&self) -> u32 {
        u32::try_from(self.site.edge_flights_in_air()).unwrap_or(u32::MAX)
    }

    /// Stored edge keys a purge can reach.
    #[napi(getter)]
    pub fn edge_cache_entries(&self) -> u32 {
        u32::try_from(self.site.purge_index().len()).unwrap_or(u32::MAX)
    }

    /// Fast Deploy for this site, when its environment turns it on (`PLATFORM_FAST_DEPLOY`, and
    /// `PLATFORM_DEPLOYMENT_ID` or `BUILD_HASH` naming the deployment) and `storeBound`: the host
    /// has its `PLATFORM_KV` store (an edge worker's KV namespace binding). `null` otherwise.
    #[napi]
    pub fn fast_deploy(&self, store_bound: bool) -> Option<NativeFastDeploy> {
        let id = self.site.platform().fast_deploy_id(store_bound)?;
        Some(NativeFastDeploy {
            site: self.site.clone(),
            replica: Arc::new(Replica::new(id)),
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
            let (request, now) = (request.into_request()?, instant(now_ms)?);
            let outcome = self.site.handle_admin(&request, now);
            NativeAdminOutcome::new(self.site.clone(), request, now, outcome)
        })
    }

    /// An admin request as the worker entry serves it: without the `admin` worker option only
    /// the purge routes are answered (`kind` `pass` otherwise).
    #[napi]
    pub fn handle_edge_admin(
        &self,
        request: AdminRequestInput,
        now_ms: f64,
    ) -> Result<NativeAdminOutcome, napi::Error<Code>> {
        guarded(|| {
            let (request, now) = (request.into_request()?, instant(now_ms)?);
            let outcome = self.site.handle_edge_admin(&request, now);
            NativeAdminOutcome::new(self.site.clone(), request, now, outcome)
        })
    }

    /// What the head of an admin request decides before its body is read (a `body` given is not
    /// looked at): as the admin handlers serve it, or as the worker entry does (`edge`).
    #[napi]
    pub fn admin_head(
        &self,
        request: AdminRequestInput,
        edge: bool,
    ) -> Result<AdminHeadOutput, napi::Error<Code>> {
        guarded(|| {
            let request = request.into_request()?;
            let head = if edge {
                self.site.edge_admin_head(&request)
            } else {
                self.site.admin_head(&request)
            };
            Ok(head.into())
        })
    }

    /// Replaces the `createDecoWorkerEntry` options (JSON, their JSON spelling): the edge
    /// policy, purge token and preview frame follow them. A bad option is `INVALID_CONFIG`.
    #[napi]
    pub fn set_worker_options(&self, options: String) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let json: serde_json::Value = serde_json::from_str(&options).map_err(|e| {
                fail(
                    ErrorCode::InvalidJson,
                    format!("invalid worker options: {e}"),
                )
            })?;
            let options = WorkerOptions::from_json(&json).map_err(|e| thrown(&e))?;
            self.site.set_worker_options(options);
            Ok(())
        })
    }

    /// Sets the schema `/live/_meta` serves (JSON text of the generated meta document), with
    /// the custom matchers made selectable (JSON `[{key, title, namespace, propsSchema?}]`).
    #[napi]
    pub fn set_schema(
        &self,
        schema: String,
        matchers: Option<String>,
    ) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let matchers: Vec<MatcherSchema> = match matchers {
                Some(m) => serde_json::from_str(&m).map_err(|e| {
                    fail(
                        ErrorCode::InvalidConfig,
                        format!("invalid matcher schemas: {e}"),
                    )
                })?,
                None => Vec::new(),
            };
            let schema = Schema::composed(schema.as_bytes(), &matchers).map_err(|e| thrown(&e))?;
            self.site.set_schema(schema);
            Ok(())
        })
    }

    /// Whether a schema is set.
    #[napi(getter)]
    pub fn has_schema(&self) -> bool {
        AdminSite::schema(self.site.as_ref()).is_some()
    }

    /// Changes the document previews are wrapped in (JSON: `{css?, fonts?, theme?, bodyClass?,
    /// lang?}`): the fields given are set, the others kept.
    #[napi]
    pub fn set_render_shell(&self, shell: String) -> Result<(), napi::Error<Code>> {
        guarded(|| {
            let shell: RenderShellUpdate = serde_json::from_str(&shell).map_err(|e| {
                fail(
                    ErrorCode::InvalidConfig,
                    format!("invalid render shell: {e}"),
                )
            })?;
            self.site.set_render_shell(shell);
            Ok(())
        })
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
        Ok(flat_headers(&sitefile_core::cors_headers(&request)))
    })
}

/// The section key a `sections` module key registers under (`./sections/Hero.tsx` →
/// `site/sections/Hero.tsx`).
#[napi]
pub fn section_key(module: String) -> String {
    KeyRegistry::section_key(&module)
}
