//! The `Site` facade: the one type every binding drives. It owns the runtime (content, caches,
//! resolution), the edge policy, the admin protocol's configuration, the purge index, the schema
//! and the facts derived from each content snapshot, rebuilt on every swap.
//!
//! A binding converts its host's values to these calls and back, does I/O, and runs host code
//! (loaders, rendering, custom matchers through [`Host`]); it decides nothing the spec decides.

mod derived;
mod edge;
mod exchange;
mod fast_deploy;
mod flights;
mod page_json;
mod preview;
mod response_headers;
mod setup_form;

pub use edge::{EdgeDecision, EdgeHints, OriginAnswer, OriginOutcome, StoredCopy};
pub use exchange::{
    BodySource, EdgeExchange, ExchangeAnswer, ExchangeError, ExchangeStep, StoreCopy, StoredHead,
    TimedAnswer,
};
pub use fast_deploy::{EDGE_POLL_EVERY, KvStep, KvSync, Replica, Synced};
#[cfg(feature = "internals")]
pub use response_headers::STORED_AT_HEADER;
pub use response_headers::{ResponseHeaders, SharedHeaders};
#[cfg(feature = "internals")]
pub use setup_form::{AdminForm, FreshnessForm, SetupForm};

use edge::ReadHints;

use crate::admin::{
    self, AdminConfig, AdminHead, AdminOutcome, AdminRequest, AdminSettings, AdminSite,
    RenderShellUpdate, Schema,
};
use crate::check::{Problem, check};
use crate::config::{ConfigError, PlatformConfig};
use crate::content::{
    LoadProblem, ReloadError, ReloadOutcome, ReloadRefused, ReloadResponse, Snapshot,
};
use crate::draft::{ApiDomains, DraftFetch, DraftSource, KeptDrafts, carries_draft, decide_draft};
use crate::edge::{
    EdgePlan, EdgePolicy, PurgeIndex, PurgeScope, RequestInputs, UnknownProfile, WorkerOptions,
    build_time_hash, origin_failed, stored_state,
};
use crate::host::Host;
use crate::loader_cache::LoaderCache;
use crate::matchers::{Overrides, Segment};
use crate::request::Request;
use crate::resolve::{Resolution, ResolveConfig, ResolvedSection, Runtime};
use crate::section_loaders::{LayoutOutputs, SectionContext, SectionLoaderRun};
use crate::value::{Key, Value};
use chrono::{DateTime, Utc};
use derived::{DeriveSettings, DerivedFacts};
use parking_lot::RwLock;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Everything a site is set up with.
#[derive(Default)]
pub struct SiteSetup {
    /// Registered sections, loaders, matchers and the setup options that shape pages.
    pub resolve: ResolveConfig,
    /// The `createDecoWorkerEntry` options of the edge.
    pub worker: WorkerOptions,
    /// The environment variables (`PLATFORM_*`, `NODE_ENV`, the purge and cache-version ones).
    pub vars: HashMap<String, String>,
    /// The admin protocol's body limits and preview document.
    pub admin: AdminSettings,
}

impl SiteSetup {
    /// A setup reading `vars` (the process environment, say) with `resolve` and `worker`.
    pub fn new(
        resolve: ResolveConfig,
        worker: WorkerOptions,
        vars: HashMap<String, String>,
    ) -> Self {
        SiteSetup {
            resolve,
            worker,
            vars,
            admin: AdminSettings::default(),
        }
    }
}

/// Why a site could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// A `PLATFORM_*` variable or an option is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The JSON form of the setup is malformed.
    #[error("invalid setup: {0}")]
    Form(String),
}

impl crate::errors::HasErrorCode for SetupError {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidConfig
    }
}

/// One site: content, resolution, edge policy, admin protocol.
pub struct Site {
    runtime: Runtime,
    platform: PlatformConfig,
    vars: HashMap<String, String>,
    build_hash: String,
    policy: RwLock<Arc<EdgePolicy>>,
    admin: RwLock<Arc<AdminConfig>>,
    purge_index: PurgeIndex,
    flights: flights::Flights,
    schema: RwLock<Option<Arc<Schema>>>,
    derived: Arc<DerivedFacts>,
    /// The drafts fetched last, for previews.
    pub(crate) drafts: Arc<KeptDrafts>,
    /// Where drafts may be fetched from (`PLATFORM_PREVIEW_API_DOMAINS`), read once.
    pub(crate) api_domains: ApiDomains,
    /// Last, so it drops after the content: lets go of the long strings only it held.
    _long_strings: crate::value::LongStringsRelease,
}

impl Site {
    /// A site serving `snapshot` with `setup`. The environment is validated here: an unusable
    /// variable is an error naming it (never its value when it is a secret).
    pub fn new(snapshot: Snapshot, setup: SiteSetup) -> Result<Site, SetupError> {
        let platform = PlatformConfig::from_env(&setup.vars)?;
        let resolve = setup.resolve.with_platform(&platform);
        let build_hash = build_time_hash(Some(snapshot.revision()));
        let policy = EdgePolicy::from_config(
            setup.worker.clone(),
            &platform,
            &setup.vars,
            Some(&build_hash),
        );
        let admin =
            AdminConfig::new(&platform, &setup.worker, &setup.vars).with_settings(setup.admin);
        let runtime = Runtime::with_loader_cache(
            snapshot,
            resolve,
            LoaderCache::from_config(&platform.loader_cache()),
        );
        let settings = DeriveSettings {
            preview_hosts: platform.draft.allowed_preview_hosts.clone(),
            site_name: platform.runtime.site_name.clone(),
            trust_forwarded_host: setup.worker.trust_forwarded_host,
        };
        let derived = Arc::new(DerivedFacts::new(&runtime.store().current(), settings));
        let on_swap = derived.clone();
        runtime
            .store()
            .observe(Box::new(move |snapshot| on_swap.swapped(snapshot)));
        let api_domains = ApiDomains::new(&platform.draft.preview_api_domains);
        Ok(Site {
            runtime,
            platform,
            vars: setup.vars,
            build_hash,
            policy: RwLock::new(Arc::new(policy)),
            admin: RwLock::new(Arc::new(admin)),
            purge_index: PurgeIndex::new(),
            flights: flights::Flights::default(),
            schema: RwLock::new(None),
            derived,
            drafts: Arc::default(),
            api_domains,
            _long_strings: crate::value::LongStringsRelease,
        })
    }

    /// Replaces the `createDecoWorkerEntry` options the setup gave (a binding whose worker entry
    /// is created after the site, as the spec's is): the edge policy, the admin protocol's
    /// purge token and preview frame, and the preview-host facts are rebuilt from them; body
    /// limits and the render shell are kept. Requests already planned keep their plan.
    pub fn set_worker_options(&self, options: WorkerOptions) {
        let policy = EdgePolicy::from_config(
            options.clone(),
            &self.platform,
            &self.vars,
            Some(&self.build_hash),
        );
        {
            let mut admin = self.admin.write();
            let kept = AdminSettings {
                reload_max_bytes: admin.reload_max_bytes,
                max_body_bytes: admin.max_body_bytes,
                render_shell: admin.render_shell.clone(),
            };
            *admin = Arc::new(
                AdminConfig::new(&self.platform, &options, &self.vars).with_settings(kept),
            );
        }
        self.derived.resettle(
            |settings| settings.trust_forwarded_host = options.trust_forwarded_host,
            || self.snapshot(),
        );
        *self.policy.write() = Arc::new(policy);
    }

    /// The snapshot serving now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.runtime.store().current()
    }

    /// The content revision serving now.
    pub fn revision(&self) -> String {
        self.snapshot().revision().to_string()
    }

    /// The runtime (content store and caches).
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The configuration read from the environment.
    pub fn platform(&self) -> &PlatformConfig {
        &self.platform
    }

    /// The edge policy.
    pub fn policy(&self) -> Arc<EdgePolicy> {
        self.policy.read().clone()
    }

    /// The admin protocol's configuration.
    pub fn admin_config(&self) -> Arc<AdminConfig> {
        self.admin.read().clone()
    }

    /// Changes the document previews and renders are wrapped in (`setRenderShell`): the fields
    /// `update` gives are set, the others keep what the setup or an earlier call set (the
    /// stylesheet and fonts of `createAdminSetup` survive a later `setRenderShell({theme})`).
    /// Later previews use it.
    pub fn set_render_shell(&self, update: RenderShellUpdate) {
        let mut admin = self.admin.write();
        let mut config = AdminConfig::clone(&admin);
        config.render_shell.apply(update);
        *admin = Arc::new(config);
    }

    /// The registered section key a resolved section's `component` names (it may spell the key
    /// with or without `.tsx`), or `None` for a component no section module renders. Bindings
    /// find the module to render with it.
    pub fn registered_section<'a>(&'a self, component: &'a str) -> Option<&'a str> {
        self.runtime.config().sections.lookup(component)
    }

    /// Starts resolving the page for `request` (`resolveDecoPage`); drive it with
    /// [`Resolution::next`] and [`Resolution::provide`].
    pub fn resolve_page(&self, request: Request, host: &dyn Host) -> Resolution {
        self.runtime
            .resolve_page_with(request, Default::default(), host)
    }

    /// Starts resolving the page for `request` with `draft` blocks laid over the current
    /// content: never cached, never visible to other requests.
    pub fn resolve_page_in_draft(
        &self,
        request: Request,
        draft: &[(Key, Value)],
        host: &dyn Host,
    ) -> Resolution {
        self.runtime.resolve_page_in_draft(request, draft, host)
    }

    /// What rendering the draft of `request` needs (spec "Draft preview mode"): published
    /// content unless its host may preview and it names a draft (`?__draft=`, the draft cookie,
    /// or the forwarded `x-platform-draft` header when `trust_forwarded_header`, set only behind
    /// a front that strips client copies) that an API domain admits; the draft when it was
    /// fetched lately; else the fetch to perform, whose body goes to [`Site::draft_fetched`].
    /// Render a draft with [`Site::resolve_page_in_draft`].
    pub fn page_draft(&self, request: &Request, trust_forwarded_header: bool) -> DraftSource {
        let decision = decide_draft(
            request,
            &self.derived.current().preview_hosts,
            trust_forwarded_header,
        );
        self.drafts.source(&decision, &self.api_domains)
    }

    /// The host's answer to a draft `fetch`: the body read, or `None` when the fetch failed,
    /// answered other than 2xx, or passed its timeout or size cap. A body that is a JSON object
    /// of blocks is the draft (kept for the next requests); anything else is published content.
    pub fn draft_fetched(&self, fetch: &DraftFetch, body: Option<&[u8]>) -> DraftSource {
        self.drafts.fetched(fetch, body)
    }

    /// Starts resolving the site's not-found page (the routable page block with
    /// `"notFound": true`) for `request`, whatever its path: what a host renders on its own
    /// not-found screen (Next's `app/not-found.tsx`). `page: None` when the site has none.
    pub fn resolve_not_found_page(&self, request: Request, host: &dyn Host) -> Resolution {
        self.runtime.resolve_not_found_page(request, host)
    }

    /// Starts resolving one value — a saved block (`{"__resolveType": "<name>"}`), a section or
    /// a props object — for previews, `/platform/render` and invoke props.
    pub fn resolve_value(&self, request: Request, value: &Value, host: &dyn Host) -> Resolution {
        self.runtime.resolve_value(request, value, host)
    }

    /// The User-Agent the host adds to outgoing fetches that carry none (`outboundUserAgent`):
    /// `sitefile/<version> (+<site URL>)` by default, the option's value, or `None` when it is
    /// `false`. `site_url` is the site's public origin, when the host knows it.
    pub fn outbound_user_agent(&self, site_url: Option<&str>) -> Option<String> {
        self.policy().options().outbound_user_agent.value(site_url)
    }

    /// Starts the section loaders of a resolved page's `sections` for `request`
    /// (`runSectionLoaders`): `with_loaders` are the section keys whose module exports a loader
    /// (registered keys: what only the host knows). A failed loader of a layout section does
    /// not degrade the page.
    pub fn run_section_loaders(
        &self,
        request: &Request,
        sections: Vec<ResolvedSection>,
        with_loaders: HashSet<String>,
    ) -> SectionLoaderRun {
        // A forced variant or a draft must neither be served kept outputs nor leave its own.
        let shares_layout = Overrides::from_request(request).is_empty() && !carries_draft(request);
        let layout = shares_layout.then(|| {
            LayoutOutputs::new(
                self.runtime.layout_outputs().clone(),
                self.snapshot().revision(),
                request.device(),
                request.now,
            )
        });
        SectionLoaderRun::new(
            sections,
            with_loaders,
            self.runtime.shared_config(),
            (request.url().as_str(), request.path()),
            SectionContext {
                device: request.device(),
            },
            layout,
        )
    }

    /// Applies a reload body (delta or full). Every content-derived cache is cleared and the
    /// derived facts rebuilt; a refused body leaves the content serving.
    pub fn reload(&self, body: &[u8], now: DateTime<Utc>) -> Result<ReloadResponse, ReloadError> {
        self.runtime.reload(body, now)
    }

    /// Serves `snapshot` (content from Fast Deploy's store) if revision `expected` is still
    /// serving, clearing every content-derived cache as a reload does; whether it did.
    pub fn replace_content_if(&self, expected: &str, snapshot: Snapshot) -> bool {
        self.runtime.store().replace_if(expected, snapshot)
    }

    /// Applies a reload body, running `before_swap` under the single-writer lock with the new
    /// snapshot before it serves (Fast Deploy writes it and answers `kvWritten`). A failing hook
    /// refuses the reload and leaves the content serving.
    pub fn reload_with(
        &self,
        body: &[u8],
        now: DateTime<Utc>,
        before_swap: &mut dyn FnMut(&Arc<Snapshot>) -> Result<bool, String>,
    ) -> Result<ReloadResponse, ReloadRefused> {
        self.runtime.store().reload_with(body, now, before_swap)
    }

    /// The edge plan for `request` on a site without `buildSegment`, `detectProfile` or a CSP
    /// nonce: [`Site::edge_plan_with`] with no hints.
    pub fn edge_plan(&self, request: &Request) -> EdgePlan {
        self.plan_read(request, &ReadHints::default())
    }

    /// The edge plan for `request`: cache key, profile, cacheability and headers. The A/B
    /// cohort and the matcher override are read from the request here; `hints` carry what the
    /// site's `buildSegment` and `detectProfile` answered and the nonce's random bytes. A
    /// profile name that is none of the spec's is an `INVALID_CONFIG` error.
    pub fn edge_plan_with(
        &self,
        request: &Request,
        hints: &EdgeHints,
    ) -> Result<EdgePlan, UnknownProfile> {
        Ok(self.plan_read(request, &hints.read()?))
    }

    fn plan_read(&self, request: &Request, hints: &ReadHints) -> EdgePlan {
        let derived = self.derived.current();
        let cohort = Segment::from_request(request).cache_token();
        let inputs = RequestInputs {
            cohort: cohort.as_deref(),
            has_override: !Overrides::from_request(request).is_empty(),
            segment: hints.segment.as_ref(),
            nonce: hints.nonce.as_ref(),
            profile: hints.profile,
            ..RequestInputs::default()
        };
        self.policy().plan(request, &derived.facts(), &inputs)
    }

    /// The decision once the origin answered `origin` for `plan`, merged into the plan. A
    /// stored response's key is recorded in the purge index.
    pub fn after_origin(&self, plan: &EdgePlan, origin: &OriginAnswer) -> EdgeDecision {
        let policy = self.policy();
        let finished = policy.after_origin(plan, origin.facts());
        let store_max_age = finished
            .store
            .as_ref()
            .map(|_| policy.options().profiles.get(plan.profile).stored_max_age());
        let evict = match (&finished.store, &plan.key) {
            (Some(_), Some(key)) => self.purge_index.record(key),
            _ => Vec::new(),
        };
        let mut merged = plan.clone();
        merged.cacheable = finished.store.is_some();
        merged.reason = finished.reason;
        merged.headers = finished.headers;
        EdgeDecision {
            plan: merged,
            status: finished.status,
            store: finished.store,
            store_max_age,
            evict,
        }
    }

    /// How to serve a stored copy of `plan`'s key that is `age_secs` old, under the profile's
    /// edge window: before asking the origin (`origin: None`), or once the origin failed
    /// (a 5xx or 429 status, no answer, or a degraded page), when a copy within
    /// `stale-if-error` is served instead.
    pub fn stored_copy(
        &self,
        plan: &EdgePlan,
        age_secs: u64,
        origin: Option<&OriginOutcome>,
    ) -> StoredCopy {
        let policy = self.policy();
        let window = &policy.options().profiles.get(plan.profile).edge;
        let failed = origin.is_some_and(|o| origin_failed(o.status, o.degraded));
        let state = stored_state(age_secs, window, failed);
        StoredCopy {
            state,
            headers: state.headers(age_secs, origin.and_then(|o| o.status)),
        }
    }

    /// The purge index: the stored edge keys a purge can reach.
    pub fn purge_index(&self) -> &PurgeIndex {
        &self.purge_index
    }

    /// Purges a target (`/path` or `/path?query`) from the edge: the keys the host deletes.
    pub fn purge(&self, target: &str) -> Vec<String> {
        self.purge_index.purge(target, self.policy().options())
    }

    /// What a purge target reaches, under the site's tracking-parameter options (`None`: nothing).
    pub fn purge_scope(&self, target: &str) -> Option<PurgeScope> {
        PurgeScope::of(target, self.policy().options())
    }

    /// Empties the loader cache and the layout sections' kept outputs (`/_cache/purge-loaders`).
    pub fn purge_loaders(&self) {
        self.runtime.loader_cache().clear();
        self.runtime.layout_outputs().clear();
    }

    /// Every content problem of the serving snapshot, plus `load` problems met reading it.
    pub fn check(&self, load: &[LoadProblem]) -> Vec<Problem> {
        check(&self.snapshot(), self.runtime.config(), load)
    }

    /// Sets the schema `/live/_meta` serves (its ETag is computed once, here).
    pub fn set_schema(&self, schema: Schema) {
        *self.schema.write() = Some(Arc::new(schema));
    }

    /// Answers an admin request (`/live/_meta`, `/.sitefile`, previews, render, invoke,
    /// liveness, purges), or says what the host must do for it.
    pub fn handle_admin(&self, request: &AdminRequest, now: DateTime<Utc>) -> AdminOutcome {
        admin::handle(self, &self.admin_config(), request, now)
    }

    /// What the head of an admin request (method, path, query, headers; its body is not looked
    /// at) decides before the host reads any body byte: pass it on, answer it at once (401, 405,
    /// 413 for a declared `Content-Length` over the limit, ...), or read the body up to the
    /// route's limit and then call [`Site::handle_admin`].
    pub fn admin_head(&self, request: &AdminRequest) -> AdminHead {
        admin::head(&self.admin_config(), request)
    }

    /// [`Site::admin_head`] as the worker entry serves admin routes (see
    /// [`Site::handle_edge_admin`]), before it calls [`Site::handle_edge_admin`].
    pub fn edge_admin_head(&self, request: &AdminRequest) -> AdminHead {
        if !self.serves_edge_admin(&request.path) {
            return AdminHead::Pass;
        }
        self.admin_head(request)
    }

    /// An admin request as the worker entry (`createDecoWorkerEntry`) serves it: without the
    /// `admin` option only the purge routes are answered and every other admin path passes on
    /// (to the edge plan, which bypasses the cache for it); with it, as [`Site::handle_admin`].
    pub fn handle_edge_admin(&self, request: &AdminRequest, now: DateTime<Utc>) -> AdminOutcome {
        if !self.serves_edge_admin(&request.path) {
            return AdminOutcome::Pass;
        }
        self.handle_admin(request, now)
    }

    /// Whether the worker entry answers `path` itself (see [`Site::handle_edge_admin`]): a host
    /// asks before it reads a body, so a request that passes on keeps its body unread.
    pub fn serves_edge_admin(&self, path: &str) -> bool {
        if admin::is_speculation_rules_route(path) {
            return self.admin_config().speculation_rules.is_some();
        }
        admin::is_purge_route(path)
            || (self.policy().options().admin && admin::is_admin_route(path))
    }
}

impl AdminSite for Site {
    fn snapshot(&self) -> Arc<Snapshot> {
        Site::snapshot(self)
    }

    fn schema(&self) -> Option<Arc<Schema>> {
        self.schema.read().clone()
    }

    fn reload(
        &self,
        body: &[u8],
        now: DateTime<Utc>,
        before_swap: &mut dyn FnMut(&Arc<Snapshot>) -> Result<bool, String>,
    ) -> Result<ReloadResponse, ReloadRefused> {
        self.reload_with(body, now, before_swap)
    }

    fn plan_reload(&self, body: &[u8], now: DateTime<Utc>) -> Result<ReloadOutcome, ReloadError> {
        self.runtime.store().plan(body, now)
    }

    fn serve_reloaded(&self, snapshot: Arc<Snapshot>) {
        self.runtime.store().swap_in(snapshot);
    }

    fn purge_edge(&self, target: &str) -> Vec<String> {
        self.purge(target)
    }

    fn purge_loaders(&self) {
        Site::purge_loaders(self)
    }
}
