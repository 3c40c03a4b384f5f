//! End to end against real MCP servers, started over stdio through the
//! official SDK: `server-everything` and `server-filesystem` (npm) and
//! `mcp-server-time` (PyPI),
//! pinned in `tests/common/servers.rs` and `tests/e2e/requirements.txt`, and
//! the tests' own `tests/e2e/lab_server.py` for audio, progress, `_meta`,
//! timeouts with cancellation, and a crash.
#![cfg(feature = "rmcp")]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::conformance::{Item, check};
use common::servers;
use common::*;
use mcp_adapters::ListOptions;
use mcp_adapters::ResultOptions;
use mcp_adapters::exec::Progress;
use mcp_adapters::exec::{BoxFuture, CallContext, CallOutcome, Hooks, ServerState};
use mcp_adapters::results::StructuredMode;
use mcp_adapters::toolset::DropReason;
use mcp_adapters::{CallToolResult, Content, ToolCall};
use mcp_adapters::{ErrorKind, HubConfig, McpClient, Policy, ServerConfig};
use mcp_adapters::{ExecOptions, Listing, Source, Status};
use serde_json::{Value, json};

fn stdio((command, args): (String, Vec<String>)) -> ServerConfig {
    ServerConfig::stdio(command, args)
}

fn or_panic<T>(r: Result<T, String>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

fn exposed(listing: &Listing, server: &str, tool: &str) -> String {
    listing
        .toolset()
        .exposed_name(server, tool)
        .unwrap_or_else(|| panic!("{server}/{tool} not offered"))
        .to_owned()
}

/// Dates and times from the time server change every day.
fn normalize(value: &Value) -> Value {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let window: String = bytes[i..(i + 10).min(bytes.len())].iter().collect();
        let is_date = window.len() == 10
            && window.chars().enumerate().all(|(k, c)| {
                if k == 4 || k == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            });
        if is_date {
            out.push_str("[date]");
            i += 10;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    // server-everything's dynamic resources say when they were created.
    while let Some(at) = out.find("created at ") {
        let start = at + "created at ".len();
        let Some(len) = out[start..].find("M") else {
            break;
        };
        out.replace_range(at..start + len + 1, "created [time]");
    }
    let mut value: Value = serde_json::from_str(&out).unwrap();
    for day in [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ] {
        value = serde_json::from_str(&value.to_string().replace(day, "[weekday]")).unwrap();
    }
    value
}

#[test]
fn core_providers_against_everything_and_time() {
    let everything = or_panic(servers::everything());
    let time = or_panic(servers::time());
    runtime().block_on(async {
        let config = HubConfig::new().server("everything", stdio(everything)).server("time", stdio(time));
        let hub = config.connect().await.unwrap().build().unwrap();
        let mut items = Vec::new();
        for &p in CORE_PROVIDERS {
            let provider = provider(p);
            let listing = hub.tools(provider, &ListOptions::new()).await.unwrap();
            assert!(listing.report.toolset.failed_servers.is_empty(), "{:?}", listing.report);
            let calls: Vec<(String, Value)> = [
                ("everything", "echo", json!({"message": "hello from the model"})),
                ("everything", "get-tiny-image", json!({})),
                ("everything", "get-resource-reference", json!({"resourceType": "Text", "resourceId": 1})),
                ("everything", "get-resource-links", json!({"count": 2})),
                ("everything", "get-structured-content", json!({"location": "Chicago"})),
                ("everything", "get-sum", json!({"a": "not a number"})),
                ("time", "convert_time", json!({"source_timezone": "Asia/Kolkata", "time": "12:00", "target_timezone": "Asia/Tokyo"})),
            ]
            .into_iter()
            .map(|(s, t, a)| (exposed(&listing, s, t), a))
            .collect();
            let response = model_response(p, &calls);
            let run = hub.execute_tool_calls(provider, &response, &listing, &ExecOptions::new()).await.unwrap();
            assert_eq!(run.status, Status::Ok);
            assert_eq!(run.turn.results.len(), calls.len());
            for (i, result) in run.turn.results.iter().enumerate() {
                items.push(Item::new(format!("{p} e2e call {i}"), format!("{p}/result"), result.clone()));
            }
            let value = json!({"calls": run.calls, "results": run.turn.results, "ran_servers": run.ran_servers});
            snapshot(Stage::Exec, Some(p), "everything_and_time", normalize(&value));
        }
        check(&items).unwrap_or_else(|e| panic!("{e}"));
    });
}

/// The reference filesystem server's `read_media_file` returns an image both
/// as an image block and inside `structuredContent.content`, and a PDF as an
/// `application/octet-stream` blob: in no structured mode does any provider get
/// the base64 as text, and with the `media` option the image and the PDF reach
/// every model that takes them.
#[test]
fn filesystem_read_media_file_reaches_models_as_media() {
    use base64::Engine as _;
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let root = tempfile::tempdir().unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(PNG)
        .unwrap();
    std::fs::write(root.path().join("chart.png"), decoded).unwrap();
    let pdf_bytes = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n";
    std::fs::write(root.path().join("report.pdf"), pdf_bytes).unwrap();
    let pdf = base64::engine::general_purpose::STANDARD.encode(pdf_bytes);
    let server = or_panic(servers::filesystem(root.path()));
    let seen = Recorder::default();
    runtime().block_on(async {
        let source = HubConfig::new()
            .server("fs", stdio(server))
            .connect()
            .await
            .unwrap()
            .hooks(seen.clone())
            .build()
            .unwrap();
        let mut items = Vec::new();
        let settings = CORE_PROVIDERS
            .iter()
            .map(|p| (*p, None))
            .chain(MEDIA_OPTIONS.iter().map(|(p, v)| (*p, Some(*v))));
        for (p, media) in settings {
            let provider = provider(p);
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            let read = exposed(&listing, "fs", "read_media_file");
            let path = |f: &str| root.path().join(f).display().to_string();
            let calls = vec![
                (read.clone(), json!({"path": path("chart.png")})),
                (read, json!({"path": path("report.pdf")})),
            ];
            for mode in [
                StructuredMode::Auto,
                StructuredMode::Prefer,
                StructuredMode::Append,
            ] {
                let mut results = ResultOptions::new().structured(mode);
                if let Some(value) = media {
                    results = results.option("media", value);
                }
                let options = ExecOptions::new().results(results);
                let run = source
                    .execute_tool_calls(provider, &model_response(p, &calls), &listing, &options)
                    .await
                    .unwrap();
                let label = format!("{p} media={media:?} {mode:?}");
                assert!(run.calls.iter().all(|c| c.ran), "{label}: {:?}", run.calls);
                let all = json!([run.turn.results, run.turn.follow_ups]);
                let sent = serde_json::to_string(&all).unwrap();
                // The image at most once, the PDF at most once, each as a payload, never inside text.
                assert!(sent.matches(PNG).count() <= 1, "{label}: {sent}");
                assert!(sent.matches(&pdf).count() <= 1, "{label}: {sent}");
                let payloads = [
                    PNG.to_owned(),
                    format!("data:image/png;base64,{PNG}"),
                    pdf.clone(),
                    format!("data:application/pdf;base64,{pdf}"),
                ];
                for text in strings(&all) {
                    if text.contains(PNG) || text.contains(&pdf) {
                        assert!(
                            payloads.contains(&text),
                            "{label}: a payload inside text: {text}"
                        );
                    }
                }
                if media.is_some() {
                    // Every provider with the option takes PNG images and PDFs.
                    assert_eq!(
                        sent.matches(PNG).count(),
                        1,
                        "{label}: the image did not reach the model: {sent}"
                    );
                    assert_eq!(
                        sent.matches(&pdf).count(),
                        1,
                        "{label}: the PDF did not reach the model: {sent}"
                    );
                }
                for (i, result) in run.turn.results.iter().enumerate() {
                    if let Some(check_type) = result_check(p) {
                        let value = if p == "bedrock-converse" {
                            result["toolResult"].clone()
                        } else {
                            result.clone()
                        };
                        items.push(Item::new(format!("{label} call {i}"), check_type, value));
                    }
                }
            }
        }
        check(&items).unwrap_or_else(|e| panic!("{e}"));
    });
    // The server does mirror its content blocks, so the dedupe above was exercised.
    let results = seen.0.lock().unwrap();
    let first_is = |image: bool| {
        results
            .iter()
            .find(|r| match r.content.first() {
                Some(Content::Image(_)) => image,
                Some(Content::Resource(_)) => !image,
                _ => false,
            })
            .expect("a result of each kind")
    };
    for (result, mime) in [
        (first_is(true), "image/png"),
        (first_is(false), "application/octet-stream"),
    ] {
        let block = serde_json::to_value(&result.content[0]).unwrap();
        let label = block.get("mimeType").or(block["resource"].get("mimeType"));
        assert_eq!(label, Some(&json!(mime)), "{block}");
        assert_eq!(result.structured_content, Some(json!({"content": [block]})));
    }
}

/// Keeps every result the servers return, as they sent it.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<CallToolResult>>>);

impl Hooks for Recorder {
    fn after<'a>(
        &'a self,
        _call: &'a ToolCall,
        result: &'a mut CallToolResult,
        _context: &'a CallContext,
    ) -> BoxFuture<'a, mcp_adapters::Result<()>> {
        self.0.lock().unwrap().push(result.clone());
        Box::pin(async { Ok(()) })
    }
}

/// The checker's type for a provider's answers.
fn result_check(provider: &str) -> Option<String> {
    match provider {
        "gemini-multimodal" => Some("gemini-multimodal/result@gemini/result".into()),
        "ollama" => None,
        p => Some(format!("{p}/result")),
    }
}

fn lab_client() -> ServerConfig {
    stdio(or_panic(servers::lab()))
}

#[test]
fn audio_progress_and_meta_on_the_lab_server() {
    runtime().block_on(async {
        let client = McpClient::connect("lab", &lab_client(), &Default::default())
            .await
            .unwrap();
        let source = Source::client("lab", client).build().unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let sink = seen.clone();
        let mut meta = serde_json::Map::new();
        meta.insert("com.example/trace".into(), json!("abc-123"));
        let options = ExecOptions::new()
            .progress(move |p| sink.lock().unwrap().push(p))
            .meta(meta);
        let response = model_response(
            "anthropic",
            &[
                ("beep".into(), json!({})),
                ("count".into(), json!({"n": 3})),
                ("meta".into(), json!({})),
            ],
        );
        let run = source
            .execute_tool_calls(p, &response, &listing, &options)
            .await
            .unwrap();
        assert!(run.calls.iter().all(|c| c.ran), "{:?}", run.calls);
        #[allow(clippy::type_complexity)]
        let mut progress: Vec<(f64, Option<f64>, Option<String>, Option<String>)> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|p| (p.progress, p.total, p.message.clone(), p.call_id.clone()))
            .collect();
        // Notifications are handled on their own tasks, so the last may land
        // after the answer: check what arrived, for the right call.
        assert!(
            !progress.is_empty(),
            "no progress notification reached the caller"
        );
        progress.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (k, (value, total, message, call_id)) in progress.iter().enumerate() {
            let step = k as f64 + 1.0;
            assert_eq!((*value, *total), (step, Some(3.0)), "{progress:?}");
            assert_eq!(
                message.as_deref(),
                Some(format!("step {step} of 3").as_str())
            );
            assert_eq!(call_id.as_deref(), Some("call_1"));
        }
        let echoed = run.turn.results[2]["content"][0]["text"].as_str().unwrap();
        assert!(
            echoed.contains("abc-123"),
            "the server did not see our _meta: {echoed}"
        );
        // A 2026-07-28 session: the call declares what the client answers
        // (this source has no handlers) and that it follows tasks.
        let meta: Value = serde_json::from_str(echoed).unwrap();
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
            "{echoed}"
        );
        let mut results = run.turn.results.clone();
        results.truncate(2);
        snapshot(Stage::Exec, None, "lab_audio_progress", results);
        let audio_for_every_provider: Vec<Item> = CORE_PROVIDERS
            .iter()
            .map(|&p| {
                let answer = source_answer(p, &run);
                Item::new(format!("{p} audio"), format!("{p}/result"), answer)
            })
            .collect();
        check(&audio_for_every_provider).unwrap_or_else(|e| panic!("{e}"));
    });
}

/// On a session of an earlier revision a call declares no capability, as
/// before 2026-07-28: its servers never ask mid-call.
#[test]
fn a_legacy_session_declares_nothing() {
    runtime().block_on(async {
        let options =
            mcp_adapters::ClientOptions::new().lifecycle(mcp_adapters::client::Lifecycle::Legacy);
        let client = McpClient::connect("lab", &lab_client(), &options)
            .await
            .unwrap();
        assert_eq!(
            client.server_info().unwrap()["protocolVersion"],
            "2025-11-25"
        );
        let source = Source::client("lab", client).build().unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = model_response("anthropic", &[("meta".into(), json!({}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        let echoed = run.turn.results[0]["content"][0]["text"].as_str().unwrap();
        assert!(!echoed.contains("clientCapabilities"), "{echoed}");
    });
}

/// The lab server's beep, answered in `provider`'s shape.
fn source_answer(provider_id: &str, run: &mcp_adapters::Execution) -> Value {
    assert!(
        run.turn.results[0].to_string().contains("audio/wav"),
        "{:?}",
        run.turn.results[0]
    );
    let beep = serde_json::from_value(json!({"content": [{"type": "audio", "mimeType": "audio/wav", "data": "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAoMCggGBAYA=="}]})).unwrap();
    provider(provider_id)
        .answer(
            Some("call_0"),
            "beep",
            mcp_adapters::Outcome::Completed(&beep),
            &Default::default(),
        )
        .unwrap()
}

/// The call that times out is the turn's last: nothing else keeps the
/// session busy, and closing the source sends the notice it owes before the
/// server is asked to exit.
#[test]
fn a_timed_out_call_is_cancelled_on_the_server() {
    let marker = tempfile::tempdir().unwrap();
    let marker_file = marker.path().join("cancelled");
    runtime().block_on(async {
        let client = McpClient::connect("lab", &lab_client(), &Default::default())
            .await
            .unwrap();
        let source = Source::client("lab", client).build().unwrap();
        let p = provider("openai-chat");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let options = ExecOptions::new().call_timeout(Duration::from_millis(3000));
        let response = model_response(
            "openai-chat",
            &[
                ("count".into(), json!({"n": 1})),
                (
                    "slow".into(),
                    json!({"seconds": 30, "marker": marker_file.display().to_string()}),
                ),
            ],
        );
        let run = source
            .execute_tool_calls(p, &response, &listing, &options)
            .await
            .unwrap();
        assert!(
            run.calls[0].ran,
            "the other call still ran: {:?}",
            run.calls[0]
        );
        let error = run.calls[1]
            .error
            .as_ref()
            .expect("the slow call timed out");
        assert_eq!(error.kind(), ErrorKind::Timeout);
        // The session is still usable after a cancellation.
        let again = source
            .execute_tool_calls(
                p,
                &model_response("openai-chat", &[("count".into(), json!({"n": 2}))]),
                &listing,
                &options,
            )
            .await
            .unwrap();
        assert!(again.calls[0].ran, "{:?}", again.calls);
        // Closed, the source has sent the notice and the server has exited.
        source.close().await;
        assert_eq!(
            std::fs::read_to_string(&marker_file).ok().as_deref(),
            Some("cancelled"),
            "the server never saw the cancellation (`ended`: the session ended first)"
        );
    });
}

#[test]
fn a_crashed_server_is_answered_not_hung() {
    runtime().block_on(async {
        let client = McpClient::connect("lab", &lab_client(), &Default::default())
            .await
            .unwrap();
        let source = Source::client("lab", client).build().unwrap();
        let p = provider("gemini");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let options = ExecOptions::new().call_timeout(Duration::from_secs(60));
        let run = source
            .execute_tool_calls(
                p,
                &model_response(
                    "gemini",
                    &[
                        ("slow".into(), json!({"seconds": 30, "marker": "/dev/null"})),
                        ("crash".into(), json!({})),
                    ],
                ),
                &listing,
                &options,
            )
            .await
            .unwrap();
        for call in &run.calls {
            let error = call
                .error
                .as_ref()
                .unwrap_or_else(|| panic!("{call:?} should have failed"));
            assert_eq!(error.kind(), ErrorKind::Interrupted, "{error}");
        }
        assert_eq!(run.turn.results.len(), 2);
        assert!(
            run.turn
                .results
                .iter()
                .all(|r| r.to_string().contains("went away")
                    && r.to_string().contains("not sent again")),
            "{:?}",
            run.turn.results
        );
        // The next call starts the server again.
        let later = source
            .execute_tool_calls(
                p,
                &model_response("gemini", &[("beep".into(), json!({}))]),
                &listing,
                &options,
            )
            .await
            .unwrap();
        assert!(later.calls[0].ran, "{:?}", later.calls);
    });
}

/// A server that does not start fails `connect`, the error naming the
/// server, its command and why; with `keep_going` the others go on, the
/// one that did not start is reported, and a call to a name no listed tool
/// has is an unknown tool, even when no server started.
#[test]
fn a_server_that_does_not_start_fails_connect_unless_keep_going() {
    let time = or_panic(servers::time());
    let missing = || ServerConfig::stdio("/nonexistent/mcp-server", []);
    runtime().block_on(async {
        let config = HubConfig::new()
            .server("time", stdio(time))
            .server("missing", missing());
        let error = config.connect().await.err().expect("connect fails");
        assert_eq!(error.kind(), ErrorKind::Unavailable);
        assert_eq!(
            error.to_string(),
            "server `missing` is down: cannot start `/nonexistent/mcp-server` (is it \
             installed, and on the PATH?): No such file or directory (os error 2)"
        );

        let hub = config
            .keep_going(true)
            .connect()
            .await
            .unwrap()
            .build()
            .unwrap();
        let provider = provider("anthropic");
        let listing = hub.tools(provider, &ListOptions::new()).await.unwrap();
        let failed = &listing.report.toolset.failed_servers;
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].server_id, "missing");
        assert_eq!(failed[0].error, error.to_string());
        let names = tool_names(&listing);
        assert!(
            !names.is_empty() && names.iter().all(|n| n.starts_with("time__")),
            "{names:?}"
        );
        assert!(matches!(hub.server_states()[1].1, ServerState::Down { .. }));
        let response = model_response(
            "anthropic",
            &[
                ("missing__anything".into(), json!({})),
                ("made_up".into(), json!({})),
            ],
        );
        let run = hub
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        for (record, answer) in run.calls.iter().zip(&run.turn.results) {
            let name = record.exposed_name.as_deref().unwrap();
            assert_eq!(record.outcome, CallOutcome::Rejected, "{record:?}");
            assert_eq!(
                answer["content"][0]["text"],
                format!("unknown tool `{name}`: call one of the tools offered")
            );
        }

        // No server started: the turn goes on all the same.
        let alone = HubConfig::new()
            .server("missing", missing())
            .keep_going(true)
            .connect()
            .await
            .unwrap()
            .build()
            .unwrap();
        let listing = alone.tools(provider, &ListOptions::new()).await.unwrap();
        assert!(listing.tools.is_empty());
        assert_eq!(
            listing.report.toolset.failed_servers[0].server_id,
            "missing"
        );
        let response = model_response("anthropic", &[("echo".into(), json!({}))]);
        let run = alone
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.calls[0].outcome, CallOutcome::Rejected);
        assert_eq!(
            run.turn.results[0]["content"][0]["text"],
            "unknown tool `echo`: call one of the tools offered"
        );
    });
}

/// A policy that allows two of the everything server's tools offers those
/// two, for each core provider, and the listing's report names every other
/// tool as dropped by the policy; a tool an `ask` or a taint-dependent rule
/// may allow stays offered, and one a rule denies is named with its rule.
#[test]
fn the_policy_leaves_out_what_it_can_never_allow() {
    let everything = or_panic(servers::everything());
    runtime().block_on(async {
        let config = HubConfig::new().server("everything", stdio(everything));
        let all = config.connect().await.unwrap().build().unwrap();
        let every = all.toolset().await.unwrap();
        let every: Vec<&str> = every.tools().iter().map(|t| t.tool.name.as_str()).collect();
        assert!(every.len() > 10, "{every:?}");
        let two = Policy::new().allow("everything/echo").unwrap().allow("everything/get-sum").unwrap();
        let source = config.connect().await.unwrap().policy(two.clone()).build().unwrap();
        for &p in CORE_PROVIDERS {
            let listing = source.tools(provider(p), &ListOptions::new()).await.unwrap();
            let names: Vec<&str> = listing.toolset().tools().iter().map(|t| t.tool.name.as_str()).collect();
            assert_eq!(names, ["echo", "get-sum"], "{p}");
            assert_eq!(listing.tools.len(), 2, "{p}");
            let dropped = &listing.report.toolset.dropped;
            let others: Vec<&str> = every.iter().copied().filter(|t| !names.contains(t)).collect();
            assert_eq!(dropped.iter().map(|d| d.tool.as_str()).collect::<Vec<_>>(), others, "{p}");
            for d in dropped {
                assert_eq!(d.reason, DropReason::DeniedByPolicy { rule: None }, "{p}: {d:?}");
            }
            let report = serde_json::to_value(&listing.report).unwrap();
            assert_eq!(
                report["dropped"][0],
                json!({"server_id": "everything", "tool": others[0], "reason": "denied_by_policy", "rule": null})
            );
        }

        let wider = two
            .ask("everything/get-env")
            .unwrap()
            .ask_when_tainted("everything/get-tiny-image", ["web"])
            .unwrap()
            .allow("everything/get-resource-*")
            .unwrap()
            .deny("everything/get-resource-links")
            .unwrap();
        let source = config.connect().await.unwrap().policy(wider).build().unwrap();
        let listing = source.tools(provider("anthropic"), &ListOptions::new()).await.unwrap();
        let kept = ["echo", "get-env", "get-resource-reference", "get-sum", "get-tiny-image"];
        let expected: Vec<&str> = every.iter().copied().filter(|t| kept.contains(t)).collect();
        assert_eq!(expected.len(), kept.len(), "{every:?}");
        assert_eq!(tool_names(&listing), expected);
        let links = listing.report.toolset.dropped.iter().find(|d| d.tool == "get-resource-links").unwrap();
        assert_eq!(links.reason, DropReason::DeniedByPolicy { rule: Some("everything/get-resource-links".into()) });
    });
}

/// The README's first turn is `examples/first_turn.rs`, formatting aside,
/// and run against the pinned everything server (its `npx` command finds
/// the install, offline) it answers as the README says.
#[test]
fn the_readme_first_turn_runs() {
    let squeeze = |code: &str| -> String {
        let text: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        // rustfmt puts a comma after the last argument it breaks onto lines.
        text.replace(",)", ")").replace(",]", "]")
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The first `rust,no_run` block under the heading `## {heading}` of `file`.
    let first_block = |file: &str, heading: &str| -> String {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let section = text
            .split(&format!("\n## {heading}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{file}: no {heading}"));
        let block = section
            .split("```rust,no_run\n")
            .nth(1)
            .and_then(|b| b.split("\n```").next());
        block
            .unwrap_or_else(|| panic!("{file}: no Rust under {heading}"))
            .to_owned()
    };
    let block = first_block("README.md", "A first turn");
    assert!(block.lines().count() <= 25, "{block}");
    let started = first_block("docs/agent-loop.md", "Live MCP servers");
    assert_eq!(
        started, block,
        "the guide's live servers start as the README's first turn"
    );
    let example = std::fs::read_to_string(root.join("examples/first_turn.rs")).unwrap();
    let code: String = example
        .lines()
        .filter(|l| !l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        squeeze(&code),
        squeeze(&block),
        "examples/first_turn.rs is not the README's first turn"
    );

    let binary = or_panic(servers::example("first_turn"));
    let dir = or_panic(servers::everything_npx_dir());
    let out = runtime().block_on(async {
        let child = tokio::process::Command::new(binary)
            .current_dir(dir)
            .env("npm_config_offline", "true")
            .env("npm_config_update_notifier", "false")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // A hang guard only.
        tokio::time::timeout(Duration::from_secs(300), child.wait_with_output())
            .await
            .expect("the first turn hangs")
            .unwrap()
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let said = [
        ("Ran: ", "Echo: hi"),
        ("Ran: ", "The sum of 2 and 3 is 5."),
        (
            "Rejected: ",
            "unknown tool `delete_everything`: call one of the tools offered",
        ),
    ];
    for (i, (line, (outcome, text))) in lines.iter().zip(said).enumerate() {
        let answer: Value = serde_json::from_str(line.strip_prefix(outcome).expect(line)).unwrap();
        assert_eq!(answer["tool_use_id"], format!("toolu_{}", i + 1), "{line}");
        assert_eq!(answer["content"][0]["text"], text, "{line}");
    }
}

#[test]
fn mcp_servers_file_parses_with_named_errors() {
    let ok = HubConfig::from_json_str(r#"{"mcpServers": {"a": {"command": "x", "args": ["-y", 1], "env": {"K": "v"}}, "b": {"url": "http://h/mcp"}, "c": {"command": "z", "disabled": true}}}"#).unwrap();
    assert_eq!(ok.servers().len(), 2);
    let mut env = BTreeMap::new();
    env.insert("K".to_owned(), "v".to_owned());
    assert_eq!(
        ok.servers()[0].1,
        ServerConfig::Stdio {
            command: "x".into(),
            args: vec!["-y".into(), "1".into()],
            env
        }
    );
    for (text, expected) in [
        (
            r#"{"mcpServers": {"a": {"args": []}}}"#,
            "server `a`: expected `command`",
        ),
        (
            r#"{"mcpServers": {"a": {"command": 3}}}"#,
            "at /mcpServers/a/command: server `a`: `command` must be a string, not a number",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": [{}]}}}"#,
            "`args[0]` must be a string",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "url": "u"}}}"#,
            "not both",
        ),
        (r#"{"servers": {}}"#, "expected {\"mcpServers\""),
        ("{", "invalid JSON"),
    ] {
        let err = HubConfig::from_json_str(text).unwrap_err().to_string();
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[allow(dead_code)]
#[path = "../examples/replay.rs"]
mod replay;

#[test]
fn the_replay_example_runs_against_the_time_server() {
    let (command, args) = or_panic(servers::time());
    runtime().block_on(async {
        let answers = replay::replay(command, args)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answers.len(), 4);
        for (provider, results) in answers {
            assert_eq!(results.len(), 1, "{provider}");
            assert!(
                results[0].to_string().contains("+09:00"),
                "{provider}: {:?}",
                results[0]
            );
        }
    });
}

/// A 400 KB file read through the reference filesystem server under a
/// budget reaches the model as its head and tail; the model reads on with the
/// library's `read_result`, answered from the kept text, until it has every
/// byte.
#[test]
fn a_large_file_read_under_a_budget_is_read_on_with_the_library_tool() {
    let root = tempfile::tempdir().unwrap();
    let whole: String = (0..8_000)
        .map(|i| format!("{i:05} the quick brown fox jumps over the lazy dog\n"))
        .collect();
    let path = root.path().join("big.log");
    std::fs::write(&path, &whole).unwrap();
    let server = or_panic(servers::filesystem(root.path()));
    let seen = Recorder::default();
    runtime().block_on(async {
        let source = HubConfig::new()
            .server("fs", stdio(server))
            .connect()
            .await
            .unwrap()
            .hooks(seen.clone())
            .build()
            .unwrap();
        let results = ResultOptions::new().max_result_tokens(4_000);
        let options = ExecOptions::new().results(results.clone());
        for p in ["anthropic", "openai-chat"] {
            let provider = provider(p);
            let listing = source
                .tools(provider, &ListOptions::new().read_on(results.budget()))
                .await
                .unwrap();
            let read = exposed(&listing, "fs", "read_text_file");
            let response =
                model_response(p, &[(read, json!({"path": path.display().to_string()}))]);
            let run = source
                .execute_tool_calls(provider, &response, &listing, &options)
                .await
                .unwrap();
            assert!(
                run.calls[0].error.is_none(),
                "{p}: {:?}",
                run.calls[0].error
            );
            let cut = cut_text(&run.turn.results[0]);
            let (head, notice, tail) = split_notice(&cut);
            assert!(whole.starts_with(head) && whole.ends_with(tail), "{p}");
            assert!(provider.count_tokens(head) + provider.count_tokens(tail) <= 4_000);
            let handle = if p == "anthropic" { "r1" } else { "r2" };
            assert!(
                notice.contains(&format!("\"handle\": \"{handle}\"")),
                "{notice}"
            );
            let mut read = head.to_owned();
            let mut offset = number_after(notice, "\"offset\":");
            for turn in 0.. {
                assert!(turn < 40, "{p}: the reads never end");
                let args = json!({"handle": handle, "offset": offset});
                let response = model_response(p, &[("read_result".into(), args)]);
                let run = source
                    .execute_tool_calls(provider, &response, &listing, &options)
                    .await
                    .unwrap();
                assert!(run.ran_servers.contains("fs"), "{p}");
                let cut = cut_text(&run.turn.results[0]);
                let (piece, notice, _) = split_notice(&cut);
                read.push_str(piece);
                if notice.contains("nothing more to read") {
                    break;
                }
                offset = number_after(notice, "\"offset\":");
            }
            assert_eq!(read, whole, "{p}: every byte, in order");
        }
    });
    // The hooks saw the reads too: the read tool goes through the pipeline
    // like any tool.
    assert!(seen.0.lock().unwrap().len() > 4);
}

/// The reference server's resources, resource templates and prompts,
/// through the source: every page of each catalogue, a resource read by its
/// URI, and a prompt with its arguments.
#[test]
fn the_reference_server_catalogues_are_listed_and_read() {
    use mcp_adapters::mcp::{Catalog, Content};
    let everything = or_panic(servers::everything());
    runtime().block_on(async {
        let source = HubConfig::new()
            .server("everything", stdio(everything))
            .connect()
            .await
            .unwrap()
            .build()
            .unwrap();
        let resources = source
            .list_catalog("everything", Catalog::Resources)
            .await
            .unwrap();
        assert!(resources.len() >= 2, "{resources:?}");
        let uri = resources
            .iter()
            .find(|r| {
                r["mimeType"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("text/"))
            })
            .and_then(|r| r["uri"].as_str())
            .unwrap_or_else(|| panic!("no text resource in {resources:?}"))
            .to_owned();
        let read = source.read_resource("everything", &uri).await.unwrap();
        assert_eq!(read.contents[0].uri, uri);
        assert!(
            read.contents[0]
                .text
                .as_deref()
                .is_some_and(|t| !t.is_empty())
        );

        let templates = source
            .list_catalog("everything", Catalog::ResourceTemplates)
            .await
            .unwrap();
        assert!(
            templates.iter().all(|t| t["uriTemplate"].is_string()),
            "{templates:?}"
        );

        let prompts = source
            .list_catalog("everything", Catalog::Prompts)
            .await
            .unwrap();
        let names: Vec<&str> = prompts.iter().filter_map(|p| p["name"].as_str()).collect();
        assert!(names.contains(&"simple-prompt"), "{names:?}");
        let prompt = source
            .get_prompt("everything", "simple-prompt", Default::default())
            .await
            .unwrap();
        assert!(
            matches!(&prompt.messages[0].content, Content::Text(t) if !t.text.is_empty()),
            "{prompt:?}"
        );
        let missing = source
            .list_catalog("nope", Catalog::Prompts)
            .await
            .unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::Input);
    });
}

/// The model reaches the reference server's resources and prompts through
/// the library's tools, in each core provider's shape (checked against the
/// official SDKs' types), and the policy governs them per server.
#[test]
fn the_model_lists_and_reads_resources_and_gets_prompts() {
    let everything = or_panic(servers::everything());
    runtime().block_on(async {
        let policy = mcp_adapters::Policy::allow_all()
            .deny("everything/resources/read")
            .unwrap();
        let connected = HubConfig::new()
            .server("everything", stdio(everything))
            .connect()
            .await
            .unwrap();
        let source = connected.resources("*").prompts("*").build().unwrap();
        let mut items = Vec::new();
        for &p in CORE_PROVIDERS {
            let provider = provider(p);
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            for tool in [
                "list_resources",
                "read_resource",
                "list_prompts",
                "get_prompt",
            ] {
                assert!(listing.toolset().resolve(tool).is_some(), "{p}: {tool}");
            }
            let uri = "demo://resource/static/document/architecture.md";
            let calls = vec![
                ("list_resources".to_owned(), json!({})),
                (
                    "read_resource".to_owned(),
                    json!({"server": "everything", "uri": uri}),
                ),
                ("list_prompts".to_owned(), json!({"server": "everything"})),
                (
                    "get_prompt".to_owned(),
                    json!({"server": "everything", "name": "simple-prompt"}),
                ),
            ];
            let response = model_response(p, &calls);
            let run = source
                .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                .await
                .unwrap();
            for (i, record) in run.calls.iter().enumerate() {
                assert!(record.error.is_none(), "{p} call {i}: {:?}", record.error);
            }
            let text = |i: usize| run.turn.results[i].to_string();
            assert!(text(0).contains(uri), "{p}: {}", text(0));
            assert!(text(1).contains("Architecture"), "{p}: {:.300}", text(1));
            assert!(text(2).contains("simple-prompt"), "{p}: {}", text(2));
            assert!(text(3).contains("[user]"), "{p}: {}", text(3));
            assert!(
                run.ran_servers.contains("everything"),
                "{:?}",
                run.ran_servers
            );
            snapshot(Stage::Exec, Some(p), "catalogues", &run.turn.results);
            for (i, result) in run.turn.results.iter().enumerate() {
                items.push(Item::new(
                    format!("{p} catalogue call {i}"),
                    format!("{p}/result"),
                    result.clone(),
                ));
            }
        }
        check(&items).unwrap_or_else(|e| panic!("{e}"));

        // The policy decides per server: reading is denied here.
        let everything = or_panic(servers::everything());
        let governed = HubConfig::new()
            .server("everything", stdio(everything))
            .connect()
            .await
            .unwrap()
            .resources("*")
            .policy(policy)
            .build()
            .unwrap();
        let provider = provider("anthropic");
        let listing = governed.tools(provider, &ListOptions::new()).await.unwrap();
        let uri = "demo://resource/static/document/architecture.md";
        let response = model_response(
            "anthropic",
            &[(
                "read_resource".to_owned(),
                json!({"server": "everything", "uri": uri}),
            )],
        );
        let run = governed
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        let error = run.calls[0].error.as_ref().expect("denied");
        assert_eq!(error.kind(), ErrorKind::Denied, "{error}");
        assert!(!run.turn.results[0].to_string().contains("Architecture"));
    });
}

/// A skills server built on the MCP Rust SDK's `skills-fs` catalogue
/// (`examples/skills_server.rs`): the model sees the catalogue, loads a
/// skill and reads its supporting file, in each core provider's shape
/// (snapshots, checked against the official SDKs' types); a file outside
/// the manifest is refused, and nothing is read before it is asked for.
#[test]
fn the_model_loads_a_skill_from_a_skills_fs_server() {
    let skills = or_panic(servers::skills());
    runtime().block_on(async {
        let source = HubConfig::new()
            .server("docs", stdio(skills))
            .connect()
            .await
            .unwrap()
            .skills("*")
            .build()
            .unwrap();
        let list = source.list_skills().await;
        let names: Vec<&str> = list.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf-processing", "release-notes"], "{list:?}");
        assert!(
            list.refused.is_empty() && list.failed_servers.is_empty(),
            "{list:?}"
        );
        let mut items = Vec::new();
        for &p in CORE_PROVIDERS {
            let provider = provider(p);
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            let exposed = listing.toolset().resolve("load_skill").expect("offered");
            let about = exposed.tool.description.as_deref().unwrap_or_default();
            assert!(
                about.contains("- release-notes: Write release notes"),
                "{about}"
            );
            let calls = vec![
                ("load_skill".to_owned(), json!({"skill": "pdf-processing"})),
                (
                    "load_skill".to_owned(),
                    json!({"skill": "pdf-processing", "file": "references/FORMS.md"}),
                ),
                (
                    "load_skill".to_owned(),
                    json!({"skill": "pdf-processing", "file": "../release-notes/SKILL.md"}),
                ),
            ];
            let response = model_response(p, &calls);
            let run = source
                .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                .await
                .unwrap();
            assert!(run.calls[0].error.is_none(), "{:?}", run.calls[0].error);
            assert!(run.calls[1].error.is_none(), "{:?}", run.calls[1].error);
            let refused = run.calls[2].error.as_ref().expect("outside the manifest");
            assert_eq!(refused.kind(), ErrorKind::Denied, "{refused}");
            let text = |i: usize| run.turn.results[i].to_string();
            assert!(
                text(0).contains("verified against its manifest"),
                "{}",
                text(0)
            );
            assert!(text(0).contains("# PDF processing"), "{}", text(0));
            assert!(text(1).contains("YYYY-MM-DD"), "{}", text(1));
            assert!(run.ran_servers.contains("docs"), "{:?}", run.ran_servers);
            for (i, result) in run.turn.results.iter().enumerate() {
                items.push(Item::new(
                    format!("{p} skill call {i}"),
                    format!("{p}/result"),
                    result.clone(),
                ));
            }
            snapshot(Stage::Exec, Some(p), "skills", &run.turn.results);
        }
        check(&items).unwrap_or_else(|e| panic!("{e}"));

        // The application loads through the source too, and gets the file's bytes.
        let loaded = source.load_skill("docs", "release-notes").await.unwrap();
        assert!(loaded.verified);
        assert!(loaded.text.starts_with("---\nname: release-notes\n"));
        let forms = source
            .read_skill_file("docs", "pdf-processing", "references/FORMS.md")
            .await
            .unwrap();
        let on_disk = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/skills/pdf-processing/references/FORMS.md"),
        )
        .unwrap();
        assert_eq!(forms.text.as_deref(), Some(on_disk.as_str()));
    });
}

/// A live server whose `skills/list` holds one malformed entry (no digest,
/// which an SDK would refuse to build): that entry is refused by itself, and
/// the other skill is listed and loads.
#[test]
fn one_malformed_skill_entry_does_not_hide_the_others() {
    let python = or_panic(servers::python());
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/raw_skills_server.py");
    runtime().block_on(async {
        let source = HubConfig::new()
            .server(
                "raw",
                ServerConfig::stdio(
                    python.display().to_string(),
                    vec![script.display().to_string()],
                ),
            )
            .connect()
            .await
            .unwrap()
            .skills("*")
            .build()
            .unwrap();
        let list = source.list_skills().await;
        let names: Vec<&str> = list.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["good"], "{list:?}");
        assert!(list.failed_servers.is_empty(), "{list:?}");
        assert_eq!(list.refused.len(), 1, "{list:?}");
        assert!(list.refused[0].reason.contains("digest"), "{list:?}");
        let loaded = source.load_skill("raw", "good").await.unwrap();
        assert!(loaded.verified && loaded.text.contains("Do the thing."));
    });
}

/// The texts of a provider's answer, joined.
fn answer_text(answer: &Value) -> String {
    strings(answer).join("\n")
}

/// Result selection against the reference filesystem server: the
/// `directory_tree` of this checkout, selected to the names of its Rust
/// files, against the whole tree (both token counts printed); the whole
/// result stays in the record, and `read_result` selects from it again
/// with another filter, no second call to the server.
#[test]
fn a_selection_filter_narrows_a_directory_tree_to_its_rust_files() {
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = or_panic(servers::filesystem(checkout));
    let seen = Recorder::default();
    runtime().block_on(async {
        let source = HubConfig::new()
            .server("fs", stdio(server))
            .connect()
            .await
            .unwrap()
            .hooks(seen.clone())
            .build()
            .unwrap();
        let provider = provider("anthropic");
        // A budget far above the tree: nothing is cut, and read_result is offered.
        let results = ResultOptions::new().max_result_tokens(50_000_000);
        let options = ExecOptions::new().results(results.clone());
        let listing = source
            .tools(
                provider,
                &ListOptions::new()
                    .select(mcp_adapters::select::SELECT_ARGUMENT)
                    .read_on(results.budget()),
            )
            .await
            .unwrap();
        let tree = exposed(&listing, "fs", "directory_tree");
        let path = checkout.display().to_string();
        let whole_args = json!({"path": path, "excludePatterns": ["target", ".git"]});
        let rust_files =
            r#"[.. | objects | select(.type == "file") | .name | select(endswith(".rs"))]"#;
        let mut selected_args = whole_args.clone();
        selected_args["jq_filter"] = json!(rust_files);
        let response = model_response(
            "anthropic",
            &[(tree.clone(), whole_args), (tree, selected_args)],
        );
        let run = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        for call in &run.calls {
            assert!(call.error.is_none(), "{:?}", call.error);
        }
        let whole = answer_text(&run.turn.results[0]);
        let selected = answer_text(&run.turn.results[1]);
        let (whole_tokens, selected_tokens) =
            (provider.count_tokens(&whole), provider.count_tokens(&selected));
        println!(
            "directory_tree of the checkout: {whole_tokens} tokens whole, {selected_tokens} selected to its Rust files"
        );
        assert!(selected_tokens * 2 < whole_tokens, "{selected}");
        // The names of the Rust files, and nothing else.
        let names_line = selected
            .lines()
            .find(|l| l.starts_with("[\""))
            .unwrap_or_else(|| panic!("{selected}"));
        let names: Vec<String> = serde_json::from_str(names_line).unwrap();
        assert!(names.contains(&"select.rs".to_owned()), "{names:?}");
        assert!(names.iter().all(|n| n.ends_with(".rs")), "{names:?}");
        // The record keeps the whole result.
        let record = run.calls[1].result.as_ref().unwrap();
        let recorded = serde_json::to_string(record).unwrap();
        assert!(!record.is_error && recorded.contains("directory") && recorded.contains("snapshots"));
        // Another filter on the kept result, answered without the server.
        let handle = selected
            .split("kept as ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .unwrap_or_else(|| panic!("no handle in {selected}"))
            .to_owned();
        let sent = seen.0.lock().unwrap().len();
        let again = json!({"handle": handle, "offset": 0, "jq_filter": "[.[] | select(.type == \"directory\") | .name]"});
        let response = model_response("anthropic", &[("read_result".into(), again)]);
        let run = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        let text = answer_text(&run.turn.results[0]);
        assert!(text.contains("\"src\"") && text.contains("\"tests\""), "{text}");
        assert!(!text.contains("select.rs"), "{text}");
        let reads: Vec<CallToolResult> = seen.0.lock().unwrap()[sent..].to_vec();
        assert_eq!(reads.len(), 1, "only the library's read tool ran");
    });
}
