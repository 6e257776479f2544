//! The standalone binary: `init`, `serve`, kill -9 and restart with no committed data lost,
//! OTLP telemetry and the legacy route's deprecation log.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::post;
use serde_json::{Value, json};

use crate::both_backends;
use crate::common::{Backend, Db, ENCRYPTION_KEY_B64, call, database, read_chunks};
use crate::{llm_double, mcp_double};

both_backends!(kill_9_restart_keeps_committed_data);

const BIN: &str = env!("CARGO_BIN_EXE_sitefile-workspace");

fn command(db: &Db, extra: &[(&str, String)]) -> Command {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("PLATFORM_DATABASE_URL", &db.url)
        .env("PLATFORM_WORKSPACE_ENCRYPTION_KEY", ENCRYPTION_KEY_B64)
        .env("RUST_LOG", "info");
    for (k, v) in extra {
        c.env(k, v);
    }
    c
}

fn init(db: &Db, org: &str) -> std::process::Output {
    command(db, &[])
        .args(["init", "--org", org])
        .output()
        .unwrap()
}

/// `init --org acme`, returning the owner key it printed.
fn init_owner(db: &Db) -> String {
    String::from_utf8(init(db, "acme").stdout)
        .unwrap()
        .trim()
        .to_string()
}

struct Server {
    child: Child,
    base: String,
    stderr: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr);
    }
}

/// Sends SIGTERM to the server.
fn sigterm(server: &Server) {
    let term = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
}

/// Waits for the server's process to exit (10 s at most) and returns its status.
async fn exited(server: &mut Server) -> std::process::ExitStatus {
    for _ in 0..200 {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the process did not exit");
}

// `Server::drop` kills and waits for the child; clippy cannot see through the drop.
#[allow(clippy::zombie_processes)]
async fn serve(db: &Db, extra: &[(&str, String)]) -> Server {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}");
    let stderr = std::env::temp_dir().join(format!("ws-stderr-{}", uuid::Uuid::new_v4()));
    let mut env = extra.to_vec();
    env.push(("PLATFORM_PUBLIC_URL", base.clone()));
    let child = command(db, &env)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    for _ in 0..200 {
        if client
            .post(format!("{base}/api/x/tools/y"))
            .send()
            .await
            .is_ok()
        {
            return Server {
                child,
                base,
                stderr,
            };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "server did not start: {}",
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
}

async fn tool(base: &str, key: &str, name: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{base}/api/acme/tools/{name}"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn rpc(url: &str, key: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(url)
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn kill_9_restart_keeps_committed_data(backend: Backend) {
    let db = database(backend).await;
    let out = init(&db, "acme");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let owner = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(owner.starts_with("sfk_"));
    assert!(!init(&db, "acme").status.success(), "the slug is taken");
    let missing_key = Command::new(BIN)
        .env_clear()
        .args(["serve"])
        .output()
        .unwrap();
    assert!(!missing_key.status.success(), "no encryption key, no start");
    assert!(
        String::from_utf8_lossy(&missing_key.stderr).contains("PLATFORM_WORKSPACE_ENCRYPTION_KEY")
    );

    let llm = llm_double::start().await;
    let upstream = mcp_double::start(false).await;
    let env = [
        ("PLATFORM_LLM_BASE_URL", llm.base_url.clone()),
        ("PLATFORM_LLM_MODEL", "m".to_string()),
        ("PLATFORM_RUN_LEASE_MS", "600".to_string()),
    ];
    let mut server = serve(&db, &env).await;
    let base = server.base.clone();
    let (_, conn) = tool(&base, &owner, "COLLECTION_CONNECTIONS_CREATE", json!({ "data": {
        "title": "u", "connection_url": upstream.url, "connection_token": "persisted-token-XYZ" } })).await;
    let conn = conn["item"]["id"].as_str().unwrap().to_string();
    let (_, agent) = tool(
        &base,
        &owner,
        "COLLECTION_VIRTUAL_MCP_CREATE",
        json!({ "data": {
        "title": "a", "connections": [{ "connection_id": conn }] } }),
    )
    .await;
    let agent = agent["item"]["id"].as_str().unwrap().to_string();
    tool(
        &base,
        &owner,
        "COLLECTION_THREADS_CREATE",
        json!({ "data": { "id": "t1", "virtual_mcp_id": agent } }),
    )
    .await;
    let (_, kept) = tool(
        &base,
        &owner,
        "API_KEY_CREATE",
        json!({ "name": "kept", "permissions": { "self": ["COLLECTION_THREADS_GET"] } }),
    )
    .await;
    let (_, revoked) = tool(&base, &owner, "API_KEY_CREATE", json!({ "name": "gone" })).await;
    tool(
        &base,
        &owner,
        "API_KEY_DELETE",
        json!({ "keyId": revoked["id"] }),
    )
    .await;
    let r = reqwest::Client::new()
        .post(format!("{base}/api/acme/pilot/threads/t1/messages"))
        .bearer_auth(&owner)
        .json(&json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "please stall" }] }], "agent": { "id": agent } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    // Killed mid-run, with everything above committed.
    server.child.kill().unwrap();
    server.child.wait().unwrap();

    if let Backend::Sqlite = backend {
        let dir = db
            .url
            .trim_start_matches("sqlite://")
            .trim_end_matches("/workspace.db")
            .to_string();
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("persisted-token-XYZ"),
                "credentials are encrypted at rest"
            );
        }
    }

    let server = serve(&db, &env).await;
    let base = server.base.clone();
    let kept = kept["key"].as_str().unwrap();
    // The dead server's lease lapses; the new server then fails its run.
    let mut status = (0, Value::Null);
    for _ in 0..100 {
        status = tool(&base, kept, "COLLECTION_THREADS_GET", json!({ "id": "t1" })).await;
        if status.1["item"]["status"] != "in_progress" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status.0, 200);
    assert_eq!(
        status.1["item"]["status"], "failed",
        "the interrupted run is marked failed"
    );
    assert_eq!(
        tool(
            &base,
            revoked["key"].as_str().unwrap(),
            "COLLECTION_THREADS_GET",
            json!({ "id": "t1" })
        )
        .await
        .0,
        401
    );
    let (_, messages) = tool(
        &base,
        &owner,
        "COLLECTION_THREAD_MESSAGES_LIST",
        json!({ "thread_id": "t1" }),
    )
    .await;
    assert_eq!(
        messages["items"][0]["parts"][0]["text"], "please stall",
        "the accepted message survived"
    );
    let (status, agent_back) = tool(
        &base,
        &owner,
        "COLLECTION_VIRTUAL_MCP_GET",
        json!({ "id": agent }),
    )
    .await;
    assert_eq!(
        (
            status,
            agent_back["item"]["connections"][0]["connection_id"].as_str()
        ),
        (200, Some(conn.as_str()))
    );
    // The stored credentials still decrypt and reach the upstream.
    let (status, body) = rpc(
        &format!("{base}/api/acme/mcp/{conn}"),
        &owner,
        call("whoami", json!({})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Bearer persisted-token-XYZ"
    );
    // And a new run works after the restart.
    let r = reqwest::Client::new()
        .post(format!("{base}/api/acme/pilot/threads/t1/messages"))
        .bearer_auth(&owner)
        .json(&json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "hello" }] }], "agent": { "id": agent } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    for _ in 0..100 {
        let (_, t) = tool(
            &base,
            &owner,
            "COLLECTION_THREADS_GET",
            json!({ "id": "t1" }),
        )
        .await;
        if t["item"]["status"] == "completed" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the run after the restart did not complete");
}

/// A run whose server is killed mid-run: the other server, sharing the database and Redis,
/// fails it once the dead server's lease lapses, and a reader there sees the run's stream end
/// with `error` and `finish`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_run_ends_its_stream() {
    let db = database(Backend::Postgres).await;
    let owner = init_owner(&db);
    let llm = llm_double::start().await;
    let redis = std::env::var("SITEFILE_TEST_REDIS_URL").expect(
        "SITEFILE_TEST_REDIS_URL is not set: Redis tests need a server. \
         Run scripts/test.sh, or `source scripts/services.sh && services_start` first.",
    );
    let env = [
        ("PLATFORM_LLM_BASE_URL", llm.base_url.clone()),
        ("PLATFORM_LLM_MODEL", "m".to_string()),
        ("PLATFORM_REDIS_URL", redis),
        ("PLATFORM_RUN_LEASE_MS", "600".to_string()),
    ];
    let mut a = serve(&db, &env).await;
    let b = serve(&db, &env).await;
    let (_, agent) = tool(
        &a.base,
        &owner,
        "COLLECTION_VIRTUAL_MCP_CREATE",
        json!({ "data": { "title": "a", "connections": [] } }),
    )
    .await;
    let agent = agent["item"]["id"].as_str().unwrap().to_string();
    let thread = format!("t-{}", uuid::Uuid::new_v4().simple());
    tool(
        &a.base,
        &owner,
        "COLLECTION_THREADS_CREATE",
        json!({ "data": { "id": thread, "virtual_mcp_id": agent } }),
    )
    .await;
    let client = reqwest::Client::new();
    let stream_url = format!("{}/api/acme/pilot/threads/{thread}/stream", b.base);
    let tail = client
        .get(&stream_url)
        .bearer_auth(&owner)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    let reader = tokio::spawn(read_chunks(tail, |c| c["type"] == "finish"));
    let r = client
        .post(format!("{}/api/acme/pilot/threads/{thread}/messages", a.base))
        .bearer_auth(&owner)
        .json(&json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "please stall" }] }], "agent": { "id": agent } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    // Killed once B sees the run in progress.
    let mut running = false;
    for _ in 0..200 {
        let resume = client
            .get(&stream_url)
            .bearer_auth(&owner)
            .send()
            .await
            .unwrap();
        if resume.status() == 200 {
            running = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(running, "the run never started");
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let (chunks, _) = reader.await.unwrap();
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"start"), "{types:?}");
    assert_eq!(&types[types.len() - 2..], ["error", "finish"], "{types:?}");
    let (_, got) = tool(
        &b.base,
        &owner,
        "COLLECTION_THREADS_GET",
        json!({ "id": thread }),
    )
    .await;
    assert_eq!(got["item"]["status"], "failed");
}

/// SIGTERM with a run in progress and streams open: the run is marked failed, its stream
/// ends with `error` and `finish`, an idle stream ends, and the process exits by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_streams_and_exits() {
    let db = database(Backend::Sqlite).await;
    let owner = init_owner(&db);
    let llm = llm_double::start().await;
    let env = [
        ("PLATFORM_LLM_BASE_URL", llm.base_url.clone()),
        ("PLATFORM_LLM_MODEL", "m".to_string()),
    ];
    let mut server = serve(&db, &env).await;
    let base = server.base.clone();
    let (_, agent) = tool(
        &base,
        &owner,
        "COLLECTION_VIRTUAL_MCP_CREATE",
        json!({ "data": { "title": "a", "connections": [] } }),
    )
    .await;
    let agent = agent["item"]["id"].as_str().unwrap().to_string();
    for id in ["busy", "idle"] {
        tool(
            &base,
            &owner,
            "COLLECTION_THREADS_CREATE",
            json!({ "data": { "id": id, "virtual_mcp_id": agent } }),
        )
        .await;
    }
    let client = reqwest::Client::new();
    let tail = |thread: &str| {
        client
            .get(format!("{base}/api/acme/pilot/threads/{thread}/stream"))
            .bearer_auth(&owner)
            .header("accept", "text/event-stream")
            .send()
    };
    let busy = tail("busy").await.unwrap();
    let idle = tail("idle").await.unwrap();
    let r = client
        .post(format!("{base}/api/acme/pilot/threads/busy/messages"))
        .bearer_auth(&owner)
        .json(&json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "please stall" }] }], "agent": { "id": agent } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    for _ in 0..200 {
        if !llm.provider.requests.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sigterm(&server);
    let whole = |response: reqwest::Response| async move {
        tokio::time::timeout(Duration::from_secs(10), response.text())
            .await
            .expect("the stream ends")
            .unwrap()
    };
    let busy = whole(busy).await;
    let chunks: Vec<Value> = busy
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let types: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"start"), "{types:?}");
    assert_eq!(&types[types.len() - 2..], ["error", "finish"], "{types:?}");
    assert!(!whole(idle).await.contains("data:"));
    assert!(exited(&mut server).await.success());
    // Marked failed at once, with its lease given up: a new server need not wait for it.
    let server = serve(&db, &env).await;
    let (_, got) = tool(
        &server.base,
        &owner,
        "COLLECTION_THREADS_GET",
        json!({ "id": "busy" }),
    )
    .await;
    assert_eq!(got["item"]["status"], "failed");
}

/// SIGTERM while a request hangs (its body stalls): the process still exits, once the
/// shutdown timeout has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_exit_is_bounded_by_the_shutdown_timeout() {
    use tokio::io::AsyncWriteExt;
    let db = database(Backend::Sqlite).await;
    let owner = init_owner(&db);
    let env = [
        ("PLATFORM_SHUTDOWN_TIMEOUT_MS", "300".to_string()),
        ("PLATFORM_BODY_TIMEOUT_MS", "600000".to_string()),
    ];
    let mut server = serve(&db, &env).await;
    let mut hanging = tokio::net::TcpStream::connect(server.base.trim_start_matches("http://"))
        .await
        .unwrap();
    let head = format!(
        "POST /api/acme/tools/COLLECTION_THREADS_LIST HTTP/1.1\r\nHost: x\r\n\
         Authorization: Bearer {owner}\r\nContent-Length: 100\r\n\r\n{{"
    );
    hanging.write_all(head.as_bytes()).await.unwrap();
    // The request is being served (its handler waits for the body) before the signal.
    tokio::time::sleep(Duration::from_millis(200)).await;
    sigterm(&server);
    assert!(exited(&mut server).await.success());
    let log = std::fs::read_to_string(&server.stderr).unwrap();
    assert!(log.contains("shutdown deadline"), "{log}");
}

/// SIGTERM while the database hangs (another connection holds SQLite's write lock, so the
/// server's writes wait for its 5 s busy timeout): stopping the runs is abandoned after the
/// shutdown timeout (300 ms), logged, and the process exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_exit_is_bounded_when_the_database_hangs() {
    use sqlx::Connection;
    let db = database(Backend::Sqlite).await;
    assert!(init(&db, "acme").status.success());
    let env = [("PLATFORM_SHUTDOWN_TIMEOUT_MS", "300".to_string())];
    let mut server = serve(&db, &env).await;
    let mut lock = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE")
        .execute(&mut lock)
        .await
        .unwrap();
    sigterm(&server);
    assert!(exited(&mut server).await.success());
    let log = std::fs::read_to_string(&server.stderr).unwrap();
    assert!(
        log.contains("the database did not answer within the shutdown timeout"),
        "{log}"
    );
    sqlx::raw_sql("ROLLBACK").execute(&mut lock).await.unwrap();
}

/// The audit queue's variables: with room for 2 rows, each stall of the audit writer (another
/// connection holds SQLite's write lock for 1 s while 20 calls arrive) is one incident,
/// logged once as it starts and once as it ends, however many calls waited; every call waits
/// (up to `PLATFORM_AUDIT_QUEUE_WAIT_MS`) and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_queue_pressure_is_logged_once_per_incident() {
    use sqlx::Connection;
    let db = database(Backend::Sqlite).await;
    let owner = init_owner(&db);
    let env = [
        ("PLATFORM_AUDIT_QUEUE_ROWS", "2".to_string()),
        ("PLATFORM_AUDIT_QUEUE_WAIT_MS", "10000".to_string()),
    ];
    let server = serve(&db, &env).await;
    let log = || std::fs::read_to_string(&server.stderr).unwrap();
    for incident in 1..=2 {
        let mut lock = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
        sqlx::raw_sql("BEGIN EXCLUSIVE")
            .execute(&mut lock)
            .await
            .unwrap();
        let calls = (0..20).map(|n| {
            let (base, owner) = (&server.base, &owner);
            async move {
                tokio::time::sleep(Duration::from_millis(20 * n)).await;
                tool(base, owner, "COLLECTION_THREADS_LIST", json!({}))
                    .await
                    .0
            }
        });
        let unlock = async {
            tokio::time::sleep(Duration::from_millis(1000)).await;
            sqlx::raw_sql("ROLLBACK").execute(&mut lock).await.unwrap();
        };
        let (statuses, ()) = tokio::join!(futures_util::future::join_all(calls), unlock);
        assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
        // The incident's end is logged once the writer has caught up.
        for _ in 0..100 {
            if log().matches("audit queue has room again").count() == incident {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let log = log();
        assert_eq!(log.matches("audit queue full").count(), incident, "{log}");
        assert_eq!(
            log.matches("audit queue has room again").count(),
            incident,
            "{log}"
        );
    }
    assert!(!log().contains("dropped"));
}

/// The database's absolute location is logged at start, a database that cannot be opened is
/// named in the error, and a storage failure while serving is logged with the database's
/// location while the client gets only "internal error".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_location_is_logged_and_named_in_errors() {
    let dir = std::env::temp_dir().join(format!("ws-cwd-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = database(Backend::Sqlite).await;
    let relative = command(
        &db,
        &[("PLATFORM_DATABASE_URL", "sqlite://data/workspace.db".into())],
    )
    .current_dir(&dir)
    .args(["init", "--org", "acme"])
    .output()
    .unwrap();
    assert!(relative.status.success());
    let log = String::from_utf8_lossy(&relative.stderr);
    let absolute = format!("sqlite://{}", dir.join("data/workspace.db").display());
    assert!(log.contains(&absolute), "{log}");
    let unopenable = command(
        &db,
        &[("PLATFORM_DATABASE_URL", "sqlite:///proc/nope/x.db".into())],
    )
    .args(["init", "--org", "acme"])
    .output()
    .unwrap();
    assert!(!unopenable.status.success());
    let error = String::from_utf8_lossy(&unopenable.stderr);
    assert!(error.contains("sqlite:///proc/nope/x.db"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
    let owner = init_owner(&db);
    let server = serve(&db, &[]).await;
    let log = std::fs::read_to_string(&server.stderr).unwrap();
    assert!(log.contains(&db.url), "{log}");

    // The keys' table gone under the running server: its next key lookup fails.
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url)
        .await
        .unwrap();
    sqlx::raw_sql("DROP TABLE api_keys")
        .execute(&mut conn)
        .await
        .unwrap();
    let (status, body) = tool(&server.base, &owner, "COLLECTION_THREADS_LIST", json!({})).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body,
        json!({ "error": { "code": "INTERNAL", "message": "internal error" } })
    );
    let log = std::fs::read_to_string(&server.stderr).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("storage error"))
        .unwrap_or_else(|| panic!("no storage error logged: {log}"));
    assert!(
        line.contains(&db.url) && line.contains("api_keys"),
        "{line}"
    );
}

/// Bodies received by the OTLP double.
type Received = Arc<Mutex<Vec<String>>>;

async fn otlp_double() -> (String, Received, Received) {
    let (metrics, traces): (Received, Received) = (Arc::default(), Arc::default());
    let (m, t) = (metrics.clone(), traces.clone());
    let router = Router::new()
        .route(
            "/v1/metrics",
            post(move |body: String| async move {
                m.lock().unwrap().push(body);
                "{}"
            }),
        )
        .route(
            "/v1/traces",
            post(move |body: String| async move {
                t.lock().unwrap().push(body);
                "{}"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://127.0.0.1:{port}"), metrics, traces)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telemetry_and_deprecation_log() {
    let db = database(Backend::Sqlite).await;
    let owner = init_owner(&db);
    let (endpoint, metrics, traces) = otlp_double().await;
    let server = serve(
        &db,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200".into()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".into()),
        ],
    )
    .await;
    let upstream = mcp_double::start(false).await;
    let (_, conn) = tool(
        &server.base,
        &owner,
        "COLLECTION_CONNECTIONS_CREATE",
        json!({ "data": { "title": "u", "connection_url": upstream.url } }),
    )
    .await;
    let conn = conn["item"]["id"].as_str().unwrap().to_string();
    let url = format!("{}/api/acme/mcp/{conn}", server.base);
    assert_eq!(
        rpc(&url, &owner, call("echo", json!({ "text": "a" })))
            .await
            .0,
        200
    );
    assert_eq!(rpc(&url, &owner, call("fail", json!({}))).await.0, 200);
    assert_eq!(
        rpc(
            &format!("{}/mcp/{conn}", server.base),
            &owner,
            call("echo", json!({ "text": "b" }))
        )
        .await
        .0,
        200
    );
    let mut ok = false;
    for _ in 0..100 {
        let m = metrics.lock().unwrap().join("\n");
        let t = traces.lock().unwrap().join("\n");
        ok = [
            "connection.proxy.duration",
            "connection.proxy.requests",
            "connection.proxy.errors",
            "\"connection.id\"",
            "\"tool.name\"",
            "\"status\"",
            &conn,
            "\"error\"",
            "\"success\"",
        ]
        .iter()
        .all(|needle| m.contains(needle))
            && [
                "mcp.proxy.callTool",
                "\"connection.id\"",
                "\"tool.name\"",
                "\"request.id\"",
            ]
            .iter()
            .all(|n| t.contains(n));
        if ok {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ok,
        "metrics: {:?}\ntraces: {:?}",
        metrics.lock().unwrap(),
        traces.lock().unwrap()
    );
    // Every method on the legacy route carries the signal and logs the line, whatever
    // its status (GET and DELETE without a session answer 400, as on the canonical route;
    // OPTIONS and PUT get the method router's 405), and the canonical route logs nothing.
    let client = reqwest::Client::new();
    let legacy = format!("{}/mcp/{conn}", server.base);
    for method in ["GET", "DELETE", "OPTIONS", "PUT"] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = client
            .request(method.clone(), &legacy)
            .bearer_auth(&owner)
            .send()
            .await
            .unwrap();
        let expected = if [reqwest::Method::GET, reqwest::Method::DELETE].contains(&method) {
            400
        } else {
            405
        };
        assert_eq!(response.status(), expected, "{method}");
        assert_eq!(response.headers()["deprecation"], "@1795305600", "{method}");
        assert_eq!(
            response.headers()["link"],
            format!("</api/acme/mcp/{conn}>; rel=\"successor-version\""),
            "{method}"
        );
        let canonical = client.request(method.clone(), &url).send().await.unwrap();
        assert!(canonical.headers().get("deprecation").is_none(), "{method}");
    }
    // Without a key: the signal, but no Link naming the organization.
    let anonymous = client.get(&legacy).send().await.unwrap();
    assert_eq!(anonymous.headers()["deprecation"], "@1795305600");
    assert!(anonymous.headers().get("link").is_none());
    let log = std::fs::read_to_string(&server.stderr).unwrap();
    assert_eq!(log.matches("deprecated route").count(), 6, "{log}");
    for method in ["POST", "GET", "DELETE", "OPTIONS", "PUT"] {
        assert!(
            log.lines()
                .any(|l| l.contains("deprecated route") && l.contains(method)),
            "{method}: {log}"
        );
    }
    assert!(
        !log.contains(ENCRYPTION_KEY_B64) && !log.contains(&owner),
        "secrets never logged"
    );
    assert!(
        !log.contains('\u{1b}'),
        "no terminal colour codes in a log that is a file: {log:?}"
    );
}

/// `--listen 127.0.0.1:0` serves on a port the OS picks, and the start line names that port
/// (not 0), so a caller can find the server from its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_on_port_zero_logs_the_bound_address() {
    let db = database(Backend::Sqlite).await;
    let stderr = std::env::temp_dir().join(format!("ws-stderr-{}", uuid::Uuid::new_v4()));
    let child = command(&db, &[])
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut server = Server {
        child,
        base: String::new(),
        stderr,
    };
    let mut port = None;
    for _ in 0..200 {
        let log = std::fs::read_to_string(&server.stderr).unwrap_or_default();
        if let Some(line) = log.lines().find(|l| l.contains("workspace API listening")) {
            port = line
                .split("listen=127.0.0.1:")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|p| p.parse::<u16>().ok());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let port = port.expect("a start line naming the address");
    assert_ne!(port, 0, "the start line names the bound port");
    server.base = format!("http://127.0.0.1:{port}");
    let answer = reqwest::Client::new()
        .post(format!("{}/api/x/tools/y", server.base))
        .send()
        .await
        .expect("the server answers on the logged port");
    assert_eq!(answer.status(), 401);
    sigterm(&server);
    assert!(exited(&mut server).await.success());
}
