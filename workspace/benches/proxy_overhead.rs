//! Proxy overhead: a `tools/call` through `/api/:org/mcp/:connectionId` versus directly to
//! the same loopback upstream, in three forms: a call without a session (2025 revisions), a
//! call in an MCP session (2025-11-25: `initialize`, then `Mcp-Session-Id`), and a stateless
//! call (2026-07-28: the envelope and its headers; the upstream, which speaks both, is then
//! spoken to statelessly). Prints p50/p99 latency of each (and what the proxy adds) and the
//! sustained proxied calls per second, then runs the criterion comparison.
//!
//! `cargo bench -p sitefile-workspace --bench proxy_overhead`

use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::post;
use criterion::Criterion;
use serde_json::{Value, json};
use sitefile_workspace::{AppState, Config};

/// The 2026-07-28 envelope key of the request's revision.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// A minimal MCP upstream of both revisions (sessions are not kept): initialize or
/// server/discover, tools/list, tools/call `echo`.
async fn upstream(body: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let msg: Value = serde_json::from_str(&body).unwrap();
    let Some(id) = msg.get("id").cloned() else {
        return axum::http::StatusCode::ACCEPTED.into_response();
    };
    let result = match msg["method"].as_str().unwrap_or_default() {
        "initialize" => json!({ "protocolVersion": "2025-11-25", "capabilities": { "tools": {} },
                                "serverInfo": { "name": "bench", "version": "1" } }),
        "server/discover" => json!({ "resultType": "complete", "supportedVersions": ["2026-07-28"],
                                "capabilities": { "tools": {} }, "ttlMs": 0, "cacheScope": "private" }),
        "tools/list" => json!({ "tools": [{ "name": "echo", "inputSchema": { "type": "object",
                                "required": ["text"], "properties": { "text": { "type": "string" } } } }] }),
        _ => json!({ "content": [{ "type": "text", "text": msg["params"]["arguments"]["text"] }] }),
    };
    axum::Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response()
}

/// Serves `router` on a loopback port as `sitefile serve` does; returns its base URL.
async fn listen(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let limits = sitefile_workspace::http::ConnectionLimits::default();
    tokio::spawn(async move {
        sitefile_workspace::http::serve(listener, router, &limits, std::future::pending()).await
    });
    format!("http://127.0.0.1:{port}")
}

/// The floor of any HTTP proxy here: a route that forwards the body to `upstream` with a
/// pooled reqwest client and returns the answer, with no authentication or MCP handling.
fn bare_forwarder(upstream: String) -> Router {
    let client = reqwest::Client::new();
    Router::new().route(
        "/mcp",
        post(move |body: axum::body::Bytes| {
            let (client, upstream) = (client.clone(), upstream.clone());
            async move {
                let answer = client
                    .post(&upstream)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let bytes = answer.bytes().await.unwrap();
                ([("content-type", "application/json")], bytes)
            }
        }),
    )
}

/// One way of calling: where, with which headers and envelope.
struct Way {
    url: String,
    headers: Vec<(&'static str, String)>,
    stateless: bool,
}

struct Setup {
    client: reqwest::Client,
    direct: Way,
    bare: Way,
    proxied: Way,
    session: Way,
    stateless: Way,
    key: String,
    _dir: std::path::PathBuf,
}

/// A way of calling `url` with no more headers.
fn plain(url: &str) -> Way {
    Way {
        url: url.to_string(),
        headers: Vec::new(),
        stateless: false,
    }
}

async fn setup() -> Setup {
    let direct = format!(
        "{}/mcp",
        listen(Router::new().route("/mcp", post(upstream))).await
    );
    let bare = format!("{}/mcp", listen(bare_forwarder(direct.clone())).await);
    let dir = std::env::temp_dir().join(format!("ws-bench-{}", uuid::Uuid::new_v4()));
    let config = Config::new(format!("sqlite://{}/workspace.db", dir.display()), [7; 32]);
    let key = sitefile_workspace::cli::init(&config, "bench")
        .await
        .unwrap();
    let state = AppState::from_config(config).await.unwrap();
    let base = listen(sitefile_workspace::router(state)).await;
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!(
            "{base}/api/bench/tools/COLLECTION_CONNECTIONS_CREATE"
        ))
        .bearer_auth(&key)
        .json(&json!({ "data": { "title": "bench", "connection_url": direct } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let proxied = format!(
        "{base}/api/bench/mcp/{}",
        created["item"]["id"].as_str().unwrap()
    );
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "bench", "version": "1" } } });
    let opened = client
        .post(&proxied)
        .bearer_auth(&key)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    let session_id = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let session = Way {
        url: proxied.clone(),
        headers: vec![
            ("mcp-session-id", session_id),
            ("mcp-protocol-version", "2025-11-25".into()),
        ],
        stateless: false,
    };
    let stateless = Way {
        url: proxied.clone(),
        headers: vec![
            ("mcp-protocol-version", "2026-07-28".into()),
            ("mcp-method", "tools/call".into()),
            ("mcp-name", "echo".into()),
        ],
        stateless: true,
    };
    Setup {
        client,
        direct: plain(&direct),
        bare: plain(&bare),
        proxied: plain(&proxied),
        session,
        stateless,
        key,
        _dir: dir,
    }
}

async fn call(s: &Setup, way: &Way) {
    let mut body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": "echo", "arguments": { "text": "hi" } } });
    if way.stateless {
        body["params"]["_meta"] = json!({ VERSION_KEY: "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} });
    }
    let mut request = s
        .client
        .post(&way.url)
        .bearer_auth(&s.key)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    for (name, value) in &way.headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.unwrap();
    assert!(response.status().is_success());
    let _ = response.bytes().await.unwrap();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn latencies(s: &Setup, way: &Way, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call(s, way).await;
        out.push(t.elapsed());
    }
    out.sort();
    out
}

async fn throughput(s: &'static Setup, workers: usize, time: Duration) -> f64 {
    let deadline = Instant::now() + time;
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    call(s, &s.proxied).await;
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    total as f64 / time.as_secs_f64()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let setup: &'static Setup = Box::leak(Box::new(runtime.block_on(setup())));
    runtime.block_on(async {
        let ways = [
            &setup.direct,
            &setup.bare,
            &setup.proxied,
            &setup.session,
            &setup.stateless,
        ];
        for _ in 0..500 {
            for way in ways {
                call(setup, way).await;
            }
        }
        let mut measured = Vec::new();
        for way in ways {
            measured.push(latencies(setup, way, 5000).await);
        }
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        for (name, p) in [("p50", 0.50), ("p99", 0.99)] {
            let at: Vec<f64> = measured.iter().map(|m| micros(percentile(m, p))).collect();
            let direct = at[0];
            println!(
                "{name}: direct {direct:>6.1} µs  proxied: no session {:>6.1} µs (+{:.1}), \
                 2025 session {:>6.1} µs (+{:.1}), 2026 stateless {:>6.1} µs (+{:.1})  \
                 (a bare forwarder adds {:.1} µs)",
                at[2],
                at[2] - direct,
                at[3],
                at[3] - direct,
                at[4],
                at[4] - direct,
                at[1] - direct,
            );
        }
        let rate = throughput(setup, 16, Duration::from_secs(5)).await;
        println!("sustained: {rate:.0} proxied tools/call per second (16 concurrent clients)");
    });
    let mut criterion = Criterion::default().configure_from_args().sample_size(50);
    let mut group = criterion.benchmark_group("tools_call");
    for (name, way) in [
        ("direct", &setup.direct),
        ("proxied", &setup.proxied),
        ("proxied_2025_session", &setup.session),
        ("proxied_2026_stateless", &setup.stateless),
    ] {
        group.bench_function(name, |b| b.to_async(&runtime).iter(|| call(setup, way)));
    }
    group.finish();
    criterion.final_summary();
}
