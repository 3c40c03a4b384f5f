//! No credential ever reaches a trace: a sign-in, a refresh and a call
//! against the local authorization server and the MCP server it protects
//! (`oauth/lab.rs`), traced by OpenTelemetry's conventions through the
//! library's [`TraceFilter`], and every span's name, attributes and events
//! searched for the secrets the lab handed out. A second layer in the same
//! subscriber keeps every event, as an OpenTelemetry layer without the
//! filter would export them, and shows where the secrets would be: the MCP
//! SDK's debug events. A binary of its own: the spans are captured by a
//! subscriber for the test's thread.
#![cfg(all(feature = "oauth", feature = "otel"))]

#[path = "oauth/lab.rs"]
mod lab;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lab::Lab;
use mcp_adapters::client::Lifecycle;
use mcp_adapters::client::auth::{Dpop, FileTokenStore, OAuth, SignInAnswer, SignInRequest};
use mcp_adapters::telemetry::TraceFilter;
use mcp_adapters::{ClientOptions, ExecOptions, ListOptions, McpClient, Policy, Registry, Source};
use serde_json::json;

const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// Signs in at once, following the authorization page to its redirect.
fn oauth() -> OAuth {
    let count = Arc::new(AtomicUsize::new(0));
    OAuth::new(REDIRECT, move |request: SignInRequest| {
        count.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let response = client.get(&request.authorization_url).send().await.unwrap();
            let location = response.headers()["location"].to_str().unwrap().to_owned();
            SignInAnswer::Redirect(location)
        })
    })
}

/// Every event, each field as `name=value`.
#[derive(Clone, Default)]
struct Events(Arc<std::sync::Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Fields<'a>(&'a mut Vec<String>);
        impl tracing::field::Visit for Fields<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push(format!("{}={value:?}", field.name()));
            }
        }
        if let Ok(mut events) = self.0.lock() {
            event.record(&mut Fields(&mut events));
        }
    }
}

/// Everything a span exports, as text: its name, attributes and events
/// (each event's name and attributes).
fn exported(spans: &[opentelemetry_sdk::trace::SpanData]) -> Vec<String> {
    let mut out = Vec::new();
    for span in spans {
        out.push(span.name.to_string());
        out.extend(
            span.attributes
                .iter()
                .map(|kv| format!("{}={}", kv.key, kv.value)),
        );
        for event in span.events.iter() {
            out.push(event.name.to_string());
            out.extend(
                event
                    .attributes
                    .iter()
                    .map(|kv| format!("{}={}", kv.key, kv.value)),
            );
        }
    }
    out
}

#[tokio::test(flavor = "current_thread")]
async fn no_credential_ever_reaches_a_trace() {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt;
    let filtered = opentelemetry_sdk::trace::InMemorySpanExporter::default();
    let traces = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_simple_exporter(filtered.clone())
        .build();
    let everything = Events::default();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(traces.tracer("tests"))
                .with_filter(TraceFilter::new()),
        )
        .with(everything.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    // The first token expires at once, so the call refreshes it. Tokens are
    // DPoP-bound (nonces at both ends), and the key is kept in the store.
    let dpop = lab::LabDpop {
        algs: vec!["ES256"],
        required: true,
        as_nonce: true,
        rs_nonce: true,
        ..Default::default()
    };
    let lab = Lab::start_dpop_with(
        "notes",
        Duration::from_secs(1),
        Duration::from_secs(3600),
        dpop,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("tokens.json");
    let oauth = oauth()
        .token_store(FileTokenStore::new(&store))
        .dpop(Dpop::when_supported().keep_key_in_store());
    let options = ClientOptions::new()
        .lifecycle(Lifecycle::Legacy)
        .init_timeout(Duration::from_secs(20))
        .oauth(oauth);
    let client = McpClient::connect_http(lab.name, &lab.mcp_url, &BTreeMap::new(), &options)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let source = Source::client(lab.name, client)
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "read_notes", "input": {}}]});
    let run = source
        .execute_tool_calls(
            provider,
            &response,
            &listing,
            &ExecOptions::new().trace_content(true),
        )
        .await
        .unwrap();
    assert!(run.calls[0].error.is_none(), "{:?}", run.calls[0].error);

    traces.force_flush().unwrap();
    let spans = filtered.get_finished_spans().unwrap();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert!(names.contains(&"tools/call read_notes"), "{names:?}");
    assert!(names.contains(&"oauth sign-in"), "{names:?}");
    assert!(names.contains(&"execute_tool read_notes"), "{names:?}");
    let seen = lab.seen();
    // The DPoP key, as the store keeps it.
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
    let key = kept["servers"][&lab.mcp_url]["dpop_key"]["pkcs8"]
        .as_str()
        .unwrap()
        .to_owned();
    let secrets: Vec<String> = seen
        .iter()
        .filter_map(|s| s.authorization.clone())
        .chain(seen.iter().filter_map(|s| s.field("code")))
        .chain(seen.iter().filter_map(|s| s.field("refresh_token")))
        .chain(seen.iter().filter_map(|s| s.field("code_verifier")))
        .chain(seen.iter().filter_map(|s| s.field("client_secret")))
        .chain(seen.iter().filter_map(|s| s.dpop.clone()))
        .chain([key])
        .chain(lab.secret_prefixes())
        .map(|s| {
            s.trim_start_matches("Bearer ")
                .trim_start_matches("DPoP ")
                .to_owned()
        })
        .collect();
    assert!(secrets.len() > 6, "{secrets:?}");
    let exported_filtered = exported(&spans);
    for secret in &secrets {
        assert!(
            exported_filtered
                .iter()
                .all(|a| !a.contains(secret.as_str())),
            "`{secret}` is in a span's name, attributes or events"
        );
    }
    // The check looks where such secrets go: without the filter, the SDK's
    // sign-in events carry the authorization code and the ID token.
    let exported_unfiltered = everything.0.lock().unwrap().clone();
    for leaked in [format!("{}-code-", lab.name), format!("{}-idt-", lab.name)] {
        assert!(
            exported_unfiltered.iter().any(|a| a.contains(&leaked)),
            "no `{leaked}` in the unfiltered spans: {exported_unfiltered:#?}"
        );
    }
}
