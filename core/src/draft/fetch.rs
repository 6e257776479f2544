//! Fetching a draft: the URL a pointer names, the bounds a fetch keeps, and the drafts kept so
//! an editor previewing page after page fetches its draft once. Hosts only perform the fetch.

use super::api_domains::ApiDomains;
use super::decision::DraftDecision;
use crate::value::{Key, Value};
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::Arc;

/// How long fetching a draft may take, body included, in milliseconds.
pub const DRAFT_TIMEOUT_MS: u32 = 5_000;
/// The most bytes read of a draft: 64 MiB, as many as a reload body may hold by default, since a
/// draft is a content map like one.
pub const DRAFT_MAX_BYTES: usize = 64 * 1024 * 1024;
/// How many fetched drafts are kept (by URL; the pointer's version is in it).
pub const KEPT_DRAFTS: usize = 3;

/// A fetch the host performs for a draft, bypassing every cache: past `timeout_ms` or
/// `max_bytes` it gives up and answers no body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftFetch {
    /// Where the draft is (`<origin><path>` with `v=<version>`).
    pub url: String,
    /// How long the fetch may take, body included.
    pub timeout_ms: u32,
    /// The most bytes to read.
    pub max_bytes: usize,
}

/// A draft's blocks, laid over the content for the request that renders it (`null` deletes a
/// block).
#[derive(Debug, PartialEq)]
pub struct Draft {
    blocks: Vec<(Key, Value)>,
}

impl Draft {
    /// The draft a fetched body holds: a JSON object of blocks within [`DRAFT_MAX_BYTES`], or
    /// `None`.
    pub fn parse(body: &[u8]) -> Option<Draft> {
        if body.len() > DRAFT_MAX_BYTES {
            return None;
        }
        let value = Value::from_json_str(std::str::from_utf8(body).ok()?).ok()?;
        let blocks = value.as_object()?.entries().to_vec();
        Some(Draft { blocks })
    }

    /// The blocks.
    pub fn blocks(&self) -> &[(Key, Value)] {
        &self.blocks
    }
}

/// What rendering a request's draft needs.
#[derive(Debug, Clone)]
pub enum DraftSource {
    /// No draft to render (none asked for, its host may not preview, no API domain admits the
    /// pointer, or it could not be fetched): published content.
    Published,
    /// The draft, at hand.
    Ready(Arc<Draft>),
    /// Fetch the draft, then hand its body (or its failure) back to the core.
    Fetch(DraftFetch),
}

/// The drafts fetched last, by URL, oldest first.
#[derive(Debug, Default)]
pub(crate) struct KeptDrafts(Mutex<VecDeque<(String, Arc<Draft>)>>);

impl KeptDrafts {
    /// What rendering `decision`'s draft needs, drafts fetched from `domains`.
    pub fn source(&self, decision: &DraftDecision, domains: &ApiDomains) -> DraftSource {
        let Some(url) = decision.pointer().and_then(|p| p.fetch_url(domains)) else {
            return DraftSource::Published;
        };
        let kept = self
            .0
            .lock()
            .iter()
            .find(|(u, _)| *u == url)
            .map(|(_, d)| d.clone());
        match kept {
            Some(draft) => {
                self.keep(url, draft.clone());
                DraftSource::Ready(draft)
            }
            None => DraftSource::Fetch(DraftFetch {
                url,
                timeout_ms: DRAFT_TIMEOUT_MS,
                max_bytes: DRAFT_MAX_BYTES,
            }),
        }
    }

    /// The host's answer to `fetch`: the body read (`None`: a failure, a non-2xx answer, the
    /// timeout or the size cap). A body that is a draft is kept and rendered; anything else
    /// renders published content.
    pub fn fetched(&self, fetch: &DraftFetch, body: Option<&[u8]>) -> DraftSource {
        match body.and_then(Draft::parse) {
            Some(draft) => {
                let draft = Arc::new(draft);
                self.keep(fetch.url.clone(), draft.clone());
                DraftSource::Ready(draft)
            }
            None => DraftSource::Published,
        }
    }

    /// Keeps `draft` as the newest, forgetting the oldest past [`KEPT_DRAFTS`].
    fn keep(&self, url: String, draft: Arc<Draft>) {
        let mut kept = self.0.lock();
        kept.retain(|(u, _)| *u != url);
        kept.push_back((url, draft));
        while kept.len() > KEPT_DRAFTS {
            kept.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PreviewHostsSetting;
    use crate::draft::{PreviewHosts, decide_draft};
    use crate::request::Request;

    fn decision(version: u32) -> DraftDecision {
        let hosts = PreviewHosts::new(
            &PreviewHostsSetting::Hosts(vec!["preview.shop.com".into()]),
            None,
            None,
        );
        let url = format!("https://preview.shop.com/?__draft=localhost:9/d@v{version}");
        decide_draft(&Request::new(&url).unwrap(), &hosts, false)
    }

    #[test]
    fn keeps_the_last_three_drafts() {
        let kept = KeptDrafts::default();
        let domains = ApiDomains::new(&["localhost".into()]);
        let fetch_of = |v| match kept.source(&decision(v), &domains) {
            DraftSource::Fetch(f) => Some(f),
            _ => None,
        };
        for v in 1..=4 {
            let fetch = fetch_of(v).expect("not kept yet");
            assert_eq!(fetch.url, format!("http://localhost:9/d?v=v{v}"));
            assert!(matches!(
                kept.fetched(&fetch, Some(br#"{"a":{"x":1}}"#)),
                DraftSource::Ready(_)
            ));
        }
        assert!(fetch_of(1).is_some(), "the oldest of four is forgotten");
        assert!(fetch_of(4).is_none() && fetch_of(2).is_none());
    }

    #[test]
    fn unusable_bodies_render_published_content() {
        let kept = KeptDrafts::default();
        let fetch = DraftFetch {
            url: "http://localhost/d".into(),
            timeout_ms: DRAFT_TIMEOUT_MS,
            max_bytes: DRAFT_MAX_BYTES,
        };
        for body in [None, Some(&b"[1]"[..]), Some(b"{"), Some(b"\xff")] {
            assert!(matches!(kept.fetched(&fetch, body), DraftSource::Published));
        }
        let domains = ApiDomains::new(&["elsewhere.com".into()]);
        assert!(matches!(
            kept.source(&decision(1), &domains),
            DraftSource::Published
        ));
    }
}
