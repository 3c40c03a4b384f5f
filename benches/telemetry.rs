//! What tracing costs a turn: 100 calls to an instant in-process server
//! through `execute_tool_calls`, with the OpenTelemetry layers `export_otlp`
//! installs (the spans' layer and the metrics layer, behind the library's
//! `TraceFilter` over the whole subscriber) exporting to a no-op exporter, against the same
//! turn with no subscriber, in the same run. Goal: ≤ 1.5x. The same layers
//! without the filter are a third line: the filtered ones may not be slower.
//!
//! Ratios are printed at the end of the run.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

mod support;
use mcp_adapters::telemetry::TraceFilter;
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Listing, Provider, Registry, Source,
    Tool,
};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::testing::trace::NoopSpanExporter;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::{Value, json};
use tracing::Dispatch;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

const CALLS: usize = 100;

/// One thread: the turn's calls run in the task that awaits them, under the
/// dispatcher set for this thread.
fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

struct Turn {
    rt: tokio::runtime::Runtime,
    source: Source,
    listing: Listing,
    provider: &'static Provider,
    calls: Value,
    options: ExecOptions,
}

impl Turn {
    fn new() -> Turn {
        let rt = one_thread();
        let server = InProcessServer::new().tool(
            Tool::new("noop", "", json!({"type": "object"})),
            |_, _| async { Ok(CallToolResult::text("ok")) },
        );
        let source = Source::hub().server("s", server).build().unwrap();
        let registry: &'static Registry = Box::leak(Box::new(Registry::builtin().unwrap()));
        let provider = registry.get("anthropic").unwrap();
        let listing = rt
            .block_on(source.tools(provider, &ListOptions::new()))
            .unwrap();
        let blocks: Vec<Value> = (0..CALLS)
            .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "s__noop", "input": {}}))
            .collect();
        Turn {
            rt,
            source,
            listing,
            provider,
            calls: json!({"content": blocks}),
            options: ExecOptions::new().max_concurrency(CALLS),
        }
    }

    /// The turn, under `dispatch` on this thread.
    fn run(&self, dispatch: &Dispatch) {
        tracing::dispatcher::with_default(dispatch, || {
            let run = self
                .rt
                .block_on(self.source.execute_tool_calls(
                    self.provider,
                    black_box(&self.calls),
                    &self.listing,
                    &self.options,
                ))
                .unwrap();
            black_box(run);
        });
    }
}

/// The layers `export_otlp` installs, exporting to nowhere, or (`filtered`
/// false) the layers it installed before: tracing-opentelemetry's defaults,
/// without a filter.
fn otlp(filtered: bool) -> (Dispatch, SdkTracerProvider, SdkMeterProvider) {
    let traces = SdkTracerProvider::builder()
        .with_batch_exporter(NoopSpanExporter::new())
        .build();
    let meters = SdkMeterProvider::builder().build();
    let tracer = traces.tracer("bench");
    let dispatch = if filtered {
        // As `export_otlp` builds it.
        let spans = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false);
        Dispatch::new(
            tracing_subscriber::registry()
                .with(TraceFilter::new())
                .with(spans.and_then(tracing_opentelemetry::MetricsLayer::new(meters.clone()))),
        )
    } else {
        Dispatch::new(
            tracing_subscriber::registry()
                .with(tracing_opentelemetry::layer().with_tracer(tracer))
                .with(tracing_opentelemetry::MetricsLayer::new(meters.clone())),
        )
    };
    (dispatch, traces, meters)
}

fn bench(c: &mut Criterion) {
    let turn = Turn::new();
    let none = Dispatch::none();
    let (filtered, _traces, _meters) = otlp(true);
    let (unfiltered, _all_traces, _all_meters) = otlp(false);
    let mut group = c.benchmark_group("telemetry_100_instant");
    group.bench_function("no_subscriber", |b| b.iter(|| turn.run(&none)));
    group.bench_function("otlp_filtered", |b| b.iter(|| turn.run(&filtered)));
    group.bench_function("otlp_unfiltered", |b| b.iter(|| turn.run(&unfiltered)));
    group.finish();

    let rounds = support::rounds();
    let with_filter = support::median_ratio(rounds, || turn.run(&filtered), || turn.run(&none));
    let without = support::median_ratio(rounds, || turn.run(&unfiltered), || turn.run(&none));
    let against = support::median_ratio(rounds, || turn.run(&filtered), || turn.run(&unfiltered));
    support::report(
        "a turn of 100 calls, OTLP layers behind the filter / no subscriber",
        with_filter,
        Some(1.5),
    );
    support::report(
        "  the same, the layers without the filter / no subscriber",
        without,
        None,
    );
    support::report("  behind the filter / without it", against, Some(1.0));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
