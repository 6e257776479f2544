//! Proxy telemetry (OpenTelemetry metrics and spans, OTLP export when configured) and
//! the audit log writer.

mod audit;
mod export;

pub use audit::{AuditLimits, AuditSink, AuditSlot, AuditUnavailable};
pub use export::{TelemetryGuard, init_otlp};

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::global;
use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::trace::{Span, SpanKind, Status, Tracer};

/// Name of the instrumentation scope.
const SCOPE: &str = "sitefile-workspace";

/// The three proxy instruments of the spec.
#[derive(Clone)]
pub struct ProxyMetrics {
    duration: Histogram<f64>,
    requests: Counter<u64>,
    errors: Counter<u64>,
}

impl Default for ProxyMetrics {
    fn default() -> Self {
        let meter = global::meter(SCOPE);
        Self {
            duration: meter
                .f64_histogram("connection.proxy.duration")
                .with_unit("ms")
                .with_description("Duration of proxied tool calls")
                .build(),
            requests: meter
                .u64_counter("connection.proxy.requests")
                .with_description("Proxied tool calls")
                .build(),
            errors: meter
                .u64_counter("connection.proxy.errors")
                .with_description("Proxied tool calls that failed")
                .build(),
        }
    }
}

impl ProxyMetrics {
    /// Records one tool call with the labels `connection.id`, `tool.name`, `status`.
    pub fn record(&self, connection_id: &str, tool: &str, success: bool, elapsed: Duration) {
        let labels = [
            KeyValue::new("connection.id", connection_id.to_string()),
            KeyValue::new("tool.name", tool.to_string()),
            KeyValue::new("status", if success { "success" } else { "error" }),
        ];
        self.duration
            .record(elapsed.as_secs_f64() * 1000.0, &labels);
        self.requests.add(1, &labels);
        if !success {
            self.errors.add(1, &labels);
        }
    }
}

/// A running `mcp.proxy.callTool` span.
pub struct CallSpan(global::BoxedSpan);

impl CallSpan {
    /// Starts the span with `connection.id`, `tool.name` and `request.id`.
    pub fn start(connection_id: &str, tool: &str, request_id: &str) -> Self {
        let tracer = global::tracer(SCOPE);
        let span = tracer
            .span_builder("mcp.proxy.callTool")
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("connection.id", connection_id.to_string()),
                KeyValue::new("tool.name", tool.to_string()),
                KeyValue::new("request.id", request_id.to_string()),
            ])
            .start(&tracer);
        Self(span)
    }

    /// Ends the span, marking it failed when `error` is given.
    pub fn end(mut self, error: Option<&str>) {
        if let Some(message) = error {
            self.0.set_status(Status::error(message.to_string()));
        }
        self.0.end();
    }
}
