//! Running calls while the model streams: each call starts the moment it is
//! complete, the answers equal those of the whole response, a broken stream
//! never sends a call that was not complete, and a recording server counts
//! exactly what it received.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_adapters::exec::CallStart;
use mcp_adapters::stream::Framing;
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Source, StrictMode, Tool,
};
use serde_json::{Map, Value, json};

type Received = Arc<Mutex<Vec<(String, Map<String, Value>)>>>;

/// A server with `names`, recording every call it receives.
fn recording_server(names: &[&str]) -> (Source, Received) {
    let received: Received = Arc::default();
    let mut server = InProcessServer::new();
    for name in names {
        let (name, received) = (name.to_string(), received.clone());
        server = server.tool(
            Tool::new(name.clone(), "", json!({"type": "object"})),
            move |args, _ctx| {
                received.lock().unwrap().push((name.clone(), args.clone()));
                let text = format!("{name} done");
                async move { Ok(CallToolResult::text(text)) }
            },
        );
    }
    let source = Source::client("s", server).build().unwrap();
    (source, received)
}

fn sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect::<String>()
        .into_bytes()
}

fn tool_use(index: usize, id: &str, name: &str, json_text: &str, stop: bool) -> Vec<Value> {
    let mut events = vec![
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json_text}}),
    ];
    if stop {
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events
}

/// A byte stream fed by a channel, so a test decides when each chunk arrives.
fn channel_stream() -> (
    tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (Ok(chunk), rx))
    });
    (tx, stream)
}

#[test]
fn a_call_runs_while_the_model_still_streams() {
    runtime().block_on(async {
        let (source, received) = recording_server(&["first", "second"]);
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let (tx, stream) = channel_stream();
        let run = tokio::spawn({
            let listing = listing.clone();
            async move {
                source
                    .execute_stream(p, stream, &listing, &ExecOptions::new())
                    .await
            }
        });
        let mut head =
            vec![json!({"type": "message_start", "message": {"role": "assistant", "content": []}})];
        head.extend(tool_use(0, "t0", "first", "{\"a\": 1}", true));
        tx.send(sse(&head)).unwrap();
        // The first call reaches the server before the stream goes on.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while received.lock().unwrap().is_empty() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the first call never started"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut tail = tool_use(1, "t1", "second", "{\"b\": 2}", true);
        tail.push(json!({"type": "message_stop"}));
        tx.send(sse(&tail)).unwrap();
        drop(tx);
        let run = run.await.unwrap().unwrap();
        assert!(run.error.is_none(), "{:?}", run.error);
        let ids: Vec<&Value> = run
            .execution
            .turn
            .results
            .iter()
            .map(|r| &r["tool_use_id"])
            .collect();
        assert_eq!(ids, [&json!("t0"), &json!("t1")]);
        assert_eq!(run.message["content"][1]["input"], json!({"b": 2}));
        assert_eq!(received.lock().unwrap().len(), 2);
    });
}

#[test]
fn after_stream_waits_for_the_end() {
    runtime().block_on(async {
        let (source, received) = recording_server(&["first"]);
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let (tx, stream) = channel_stream();
        let received_early = received.clone();
        let run = tokio::spawn({
            let listing = listing.clone();
            async move {
                let options = ExecOptions::new().call_start(CallStart::AfterStream);
                source.execute_stream(p, stream, &listing, &options).await
            }
        });
        tx.send(sse(&tool_use(0, "t0", "first", "{}", true)))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            received_early.lock().unwrap().is_empty(),
            "ran before the end"
        );
        tx.send(sse(&[json!({"type": "message_stop"})])).unwrap();
        drop(tx);
        let run = run.await.unwrap().unwrap();
        assert_eq!(run.execution.turn.results.len(), 1);
        assert_eq!(received.lock().unwrap().len(), 1);
    });
}

#[test]
fn a_broken_stream_answers_what_ran_and_never_sends_the_rest() {
    runtime().block_on(async {
        let (source, received) = recording_server(&["first", "second"]);
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let mut events = tool_use(0, "t0", "first", "{}", true);
        events.extend(tool_use(1, "t1", "second", "{\"b\":", false));
        events.push(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(sse(&events))];
        let run = source
            .execute_stream(p, futures_util::stream::iter(chunks), &listing, &ExecOptions::new())
            .await
            .unwrap();
        let error = run.error.expect("the stream broke");
        assert!(error.to_string().contains("Overloaded"), "{error}");
        assert_eq!(run.execution.turn.results.len(), 1);
        assert_eq!(run.execution.turn.results[0]["tool_use_id"], "t0");
        let names: Vec<String> = received.lock().unwrap().iter().map(|r| r.0.clone()).collect();
        assert_eq!(names, ["first"]);
        // The HTTP body itself failing mid-way is a stream error too.
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![
            Ok(sse(&tool_use(0, "t9", "first", "{", false))),
            Err(std::io::Error::other("connection reset")),
        ];
        let run = source
            .execute_stream(p, futures_util::stream::iter(chunks), &listing, &ExecOptions::new())
            .await
            .unwrap();
        let error = run.error.expect("the body failed");
        assert!(format!("{error:#}").contains("connection reset"), "{error:#}");
        assert!(run.execution.turn.results.is_empty());
    });
}

/// Every recorded stream, cut at many places and fed in random chunks:
/// the server receives exactly the calls the pure reader completed before
/// the cut, never one that was incomplete; a whole stream's answers equal
/// those of the whole response.
#[test]
fn recorded_streams_send_only_complete_calls() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/streams");
    let rt = runtime();
    let mut rng = common::instances::Rng::new(11);
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let id = dir.file_name().unwrap().to_str().unwrap().to_owned();
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if name.ends_with(".expected.json") {
                continue;
            }
            let stem = &name[..name.rfind('.').unwrap()];
            let expected = read_json(&path.with_file_name(format!("{stem}.expected.json")));
            let framing = match path.extension().and_then(|e| e.to_str()) {
                Some("ndjson") => Framing::Ndjson,
                Some("jsonl") => Framing::Json,
                Some("eventstream") => Framing::EventStream,
                _ => Framing::Sse,
            };
            let names: Vec<String> = expected["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let bytes = std::fs::read(&path).unwrap();
            for round in 0..6 {
                let end = if round == 0 {
                    bytes.len()
                } else {
                    rng.below(bytes.len() as u64 + 1) as usize
                };
                let cut = &bytes[..end];
                rt.block_on(async {
                    let (source, received) = recording_server(&refs);
                    let p = provider(&id);
                    let listing = source
                        .tools(p, &ListOptions::new().strict(StrictMode::Off))
                        .await
                        .unwrap();
                    // What the pure reader completes in the cut.
                    let mut reader = p.stream(&listing).unwrap().framing(framing);
                    let mut complete = Vec::new();
                    if let Ok(calls) = reader.push(cut) {
                        complete.extend(calls);
                    }
                    let (complete_calls, whole) = match reader.finish() {
                        Ok(streamed) => (streamed.extracted.calls, true),
                        Err(_) => (
                            complete
                                .into_iter()
                                .filter_map(|c| match c {
                                    mcp_adapters::stream::StreamedCall::Ready(call) => Some(call),
                                    _ => None,
                                })
                                .collect(),
                            false,
                        ),
                    };
                    let mut chunks: Vec<Result<Vec<u8>, std::io::Error>> = Vec::new();
                    let mut at = 0;
                    while at < cut.len() {
                        let len = (rng.below(64) as usize + 1).min(cut.len() - at);
                        chunks.push(Ok(cut[at..at + len].to_vec()));
                        at += len;
                    }
                    let run = source
                        .execute_stream(
                            p,
                            futures_util::stream::iter(chunks),
                            &listing,
                            &ExecOptions::new().max_concurrency(2).framing(framing),
                        )
                        .await
                        .unwrap();
                    let mut got: Vec<(String, Map<String, Value>)> =
                        received.lock().unwrap().clone();
                    let mut want: Vec<(String, Map<String, Value>)> = complete_calls
                        .iter()
                        .map(|c| (c.tool.clone(), c.arguments.clone()))
                        .collect();
                    got.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.len().cmp(&b.1.len())));
                    want.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.len().cmp(&b.1.len())));
                    assert_eq!(got, want, "{id}/{name} cut at {end}");
                    if whole && end == bytes.len() && expected.get("error").is_none() {
                        let again = source
                            .execute_tool_calls(
                                p,
                                &run.message,
                                &listing,
                                &ExecOptions::new().max_concurrency(2),
                            )
                            .await
                            .unwrap();
                        assert_eq!(
                            again.turn.results, run.execution.turn.results,
                            "{id}/{name}"
                        );
                    }
                });
                checked += 1;
            }
        }
    }
    assert!(checked >= 300, "{checked}");
}

/// Media the answers cannot carry come back as follow-ups from a stream too,
/// in the model's order however the calls finish, equal to those of the
/// whole response.
#[test]
fn streamed_turns_collect_follow_ups_in_the_models_order() {
    runtime().block_on(async {
        let mut server = InProcessServer::new();
        for (name, delay) in [("slow_chart", 80), ("fast_chart", 0)] {
            server = server.tool(
                Tool::new(name, "", json!({"type": "object"})),
                move |_args, _ctx| async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    let mut result = CallToolResult::text(format!("{name}:"));
                    result.content.push(mcp_adapters::Content::from_value(json!({
                        "type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="
                    })));
                    Ok(result)
                },
            );
        }
        let source = Source::client("s", server).build().unwrap();
        let p = provider("openai-chat");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let chunk = |delta: Value| json!({"choices": [{"index": 0, "delta": delta}]});
        let body: String = [
            chunk(json!({"role": "assistant", "tool_calls": [
                {"index": 0, "id": "c0", "type": "function", "function": {"name": "slow_chart", "arguments": "{}"}}
            ]})),
            chunk(json!({"tool_calls": [
                {"index": 1, "id": "c1", "type": "function", "function": {"name": "fast_chart", "arguments": "{}"}}
            ]})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]
        .iter()
        .map(|e| format!("data: {e}\n\n"))
        .chain(["data: [DONE]\n\n".to_owned()])
        .collect();
        let options = ExecOptions::new().results(
            mcp_adapters::ResultOptions::new().option("media", "full"),
        );
        let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(body.into_bytes())]);
        let run = source
            .execute_stream(p, chunks, &listing, &options)
            .await
            .unwrap();
        assert!(run.error.is_none(), "{:?}", run.error);
        let ids: Vec<&str> = run
            .execution
            .turn.results
            .iter()
            .map(|r| r["tool_call_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["c0", "c1"]);
        let follow_ups = &run.execution.turn.follow_ups;
        assert_eq!(follow_ups.len(), 1, "{follow_ups:?}");
        let content = follow_ups[0]["content"].as_array().unwrap();
        assert_eq!(content.len(), 4, "{content:?}");
        assert!(content[0]["text"].as_str().unwrap().contains("slow_chart"));
        assert_eq!(content[1]["type"], "image_url");
        assert!(content[2]["text"].as_str().unwrap().contains("fast_chart"));

        let whole = source
            .execute_tool_calls(p, &run.message, &listing, &options)
            .await
            .unwrap();
        assert_eq!(whole.turn.results, run.execution.turn.results);
        assert_eq!(whole.turn.follow_ups, run.execution.turn.follow_ups);
    });
}
