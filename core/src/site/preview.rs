//! What a preview or `/platform/render` shows, resolved: the request it is seen from (the
//! page `path`, the `deviceHint` agent, the editor's cookies) and the draft overlay it carries.

use super::Site;
use crate::admin::{AdminRequest, PreviewJob};
use crate::host::Host;
use crate::request::{Request, RequestError};
use crate::resolve::Resolution;
use crate::value::{Key, RESOLVE_TYPE, Value, intern};
use chrono::{DateTime, Utc};

impl Site {
    /// Starts resolving what `job` previews: its component with its props, over its
    /// `__sitefile` overlay, as seen by a request for `job.path` on the editor's host with the
    /// user agent of the `deviceHint` device; a page (`website/pages/Page.tsx`) resolves as its
    /// `sections`, so the page's sections are the resolution's. Never cached. The host runs the loader rounds,
    /// renders the resolved sections and answers with [`PreviewJob::finish`].
    pub fn resolve_preview(
        &self,
        job: &PreviewJob,
        request: &AdminRequest,
        now: DateTime<Utc>,
        host: &dyn Host,
    ) -> Result<Resolution, RequestError> {
        let seen_from = preview_request(job, request, now)?;
        let target = if job.is_page() {
            // A page previews as its sections, each resolved and rendered in order.
            job.props
                .get("sections")
                .cloned()
                .unwrap_or_else(|| Value::array(Vec::new()))
        } else {
            let mut target = vec![(intern(RESOLVE_TYPE), Value::from(job.component.as_str()))];
            target.extend(
                job.props
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.entries().iter().cloned()),
            );
            Value::object(target)
        };
        let draft: Vec<(Key, Value)> = job
            .overlay
            .as_ref()
            .and_then(Value::as_object)
            .map(|o| o.entries().to_vec())
            .unwrap_or_default();
        Ok(self
            .runtime
            .resolve_value_in_draft(seen_from, &target, &draft, host))
    }
}

impl Site {
    /// The URL a preview is seen from — its page `path` on the editor's host —, what the
    /// preview's section loaders see as the page (`__pageUrl`).
    pub fn preview_url(
        &self,
        job: &PreviewJob,
        request: &AdminRequest,
    ) -> Result<String, RequestError> {
        let seen_from = preview_request(job, request, DateTime::<Utc>::UNIX_EPOCH)?;
        Ok(seen_from.url().to_string())
    }
}

/// The request a preview is seen from: `job.path` on the admin request's host (scheme from
/// `X-Forwarded-Proto`, else `https`), its headers, and the user agent of the device hint.
fn preview_request(
    job: &PreviewJob,
    request: &AdminRequest,
    now: DateTime<Utc>,
) -> Result<Request, RequestError> {
    let scheme = match request.header("x-forwarded-proto") {
        Some(proto) if proto.eq_ignore_ascii_case("http") => "http",
        _ => "https",
    };
    let authority = request.header("host").unwrap_or("localhost");
    let mut seen_from = Request::new(&format!("{scheme}://{authority}{}", job.path))?;
    for (name, value) in &request.headers {
        if !name.eq_ignore_ascii_case("user-agent") {
            seen_from = seen_from.with_header(name, value);
        }
    }
    let agent = job.user_agent(request.header("user-agent").unwrap_or(""));
    Ok(seen_from.with_header("user-agent", &agent).with_now(now))
}
