//! The stores `sitefile kv` writes Fast Deploy's keys to: the Redis the servers read, or a
//! Cloudflare Workers KV namespace (what an edge Worker reads as `PLATFORM_KV`), through
//! Cloudflare's API. The same keys and bytes either way (`sitefile_core::fast_deploy`).

use crate::redis_kv::{bounded, connect};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use redis::aio::ConnectionManager;
use sitefile_core::PlatformConfig;
use std::time::Duration;

/// Where Cloudflare's API is unless `CLOUDFLARE_API_BASE_URL` says otherwise (wrangler's
/// variable, for a proxy or a test double).
pub const CLOUDFLARE_API: &str = "https://api.cloudflare.com/client/v4";

/// How long one call to Cloudflare's API may take, a snapshot's upload included.
const CLOUDFLARE_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest value Workers KV holds (25 MiB): a bigger snapshot is refused before it is sent.
pub const WORKERS_KV_MAX_VALUE: usize = 25 * 1024 * 1024;

/// A store `sitefile kv` reads and writes.
pub enum KvStore {
    /// Redis (`redis://`; `rediss://` is refused: the redis client is built without TLS).
    Redis(ConnectionManager),
    /// A Workers KV namespace.
    Cloudflare(WorkersKv),
}

/// A Workers KV namespace reached through Cloudflare's API.
pub struct WorkersKv {
    client: reqwest::Client,
    /// `<api>/accounts/<account>/storage/kv/namespaces/<namespace>`.
    namespace_url: String,
    token: String,
}

impl KvStore {
    /// The store the environment names: `EDGE_KV_NAMESPACE_ID`, a Workers KV namespace id (with
    /// `EDGE_ACCOUNT_ID` and `EDGE_API_TOKEN`, defaulting to `CLOUDFLARE_ACCOUNT_ID` and
    /// `CLOUDFLARE_API_TOKEN`) or a URL (Redis); else `PLATFORM_KV`, a Redis URL. `env` reads the
    /// variables the core's configuration does not hold. Errors never repeat a value that may
    /// carry credentials.
    pub fn from_env(
        platform: &PlatformConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<KvStore, String> {
        let fast_deploy = &platform.fast_deploy;
        let namespace = fast_deploy.edge_kv_namespace_id.as_deref();
        if let Some(namespace) = namespace.filter(|n| !n.contains(':')) {
            let account = fast_deploy
                .edge_account_id
                .clone()
                .or_else(|| env("CLOUDFLARE_ACCOUNT_ID"))
                .filter(|a| !a.is_empty());
            let token = fast_deploy
                .edge_api_token
                .as_ref()
                .map(|t| t.expose().to_string())
                .or_else(|| env("CLOUDFLARE_API_TOKEN"))
                .filter(|t| !t.is_empty());
            let (Some(account), Some(token)) = (account, token) else {
                return Err(
                    "EDGE_KV_NAMESPACE_ID names a Workers KV namespace: set EDGE_ACCOUNT_ID \
                     (or CLOUDFLARE_ACCOUNT_ID) and EDGE_API_TOKEN (or CLOUDFLARE_API_TOKEN, a \
                     token that may edit Workers KV)"
                        .into(),
                );
            };
            let api = env("CLOUDFLARE_API_BASE_URL").unwrap_or_else(|| CLOUDFLARE_API.into());
            return WorkersKv::new(&api, &account, namespace, token).map(KvStore::Cloudflare);
        }
        Self::redis(&redis_url(platform, env)?, "the key-value store")
    }

    /// The Redis at `url`; `what` names it in errors.
    pub fn redis(url: &str, what: &str) -> Result<KvStore, String> {
        connect(url, what).map(KvStore::Redis)
    }

    /// The value of `key`, `None` when there is none.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        match self {
            KvStore::Redis(store) => {
                bounded(redis::cmd("GET").arg(key).query_async(&mut store.clone())).await
            }
            KvStore::Cloudflare(kv) => kv.get(key).await,
        }
    }

    /// Writes `writes` in order — on Redis all at once; on Workers KV one after the other, so a
    /// reader between two sees the first without the second.
    pub async fn put(&self, writes: &[(String, Vec<u8>)]) -> Result<(), String> {
        match self {
            KvStore::Redis(store) => {
                let mut pipe = redis::pipe();
                pipe.atomic();
                for (key, value) in writes {
                    pipe.cmd("SET").arg(key).arg(value).ignore();
                }
                bounded(pipe.query_async::<()>(&mut store.clone())).await
            }
            KvStore::Cloudflare(kv) => {
                for (key, value) in writes {
                    kv.put(key, value).await?;
                }
                Ok(())
            }
        }
    }

    /// Deletes `keys`.
    pub async fn delete(&self, keys: &[String]) -> Result<(), String> {
        if keys.is_empty() {
            return Ok(());
        }
        match self {
            KvStore::Redis(store) => {
                bounded(redis::cmd("DEL").arg(keys).query_async(&mut store.clone())).await
            }
            KvStore::Cloudflare(kv) => {
                for key in keys {
                    kv.delete(key).await?;
                }
                Ok(())
            }
        }
    }
}

/// The Redis URL: `EDGE_KV_NAMESPACE_ID`, else `PLATFORM_KV`, with `EDGE_ACCOUNT_ID` and
/// `EDGE_API_TOKEN` (default `REDISCLI_AUTH`) as its user and password.
fn redis_url(
    platform: &PlatformConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let fast_deploy = &platform.fast_deploy;
    let namespace = fast_deploy
        .edge_kv_namespace_id
        .as_deref()
        .or(fast_deploy.kv.as_deref())
        .ok_or(
            "no key-value store: set PLATFORM_KV to a redis:// URL, or EDGE_KV_NAMESPACE_ID to a \
             Workers KV namespace id (or a redis:// URL)",
        )?;
    let mut url = url::Url::parse(namespace)
        .map_err(|e| format!("the key-value store's address is not a URL: {e}"))?;
    if let Some(account) = &fast_deploy.edge_account_id {
        url.set_username(account)
            .map_err(|()| "EDGE_ACCOUNT_ID cannot be used with the store's URL".to_string())?;
    }
    let token = fast_deploy
        .edge_api_token
        .as_ref()
        .map(|t| t.expose().to_string())
        .or_else(|| env("REDISCLI_AUTH").filter(|t| !t.is_empty()));
    if let Some(token) = token {
        url.set_password(Some(&token))
            .map_err(|()| "EDGE_API_TOKEN cannot be used with the store's URL".to_string())?;
    }
    Ok(url.to_string())
}

impl WorkersKv {
    fn new(api: &str, account: &str, namespace: &str, token: String) -> Result<WorkersKv, String> {
        let parsed = url::Url::parse(api)
            .map_err(|e| format!("CLOUDFLARE_API_BASE_URL is not a URL: {e}"))?;
        let loopback = matches!(
            parsed.host(),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback()
        ) || matches!(parsed.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
            || parsed.host_str() == Some("localhost");
        if parsed.scheme() != "https" && !loopback {
            return Err(
                "CLOUDFLARE_API_BASE_URL must be https (the API token travels with every call)"
                    .into(),
            );
        }
        let segment = |s: &str| utf8_percent_encode(s, NON_ALPHANUMERIC).to_string();
        let client = reqwest::Client::builder()
            .timeout(CLOUDFLARE_CALL_TIMEOUT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(WorkersKv {
            client,
            namespace_url: format!(
                "{}/accounts/{}/storage/kv/namespaces/{}",
                api.trim_end_matches('/'),
                segment(account),
                segment(namespace)
            ),
            token,
        })
    }

    fn value_url(&self, key: &str) -> String {
        format!(
            "{}/values/{}",
            self.namespace_url,
            utf8_percent_encode(key, NON_ALPHANUMERIC)
        )
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, String> {
        let response = self.send(self.client.get(self.value_url(key)), key).await?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let mut response = checked(response, key).await?;
        let too_big =
            || format!("{key}: over the {WORKERS_KV_MAX_VALUE} bytes a Workers KV value holds");
        if response
            .content_length()
            .is_some_and(|n| n > WORKERS_KV_MAX_VALUE as u64)
        {
            return Err(too_big());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("{key}: {e}"))? {
            if bytes.len() + chunk.len() > WORKERS_KV_MAX_VALUE {
                return Err(too_big());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Some(bytes))
    }

    async fn put(&self, key: &str, value: &[u8]) -> Result<(), String> {
        if value.len() > WORKERS_KV_MAX_VALUE {
            return Err(format!(
                "{key}: {} bytes, over the {WORKERS_KV_MAX_VALUE} bytes a Workers KV value holds",
                value.len()
            ));
        }
        let request = self.client.put(self.value_url(key)).body(value.to_vec());
        checked(self.send(request, key).await?, key).await.map(drop)
    }

    async fn delete(&self, key: &str) -> Result<(), String> {
        let request = self.client.delete(self.value_url(key));
        checked(self.send(request, key).await?, key).await.map(drop)
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        key: &str,
    ) -> Result<reqwest::Response, String> {
        request
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| format!("{key}: {e}"))
    }
}

/// The response when it succeeded; else the error Cloudflare's API gave (`errors[].message`).
async fn checked(response: reqwest::Response, key: &str) -> Result<reqwest::Response, String> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    let messages: Vec<String> = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            v["errors"].as_array().map(|errors| {
                errors
                    .iter()
                    .filter_map(|e| e["message"].as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default();
    let why = if messages.is_empty() {
        body.chars().take(200).collect()
    } else {
        messages.join("; ")
    };
    Err(format!("{key}: Cloudflare's API answered {status}: {why}"))
}
