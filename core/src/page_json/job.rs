//! What the host does for a page JSON request, and the response core builds from its answer.

use super::as_json;
use super::recognize::PageJsonKind;
use super::render_json::{Projection, lazy_url};
use super::secrets::{SecretTexts, without_secrets};
use crate::admin::if_none_match;
use crate::config::SecretKey;
use crate::content::Snapshot;
use crate::draft::{DraftDecision, DraftFetch, DraftSource};
use crate::edge::headers::{self, HeaderList};
use crate::hash::{base36, djb2};
use crate::resolve::ResolvedPage;
use crate::value::{Json, Value, intern};
use serde::Serialize;
use std::sync::Arc;

/// `Content-Type` of page JSON.
const CONTENT_TYPE: &str = "application/json; charset=utf-8";
/// `Cache-Control` of `?renderJson` answers: stored, but revalidated (by `ETag`) on every use.
pub const RENDER_JSON_CACHE_CONTROL: &str = "public, max-age=0, must-revalidate";
/// The body of a `?renderJson` request for a path no page serves.
const RENDER_JSON_NOT_FOUND: &str = r#"{"status":404,"notFound":true}"#;

/// The header that says a page was cut short at a bound (its value: `size` or `depth`).
pub const PAGE_CUT_HEADER: &str = "X-Sitefile-Page-Cut";

/// A page body (an object) with `"cut": {"reason", "message"}` when `page` was cut short at a
/// bound: past it every value is `null`, and a renderer must not mistake that for content.
fn with_cut(body: Value, page: &ResolvedPage) -> Value {
    match (&page.effects.cut, body.as_object()) {
        (Some(cut), Some(object)) => {
            let cut = Value::object(vec![
                (intern("reason"), Value::string(cut.reason)),
                (intern("message"), Value::string(&cut.message)),
            ]);
            let mut entries = object.entries().to_vec();
            entries.push((intern("cut"), cut));
            Value::object(entries)
        }
        _ => body,
    }
}

/// `response` for a page cut short at a bound: never stored (`Cache-Control: no-store`) and
/// saying so in [`PAGE_CUT_HEADER`]; any other page's as it is.
fn cut_short(mut response: PageJsonResponse, page: &ResolvedPage) -> PageJsonResponse {
    if let Some(cut) = &page.effects.cut {
        response
            .headers
            .retain(|(name, _)| !name.eq_ignore_ascii_case("cache-control"));
        response
            .headers
            .push(("Cache-Control".into(), "no-store".into()));
        response
            .headers
            .push((PAGE_CUT_HEADER.into(), cut.reason.into()));
    }
    response
}

/// What page JSON reads of the content it was asked against.
#[derive(Debug)]
pub(crate) struct PageJsonFacts {
    /// The snapshot serving when the request came (page names, the Site block).
    pub snapshot: Arc<Snapshot>,
    /// The texts its secrets decrypt to.
    pub secrets: Arc<SecretTexts>,
    /// `isDevMode()`, the legacy shape's `devMode`.
    pub dev_mode: bool,
}

/// A finished page JSON response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageJsonResponse {
    /// HTTP status.
    pub status: u16,
    /// Header pairs.
    pub headers: Vec<(String, String)>,
    /// The body (empty for 204 and 304).
    pub body: Vec<u8>,
}

impl PageJsonResponse {
    fn new(status: u16, mut headers: HeaderList, cors: &HeaderList, body: Vec<u8>) -> Self {
        headers.extend(cors.iter().cloned());
        PageJsonResponse {
            status,
            headers,
            body,
        }
    }

    /// The `OPTIONS` answer: 204 with the CORS headers.
    pub(crate) fn preflight(cors: &HeaderList) -> PageJsonResponse {
        PageJsonResponse::new(204, HeaderList::new(), cors, Vec::new())
    }

    /// No page serves the path: 404 with `{"status":404,"notFound":true}` (`?renderJson`) or
    /// `null` (`?asJson`).
    pub(crate) fn not_found(kind: PageJsonKind, cors: &HeaderList) -> PageJsonResponse {
        let (headers, body) = match kind {
            PageJsonKind::RenderJson => (render_json_headers(), RENDER_JSON_NOT_FOUND),
            PageJsonKind::AsJson => (as_json_headers(), "null"),
        };
        PageJsonResponse::new(404, headers, cors, body.as_bytes().to_vec())
    }

    /// The value of header `name`, ignoring ASCII case.
    pub fn header(&self, name: &str) -> Option<&str> {
        headers::find(&self.headers, name)
    }
}

fn render_json_headers() -> HeaderList {
    vec![
        ("Content-Type".into(), CONTENT_TYPE.into()),
        ("Cache-Control".into(), RENDER_JSON_CACHE_CONTROL.into()),
    ]
}

fn as_json_headers() -> HeaderList {
    vec![("Content-Type".into(), CONTENT_TYPE.into())]
}

/// What core decided about a page JSON request.
#[derive(Debug)]
pub enum PageJsonOutcome {
    /// Send this response (a preflight, or a 404 for a section index that is not a number).
    Respond(PageJsonResponse),
    /// Resolve the page and finish the job with it.
    Resolve(PageJsonJob),
}

/// A page JSON request the host answers: it resolves the page for the same request as any page
/// (`Site::resolve_page_json`, on the content that served when the job was made, running every
/// loader round: deferred sections come back with their
/// props too), applies each section module's `renderJson` projection function to its props,
/// and calls [`PageJsonJob::finish`] with the page and the keys of the sections whose module
/// exports `renderJson = false`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageJsonJob {
    /// The shape asked for.
    pub kind: PageJsonKind,
    /// `?renderJson&__section=<index>`: only the section at this index of the page's sections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<usize>,
    #[serde(skip)]
    if_none_match: Vec<String>,
    #[serde(skip)]
    cors: HeaderList,
    /// The request's path and query, which deferred sections' `lazyUrl`s extend.
    #[serde(skip)]
    target: String,
    #[serde(skip)]
    facts: Arc<PageJsonFacts>,
    /// What this request does to draft preview (its headers and cookie go on the response).
    #[serde(skip)]
    draft: Option<DraftDecision>,
    /// The draft to fetch before the page is resolved ([`PageJsonJob::draft_fetch`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    draft_fetch: Option<DraftFetch>,
    /// The page is resolved on a draft laid over the content.
    #[serde(skip)]
    in_draft: bool,
}

impl PageJsonJob {
    /// A job for `kind` (and `section`) with the request's `If-None-Match` values, its CORS
    /// headers and path and query.
    pub(crate) fn new(
        kind: PageJsonKind,
        section: Option<usize>,
        if_none_match: Vec<String>,
        cors: HeaderList,
        target: String,
        facts: Arc<PageJsonFacts>,
    ) -> PageJsonJob {
        PageJsonJob {
            kind,
            section,
            if_none_match,
            cors,
            target,
            facts,
            draft: None,
            draft_fetch: None,
            in_draft: false,
        }
    }

    /// The job for a request whose draft decision is `decision`, its draft as `source` says
    /// (its secrets decrypted with `key`).
    pub(crate) fn with_draft(
        mut self,
        decision: DraftDecision,
        source: DraftSource,
        key: Option<&SecretKey>,
    ) -> Self {
        self.draft = Some(decision);
        self.draft_is(source, key);
        self
    }

    /// The draft is `source` now: a draft at hand is laid over the content the page is
    /// resolved on (and read for its name), and the texts its secrets decrypt to (`key`) are
    /// kept out of the body as the published content's are; a fetch waits for the host.
    pub(crate) fn draft_is(&mut self, source: DraftSource, key: Option<&SecretKey>) {
        self.draft_fetch = None;
        match source {
            DraftSource::Published => {}
            DraftSource::Fetch(fetch) => self.draft_fetch = Some(fetch),
            DraftSource::Ready(draft) => {
                let snapshot = self.facts.snapshot.overlaid(draft.blocks());
                self.facts = Arc::new(PageJsonFacts {
                    secrets: Arc::new(SecretTexts::of(&snapshot, key)),
                    snapshot,
                    dev_mode: self.facts.dev_mode,
                });
                self.in_draft = true;
            }
        }
    }

    /// The draft the host fetches before it resolves the page (spec "Draft preview mode"), its
    /// body handed back with `Site::page_json_draft_fetched`; `None`: nothing to fetch (no
    /// draft, or the draft is at hand). A page resolved without the answer is the published one.
    pub fn draft_fetch(&self) -> Option<&DraftFetch> {
        self.draft_fetch.as_ref()
    }

    /// Whether the page is resolved on a draft (never from or into a cache).
    pub(crate) fn in_draft(&self) -> bool {
        self.in_draft
    }

    /// The indexes of `page`'s sections whose props the body writes, so the only ones whose
    /// section loaders and `renderJson` projection the host runs: for `?renderJson` the
    /// sections neither left out nor deferred (a deferred one is written as its `lazyUrl`), or
    /// the one `__section` names; for `?asJson` every section.
    pub fn written_sections(&self, page: &ResolvedPage, dropped: &[String]) -> Vec<usize> {
        match self.kind {
            PageJsonKind::AsJson => (0..page.sections.len()).collect(),
            PageJsonKind::RenderJson => {
                let projection = Projection::new(self.facts.snapshot.site_block(), dropped);
                let written = |i: &usize| {
                    page.sections
                        .get(*i)
                        .is_some_and(|s| !projection.is_dropped(&s.component))
                };
                match self.section {
                    Some(index) => [index].into_iter().filter(written).collect(),
                    None => (0..page.sections.len())
                        .filter(|i| !page.sections[*i].deferred)
                        .filter(written)
                        .collect(),
                }
            }
        }
    }

    /// The content that served when the job was made, which its page is resolved on.
    pub(crate) fn snapshot(&self) -> &Arc<Snapshot> {
        &self.facts.snapshot
    }

    /// The response for the resolved `page`. `dropped`: keys of sections whose module exports
    /// `renderJson = false`, left out of `?renderJson` (with the Site block's
    /// `renderJson.sectionsToIgnore` suffixes). Secret-shaped values never reach the body.
    /// `?renderJson` carries an `ETag` (`"rj-<djb2 of the body, base 36>"`) and answers 304
    /// when `If-None-Match` matches it (weak comparison over the list, `*`). A request that
    /// previews a draft, leaves preview or names a malformed draft gets the draft's headers
    /// and cookie, as a page would.
    pub fn finish(&self, page: &ResolvedPage, dropped: &[String]) -> PageJsonResponse {
        let mut response = self.respond(page, dropped);
        if let Some(draft) = &self.draft {
            headers::add_draft_headers(&mut response.headers, draft);
        }
        response
    }

    /// The response for `page`, before the draft's headers.
    fn respond(&self, page: &ResolvedPage, dropped: &[String]) -> PageJsonResponse {
        let Some(block) = page.page.as_deref() else {
            return PageJsonResponse::not_found(self.kind, &self.cors);
        };
        let snapshot = &self.facts.snapshot;
        let site_block = snapshot.site_block();
        let name = snapshot
            .block(block)
            .and_then(|b| b.get("name"))
            .and_then(Value::as_str)
            .unwrap_or(block);
        match self.kind {
            PageJsonKind::RenderJson => {
                let projection = Projection::new(site_block, dropped);
                let body = match self.section {
                    Some(index) => match page
                        .sections
                        .get(index)
                        .filter(|s| !projection.is_dropped(&s.component))
                    {
                        Some(section) => projection.section(section, None),
                        None => return PageJsonResponse::not_found(self.kind, &self.cors),
                    },
                    None => {
                        let sections = page.sections.iter().enumerate().filter_map(|(i, s)| {
                            let lazy = s.deferred.then(|| lazy_url(&self.target, i));
                            (!projection.is_dropped(&s.component))
                                .then(|| projection.section(s, lazy))
                        });
                        let mut entries = vec![
                            (intern("name"), Value::string(name)),
                            (
                                intern("path"),
                                page.path.as_deref().map_or(Value::Null, Value::string),
                            ),
                        ];
                        if page.not_found {
                            entries.push((intern("notFound"), Value::Bool(true)));
                        }
                        entries.push((intern("sections"), Value::array(sections.collect())));
                        with_cut(Value::object(entries), page)
                    }
                };
                cut_short(self.with_etag(self.bytes(&body), page.not_found), page)
            }
            PageJsonKind::AsJson => {
                let body = as_json::body(page, block, name, site_block, self.facts.dev_mode);
                let body = self.bytes(&with_cut(body, page));
                let status = if page.not_found { 404 } else { 200 };
                cut_short(
                    PageJsonResponse::new(status, as_json_headers(), &self.cors, body),
                    page,
                )
            }
        }
    }

    /// `body` without secrets, as compact JSON (large unchanged content written from what the
    /// content keeps, as pages are).
    fn bytes(&self, body: &Value) -> Vec<u8> {
        let stripped = without_secrets(body, &self.facts.secrets);
        let body = stripped.as_ref().unwrap_or(body);
        // Writing to a Vec fails only for a non-string map key, which a value never has.
        sonic_rs::to_vec(&Json::<true>(body)).unwrap_or_else(|_| b"null".to_vec())
    }

    /// 200 with the body's `ETag`, or 304 when the request already holds it; the site's
    /// not-found page (`not_found`) is 404 with its body, whatever the request holds.
    fn with_etag(&self, body: Vec<u8>, not_found: bool) -> PageJsonResponse {
        let text = String::from_utf8_lossy(&body);
        let etag = format!("\"rj-{}\"", base36(djb2(&text)));
        let mut headers = render_json_headers();
        headers.push(("ETag".into(), etag.clone()));
        if not_found {
            return PageJsonResponse::new(404, headers, &self.cors, body);
        }
        if if_none_match(self.if_none_match.iter().map(String::as_str), &etag) {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
            return PageJsonResponse::new(304, headers, &self.cors, Vec::new());
        }
        PageJsonResponse::new(200, headers, &self.cors, body)
    }
}
