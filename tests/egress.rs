//! What leaves the process. Canaries (distinct random strings) go into every
//! channel a call has: the tool's arguments, its result (text, structured
//! content, an image, the result's `_meta`), the request's `_meta`, an
//! elicitation answer, a sampling exchange, a resource read, the server's
//! environment and stderr, its command line, an HTTP server's URL query, a
//! server that does not start (its command line), a server that crashes
//! mid-call, and a sign-in through the local OAuth test server (access,
//! refresh and ID tokens, the client secret, the authorization code, the
//! PKCE verifier). The server is the tests' canary server
//! (`tests/e2e/canary_server.py`, on the official Python SDK), over stdio and
//! over streamable HTTP; the spans go over OTLP to a receiver on loopback
//! that keeps every byte it is sent.
//!
//! Through the library (`export_otlp`, in a process of its own, as it sets
//! the process's subscriber) and through the command line (`--otlp-endpoint`,
//! and `OTEL_EXPORTER_OTLP_ENDPOINT` alone): no canary is in the bytes the
//! receiver got, raw or decoded, nor in any answer for the model but those
//! that are the model's own (the arguments it wrote, the results it asked
//! for); on the command line's stderr no credential and no argument or result
//! canary; and the spans the telemetry chapter lists are all there. The same
//! run with `trace_content` on finds the argument and result canaries in the
//! spans, so that the search can fail, and still no credential.
#![cfg(all(feature = "cli", feature = "oauth"))]

mod common;
#[path = "oauth/lab.rs"]
mod lab;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::install::manifest_dir;
use common::servers;
use serde_json::{Value, json};

// ---- the receiver ----

/// Each request's path and body, as the receiver got them.
type Got = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver on loopback: keeps every request's path and body.
struct Receiver {
    url: String,
    got: Got,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let got: Got = Arc::default();
        let keep = got.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let keep = keep.clone();
                std::thread::spawn(move || serve(stream, &keep));
            }
        });
        Receiver { url, got }
    }

    /// What it got since the last call.
    fn take(&self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut *self.got.lock().unwrap())
    }
}

/// Answers each request on `stream` with an empty 200, keeping its body.
fn serve(stream: TcpStream, keep: &Mutex<Vec<(String, Vec<u8>)>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
        let mut length = 0;
        let mut chunked = false;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "transfer-encoding" => chunked = value.contains("chunked"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size).unwrap();
                let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            if reader.read_exact(&mut body).is_err() {
                return;
            }
        }
        keep.lock().unwrap().push((path, body));
        let answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// What the receiver got, decoded: every request as its `Debug` text, the
/// spans' names and the metrics' names.
struct Decoded {
    text: String,
    spans: BTreeSet<String>,
    metrics: BTreeSet<String>,
}

fn decode(got: &[(String, Vec<u8>)]) -> Decoded {
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message as _;
    let mut decoded = Decoded {
        text: String::new(),
        spans: BTreeSet::new(),
        metrics: BTreeSet::new(),
    };
    for (path, body) in got {
        if path.ends_with("/v1/traces") {
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            for span in request
                .resource_spans
                .iter()
                .flat_map(|r| &r.scope_spans)
                .flat_map(|s| &s.spans)
            {
                decoded.spans.insert(span.name.clone());
            }
            decoded.text.push_str(&format!("{request:?}\n"));
        } else if path.ends_with("/v1/metrics") {
            let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
            for metric in request
                .resource_metrics
                .iter()
                .flat_map(|r| &r.scope_metrics)
                .flat_map(|s| &s.metrics)
            {
                decoded.metrics.insert(metric.name.clone());
            }
            decoded.text.push_str(&format!("{request:?}\n"));
        } else {
            panic!("the receiver was sent {path}");
        }
    }
    decoded
}

// ---- the canaries ----

fn canary(kind: &str) -> String {
    format!("canary-{kind}-{}", uuid::Uuid::new_v4().simple())
}

/// The canaries the test makes; those the server makes are read from what
/// the application got (the calls' records), by their form.
#[derive(Clone)]
struct Canaries {
    argument: String,
    request_meta: String,
    elicitation: String,
    sampling_answer: String,
    env: String,
    argv: String,
    url_query: String,
    /// In the password of a URL on a command line that does not start.
    broken: String,
    /// The OAuth lab's name: every secret it hands out starts with it.
    lab: String,
}

impl Canaries {
    fn new() -> Self {
        Canaries {
            argument: canary("argument"),
            request_meta: canary("request-meta"),
            elicitation: canary("elicitation"),
            sampling_answer: canary("sampling-answer"),
            env: canary("env"),
            argv: canary("argv"),
            url_query: canary("url-query"),
            broken: canary("broken"),
            lab: format!("lab{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
        }
    }

    fn to_env(&self, command: &mut Command) {
        for (name, value) in [
            ("EGRESS_ARGUMENT", &self.argument),
            ("EGRESS_REQUEST_META", &self.request_meta),
            ("EGRESS_ELICITATION", &self.elicitation),
            ("EGRESS_SAMPLING_ANSWER", &self.sampling_answer),
            ("EGRESS_ENV", &self.env),
            ("EGRESS_ARGV", &self.argv),
            ("EGRESS_URL_QUERY", &self.url_query),
            ("EGRESS_BROKEN", &self.broken),
            ("EGRESS_LAB", &self.lab),
        ] {
            command.env(name, value);
        }
    }

    fn from_env() -> Self {
        let get = |name: &str| std::env::var(name).unwrap();
        Canaries {
            argument: get("EGRESS_ARGUMENT"),
            request_meta: get("EGRESS_REQUEST_META"),
            elicitation: get("EGRESS_ELICITATION"),
            sampling_answer: get("EGRESS_SAMPLING_ANSWER"),
            env: get("EGRESS_ENV"),
            argv: get("EGRESS_ARGV"),
            url_query: get("EGRESS_URL_QUERY"),
            broken: get("EGRESS_BROKEN"),
            lab: get("EGRESS_LAB"),
        }
    }

    /// The lab's secrets by their start: client secret, codes, access,
    /// refresh and ID tokens.
    fn lab_secrets(&self) -> Vec<String> {
        ["secret", "code", "at", "rt", "idt"]
            .iter()
            .map(|kind| format!("{}-{kind}-", self.lab))
            .collect()
    }
}

/// The kinds of canary never to reach a model or a trace: the request's
/// `_meta`, the elicitation answer, both sides of the sampling exchange,
/// the resource read, the server's environment, command line, URL query and
/// stderr, and the command line of a server that did not start.
const PRIVATE: &[&str] = &[
    "canary-request-meta-",
    "canary-elicitation-",
    "canary-sampling-answer-",
    "canary-sampling-request-",
    "canary-resource-",
    "canary-env-",
    "canary-argv-",
    "canary-url-query-",
    "canary-broken-",
    "canary-crash-stderr-",
];

/// The arguments and results the model's answers carry: in a trace only
/// when content is traced.
const CONTENT: &[&str] = &[
    "canary-argument-",
    "canary-result-text-",
    "canary-result-structured-",
];

/// The result's `_meta`: never the model's; in a trace with the whole
/// result, when content is traced.
const RESULT_META: &str = "canary-result-meta-";

/// The canary of `prefix`'s kind in `text` (the first).
fn found(text: &str, prefix: &str) -> Option<String> {
    let at = text.find(prefix)?;
    let tail = &text[at + prefix.len()..];
    let id: String = tail.chars().take_while(char::is_ascii_hexdigit).collect();
    Some(format!("{prefix}{id}"))
}

// ---- the servers ----

fn canary_script() -> String {
    manifest_dir()
        .join("tests/e2e/canary_server.py")
        .display()
        .to_string()
}

/// The canary server's command line: its own argument carries a canary.
fn stdio_args(canaries: &Canaries) -> Vec<String> {
    vec![canary_script(), "--api-key".into(), canaries.argv.clone()]
}

/// The command line of a server that does not start (it exits before its
/// handshake), a password in the URL it is given.
fn broken_args(canaries: &Canaries) -> Vec<String> {
    vec![
        "-c".into(),
        "echo cannot reach the database >&2; exit 3".into(),
        "sh".into(),
        "--db".into(),
        format!("postgresql://admin:{}@db.internal/app", canaries.broken),
    ]
}

const BROKEN_COMMAND: &str = "sh";

/// The canary server over streamable HTTP, on a free port, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server(canaries: &Canaries) -> HttpServer {
    let python = servers::python().unwrap_or_else(|e| panic!("{e}"));
    let port = servers::free_port();
    // Killed and waited for when dropped, whatever happens next.
    let server = HttpServer {
        child: Command::new(python)
            .args(stdio_args(canaries))
            .args(["--http", &port.to_string()])
            .env("CANARY_ENV", &canaries.env)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        url: format!("http://127.0.0.1:{port}/mcp?api_key={}", canaries.url_query),
    };
    for _ in 0..300 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return server;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the canary server did not listen on {port}");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

// ---- the library, in a process of its own ----

const CHILD: &str = "EGRESS_LIBRARY_CHILD";

/// A process's turns through the library, with `export_otlp` installed: run
/// by [`no_canary_leaves_through_the_library`] as a process of its own (the
/// exporter is the process's subscriber). Run as a test alone, it does
/// nothing.
#[test]
fn library_child() {
    let Ok(endpoint) = std::env::var(CHILD) else {
        return;
    };
    let canaries = Canaries::from_env();
    let content = std::env::var("EGRESS_CONTENT").as_deref() == Ok("on");
    let http_url = std::env::var("EGRESS_HTTP_URL").ok();
    let telemetry = mcp_adapters::telemetry::export_otlp(
        Some(&endpoint),
        mcp_adapters::telemetry::TraceFilter::new(),
    )
    .unwrap();
    let runtime = common::runtime();
    let report = runtime.block_on(library_turns(&canaries, content, http_url));
    drop(runtime);
    telemetry.shutdown().unwrap();
    std::fs::write(std::env::var("EGRESS_REPORT").unwrap(), report.to_string()).unwrap();
}

async fn library_turns(canaries: &Canaries, content: bool, http_url: Option<String>) -> Value {
    use mcp_adapters::client::Lifecycle;
    use mcp_adapters::exec::{Handlers, InputAnswer, Sampling, SamplingAnswer};
    use mcp_adapters::mcp::{CreateMessageResult, ElicitResult, InputResponses};
    use mcp_adapters::{
        ClientOptions, ExecOptions, HubConfig, ListOptions, McpClient, Policy, ServerConfig, Source,
    };

    let sampled: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = sampled.clone();
    let answer = canaries.sampling_answer.clone();
    let sampling = Sampling::new(move |request| {
        seen.lock()
            .unwrap()
            .push(serde_json::to_string(&request.params).unwrap());
        let answer = answer.clone();
        Box::pin(async move { SamplingAnswer::Respond(CreateMessageResult::text("m", &answer)) })
    });
    let code = canaries.elicitation.clone();
    let handlers = Handlers::new().sampling(sampling).input(move |questions| {
        let mut responses = InputResponses::new();
        for key in questions.requests.keys() {
            responses.insert(
                key.clone(),
                ElicitResult::accept(json!({"code": code})).into(),
            );
        }
        Box::pin(async move { InputAnswer::Respond(responses) })
    });
    let options = ClientOptions::new()
        .lifecycle(Lifecycle::Legacy)
        .init_timeout(Duration::from_secs(60))
        .handlers(handlers);
    let python = servers::python().unwrap_or_else(|e| panic!("{e}"));
    let canary_server = match &http_url {
        Some(url) => ServerConfig::http(url.clone()),
        None => ServerConfig::stdio(python.display().to_string(), stdio_args(canaries))
            .with("CANARY_ENV", canaries.env.clone()),
    };
    let source = HubConfig::new()
        .server("canary", canary_server)
        .server(
            "broken",
            ServerConfig::stdio(BROKEN_COMMAND, broken_args(canaries)),
        )
        .keep_going(true)
        .connect_with(&options)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"))
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    let provider = mcp_adapters::Registry::builtin()
        .unwrap()
        .get("anthropic")
        .unwrap();
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let read = source
        .read_resource("canary", "canary://r")
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    let mut meta = serde_json::Map::new();
    meta.insert("note".into(), json!(canaries.request_meta));
    let exec = ExecOptions::new()
        .trace_content(content)
        .meta(meta)
        .max_concurrency(1);
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "canary__echo", "input": {"text": canaries.argument}},
        {"type": "tool_use", "id": "toolu_2", "name": "canary__ask", "input": {}},
        {"type": "tool_use", "id": "toolu_3", "name": "canary__sample", "input": {}},
        {"type": "tool_use", "id": "toolu_4", "name": "broken__query", "input": {}},
        {"type": "tool_use", "id": "toolu_5", "name": "canary__crash", "input": {}},
    ]});
    let run = source
        .execute_tool_calls(provider, &response, &listing, &exec)
        .await
        .unwrap();

    // A sign-in through the local authorization server; the first token
    // expires at once, so the call refreshes it.
    let name: &'static str = Box::leak(canaries.lab.clone().into_boxed_str());
    let lab = lab::Lab::start_with(name, Duration::from_secs(1), Duration::from_secs(3600)).await;
    let oauth = mcp_adapters::client::auth::OAuth::new(
        "http://127.0.0.1:9/callback",
        |request: mcp_adapters::client::auth::SignInRequest| {
            Box::pin(async move {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .unwrap();
                let response = client.get(&request.authorization_url).send().await.unwrap();
                let location = response.headers()["location"].to_str().unwrap().to_owned();
                mcp_adapters::client::auth::SignInAnswer::Redirect(location)
            })
        },
    );
    let client = McpClient::connect_http(
        "notes",
        &lab.mcp_url,
        &BTreeMap::new(),
        &ClientOptions::new()
            .lifecycle(Lifecycle::Legacy)
            .init_timeout(Duration::from_secs(20))
            .oauth(oauth),
    )
    .await
    .unwrap_or_else(|e| panic!("{e:#}"));
    let notes = Source::client("notes", client)
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let notes_listing = notes.tools(provider, &ListOptions::new()).await.unwrap();
    let signed_in = notes
        .execute_tool_calls(
            provider,
            &json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_6", "name": "read_notes", "input": {}}]}),
            &notes_listing,
            &exec,
        )
        .await
        .unwrap();
    assert!(
        signed_in.calls[0].error.is_none(),
        "{:?}",
        signed_in.calls[0].error
    );
    let seen = lab.seen();
    let secrets: Vec<String> = seen
        .iter()
        .filter_map(|s| s.authorization.clone())
        .map(|a| a.split_once(' ').map_or(a.clone(), |(_, v)| v.to_owned()))
        .chain(seen.iter().filter_map(|s| s.field("code")))
        .chain(seen.iter().filter_map(|s| s.field("refresh_token")))
        .chain(seen.iter().filter_map(|s| s.field("code_verifier")))
        .collect();
    assert!(secrets.len() >= 4, "{secrets:?}");

    let records: Vec<Value> = run
        .calls
        .iter()
        .chain(&signed_in.calls)
        .map(|c| {
            json!({
                "error": c.error.as_ref().map(|e| format!("{e:#}")),
                "result": c.result,
            })
        })
        .collect();
    json!({
        "answers": run.turn.results.iter().chain(&signed_in.turn.results).collect::<Vec<_>>(),
        "records": records,
        "failed": listing.report.toolset.failed_servers,
        "resource": read,
        "sampled": *sampled.lock().unwrap(),
        "secrets": secrets,
        "errors": run.calls.iter().map(|c| c.error.as_ref().map(|e| format!("{:?}", e.kind()))).collect::<Vec<_>>(),
    })
}

fn assert_absent(haystack: &str, needles: &[String], what: &str) {
    for needle in needles {
        assert!(
            !haystack.contains(needle.as_str()),
            "`{needle}` is in {what}"
        );
    }
}

fn strings(prefixes: &[&str]) -> Vec<String> {
    prefixes.iter().map(|p| (*p).to_owned()).collect()
}

/// Checks what the receiver got for one run: none of `never`, and the
/// content (`traced`: these canaries) or none of it.
fn check_export(
    got: &[(String, Vec<u8>)],
    never: &[String],
    traced: Option<&[String]>,
    spans: &[&str],
    what: &str,
) {
    assert!(!got.is_empty(), "{what}: the receiver got nothing");
    let raw: Vec<u8> = got.iter().flat_map(|(_, body)| body.clone()).collect();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let decoded = decode(got);
    for (text, form) in [(&raw, "raw"), (&decoded.text, "decoded")] {
        let place = format!("{what}: the receiver's {form} bytes");
        assert_absent(text, never, &place);
        match traced {
            Some(content) => {
                for canary in content {
                    assert!(
                        text.contains(canary.as_str()),
                        "`{canary}` is not in {place}, though content is traced"
                    );
                }
            }
            None => assert_absent(text, &strings(CONTENT), &place),
        }
    }
    for span in spans {
        assert!(
            decoded.spans.contains(*span),
            "{what}: no span `{span}` in {:?}",
            decoded.spans
        );
    }
    assert!(
        decoded.metrics.contains("mcp.client.operation.duration"),
        "{what}: {:?}",
        decoded.metrics
    );
}

/// The library, over stdio and streamable HTTP, with content traced and not.
#[test]
fn no_canary_leaves_through_the_library() {
    let receiver = Receiver::start();
    for transport in [Transport::Stdio, Transport::Http] {
        for traced in [false, true] {
            let canaries = Canaries::new();
            let server = (transport == Transport::Http).then(|| http_server(&canaries));
            let report_dir = tempfile::tempdir().unwrap();
            let report_file = report_dir.path().join("report.json");
            let mut child = Command::new(std::env::current_exe().unwrap());
            child
                .env("EGRESS_REPORT", &report_file)
                .args([
                    "--exact",
                    "library_child",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD, &receiver.url)
                .env("EGRESS_CONTENT", if traced { "on" } else { "off" })
                .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
                .env_remove("RUST_LOG");
            canaries.to_env(&mut child);
            if let Some(server) = &server {
                child.env("EGRESS_HTTP_URL", &server.url);
            }
            let out = child.output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let what = format!("library, {transport:?}, content traced: {traced}");
            assert!(
                out.status.success(),
                "{what}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: Value =
                serde_json::from_str(&std::fs::read_to_string(&report_file).unwrap()).unwrap();
            drop(server);
            let got = receiver.take();
            let text = report.to_string();

            // Each channel carried its canary to the application.
            for prefix in [
                "canary-result-structured-",
                RESULT_META,
                "canary-resource-",
                "canary-sampling-request-",
            ] {
                assert!(text.contains(prefix), "{what}: no `{prefix}` in {report:#}");
            }
            if transport == Transport::Stdio {
                for prefix in ["canary-crash-stderr-", "canary-env-", "canary-argv-"] {
                    assert!(
                        text.contains(prefix),
                        "{what}: no `{prefix}` in the records"
                    );
                }
            }
            let image = report["records"][0]["result"]["content"][1]["data"]
                .as_str()
                .unwrap_or_else(|| panic!("{what}: {report:#}"))
                .to_owned();
            let answers = report["answers"].to_string();
            let argument = canaries.argument.clone();
            let result = found(&answers, "canary-result-text-")
                .unwrap_or_else(|| panic!("{what}: {answers}"));
            let structured = found(&text, "canary-result-structured-").unwrap();
            let secrets: Vec<String> = report["secrets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .chain(canaries.lab_secrets())
                .collect();

            let mut never = strings(PRIVATE);
            never.extend(secrets.iter().cloned());
            if !traced {
                never.push(RESULT_META.to_owned());
                never.push(image.clone());
            }
            let content = [argument.clone(), result.clone(), structured];
            check_export(
                &got,
                &never,
                traced.then_some(&content[..]),
                &[
                    "execute_tool canary__echo",
                    "tools/call echo",
                    "tools/list",
                    "resources/read canary://r",
                    "elicitation/create",
                    "sampling/createMessage",
                    "oauth sign-in",
                    "tools/call read_notes",
                ],
                &what,
            );

            // The model's answers: its own arguments and results, and
            // nothing else.
            let mut not_for_the_model = strings(PRIVATE);
            not_for_the_model.push(RESULT_META.to_owned());
            not_for_the_model.extend(secrets);
            assert_absent(
                &answers,
                &not_for_the_model,
                &format!("{what}: the answers"),
            );
            for canary in [&argument, &result, &image] {
                assert!(
                    answers.contains(canary.as_str()),
                    "{what}: `{canary}` is not in the answers"
                );
            }
            // The call to the server that did not start is an unknown tool;
            // the crash is told by kind and name.
            assert_eq!(
                report["answers"][3]["content"][0]["text"],
                "unknown tool `broken__query`: call one of the tools offered"
            );
            let crash = report["answers"][4]["content"][0]["text"].as_str().unwrap();
            assert!(crash.starts_with("server `canary` "), "{crash}");
            // The application keeps why: the command line, without the
            // URL's password.
            let failed = report["failed"].to_string();
            assert!(failed.contains("postgresql://db.internal/app"), "{failed}");
            assert!(!failed.contains("canary-broken-"), "{failed}");
        }
    }
}

// ---- the command line ----

/// The command line, over stdio and streamable HTTP, exporting with
/// `--otlp-endpoint` and with `OTEL_EXPORTER_OTLP_ENDPOINT` alone.
#[test]
fn no_canary_leaves_through_the_command_line() {
    let receiver = Receiver::start();
    let python = servers::python().unwrap_or_else(|e| panic!("{e}"));
    for transport in [Transport::Stdio, Transport::Http] {
        for by_flag in [true, false] {
            let canaries = Canaries::new();
            let server = (transport == Transport::Http).then(|| http_server(&canaries));
            let dir = tempfile::tempdir().unwrap();
            let canary = match &server {
                Some(server) => json!({"url": server.url}),
                None => json!({"command": python, "args": stdio_args(&canaries),
                               "env": {"CANARY_ENV": canaries.env}}),
            };
            let config = dir.path().join("servers.json");
            std::fs::write(
                &config,
                json!({"mcpServers": {
                    "canary": canary,
                    "broken": {"command": BROKEN_COMMAND, "args": broken_args(&canaries)},
                }})
                .to_string(),
            )
            .unwrap();
            let answers = dir.path().join("answers.yaml");
            std::fs::write(
                &answers,
                format!(
                    "answers:\n  - {{tool: \"canary/ask\", content: {{code: \"{}\"}}}}\nsampling:\n  - tool: \"canary/sample\"\n    result: {{role: assistant, model: m, content: {{type: text, text: \"{}\"}}}}\n",
                    canaries.elicitation, canaries.sampling_answer
                ),
            )
            .unwrap();
            let response = dir.path().join("response.json");
            std::fs::write(
                &response,
                json!({"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "canary__echo", "input": {"text": canaries.argument}},
                    {"type": "tool_use", "id": "toolu_2", "name": "canary__ask", "input": {}},
                    {"type": "tool_use", "id": "toolu_3", "name": "canary__sample", "input": {}},
                    {"type": "tool_use", "id": "toolu_4", "name": "broken__query", "input": {}},
                    {"type": "tool_use", "id": "toolu_5", "name": "canary__crash", "input": {}},
                ]})
                .to_string(),
            )
            .unwrap();
            let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"));
            command
                .args([
                    "run",
                    "--provider",
                    "anthropic",
                    "--keep-going",
                    "--max-concurrency",
                    "1",
                ])
                .arg("--config")
                .arg(&config)
                .arg("--answers")
                .arg(&answers)
                .env_remove("RUST_LOG")
                .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                .stdin(Stdio::null());
            if by_flag {
                command
                    .args(["--otlp-endpoint", &receiver.url])
                    .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT");
            } else {
                command.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url);
            }
            let out = command.arg(&response).output().unwrap();
            let what = format!("command line, {transport:?}, by flag: {by_flag}");
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
            drop(server);
            let got = receiver.take();
            let run: Value = serde_json::from_str(&stdout).unwrap();
            let mut never = strings(PRIVATE);
            never.push(RESULT_META.to_owned());
            check_export(
                &got,
                &never,
                None,
                &["execute_tool canary__echo", "tools/call echo", "tools/list"],
                &what,
            );
            let results = run["results"].to_string();
            assert_absent(&results, &never, &format!("{what}: `results`"));
            assert!(results.contains(&canaries.argument), "{what}: {results}");
            assert!(results.contains("canary-result-text-"), "{what}: {results}");
            assert_eq!(
                run["results"][3]["content"][0]["text"],
                "unknown tool `broken__query`: call one of the tools offered"
            );
            // stderr, for the person at the terminal: the failed server's
            // command line without its password; no argument or result.
            assert_absent(&stderr, &strings(CONTENT), &format!("{what}: stderr"));
            assert_absent(
                &stderr,
                &strings(&["canary-broken-", RESULT_META]),
                &format!("{what}: stderr"),
            );
            assert!(
                stderr.contains("postgresql://db.internal/app"),
                "{what}: {stderr}"
            );
            if transport == Transport::Stdio {
                // The crash is said on stderr, with the server's last lines.
                assert!(stderr.contains("canary-crash-stderr-"), "{what}: {stderr}");
                let crash = run["results"][4]["content"][0]["text"].as_str().unwrap();
                assert!(
                    crash.starts_with("server `canary` did not answer"),
                    "{crash}"
                );
            }
        }
    }
}
