//! Traces operators can follow: spans and the duration histogram named by
//! OpenTelemetry's semantic conventions for MCP and generative AI, emitted
//! through `tracing`, and (feature `otel`) exported over OTLP.
//!
//! The library always emits, whatever subscriber the application installs:
//!
//! - one span per MCP request a client makes, named `{mcp.method.name}
//!   {target}` (`tools/call get_weather`, `tools/list`, `resources/read`),
//!   kind client, with `mcp.method.name`, `gen_ai.tool.name` (calls),
//!   `mcp.resource.uri` (reads), `gen_ai.prompt.name` (prompts),
//!   `mcp.protocol.version`, `network.transport` (`pipe` for stdio, `tcp`
//!   for HTTP), `mcp_adapters.server`, and on failure `error.type` (the
//!   error's kind: `timeout`, `denied`, ...) and an error status, never its
//!   message;
//! - one span per tool execution in a turn, `execute_tool {exposed name}`,
//!   with `gen_ai.operation.name` = `execute_tool`, `gen_ai.tool.name`,
//!   `gen_ai.tool.call.id` and `mcp_adapters.server` (the source's id for
//!   the server; the conventions name none); the client's request span is
//!   its child;
//! - one span per request a server makes of the client (`sampling/createMessage`,
//!   `elicitation/create`, `roots/list`), kind server, with
//!   `mcp.method.name`;
//! - one span per sign-in round, `oauth sign-in`, with the server's host;
//! - the `mcp.client.operation.duration` histogram (seconds), as a `tracing`
//!   event whose `histogram.` field the OpenTelemetry metrics layer turns into
//!   the instrument, with `mcp.method.name`, `gen_ai.tool.name` and
//!   `error.type`.
//!
//! Tool arguments and results are recorded (`gen_ai.tool.call.arguments`,
//! `gen_ai.tool.call.result`, as JSON on the `execute_tool` span) only when
//! the application opts in with
//! [`ExecOptions::trace_content`](crate::ExecOptions::trace_content); the
//! result is the server's whole `CallToolResult`, its `_meta` included.
//! Nothing else a call carries is ever recorded, opted in or not: no
//! elicitation answer, sampling message, resource content, prompt argument,
//! request `_meta` or turn state. Nor is any credential: access, refresh
//! and ID tokens, client secrets, authorization codes, PKCE verifiers,
//! assertions, `Authorization` and `Cookie` headers.
//!
//! # What reaches a receiver
//!
//! Other crates emit `tracing` events too, and some carry what the list
//! above leaves out: the MCP SDK writes every message it sends and receives
//! at `trace` level (arguments, results, `_meta`), and the authorization
//! code and the token response's extra fields (an OpenID `id_token`) at
//! `debug` level during a sign-in. An OpenTelemetry layer without a filter
//! turns every event into a span event and exports it, whatever `RUST_LOG`
//! says to a log. [`TraceFilter`] (feature `otel`) keeps an OpenTelemetry
//! layer to the list above: the library's own spans, with their
//! attributes, and its measurements; no other crate's spans or events, and
//! none of the library's log events (which may quote a server's stderr).
//! [`export_otlp`] puts it on the layers it installs.
//!
//! For debugging, [`TraceFilter::widen`] lets more through, by target and
//! level as `RUST_LOG` names them (`rmcp=debug`); the command line's
//! `--otlp-include TARGETS` does the same. What that exports is all those
//! crates say: with the SDK at `trace` or `debug`, tool arguments and
//! results, sign-in codes and ID tokens reach the receiver. Keep it to a
//! receiver that may see them.
//!
//! ```no_run
//! # #[cfg(feature = "otel")]
//! # fn main() -> Result<(), mcp_adapters::Error> {
//! use mcp_adapters::telemetry::{TraceFilter, export_otlp};
//! // Before the async runtime starts; spans go to {endpoint}/v1/traces.
//! let telemetry = export_otlp(Some("http://localhost:4318"), TraceFilter::new())?;
//! // ... list, run turns ...
//! telemetry.shutdown()?; // sends what is still buffered
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "otel"))]
//! # fn main() {}
//! ```
//!
//! An application with a subscriber of its own (a log on stderr, its own
//! spans) puts the filter on its OpenTelemetry layers, and nothing else
//! changes for its other layers:
//!
//! ```
//! # #[cfg(feature = "otel")]
//! # fn main() {
//! use mcp_adapters::telemetry::TraceFilter;
//! use opentelemetry::trace::TracerProvider as _;
//! use tracing_subscriber::{EnvFilter, Layer as _, layer::SubscriberExt as _};
//!
//! # let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
//! // `provider`: the application's OpenTelemetry tracer provider.
//! let subscriber = tracing_subscriber::registry()
//!     // The log, as RUST_LOG says.
//!     .with(tracing_subscriber::fmt::layer().with_filter(EnvFilter::from_default_env()))
//!     // The traces: the library's spans only.
//!     .with(
//!         tracing_opentelemetry::layer()
//!             .with_tracer(provider.tracer("my-agent"))
//!             .with_filter(TraceFilter::new()),
//!     );
//! let _guard = tracing::subscriber::set_default(subscriber);
//! # }
//! # #[cfg(not(feature = "otel"))]
//! # fn main() {}
//! ```
//!
//! With the `otel` feature, each MCP request carries the current trace
//! context in its `_meta` (`traceparent`, `tracestate`), so a server's own
//! spans join the trace; a server's requests to the client (sampling,
//! elicitation) that carry one are handled within it.
//!
//! The tests hold this to Arize Phoenix, a real OTLP receiver installed
//! from PyPI, and to the official Python SDK's server, which sees the
//! `traceparent` of the call's span; and they send canaries through every
//! channel a call has (arguments, results, `_meta`, questions, a sign-in)
//! to an OTLP receiver, which finds none of them.

use std::time::Instant;

use crate::error::{Error, ErrorKind};

/// The `error.type` of a failure: its kind, in snake case (`timeout`,
/// `unavailable`, `invalid_result`, ...).
pub(crate) fn error_type(kind: ErrorKind) -> String {
    let name = format!("{kind:?}");
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Marks `span` failed with `error`: `error.type` and an error status. The
/// error's message is not recorded: it may quote a server's stderr or a
/// URL with a key in it.
pub(crate) fn record_failure(span: &tracing::Span, error: &Error) {
    span.record("error.type", error_type(error.kind()));
    span.record("otel.status_code", "ERROR");
}

/// A span's OpenTelemetry name, `{operation} {target}` (`execute_tool
/// get_weather`), or the operation alone when there is no target, put
/// together on the stack. Given to `otel.name` as a string, which the
/// OpenTelemetry layer copies once; a formatted value would be formatted
/// into a string grown as it is written, and copied again.
pub(crate) struct SpanName(smallvec::SmallVec<[u8; 128]>);

impl SpanName {
    pub(crate) fn new(operation: &str, target: &str) -> Self {
        let mut name = smallvec::SmallVec::new();
        name.extend_from_slice(operation.as_bytes());
        if !target.is_empty() {
            name.push(b' ');
            name.extend_from_slice(target.as_bytes());
        }
        Self(name)
    }

    /// The name: two strings and a space, so always UTF-8 and borrowed.
    pub(crate) fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
}

#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
/// Emits the `mcp.client.operation.duration` measurement of a request of
/// `method` (and `tool`) that started at `started`.
pub(crate) fn operation_duration(
    method: &str,
    tool: Option<&str>,
    started: Instant,
    error: Option<&Error>,
) {
    let seconds = started.elapsed().as_secs_f64();
    let error = error.map(|e| error_type(e.kind()));
    tracing::info!(
        histogram.mcp.client.operation.duration = seconds,
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        error.r#type = error.as_deref(),
        "mcp.client.operation.duration"
    );
}

#[cfg(feature = "otel")]
pub use otlp::{Telemetry, TraceFilter, export_otlp};

#[cfg(feature = "otel")]
#[cfg_attr(not(feature = "rmcp"), allow(unused_imports))]
pub(crate) use otlp::{inject_context, join_context};

#[cfg(feature = "otel")]
mod otlp {
    use std::collections::HashMap;

    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::WithExportConfig;
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use serde_json::{Map, Value};
    use tracing::subscriber::Interest;
    use tracing::{Metadata, Subscriber};
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
    use tracing_subscriber::util::SubscriberInitExt;

    use crate::error::{Error, ErrorKind, Result};

    /// The exporters [`export_otlp`] installed: dropping it (or calling
    /// [`shutdown`](Self::shutdown)) sends what is still buffered.
    #[must_use = "dropping it shuts the exporters down"]
    pub struct Telemetry {
        traces: SdkTracerProvider,
        metrics: SdkMeterProvider,
    }

    impl std::fmt::Debug for Telemetry {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Telemetry").finish_non_exhaustive()
        }
    }

    impl Telemetry {
        /// Sends what is buffered and stops the exporters.
        ///
        /// # Errors
        ///
        /// [`ErrorKind::Io`] when the receiver could not be reached.
        pub fn shutdown(self) -> Result<()> {
            let traces = self.traces.shutdown();
            let metrics = self.metrics.shutdown();
            traces.map_err(|e| {
                Error::new(ErrorKind::Io, "the spans could not all be exported").with_source(e)
            })?;
            metrics.map_err(|e| {
                Error::new(ErrorKind::Io, "the metrics could not all be exported").with_source(e)
            })
        }
    }

    impl Drop for Telemetry {
        fn drop(&mut self) {
            let _ = self.traces.force_flush();
            let _ = self.metrics.force_flush();
        }
    }

    /// What reaches an OpenTelemetry layer (see [what reaches a
    /// receiver](crate::telemetry#what-reaches-a-receiver)): by default the
    /// library's own spans with their attributes, and its measurements (the
    /// duration histogram's events); no other crate's spans or events, and
    /// none of the library's log events. A per-layer filter
    /// ([`Layer::with_filter`](tracing_subscriber::Layer::with_filter)): the
    /// application's other layers see what they saw. On a subscriber that
    /// holds OpenTelemetry layers only, it is a global filter as well
    /// (`registry().with(TraceFilter::new()).with(layers)`, as
    /// [`export_otlp`] installs it), which costs each span less.
    #[derive(Debug, Clone, Default)]
    pub struct TraceFilter {
        /// More targets, at their levels, when widened for debugging.
        wider: Option<Targets>,
    }

    impl TraceFilter {
        /// The library's spans and measurements only.
        pub fn new() -> Self {
            Self::default()
        }

        /// Lets the spans and events of `targets` through too, each up to
        /// its level, written as `RUST_LOG` writes them without span or
        /// field filters (`rmcp=debug`, `rmcp=trace,my_app=info`). For
        /// debugging: what those crates emit is exported as it is, and the
        /// MCP SDK's `debug` and `trace` events carry tool arguments and
        /// results, sign-in codes and ID tokens.
        ///
        /// # Errors
        ///
        /// [`ErrorKind::Input`] when `targets` does not parse, quoting it.
        pub fn widen(mut self, targets: &str) -> Result<Self> {
            let parsed: Targets = targets.parse().map_err(|e| {
                Error::input(format!(
                    "`{targets}` is no list of targets and levels (`rmcp=debug`)"
                ))
                .with_source(e)
            })?;
            let wider = match self.wider.take() {
                Some(before) => before.with_targets(parsed),
                None => parsed,
            };
            self.wider = Some(wider);
            Ok(self)
        }

        /// Whether a span or event of `meta` goes through.
        fn admits(&self, meta: &Metadata<'_>) -> bool {
            let target = meta.target();
            let ours = target
                .strip_prefix("mcp_adapters")
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"));
            (ours && (meta.is_span() || is_measurement(meta)))
                || self
                    .wider
                    .as_ref()
                    .is_some_and(|t| t.would_enable(target, meta.level()))
        }
    }

    /// An event the metrics layer turns into an instrument's measurement.
    fn is_measurement(meta: &Metadata<'_>) -> bool {
        meta.is_event()
            && meta
                .fields()
                .iter()
                .any(|f| f.name().starts_with("histogram."))
    }

    impl TraceFilter {
        /// A callsite's interest: decided once per callsite.
        fn interest(&self, meta: &'static Metadata<'static>) -> Interest {
            if self.admits(meta) {
                Interest::always()
            } else {
                Interest::never()
            }
        }

        fn level_hint(&self) -> LevelFilter {
            // The library's spans and measurements are at `info`.
            let wider = self
                .wider
                .as_ref()
                .and_then(<Targets as Filter<tracing_subscriber::Registry>>::max_level_hint);
            wider.map_or(LevelFilter::INFO, |w| w.max(LevelFilter::INFO))
        }
    }

    /// A per-layer filter, for an OpenTelemetry layer beside other layers.
    impl<S> Filter<S> for TraceFilter {
        fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
            self.admits(meta)
        }

        fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
            self.interest(meta)
        }

        fn max_level_hint(&self) -> Option<LevelFilter> {
            Some(self.level_hint())
        }
    }

    /// A global filter, for a subscriber that holds OpenTelemetry layers
    /// only (as [`export_otlp`] installs it): what it turns away is never
    /// recorded, and the spans it lets through cost no per-layer
    /// bookkeeping at each entry, exit and close.
    impl<S: Subscriber> Layer<S> for TraceFilter {
        fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
            self.interest(meta)
        }

        fn enabled(&self, meta: &Metadata<'_>, _: Context<'_, S>) -> bool {
            self.admits(meta)
        }

        fn max_level_hint(&self) -> Option<LevelFilter> {
            Some(self.level_hint())
        }
    }

    /// Exports the library's spans and the duration histogram over OTLP
    /// (HTTP, protobuf) and sets the W3C trace-context propagator, installing
    /// a `tracing` subscriber that does so (the process's global one).
    /// `filter` says what reaches the receiver: [`TraceFilter::new`] for
    /// the library's spans and measurements only.
    ///
    /// `endpoint` is the receiver's base URL (`http://localhost:4318`):
    /// spans go to `{endpoint}/v1/traces`, metrics to `{endpoint}/v1/metrics`.
    /// Without one, the standard variables say where
    /// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
    /// `OTEL_EXPORTER_OTLP_HEADERS`, ...; `http://localhost:4318` when none
    /// is set). The service is named by `OTEL_SERVICE_NAME`, `mcp-adapters`
    /// by default.
    ///
    /// An application with its own subscriber adds
    /// `tracing_opentelemetry::layer()` to it instead, with a
    /// [`TraceFilter`] (see [the chapter](crate::telemetry)). Call this before the async runtime
    /// starts: the exporters' HTTP client is a blocking one, which runs on a
    /// thread of its own.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the exporters cannot be built (a malformed
    /// endpoint), or a global subscriber is already installed.
    pub fn export_otlp(endpoint: Option<&str>, filter: TraceFilter) -> Result<Telemetry> {
        let at =
            |signal: &str| endpoint.map(|e| format!("{}/v1/{signal}", e.trim_end_matches('/')));
        let mut spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
        if let Some(url) = at("traces") {
            spans = spans.with_endpoint(url);
        }
        let spans = spans
            .build()
            .map_err(|e| Error::input("cannot build the OTLP span exporter").with_source(e))?;
        let mut metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
        if let Some(url) = at("metrics") {
            metrics = metrics.with_endpoint(url);
        }
        let metrics = metrics
            .build()
            .map_err(|e| Error::input("cannot build the OTLP metric exporter").with_source(e))?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(
                std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "mcp-adapters".into()),
            )
            .build();
        let traces = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        let meters = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let tracer = traces.tracer("mcp-adapters");
        let spans = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            // The attributes the chapter lists, and nothing else: no source
            // locations, thread names or busy and idle times (whose clock
            // readings at every poll cost more than the spans themselves);
            // no OpenTelemetry context made current at each poll, which
            // nothing here reads.
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false);
        tracing_subscriber::registry()
            // The filter over the whole subscriber, which holds nothing but
            // these layers: what it turns away is never recorded, and a
            // span's entries, exits and close are not judged again.
            .with(filter)
            .with(spans.and_then(tracing_opentelemetry::MetricsLayer::new(meters.clone())))
            .try_init()
            .map_err(|e| {
                Error::input("a tracing subscriber is already installed").with_source(e)
            })?;
        Ok(Telemetry {
            traces,
            metrics: meters,
        })
    }

    /// Puts the current span's trace context into a request's `_meta`
    /// (`traceparent`, `tracestate`), when there is one.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn inject_context(meta: &mut Option<Map<String, Value>>) {
        let context = tracing::Span::current().context();
        let mut carrier: HashMap<String, String> = HashMap::new();
        TraceContextPropagator::new().inject_context(&context, &mut carrier);
        if carrier.is_empty() {
            return;
        }
        let meta = meta.get_or_insert_default();
        for (key, value) in carrier {
            meta.insert(key, Value::String(value));
        }
    }

    /// Makes `span` a child of the trace a server's request carries in its
    /// `_meta`, when it carries one.
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn join_context(span: &tracing::Span, meta: Option<&Map<String, Value>>) {
        let Some(meta) = meta else { return };
        let carrier: HashMap<String, String> = ["traceparent", "tracestate"]
            .iter()
            .filter_map(|k| Some(((*k).to_owned(), meta.get(*k)?.as_str()?.to_owned())))
            .collect();
        if !carrier.contains_key("traceparent") {
            return;
        }
        let context = TraceContextPropagator::new().extract(&carrier);
        let _ = span.set_parent(context);
    }
}

/// Without the `otel` feature, no trace context travels.
#[cfg(not(feature = "otel"))]
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn inject_context(_meta: &mut Option<serde_json::Map<String, serde_json::Value>>) {}

/// Without the `otel` feature, no trace context travels.
#[cfg(not(feature = "otel"))]
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn join_context(
    _span: &tracing::Span,
    _meta: Option<&serde_json::Map<String, serde_json::Value>>,
) {
}

#[cfg(test)]
mod tests {
    use super::SpanName;

    #[test]
    fn a_span_name_is_its_operation_and_target() {
        assert_eq!(
            SpanName::new("execute_tool", "crm__find").text(),
            "execute_tool crm__find"
        );
        assert_eq!(SpanName::new("tools/list", "").text(), "tools/list");
        // Longer than the stack buffer: whole all the same, multibyte text included.
        let long = "é".repeat(100);
        assert_eq!(
            SpanName::new("tools/call", &long).text(),
            format!("tools/call {long}")
        );
    }
}
