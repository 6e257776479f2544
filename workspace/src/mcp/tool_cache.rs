//! A short-lived cache of each connection's `tools/list` (public markers and schemas), as the
//! service lists it: in the caller's shared upstream session, declaring no client
//! capabilities, never in a downstream session (whose client's capabilities may add tools that
//! no other caller reaches).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Mutex;

use super::upstream::{Target, Upstream, UpstreamError};

/// How long a listing is trusted before it is fetched again.
const TTL: Duration = Duration::from_secs(60);

/// One cached listing: when it was fetched, for which connection revision, the tools.
type Entry = (Instant, i64, Arc<Vec<Value>>);

/// Cached tool listings, keyed by connection id.
#[derive(Default)]
pub struct ToolCache {
    entries: Mutex<HashMap<String, Entry>>,
}

impl ToolCache {
    /// The connection's tools, from the cache or fetched from the upstream.
    pub async fn tools(
        &self,
        upstream: &Arc<Upstream>,
        target: &Target,
    ) -> Result<Arc<Vec<Value>>, UpstreamError> {
        if let Some((at, revision, tools)) = self.entries.lock().await.get(&target.connection_id)
            && at.elapsed() < TTL
            && *revision == target.revision
        {
            return Ok(tools.clone());
        }
        let as_the_service = Target {
            session: None,
            relay: None,
            envelope: None,
            ..target.clone()
        };
        let tools = Arc::new(upstream.list_tools(&as_the_service).await?);
        self.store(target, tools.clone()).await;
        Ok(tools)
    }

    /// Records a listing seen on its way through the proxy.
    pub async fn store(&self, target: &Target, tools: Arc<Vec<Value>>) {
        self.entries.lock().await.insert(
            target.connection_id.clone(),
            (Instant::now(), target.revision, tools),
        );
    }
}

/// The tool named `name` in a listing.
pub fn find<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
}

/// Whether a tool is marked public (`_meta['mcp.platform'].public_tool` or the legacy
/// `_meta['mcp.legacy'].public_tool`, boolean `true`).
pub fn is_public(tool: &Value) -> bool {
    let meta = &tool["_meta"];
    meta["mcp.platform"]["public_tool"] == Value::Bool(true)
        || meta["mcp.legacy"]["public_tool"] == Value::Bool(true)
}
