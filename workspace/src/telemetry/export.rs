//! OTLP/HTTP export of traces and metrics, enabled by `OTEL_EXPORTER_OTLP_ENDPOINT`.

use opentelemetry::global;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;

/// Flushes and shuts the exporters down when dropped.
pub struct TelemetryGuard {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        let _ = self.tracer.shutdown();
        let _ = self.meter.shutdown();
    }
}

/// Installs OTLP/HTTP (JSON) exporters when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; the
/// standard `OTEL_*` variables (interval, batch delay, headers) apply. Without it the
/// instruments are no-ops.
pub fn init_otlp() -> Result<Option<TelemetryGuard>, String> {
    if std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").is_none() {
        return Ok(None);
    }
    let spans = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .build()
        .map_err(|e| e.to_string())?;
    let tracer = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .build();
    let metrics = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .build()
        .map_err(|e| e.to_string())?;
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics).build())
        .build();
    global::set_tracer_provider(tracer.clone());
    global::set_meter_provider(meter.clone());
    Ok(Some(TelemetryGuard { tracer, meter }))
}
