//! Spans kept in memory, through the library's `TraceFilter` as
//! `export_otlp` installs it, for tests that look at what a turn traced.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;

use mcp_adapters::telemetry::TraceFilter;

/// The thread's subscriber while it lives, and the spans it finished.
pub struct Traced {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

/// Traces this thread's spans into memory until the value is dropped.
pub fn traced() -> Traced {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("tests"))
            .with_filter(TraceFilter::new()),
    );
    let guard = tracing::subscriber::set_default(subscriber);
    Traced {
        exporter,
        provider,
        _guard: guard,
    }
}

impl Traced {
    /// Every span finished so far.
    pub fn spans(&self) -> Vec<SpanData> {
        self.provider.force_flush().unwrap();
        self.exporter.get_finished_spans().unwrap()
    }
}
