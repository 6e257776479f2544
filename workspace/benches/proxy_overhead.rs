//! Proxy overhead: a `tools/call` through `/api/:org/mcp/:connectionId` versus directly to
//! the same loopback upstream. Prints p50/p99 latency of both (and the difference) and the
//! sustained proxied calls per second, then runs the criterion comparison.
//!
//! `cargo bench -p sitefile-workspace --bench proxy_overhead`

use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::post;
use criterion::Criterion;
use serde_json::{Value, json};
use sitefile_workspace::{AppState, Config};

/// A minimal stateless MCP upstream: initialize, tools/list, tools/call `echo`.
async fn upstream(body: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let msg: Value = serde_json::from_str(&body).unwrap();
    let Some(id) = msg.get("id").cloned() else {
        return axum::http::StatusCode::ACCEPTED.into_response();
    };
    let result = match msg["method"].as_str().unwrap_or_default() {
        "initialize" => json!({ "protocolVersion": "2025-06-18", "capabilities": { "tools": {} },
                                "serverInfo": { "name": "bench", "version": "1" } }),
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

struct Setup {
    client: reqwest::Client,
    direct: String,
    bare: String,
    proxied: String,
    key: String,
    _dir: std::path::PathBuf,
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
    Setup {
        client,
        direct,
        bare,
        proxied,
        key,
        _dir: dir,
    }
}

async fn call(s: &Setup, url: &str) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": { "name": "echo", "arguments": { "text": "hi" } } });
    let response = s
        .client
        .post(url)
        .bearer_auth(&s.key)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let _ = response.bytes().await.unwrap();
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn latencies(s: &Setup, url: &str, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call(s, url).await;
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
        for _ in 0..500 {
            call(setup, &setup.direct).await;
            call(setup, &setup.bare).await;
            call(setup, &setup.proxied).await;
        }
        let direct = latencies(setup, &setup.direct, 5000).await;
        let bare = latencies(setup, &setup.bare, 5000).await;
        let proxied = latencies(setup, &setup.proxied, 5000).await;
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        for (name, p) in [("p50", 0.50), ("p99", 0.99)] {
            let (d, b, x) = (
                percentile(&direct, p),
                percentile(&bare, p),
                percentile(&proxied, p),
            );
            println!(
                "{name}: direct {:>6.1} µs  proxied {:>6.1} µs  added {:>6.1} µs  \
                 (a bare forwarder adds {:>6.1} µs)",
                micros(d),
                micros(x),
                micros(x) - micros(d),
                micros(b) - micros(d),
            );
        }
        let rate = throughput(setup, 16, Duration::from_secs(5)).await;
        println!("sustained: {rate:.0} proxied tools/call per second (16 concurrent clients)");
    });
    let mut criterion = Criterion::default().configure_from_args().sample_size(50);
    let mut group = criterion.benchmark_group("tools_call");
    group.bench_function("direct", |b| {
        b.to_async(&runtime).iter(|| call(setup, &setup.direct))
    });
    group.bench_function("proxied", |b| {
        b.to_async(&runtime).iter(|| call(setup, &setup.proxied))
    });
    group.finish();
    criterion.final_summary();
}
