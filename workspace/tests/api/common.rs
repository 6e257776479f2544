//! Test harness: databases for both backends, the workspace router on a loopback port,
//! and HTTP helpers.

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use sitefile_workspace::{AppState, Config};
use sqlx::Connection;

/// Key used for credentials at rest in tests.
pub const ENCRYPTION_KEY: [u8; 32] = [42; 32];
/// Its base64 form, for spawned servers.
pub const ENCRYPTION_KEY_B64: &str = "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=";

/// The storage backend a test runs against.
#[derive(Clone, Copy, Debug)]
pub enum Backend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL from `SITEFILE_TEST_POSTGRES_URL`.
    Postgres,
}

/// Runs a test body against both backends.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::common::Backend::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::common::Backend::Postgres).await
            }
        }
    )*};
}

/// A fresh, empty database.
pub struct Db {
    /// Its URL.
    pub url: String,
    dir: Option<PathBuf>,
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A fresh database: a temporary SQLite file, or a new PostgreSQL database.
pub async fn database(backend: Backend) -> Db {
    match backend {
        Backend::Sqlite => {
            let dir = std::env::temp_dir().join(format!("sitefile-ws-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).unwrap();
            Db {
                url: format!("sqlite://{}/workspace.db", dir.display()),
                dir: Some(dir),
            }
        }
        Backend::Postgres => {
            let admin = std::env::var("SITEFILE_TEST_POSTGRES_URL").expect(
                "SITEFILE_TEST_POSTGRES_URL is not set: PostgreSQL tests need a server. \
                 Run scripts/test.sh, or `source scripts/services.sh && services_start` first.",
            );
            let name = format!("ws_{}", uuid::Uuid::new_v4().simple());
            let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .unwrap();
            let (base, _) = admin.rsplit_once('/').unwrap();
            Db {
                url: format!("{base}/{name}"),
                dir: None,
            }
        }
    }
}

/// A test configuration over `db`.
pub fn config(db: &Db) -> Config {
    let mut config = Config::new(db.url.clone(), ENCRYPTION_KEY);
    config.keepalive = Duration::from_millis(300);
    config
}

/// A running workspace API with one organization.
pub struct Api {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// HTTP client.
    pub client: reqwest::Client,
    /// The organization slug.
    pub org: String,
    /// Its owner key.
    pub owner: String,
    /// The database, kept alive (and removed) with the server.
    _db: std::sync::Arc<Db>,
    config: Config,
}

/// A loopback listener on a free port, and its base URL.
async fn listen() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    (listener, base)
}

/// Serves the workspace router for `config` on `listener`, in the background.
async fn serve(listener: tokio::net::TcpListener, config: &Config) {
    let state = AppState::from_config(config.clone()).await.unwrap();
    let config = config.clone();
    tokio::spawn(async move {
        let router = sitefile_workspace::router(state);
        let limits = config.limits;
        sitefile_workspace::http::serve(listener, router, &limits, std::future::pending()).await
    });
}

impl Api {
    /// Starts the router with defaults.
    pub async fn start(backend: Backend) -> Api {
        Self::start_with(backend, |_| {}).await
    }

    /// Starts the router after adjusting the configuration.
    pub async fn start_with(backend: Backend, tweak: impl FnOnce(&mut Config)) -> Api {
        let db = database(backend).await;
        let mut config = config(&db);
        tweak(&mut config);
        let (listener, base) = listen().await;
        config.public_url = base.clone();
        let owner = sitefile_workspace::cli::init(&config, "acme")
            .await
            .unwrap();
        serve(listener, &config).await;
        Api {
            base,
            client: reqwest::Client::new(),
            org: "acme".into(),
            owner,
            _db: std::sync::Arc::new(db),
            config,
        }
    }

    /// Another server over the same database and configuration, after `tweak` (several
    /// servers behind a load balancer).
    pub async fn another_server(&self, tweak: impl FnOnce(&mut Config)) -> Api {
        let mut config = self.config.clone();
        tweak(&mut config);
        let (listener, base) = listen().await;
        serve(listener, &config).await;
        Api {
            base,
            client: reqwest::Client::new(),
            org: self.org.clone(),
            owner: self.owner.clone(),
            _db: self._db.clone(),
            config,
        }
    }

    /// The URL of the database the server runs on.
    pub fn database_url(&self) -> &str {
        &self.config.database_url
    }

    /// Creates another organization in the same database; returns its owner key.
    pub async fn new_org(&self, slug: &str) -> String {
        sitefile_workspace::cli::init(&self.config, slug)
            .await
            .unwrap()
    }

    /// Creates another organization whose owner also signs in as the OAuth subject
    /// `subject`; returns its owner key.
    pub async fn new_org_as(&self, slug: &str, subject: &str) -> String {
        sitefile_workspace::cli::init_owner(&self.config, slug, Some(subject))
            .await
            .unwrap()
    }

    /// `POST /api/<org>/tools/<name>` with `key`.
    pub async fn tool_in(&self, org: &str, key: &str, name: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}/api/{org}/tools/{name}", self.base))
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// A tool call in the test organization.
    pub async fn tool(&self, key: &str, name: &str, body: Value) -> (u16, Value) {
        self.tool_in(&self.org, key, name, body).await
    }

    /// A tool call that must succeed; returns its output.
    pub async fn ok(&self, key: &str, name: &str, body: Value) -> Value {
        let (status, out) = self.tool(key, name, body).await;
        assert_eq!(status, 200, "{name}: {out}");
        out
    }

    /// POSTs a JSON-RPC message to `path`.
    pub async fn rpc(
        &self,
        path: &str,
        key: Option<&str>,
        body: Value,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        self.rpc_with(path, key, &body, &[]).await
    }

    /// [`Api::rpc`] with more request headers.
    pub async fn rpc_with(
        &self,
        path: &str,
        key: Option<&str>,
        body: &Value,
        headers: &[(&'static str, String)],
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("accept", "application/json, text/event-stream")
            .json(body);
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        (
            status,
            headers,
            response.json().await.unwrap_or(Value::Null),
        )
    }

    /// Creates a connection and returns its id.
    pub async fn connection(&self, key: &str, url: &str, extra: Value) -> String {
        let mut data = json!({ "title": "upstream", "connection_url": url });
        for (k, v) in extra.as_object().unwrap() {
            data[k] = v.clone();
        }
        let out = self
            .ok(
                key,
                "COLLECTION_CONNECTIONS_CREATE",
                json!({ "data": data }),
            )
            .await;
        out["item"]["id"].as_str().unwrap().to_string()
    }

    /// Creates an agent over `connections` and returns its id.
    pub async fn agent(&self, key: &str, connections: &[&str]) -> String {
        let members: Vec<Value> = connections
            .iter()
            .map(|c| json!({ "connection_id": c }))
            .collect();
        let out = self
            .ok(
                key,
                "COLLECTION_VIRTUAL_MCP_CREATE",
                json!({ "data": {
                "title": "helper", "instructions": "Be brief.", "connections": members } }),
            )
            .await;
        out["item"]["id"].as_str().unwrap().to_string()
    }

    /// Creates a key with `permissions` and returns `(id, value)`.
    pub async fn key(&self, permissions: Value) -> (String, String) {
        let out = self
            .ok(
                &self.owner,
                "API_KEY_CREATE",
                json!({ "name": "test", "permissions": permissions }),
            )
            .await;
        (
            out["id"].as_str().unwrap().into(),
            out["key"].as_str().unwrap().into(),
        )
    }
}

/// A JSON-RPC `tools/call` message.
pub fn call(name: &str, arguments: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": name, "arguments": arguments } })
}

/// A JSON-RPC request without params.
pub fn request(method: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": {} })
}

/// Reads SSE `data:` chunks until `stop` returns true for one (or the time runs out).
pub async fn read_chunks(
    response: reqwest::Response,
    mut stop: impl FnMut(&Value) -> bool,
) -> (Vec<Value>, usize) {
    let mut chunks = Vec::new();
    let mut comments = 0;
    let mut buffer = String::new();
    let mut stream = response.bytes_stream();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let next = tokio::time::timeout_at(deadline, stream.next()).await;
        let Ok(Some(Ok(bytes))) = next else {
            panic!("stream ended early: {chunks:?}")
        };
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            for line in event.lines() {
                if line.starts_with(':') {
                    comments += 1;
                } else if let Some(data) = line.strip_prefix("data: ") {
                    let chunk: Value = serde_json::from_str(data).unwrap();
                    let done = stop(&chunk);
                    chunks.push(chunk);
                    if done {
                        return (chunks, comments);
                    }
                }
            }
        }
    }
}

/// Polls `COLLECTION_THREADS_GET` until the status is not `in_progress`.
pub async fn wait_settled(api: &Api, key: &str, thread: &str) -> String {
    for _ in 0..200 {
        let out = api
            .ok(key, "COLLECTION_THREADS_GET", json!({ "id": thread }))
            .await;
        let status = out["item"]["status"].as_str().unwrap().to_string();
        if status != "in_progress" {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("thread {thread} never settled");
}

/// POSTs 2 MiB of JSON whitespace to `path` over a raw connection, with its `Content-Length`
/// or chunked, while reading the answer: the server answers once it has read 1 MiB and closes
/// the connection, so the rest may not be writable (an HTTP client would report that failed
/// write instead of the answer). The answer's status, `Content-Type` and body.
pub async fn post_over_limit(api: &Api, path: &str, chunked: bool) -> (u16, String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const CHUNK: usize = 64 * 1024;
    const CHUNKS: usize = 32;
    let host = api.base.trim_start_matches("http://");
    let socket = tokio::net::TcpStream::connect(host).await.unwrap();
    let (mut reader, mut writer) = socket.into_split();
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_string()
    } else {
        format!("Content-Length: {}", CHUNK * CHUNKS)
    };
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {framing}\r\n\r\n",
        api.owner
    );
    let write = async move {
        let mut chunk = vec![b' '; CHUNK];
        if chunked {
            chunk = [format!("{CHUNK:x}\r\n").as_bytes(), &chunk, b"\r\n"].concat();
        }
        writer.write_all(head.as_bytes()).await?;
        for _ in 0..CHUNKS {
            writer.write_all(&chunk).await?;
        }
        if chunked {
            writer.write_all(b"0\r\n\r\n").await?;
        }
        Ok::<_, std::io::Error>(writer)
    };
    let read = async {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut buffer).await {
            seen.extend_from_slice(&buffer[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    };
    let (_, answer) =
        tokio::time::timeout(Duration::from_secs(10), async { tokio::join!(write, read) })
            .await
            .expect("answered and closed within 10 s");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    (status, content_type, body.to_string())
}
