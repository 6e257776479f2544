//! Draft fetches for page JSON: the core names the URL and the bounds (spec "Draft preview
//! mode"); this performs the fetch and hands the body back, or `None` on any failure.

use sitefile_core::DraftFetch;
use std::time::Duration;

/// The client drafts are fetched with: no redirects followed (the core admitted this URL, not
/// where it might point), `user_agent` on every request when there is one. `None` when the TLS
/// backend cannot start: page JSON then answers published content.
pub fn client(user_agent: Option<String>) -> Option<reqwest::Client> {
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    if let Some(agent) = user_agent {
        builder = builder.user_agent(agent);
    }
    match builder.build() {
        Ok(client) => Some(client),
        Err(e) => {
            tracing::error!(error = %e, "draft preview is off: no HTTP client");
            None
        }
    }
}

/// The body of `fetch`: `None` for a failure, a non-2xx answer, or a body not read whole within
/// the fetch's timeout and size cap.
pub async fn fetch(client: Option<&reqwest::Client>, fetch: &DraftFetch) -> Option<Vec<u8>> {
    let client = client?;
    let read = async {
        let mut response = client.get(&fetch.url).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        if response
            .content_length()
            .is_some_and(|length| length > fetch.max_bytes as u64)
        {
            return None;
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if body.len() + chunk.len() > fetch.max_bytes {
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        Some(body)
    };
    let timeout = Duration::from_millis(u64::from(fetch.timeout_ms));
    tokio::time::timeout(timeout, read).await.ok().flatten()
}
