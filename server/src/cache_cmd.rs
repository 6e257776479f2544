//! `sitefile cache`: print, as JSON, what the edge would do with a request — its cache key,
//! profile, whether it may be cached and why not, and the headers the response would get.

use crate::resolve_cmd::build_request;
use clap::Args;
use sitefile_core::config::PlatformConfig;
use sitefile_core::draft::PreviewHosts;
use sitefile_core::edge::{
    EdgePolicy, OriginFacts, RedirectTable, RequestInputs, SiteFacts, WorkerOptions,
    build_time_hash,
};
use sitefile_core::matchers::{Overrides, Segment};
use sitefile_site_dir as site_dir;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `sitefile cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// A site root holding `.platform/blocks/`, or a blocks directory itself.
    pub site_dir: PathBuf,
    /// The URL (or path, taken on `http://localhost`) of the request.
    pub url: String,
    /// A request header `name:value` (repeatable).
    #[arg(long = "header", value_name = "NAME:VALUE")]
    pub headers: Vec<String>,
    /// A request cookie `name=value` (repeatable).
    #[arg(long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,
    /// The request method.
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// A JSON file of `createDecoWorkerEntry` options (default: the spec's defaults).
    #[arg(long, value_name = "FILE")]
    pub options: Option<PathBuf>,
    /// The origin's status: print the decision after the origin answered (whether it is stored).
    #[arg(long, value_name = "CODE")]
    pub status: Option<u16>,
    /// A `Set-Cookie` value the origin answers with (repeatable; implies `--status 200`).
    #[arg(long = "set-cookie", value_name = "VALUE")]
    pub set_cookies: Vec<String>,
    /// The origin marks the page degraded (`X-Platform-Degraded: true`; implies `--status 200`).
    #[arg(long)]
    pub degraded: bool,
}

fn worker_options(path: Option<&PathBuf>) -> Result<WorkerOptions, String> {
    let Some(path) = path else {
        return Ok(WorkerOptions::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    WorkerOptions::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the command: exit 0 with the plan, 2 on bad input or configuration.
pub fn run(args: CacheArgs) -> ExitCode {
    let vars: HashMap<String, String> = std::env::vars().collect();
    let config = match PlatformConfig::from_env(&vars) {
        Ok(c) => c,
        Err(e) => return crate::fail(&e.to_string()),
    };
    let options = match worker_options(args.options.as_ref()) {
        Ok(o) => o,
        Err(e) => return crate::fail(&e),
    };
    let request = match build_request(&args.url, None, &args.cookies, &args.headers, None) {
        Ok(r) => r.with_method(&args.method),
        Err(e) => return crate::fail(&e),
    };
    let site = match site_dir::load(&args.site_dir) {
        Ok(s) => s,
        Err(e) => return crate::fail(&e.to_string()),
    };
    let snapshot = &site.snapshot;
    let redirects = RedirectTable::build(snapshot.revision(), snapshot.blocks());
    let preview_hosts = PreviewHosts::new(
        &config.draft.allowed_preview_hosts,
        snapshot.site_block(),
        config.runtime.site_name.as_deref(),
    )
    .trusting_forwarded_host(options.trust_forwarded_host);
    let build_hash = build_time_hash(Some(snapshot.revision()));
    let policy = EdgePolicy::from_config(options, &config, &vars, Some(&build_hash));
    let cohort = Segment::from_request(&request).cache_token();
    let inputs = RequestInputs {
        cohort: cohort.as_deref(),
        has_override: !Overrides::from_request(&request).is_empty(),
        ..RequestInputs::default()
    };
    let facts = SiteFacts {
        uses_location: snapshot.uses_location(),
        redirects: &redirects,
        preview_hosts: &preview_hosts,
    };
    let mut plan = policy.plan(&request, &facts, &inputs);
    if args.status.is_some() || !args.set_cookies.is_empty() || args.degraded {
        let mut origin: Vec<(String, String)> = args
            .set_cookies
            .iter()
            .map(|c| ("Set-Cookie".to_string(), c.clone()))
            .collect();
        if args.degraded {
            origin.push(("X-Platform-Degraded".into(), "true".into()));
        }
        let finished = policy.after_origin(
            &plan,
            OriginFacts {
                status: args.status.unwrap_or(200),
                headers: &origin,
            },
        );
        plan.cacheable = finished.store.is_some();
        plan.reason = finished.reason;
        plan.headers = finished.headers;
    }
    match serde_json::to_string_pretty(&plan.to_json()) {
        Ok(text) => {
            crate::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => crate::fail(&e.to_string()),
    }
}
