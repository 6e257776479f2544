//! `sitefile resolve`: resolve one URL of a site and print the page as JSON.

use crate::open_site;
use chrono::{DateTime, Utc};
use clap::Args;
use serde_json::json;
use sitefile_core::{NoHost, Request, Value, WorkerOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `sitefile resolve`.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// A site root holding `.platform/blocks/`, or a blocks directory itself.
    pub site_dir: PathBuf,
    /// The URL (or path) to resolve.
    pub url: String,
    /// The User-Agent header.
    #[arg(long)]
    pub user_agent: Option<String>,
    /// A cookie `name=value` (repeatable).
    #[arg(long = "cookie", value_name = "NAME=VALUE")]
    pub cookies: Vec<String>,
    /// A header `name:value` (repeatable).
    #[arg(long = "header", value_name = "NAME:VALUE")]
    pub headers: Vec<String>,
    /// The instant matchers see, RFC 3339 (default: now).
    #[arg(long)]
    pub now: Option<String>,
    /// Seed of the random source for `random.ts` draws (default: 0).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// A draw in [0, 1) the random source returns before its seeded ones (repeatable, taken in
    /// order): `--draw 0.4` puts this visitor's first `random.ts` roll at 0.4.
    #[arg(long = "draw", value_name = "X")]
    pub draws: Vec<f64>,
    /// Answer each loader with `{"loader": key, "props": props}` instead of `null`.
    #[arg(long)]
    pub echo_loaders: bool,
}

/// Builds the request the arguments describe.
pub fn build_request(
    url: &str,
    user_agent: Option<&str>,
    cookies: &[String],
    headers: &[String],
    now: Option<&str>,
) -> Result<Request, String> {
    let mut request = Request::new(url).map_err(|e| e.to_string())?;
    if let Some(ua) = user_agent {
        request = request.with_header("user-agent", ua);
    }
    for header in headers {
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| format!("--header {header:?}: expected NAME:VALUE"))?;
        request = request.with_header(name.trim(), value.trim());
    }
    for cookie in cookies {
        let (name, value) = cookie
            .split_once('=')
            .ok_or_else(|| format!("--cookie {cookie:?}: expected NAME=VALUE"))?;
        request = request.with_cookie(name, value);
    }
    let now: DateTime<Utc> = match now {
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map_err(|_| {
                format!("--now: {s:?} is not an RFC 3339 date-time (e.g. 2026-06-01T12:00:00Z)")
            })?
            .with_timezone(&Utc),
        None => Utc::now(),
    };
    Ok(request.with_now(now))
}

/// Runs the command: exit 0 with a page, 3 when no page matches, 2 on bad input.
pub fn run(args: ResolveArgs) -> ExitCode {
    let request = match build_request(
        &args.url,
        args.user_agent.as_deref(),
        &args.cookies,
        &args.headers,
        args.now.as_deref(),
    ) {
        Ok(r) => match r.with_seed(args.seed).with_draws(args.draws) {
            Ok(r) => r,
            Err(e) => return crate::fail(&format!("--draw: {e}")),
        },
        Err(e) => return crate::fail(&e),
    };
    let opened = match open_site::open(&args.site_dir, WorkerOptions::default()) {
        Ok(opened) => opened,
        Err(e) => return crate::fail(&e),
    };
    for problem in &opened.problems {
        eprintln!("warning: {problem}");
    }
    let echo = args.echo_loaders;
    let page = opened.site.resolve_page(request, &NoHost).run(|call| {
        Ok(if echo {
            Value::from(json!({"loader": call.key, "props": serde_json::Value::from(&call.props)}))
        } else {
            Value::Null
        })
    });
    match serde_json::to_string_pretty(&page) {
        Ok(text) => crate::print(&text),
        Err(e) => return crate::fail(&e.to_string()),
    }
    if page.page.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    }
}
