//! `sitefile cache`: print, as JSON, what the edge would do with a request — its cache key,
//! profile, whether it may be cached and why not, and the headers the response would get.

use crate::open_site;
use crate::resolve_cmd::build_request;
use clap::Args;
use sitefile_core::{EdgePlan, OriginAnswer};
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
    /// The origin's `Content-Type` (implies `--status 200`): `text/html` shows the security
    /// headers, which only HTML answers get.
    #[arg(long, value_name = "TYPE")]
    pub content_type: Option<String>,
}

/// The plan as this command prints it: `{key, profile, cacheable, reason, headers}`, the
/// headers an object whose repeated names are joined with `, ` (`Set-Cookie` with a newline).
fn printed(plan: &EdgePlan) -> serde_json::Value {
    let mut headers = serde_json::Map::new();
    for (name, value) in &plan.headers {
        let joined = match headers.get(name).and_then(|v| v.as_str()) {
            Some(prev) if name.eq_ignore_ascii_case("set-cookie") => format!("{prev}\n{value}"),
            Some(prev) => format!("{prev}, {value}"),
            None => value.clone(),
        };
        headers.insert(name.clone(), serde_json::Value::String(joined));
    }
    serde_json::json!({
        "key": plan.key.as_ref().map(|k| k.as_str()),
        "profile": plan.profile.as_str(),
        "cacheable": plan.cacheable,
        "reason": plan.reason,
        "headers": headers,
    })
}

/// Runs the command: exit 0 with the plan, 2 on bad input or configuration.
pub fn run(args: CacheArgs) -> ExitCode {
    let options = match open_site::worker_options(args.options.as_ref()) {
        Ok(o) => o,
        Err(e) => return crate::fail(&e),
    };
    let request = match build_request(&args.url, None, &args.cookies, &args.headers, None) {
        Ok(r) => r.with_method(&args.method),
        Err(e) => return crate::fail(&e),
    };
    let site = match open_site::open(&args.site_dir, options) {
        Ok(opened) => opened.site,
        Err(e) => return crate::fail(&e),
    };
    let mut plan = site.edge_plan(&request);
    if args.status.is_some()
        || !args.set_cookies.is_empty()
        || args.degraded
        || args.content_type.is_some()
    {
        let mut headers: Vec<(String, String)> = args
            .content_type
            .iter()
            .map(|t| ("Content-Type".to_string(), t.clone()))
            .collect();
        headers.extend(
            args.set_cookies
                .iter()
                .map(|c| ("Set-Cookie".to_string(), c.clone())),
        );
        if args.degraded {
            headers.push(("X-Platform-Degraded".into(), "true".into()));
        }
        let origin = OriginAnswer {
            status: args.status.unwrap_or(200),
            headers,
        };
        plan = site.after_origin(&plan, &origin).plan;
    }
    match serde_json::to_string_pretty(&printed(&plan)) {
        Ok(text) => {
            crate::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => crate::fail(&e.to_string()),
    }
}
