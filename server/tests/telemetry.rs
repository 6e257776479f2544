//! `sitefile serve`'s telemetry, exported to a small OTLP/HTTP collector on loopback written
//! here: spans, metrics and logs per the `PLATFORM_OTEL_*` variables, with their headers and
//! token, sampling and error promotion; and no secret in anything exported or logged.

use serde_json::Value;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;

mod common;
use common::{STOREFRONT, Server, TOKEN, client};

/// The collector's auth token, as `PLATFORM_OTEL_AUTH_TOKEN` holds it.
const OTEL_TOKEN: &str = "Bearer otel-t0ken";

/// One export the collector received.
#[derive(Debug, Clone)]
struct Export {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

/// An OTLP/HTTP (JSON) collector: keeps every export posted to it.
struct Collector {
    base: String,
    exports: Arc<Mutex<Vec<Export>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Collector {
    async fn start() -> Collector {
        let exports: Arc<Mutex<Vec<Export>>> = Arc::default();
        let kept = exports.clone();
        let router = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let kept = kept.clone();
            async move {
                let path = request.uri().path().to_string();
                let headers = request
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
                    .collect();
                let bytes = axum::body::to_bytes(request.into_body(), usize::MAX)
                    .await
                    .unwrap();
                let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                kept.lock().unwrap().push(Export {
                    path,
                    headers,
                    body,
                });
                "{}"
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Collector {
            base,
            exports,
            task,
        }
    }

    /// The exports posted to `path`.
    fn posted_to(&self, path: &str) -> Vec<Export> {
        let exports = self.exports.lock().unwrap();
        exports.iter().filter(|e| e.path == path).cloned().collect()
    }

    /// Every export, as text.
    fn all_text(&self) -> String {
        let exports = self.exports.lock().unwrap();
        format!("{exports:?}")
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A loopback address nothing listens on.
async fn nothing_listening() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// The variables exporting everything to `collector`, plus `more`.
fn otel_env<'a>(collector: &'a Collector, more: &[(&'a str, &'a str)]) -> Vec<(String, String)> {
    let mut env = vec![
        ("PLATFORM_OTEL", "on".to_string()),
        (
            "PLATFORM_OTEL_TRACES_ENDPOINT",
            format!("{}/v1/traces", collector.base),
        ),
        (
            "PLATFORM_OTEL_METRICS_ENDPOINT",
            format!("{}/v1/metrics", collector.base),
        ),
        (
            "PLATFORM_OTEL_LOGS_ENDPOINT",
            format!("{}/v1/logs", collector.base),
        ),
        ("PLATFORM_OTEL_HEADERS", "x-team=web".to_string()),
        ("PLATFORM_OTEL_AUTH_TOKEN", OTEL_TOKEN.to_string()),
        ("PLATFORM_SITE_NAME", "storefront-test".to_string()),
        ("PLATFORM_ENV_NAME", "staging".to_string()),
        ("PLATFORM_RELEASE_RELOAD_TOKEN", TOKEN.to_string()),
    ];
    env.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
    env.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Starts `sitefile serve` in front of an origin that is down, sends a request that succeeds
/// (`GET /.sitefile`, with the reload token) and one that fails (`GET /`, 502), stops the
/// server with SIGTERM and returns what it wrote on stderr.
async fn serve_two_requests(env: &[(String, String)]) -> String {
    let origin = nothing_listening().await;
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (mut server, _) =
        Server::launch(STOREFRONT, &["--origin", &origin], &env, Stdio::piped()).await;
    let base = server.base.clone();
    let content = client()
        .get(format!("{base}/.sitefile"))
        .header("authorization", TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(content.status(), 200);
    let page = client().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), 502);

    let mut pipe = server.child.stderr.take().expect("stderr is piped");
    let reading = tokio::spawn(async move {
        let mut stderr = String::new();
        pipe.read_to_string(&mut stderr).await.unwrap();
        stderr
    });
    let exit = server.terminate().await;
    let stderr = reading.await.unwrap();
    assert!(exit.success(), "{exit:?}: {stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no terminal colour codes in a log that is a pipe: {stderr:?}"
    );
    stderr
}

/// Every span in the trace exports: (name, attributes as `key=value` strings, status code).
fn spans(exports: &[Export]) -> Vec<(String, Vec<String>, i64)> {
    let mut found = Vec::new();
    for export in exports {
        for resource in export.body["resourceSpans"]
            .as_array()
            .into_iter()
            .flatten()
        {
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let attributes = attributes(&span["attributes"]);
                    let status = span["status"]["code"].as_i64().unwrap_or(0);
                    found.push((
                        span["name"].as_str().unwrap().to_string(),
                        attributes,
                        status,
                    ));
                }
            }
        }
    }
    found
}

/// OTLP JSON attributes as `key=value` strings.
fn attributes(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let value = &a["value"];
            let text = value["stringValue"]
                .as_str()
                .map(str::to_string)
                .or_else(|| value["intValue"].as_str().map(str::to_string))
                .or_else(|| value["intValue"].as_i64().map(|n| n.to_string()))
                .unwrap_or_else(|| value.to_string());
            format!("{}={text}", a["key"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn spans_metrics_and_logs_reach_the_collector_with_its_headers_and_no_secret() {
    let collector = Collector::start().await;
    let env = otel_env(
        &collector,
        &[
            ("PLATFORM_OTEL_TRACES_SAMPLING_RATE", "1"),
            ("PLATFORM_OTEL_LOGS_MIN_LEVEL", "warn"),
            ("OTEL_LOG_OUTGOING_FETCH", "true"),
        ],
    );
    let stderr = serve_two_requests(&env).await;

    let traces = collector.posted_to("/v1/traces");
    let metrics = collector.posted_to("/v1/metrics");
    let logs = collector.posted_to("/v1/logs");
    assert!(!traces.is_empty() && !metrics.is_empty() && !logs.is_empty());
    for export in traces.iter().chain(&metrics).chain(&logs) {
        let header = |name: &str| {
            export
                .headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("x-team"), Some("web"), "{}", export.path);
        assert_eq!(header("authorization"), Some(OTEL_TOKEN), "{}", export.path);
    }

    let spans = spans(&traces);
    let ok = spans
        .iter()
        .find(|(_, a, _)| a.contains(&"url.path=/.sitefile".to_string()))
        .unwrap_or_else(|| panic!("a span for GET /.sitefile: {spans:?}"));
    assert_eq!(ok.0, "GET");
    assert!(ok.1.contains(&"http.response.status_code=200".to_string()));
    assert_ne!(ok.2, 2, "a 200 is not an error");
    let failed = spans
        .iter()
        .find(|(_, a, _)| a.contains(&"url.path=/".to_string()))
        .unwrap_or_else(|| panic!("a span for GET /: {spans:?}"));
    assert!(
        failed
            .1
            .contains(&"http.response.status_code=502".to_string())
    );
    assert_eq!(failed.2, 2, "a 502 is an error span");
    let resource = attributes(&traces[0].body["resourceSpans"][0]["resource"]["attributes"]);
    assert!(resource.contains(&"service.name=storefront-test".to_string()));
    assert!(resource.contains(&"deployment.environment=staging".to_string()));

    let metric_text = format!("{:?}", metrics);
    assert!(metric_text.contains("http.server.request.duration"));
    // Durations are in seconds: the buckets are the semantic conventions' (5 ms to 10 s), not
    // the SDK's default ones (0 to 10,000), which would put every request in the first bucket.
    let duration = metrics
        .iter()
        .flat_map(|m| {
            m.body["resourceMetrics"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .flat_map(|r| r["scopeMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["metrics"].as_array().cloned().unwrap_or_default())
        .find(|m| m["name"] == "http.server.request.duration")
        .expect("the duration histogram");
    let bounds = &duration["histogram"]["dataPoints"][0]["explicitBounds"];
    assert_eq!(bounds[0], 0.005, "{duration}");
    assert_eq!(bounds.as_array().map(Vec::len), Some(14), "{duration}");

    // Logs from `warn` up are exported; the info-level outgoing fetch is on stderr only.
    let log_text = format!("{:?}", logs);
    assert!(log_text.contains("could not be reached"), "{log_text}");
    assert!(!log_text.contains("outgoing fetch"), "{log_text}");
    assert!(stderr.contains("outgoing fetch"), "{stderr}");

    for secret in [TOKEN, "otel-t0ken"] {
        let exported = collector.all_text();
        let exported_without_auth = exported.replace(OTEL_TOKEN, "");
        assert!(
            !exported_without_auth.contains(secret),
            "{secret} was exported"
        );
        assert!(!stderr.contains(secret), "{secret} was logged: {stderr}");
    }
}

#[tokio::test]
async fn with_no_sampling_only_promoted_error_spans_are_exported() {
    let collector = Collector::start().await;
    let env = otel_env(
        &collector,
        &[
            ("PLATFORM_OTEL_TRACES_SAMPLING_RATE", "0"),
            ("PLATFORM_OTEL_ERROR_PROMOTION", "true"),
            ("PLATFORM_OTEL_ERROR_PROMOTION_RATE", "1"),
        ],
    );
    serve_two_requests(&env).await;
    let spans = spans(&collector.posted_to("/v1/traces"));
    assert_eq!(spans.len(), 1, "{spans:?}");
    assert!(spans[0].1.contains(&"url.path=/".to_string()), "{spans:?}");
    assert_eq!(spans[0].2, 2);
}

#[tokio::test]
async fn with_otel_off_nothing_is_exported() {
    let collector = Collector::start().await;
    let mut env = otel_env(&collector, &[("PLATFORM_OTEL_TRACES_SAMPLING_RATE", "1")]);
    env[0].1 = "off".to_string();
    serve_two_requests(&env).await;
    assert_eq!(collector.all_text(), "[]");
}
