//! Telemetry of `sitefile serve`, per the spec's observability variables: structured `tracing`
//! logs on stderr always, and — when `PLATFORM_OTEL` is on (`auto`: unless
//! `NODE_ENV=development`) — OTLP/HTTP (JSON) export to each configured endpoint: a server span
//! per request (sampled at `PLATFORM_OTEL_TRACES_SAMPLING_RATE`, with a share of unsampled
//! error spans promoted), the `http.server.request.duration` histogram, and log records from
//! `PLATFORM_OTEL_LOGS_MIN_LEVEL` up. `PLATFORM_OTEL_HEADERS` and `PLATFORM_OTEL_AUTH_TOKEN` (as
//! `Authorization`) go with every export; no header or body of a request is ever recorded.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::metrics::Histogram;
use opentelemetry::trace::{Span as _, SpanContext, SpanKind, Status, TraceId, Tracer};
use opentelemetry::{Context, KeyValue, global};
use opentelemetry_otlp::{
    LogExporter, MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{
    BatchSpanProcessor, Sampler, SamplingDecision, SamplingResult, SdkTracerProvider, ShouldSample,
    SpanData, SpanProcessor,
};
use sitefile_core::{LogLevel, ObservabilityConfig, OtelMode, PlatformConfig};
use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// The instrumentation scope of the server's spans and metrics.
const SCOPE: &str = "sitefile-serve";

/// The exporters that run; flushed and stopped by [`Telemetry::shutdown`].
#[derive(Debug, Default)]
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    logger: Option<SdkLoggerProvider>,
}

impl Telemetry {
    /// Installs the process's log subscriber (stderr, `RUST_LOG` or `info`) and, when
    /// observability is on, an exporter for each configured endpoint.
    pub fn start(platform: &PlatformConfig) -> Result<Telemetry, String> {
        let config = &platform.observability;
        let on = match config.otel {
            OtelMode::On => true,
            OtelMode::Off => false,
            OtelMode::Auto => !platform.is_development(),
        };
        let mut telemetry = Telemetry::default();
        if on {
            let resource = resource(platform);
            telemetry.tracer = traces(config, &resource)?;
            telemetry.meter = metrics(config, &resource)?;
            telemetry.logger = logs(config, &resource)?;
        }
        let exported = telemetry.logger.as_ref().map(|logger| {
            opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge::new(logger)
                .with_filter(level_filter(config.logs_min_level))
        });
        tracing_subscriber::registry()
            .with(stderr_logs())
            .with(exported)
            .try_init()
            .map_err(|e| format!("the log subscriber could not be installed: {e}"))?;
        Ok(telemetry)
    }

    /// Whether requests are traced or measured (the per-request layer is worth adding).
    pub fn observes_requests(&self) -> bool {
        self.tracer.is_some() || self.meter.is_some()
    }

    /// Exports what is left and stops the exporters.
    pub fn shutdown(self) {
        let results = [
            self.tracer.map(|t| t.shutdown()),
            self.meter.map(|m| m.shutdown()),
            self.logger.map(|l| l.shutdown()),
        ];
        for error in results.into_iter().flatten().filter_map(Result::err) {
            tracing::warn!("telemetry could not be flushed: {error}");
        }
    }
}

/// The log on stderr: `RUST_LOG`'s levels, else `info` and up.
pub fn stderr_logs<S>() -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use std::io::IsTerminal as _;
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .with_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
}

/// `service.name` (`PLATFORM_SITE_NAME`, else `sitefile`), `service.version`
/// (`EDGE_VERSION_METADATA`, else this binary's version) and `deployment.environment`.
fn resource(platform: &PlatformConfig) -> Resource {
    let config = &platform.observability;
    let name = platform
        .runtime
        .site_name
        .clone()
        .unwrap_or_else(|| "sitefile".to_string());
    let version = config
        .version_metadata
        .clone()
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
    Resource::builder()
        .with_service_name(name)
        .with_attributes([
            KeyValue::new("service.version", version),
            KeyValue::new("deployment.environment", config.env_name.clone()),
        ])
        .build()
}

/// The headers of every export: `PLATFORM_OTEL_HEADERS`, and the auth token as `Authorization`.
fn export_headers(config: &ObservabilityConfig) -> HashMap<String, String> {
    let mut headers: HashMap<String, String> = config.headers.iter().cloned().collect();
    if let Some(token) = &config.auth_token {
        headers.insert("authorization".to_string(), token.expose().to_string());
    }
    headers
}

/// The span exporter and provider, when `PLATFORM_OTEL_TRACES_ENDPOINT` is set; installed as
/// the global tracer provider.
fn traces(
    config: &ObservabilityConfig,
    resource: &Resource,
) -> Result<Option<SdkTracerProvider>, String> {
    let Some(endpoint) = &config.traces_endpoint else {
        return Ok(None);
    };
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(endpoint.as_str())
        .with_headers(export_headers(config))
        .build()
        .map_err(|e| format!("PLATFORM_OTEL_TRACES_ENDPOINT: {e}"))?;
    let batch = BatchSpanProcessor::builder(exporter).build();
    let builder = SdkTracerProvider::builder().with_resource(resource.clone());
    let provider = if config.error_promotion {
        builder
            .with_sampler(RatioOrRecord(config.traces_sampling_rate))
            .with_span_processor(PromoteErrors {
                rate: config.error_promotion_rate,
                inner: batch,
            })
    } else {
        builder
            .with_sampler(Sampler::TraceIdRatioBased(config.traces_sampling_rate))
            .with_span_processor(batch)
    }
    .build();
    global::set_tracer_provider(provider.clone());
    Ok(Some(provider))
}

/// The metric exporter and provider, when `PLATFORM_OTEL_METRICS_ENDPOINT` is set; installed
/// as the global meter provider.
fn metrics(
    config: &ObservabilityConfig,
    resource: &Resource,
) -> Result<Option<SdkMeterProvider>, String> {
    let Some(endpoint) = &config.metrics_endpoint else {
        return Ok(None);
    };
    let exporter = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(endpoint.as_str())
        .with_headers(export_headers(config))
        .build()
        .map_err(|e| format!("PLATFORM_OTEL_METRICS_ENDPOINT: {e}"))?;
    let provider = SdkMeterProvider::builder()
        .with_resource(resource.clone())
        .with_reader(PeriodicReader::builder(exporter).build())
        .build();
    global::set_meter_provider(provider.clone());
    Ok(Some(provider))
}

/// The log exporter and provider, when `PLATFORM_OTEL_LOGS_ENDPOINT` is set.
fn logs(
    config: &ObservabilityConfig,
    resource: &Resource,
) -> Result<Option<SdkLoggerProvider>, String> {
    let Some(endpoint) = &config.logs_endpoint else {
        return Ok(None);
    };
    let exporter = LogExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(endpoint.as_str())
        .with_headers(export_headers(config))
        .build()
        .map_err(|e| format!("PLATFORM_OTEL_LOGS_ENDPOINT: {e}"))?;
    Ok(Some(
        SdkLoggerProvider::builder()
            .with_resource(resource.clone())
            .with_batch_exporter(exporter)
            .build(),
    ))
}

/// `PLATFORM_OTEL_LOGS_MIN_LEVEL` as a `tracing` filter.
fn level_filter(level: LogLevel) -> tracing_subscriber::filter::LevelFilter {
    use tracing_subscriber::filter::LevelFilter;
    match level {
        LogLevel::Trace => LevelFilter::TRACE,
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Info => LevelFilter::INFO,
        LogLevel::Warn => LevelFilter::WARN,
        LogLevel::Error => LevelFilter::ERROR,
    }
}

/// With error promotion: a span is sampled at the ratio, and every other span is recorded (not
/// sampled) so that [`PromoteErrors`] can still export it if it ends in error.
#[derive(Debug, Clone)]
struct RatioOrRecord(f64);

impl ShouldSample for RatioOrRecord {
    fn should_sample(
        &self,
        parent_context: Option<&Context>,
        trace_id: TraceId,
        name: &str,
        span_kind: &SpanKind,
        attributes: &[KeyValue],
        links: &[opentelemetry::trace::Link],
    ) -> SamplingResult {
        let ratio = Sampler::TraceIdRatioBased(self.0).should_sample(
            parent_context,
            trace_id,
            name,
            span_kind,
            attributes,
            links,
        );
        match ratio.decision {
            SamplingDecision::RecordAndSample => ratio,
            _ => SamplingResult {
                decision: SamplingDecision::RecordOnly,
                ..ratio
            },
        }
    }
}

/// Exports sampled spans, and a `rate` share of the unsampled ones that ended in error
/// (`PLATFORM_OTEL_ERROR_PROMOTION_RATE`), marked sampled.
#[derive(Debug)]
struct PromoteErrors {
    rate: f64,
    inner: BatchSpanProcessor,
}

impl SpanProcessor for PromoteErrors {
    fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        if !span.span_context.is_sampled() {
            let failed = matches!(span.status, Status::Error { .. });
            if !failed || random_fraction() >= self.rate {
                return;
            }
            let c = &span.span_context;
            span.span_context = SpanContext::new(
                c.trace_id(),
                c.span_id(),
                c.trace_flags().with_sampled(true),
                c.is_remote(),
                c.trace_state().clone(),
            );
        }
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }
}

/// A uniform number in [0, 1).
fn random_fraction() -> f64 {
    let mut bytes = [0u8; 8];
    // Without a random source no error span is promoted.
    if getrandom::fill(&mut bytes).is_err() {
        return 1.0;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

/// The server's tracer (the global provider's, set before the first request).
static TRACER: LazyLock<global::BoxedTracer> = LazyLock::new(|| global::tracer(SCOPE));

/// The bucket bounds of `http.server.request.duration`, in seconds: the ones the OpenTelemetry
/// semantic conventions give for it (the SDK's defaults, 0 to 10,000, are meant for
/// milliseconds and would put every request in the first bucket).
const DURATION_BOUNDS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// `http.server.request.duration`, in seconds.
static DURATION: LazyLock<Histogram<f64>> = LazyLock::new(|| {
    global::meter(SCOPE)
        .f64_histogram("http.server.request.duration")
        .with_unit("s")
        .with_description("Duration of HTTP server requests")
        .with_boundaries(DURATION_BOUNDS.to_vec())
        .build()
});

/// The per-request layer: a server span (method, path, status, the edge's `X-Cache` answer;
/// an error for 5xx) and the request's duration in `http.server.request.duration`.
pub async fn observe(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_string();
    let path = request.uri().path().to_string();
    let mut span = TRACER
        .span_builder(method.clone())
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("http.request.method", method.clone()),
            KeyValue::new("url.path", path),
        ])
        .start(&*TRACER);
    let response = next.run(request).await;
    let status = response.status().as_u16();
    // What the answer was: on the span, and (with the method) on the duration.
    let mut outcome = vec![KeyValue::new(
        "http.response.status_code",
        i64::from(status),
    )];
    if let Some(cache) = response.headers().get("x-cache") {
        let cache = String::from_utf8_lossy(cache.as_bytes()).into_owned();
        outcome.push(KeyValue::new("sitefile.cache", cache));
    }
    span.set_attributes(outcome.iter().cloned());
    if status >= 500 {
        span.set_status(Status::error(format!("HTTP {status}")));
    }
    span.end();
    outcome.push(KeyValue::new("http.request.method", method));
    DURATION.record(started.elapsed().as_secs_f64(), &outcome);
    response
}
