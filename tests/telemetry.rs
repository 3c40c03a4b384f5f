//! Traces by OpenTelemetry's semantic conventions for MCP: the spans of a
//! turn against the tests' lab server (the official Python SDK), captured in
//! memory, with their names, kinds, attributes and parents; the trace
//! context the server received in its `_meta`; failures; and tool content
//! recorded only when the application opts in; all through the library's
//! `TraceFilter`.
#![cfg(all(feature = "otel", feature = "rmcp"))]

mod common;

use common::*;
use mcp_adapters::client::Lifecycle;
use mcp_adapters::exec::{Handlers, Sampling, SamplingAnswer};
use mcp_adapters::mcp::CreateMessageResult;
use mcp_adapters::telemetry::TraceFilter;
use mcp_adapters::{
    ClientOptions, ExecOptions, HubConfig, ListOptions, McpClient, Policy, ServerConfig, Source,
};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;

/// Spans and metrics go to memory, for this thread.
struct Capture {
    spans: InMemorySpanExporter,
    traces: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

fn capture() -> Capture {
    let spans = InMemorySpanExporter::default();
    let traces = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    // Through the library's filter, as `export_otlp` installs it: what the
    // chapter lists must pass it.
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(traces.tracer("tests"))
                .with_filter(TraceFilter::new()),
        )
        .with(
            tracing_opentelemetry::MetricsLayer::new(meters.clone())
                .with_filter(TraceFilter::new()),
        );
    let guard = tracing::subscriber::set_default(subscriber);
    Capture {
        spans,
        traces,
        metrics,
        meters,
        _guard: guard,
    }
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn lab() -> ServerConfig {
    let (command, args) = servers::lab().unwrap_or_else(|e| panic!("{e}"));
    ServerConfig::stdio(command, args)
}

#[test]
fn a_turn_is_traced_by_the_conventions_and_the_server_joins_the_trace() {
    let capture = capture();
    let (exporter, traces) = (&capture.spans, &capture.traces);
    let id = "anthropic";
    current_thread_runtime().block_on(async {
        let source = HubConfig::new()
            .server("lab", lab())
            .connect()
            .await
            .unwrap()
            // Asked about, with no approver: offered, and denied when called.
            .policy(Policy::allow_all().ask("lab/crash").unwrap())
            .build()
            .unwrap();
        let listing = source
            .tools(provider(id), &ListOptions::new())
            .await
            .unwrap();
        let exposed = |tool: &str| {
            listing
                .toolset()
                .exposed_name("lab", tool)
                .unwrap()
                .to_owned()
        };
        let (meta, crash) = (exposed("meta"), exposed("crash"));
        let response = model_response(id, &[(meta.clone(), json!({})), (crash.clone(), json!({}))]);
        let run = source
            .execute_tool_calls(provider(id), &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        let text = run.turn.results[0]["content"][0]["text"].as_str().unwrap();
        let seen: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));

        traces.force_flush().unwrap();
        let spans = exporter.get_finished_spans().unwrap();
        let list = named(&spans, "tools/list");
        assert!(
            !list.is_empty(),
            "{:#?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
        assert_eq!(list[0].span_kind, SpanKind::Client);
        assert_eq!(
            attr(list[0], "mcp.method.name").as_deref(),
            Some("tools/list")
        );
        assert_eq!(attr(list[0], "network.transport").as_deref(), Some("pipe"));
        assert!(attr(list[0], "mcp.protocol.version").is_some_and(|v| v.starts_with("20")));

        let execute = named(&spans, &format!("execute_tool {meta}"));
        assert_eq!(execute.len(), 1);
        let execute = execute[0];
        assert_eq!(
            attr(execute, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(attr(execute, "gen_ai.tool.name").as_deref(), Some("meta"));
        assert_eq!(
            attr(execute, "gen_ai.tool.call.id").as_deref(),
            Some("call_0")
        );
        assert_eq!(attr(execute, "mcp_adapters.server").as_deref(), Some("lab"));

        let call = named(&spans, "tools/call meta");
        assert_eq!(call.len(), 1);
        let call = call[0];
        assert_eq!(call.span_kind, SpanKind::Client);
        assert_eq!(attr(call, "mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(attr(call, "gen_ai.tool.name").as_deref(), Some("meta"));
        assert_eq!(call.parent_span_id, execute.span_context.span_id());
        assert_eq!(
            call.span_context.trace_id(),
            execute.span_context.trace_id()
        );

        // The server received the call's trace context in its `_meta`.
        let traceparent = seen["traceparent"]
            .as_str()
            .unwrap_or_else(|| panic!("{seen}"));
        assert_eq!(
            traceparent,
            format!(
                "00-{}-{}-01",
                call.span_context.trace_id(),
                call.span_context.span_id()
            )
        );

        // A denied call's span says so.
        let denied = named(&spans, &format!("execute_tool {crash}"));
        assert_eq!(attr(denied[0], "error.type").as_deref(), Some("denied"));
        assert!(
            matches!(denied[0].status, Status::Error { .. }),
            "{:?}",
            denied[0].status
        );

        // The duration histogram, by the conventions' name.
        capture.meters.force_flush().unwrap();
        let names: Vec<String> = capture
            .metrics
            .get_finished_metrics()
            .unwrap()
            .iter()
            .flat_map(|r| {
                r.scope_metrics()
                    .flat_map(|s| s.metrics().map(|m| m.name().to_owned()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(
            names.iter().any(|n| n == "mcp.client.operation.duration"),
            "{names:?}"
        );

        // No arguments or results unless asked for.
        assert!(
            spans
                .iter()
                .all(|s| attr(s, "gen_ai.tool.call.arguments").is_none())
        );
        exporter.reset();
        let response = model_response(id, &[(meta.clone(), json!({}))]);
        source
            .execute_tool_calls(
                provider(id),
                &response,
                &listing,
                &ExecOptions::new().trace_content(true),
            )
            .await
            .unwrap();
        traces.force_flush().unwrap();
        let spans = exporter.get_finished_spans().unwrap();
        let execute = named(&spans, &format!("execute_tool {meta}"))[0];
        assert_eq!(
            attr(execute, "gen_ai.tool.call.arguments").as_deref(),
            Some("{}")
        );
        assert!(
            attr(execute, "gen_ai.tool.call.result").is_some_and(|r| r.contains("traceparent"))
        );

        // A server's request that carries a trace context is answered within
        // that trace.
        let sampling = Sampling::new(|_request| {
            Box::pin(async {
                SamplingAnswer::Respond(CreateMessageResult::text("test-model", "Hello."))
            })
        });
        // A 2025-revision session, in which a server asks during a call.
        let options = ClientOptions::new()
            .lifecycle(Lifecycle::Legacy)
            .handlers(Handlers::new().sampling(sampling));
        let client = McpClient::connect("lab", &lab(), &options).await.unwrap();
        let source = Source::client("lab", client)
            .policy(Policy::allow_all())
            .build()
            .unwrap();
        let listing = source
            .tools(provider(id), &ListOptions::new())
            .await
            .unwrap();
        // Overridden by the server's SDK, which propagates its own context.
        const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        exporter.reset();
        let response = model_response(
            id,
            &[("sample_in_trace".into(), json!({"traceparent": PARENT}))],
        );
        let run = source
            .execute_tool_calls(provider(id), &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert!(run.calls[0].error.is_none(), "{:?}", run.calls[0].error);
        assert!(
            run.turn.results[0].to_string().contains("Hello."),
            "{}",
            run.turn.results[0]
        );
        traces.force_flush().unwrap();
        let spans = exporter.get_finished_spans().unwrap();
        let answering = named(&spans, "sampling/createMessage");
        assert_eq!(
            answering.len(),
            1,
            "{:#?}",
            spans.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
        assert_eq!(answering[0].span_kind, SpanKind::Server);
        // The server's SDK sends the context its handler runs in: the
        // client's call span, propagated. The answer is a child of it, in
        // the same trace, though it runs in a task of its own.
        let call = named(&spans, "tools/call sample_in_trace")[0];
        assert_eq!(
            answering[0].span_context.trace_id(),
            call.span_context.trace_id()
        );
        assert_eq!(answering[0].parent_span_id, call.span_context.span_id());
    });
}

/// A value the application binds is in no span, content traced or not:
/// the spans hold the arguments the model wrote.
#[test]
fn a_bound_value_is_in_no_span_even_with_content_traced() {
    use mcp_adapters::toolset::Binding;
    use mcp_adapters::{CallToolResult, InProcessServer, Tool};
    let Capture {
        spans: exporter,
        traces,
        _guard,
        ..
    } = capture();
    current_thread_runtime().block_on(async {
        let schema = json!({"type": "object", "properties": {
            "tenant": {"type": "string"}, "text": {"type": "string"}}, "required": ["tenant", "text"]});
        let server = InProcessServer::new().tool(Tool::new("file", "", schema), |args, _| async move {
            Ok(CallToolResult::text(format!("filed {}", args["text"])))
        });
        let source = Source::hub()
            .server("crm", server)
            .bind(Binding::parse("crm/file:/tenant=bound-canary-5150").unwrap())
            .validate_arguments()
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = model_response("anthropic", &[("crm__file".into(), json!({"text": "a"}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new().trace_content(true))
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["content"][0]["text"], "filed \"a\"");
    });
    traces.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let execute = named(&spans, "execute_tool crm__file")[0];
    assert_eq!(
        attr(execute, "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"text":"a"}"#)
    );
    let all = format!("{spans:?}");
    assert!(!all.contains("bound-canary-5150"), "{all}");
}

/// `TraceFilter` over the whole subscriber, as `export_otlp` installs it
/// (a global filter, not a per-layer one): the library's span passes with
/// its attributes, another crate's span and event inside it do not.
#[test]
fn the_filter_over_a_whole_subscriber_passes_the_library_spans_only() {
    use mcp_adapters::{CallToolResult, InProcessServer, Tool};
    let exporter = InMemorySpanExporter::default();
    let traces = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(TraceFilter::new())
        .with(tracing_opentelemetry::layer().with_tracer(traces.tracer("tests")));
    let guard = tracing::subscriber::set_default(subscriber);
    current_thread_runtime().block_on(async {
        let server = InProcessServer::new().tool(
            Tool::new("echo", "", json!({"type": "object"})),
            |_, _| async {
                let _other = tracing::info_span!(target: "rmcp::service", "serve").entered();
                tracing::info!(target: "rmcp::service", "other-crate-canary");
                Ok(CallToolResult::text("ok"))
            },
        );
        let source = Source::hub().server("s", server).build().unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = model_response("anthropic", &[("s__echo".into(), json!({}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["content"][0]["text"], "ok");
    });
    drop(guard);
    traces.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["execute_tool s__echo"]);
    let execute = &spans[0];
    assert_eq!(
        attr(execute, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(attr(execute, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attr(execute, "mcp_adapters.server").as_deref(), Some("s"));
    assert_eq!(
        attr(execute, "gen_ai.tool.call.id").as_deref(),
        Some("call_0")
    );
    assert!(execute.events.is_empty(), "{:?}", execute.events);
    assert!(!format!("{spans:?}").contains("other-crate-canary"));
}
