//! Streamed responses: every recorded stream in `fixtures/streams/` read by
//! its provider's spec, the same however its bytes are cut, equal to what
//! call extraction reads from the assembled message; truncated streams never
//! yield a call that was incomplete at the cut; parallel calls' interleaved
//! fragments each reach their own call.

mod common;

use std::path::Path;

use common::*;
use mcp_adapters::callers::CallersRule;
use mcp_adapters::stream::{CallStream, Framing, StreamedCall};
use mcp_adapters::{ErrorKind, ListOptions, Listing, StrictMode, Tool, ToolSet};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A recorded stream: its provider, bytes, framing and what it holds.
struct Recording {
    provider: String,
    case: String,
    bytes: Vec<u8>,
    framing: Framing,
    expected: Value,
}

fn framing(path: &Path) -> Framing {
    match path.extension().and_then(|e| e.to_str()) {
        Some("ndjson") => Framing::Ndjson,
        Some("jsonl") => Framing::Json,
        Some("eventstream") => Framing::EventStream,
        _ => Framing::Sse,
    }
}

fn recording(path: &Path) -> Recording {
    let provider = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap()
        .to_owned();
    let name = path.file_name().unwrap().to_str().unwrap();
    let stem = &name[..name.rfind('.').unwrap()];
    let expected = read_json(&path.with_file_name(format!("{stem}.expected.json")));
    Recording {
        provider,
        case: stem.replace('.', "_"),
        bytes: std::fs::read(path).unwrap(),
        framing: framing(path),
        expected,
    }
}

fn recordings() -> Vec<Recording> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/streams");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            if !name.ends_with(".expected.json") {
                out.push(recording(&path));
            }
        }
    }
    out.sort_by(|a, b| (&a.provider, &a.case).cmp(&(&b.provider, &b.case)));
    out
}

/// A listing that offers every tool the recording calls (and one it does
/// not), to programs as well as the model where the provider has
/// programmatic calling (some recordings' calls come from programs).
fn listing_for(rec: &Recording) -> Listing {
    let mut tools: Vec<Tool> = vec![Tool::new("never_called", "", json!({"type": "object"}))];
    for call in rec.expected["calls"].as_array().unwrap() {
        let name = call["name"].as_str().unwrap();
        if !tools.iter().any(|t| t.name == name) {
            tools.push(Tool::new(name, "", json!({"type": "object"})));
        }
    }
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let mut options = ListOptions::new().strict(StrictMode::Off);
    if provider(&rec.provider).has_programmatic() {
        options = options.callers(CallersRule::new().open("*").unwrap());
    }
    provider(&rec.provider)
        .list_tools(&toolset, &options)
        .unwrap()
}

fn reader<'a>(rec: &Recording, listing: &'a Listing) -> CallStream<'a> {
    provider(&rec.provider)
        .stream(listing)
        .unwrap()
        .framing(rec.framing)
}

/// Everything one reading gives: the calls as pushes returned them, then
/// the end's calls, message and error.
fn read(rec: &Recording, listing: &Listing, cuts: &[usize]) -> Value {
    let mut stream = reader(rec, listing);
    let mut pushed = Vec::new();
    let mut error = None;
    let mut last = 0;
    for &cut in cuts.iter().chain(std::iter::once(&rec.bytes.len())) {
        match stream.push(&rec.bytes[last..cut]) {
            Ok(calls) => pushed.extend(calls),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        last = cut;
    }
    let pushed: Vec<Value> = pushed.iter().map(streamed_json).collect();
    match stream.finish() {
        Ok(streamed) => json!({
            "pushed": pushed,
            "calls": streamed.extracted.calls,
            "rejected": streamed.extracted.rejected,
            "message": streamed.message,
        }),
        Err(e) => {
            let e = error.unwrap_or(e);
            assert_eq!(e.kind(), ErrorKind::Stream, "{e:#}");
            json!({"pushed": pushed, "error": format!("{e:#}")})
        }
    }
}

fn streamed_json(call: &StreamedCall) -> Value {
    match call {
        StreamedCall::Ready(call) => json!({"ready": call}),
        StreamedCall::Rejected(r) => json!({"rejected": r}),
        _ => json!(null),
    }
}

fn ready_calls(result: &Value) -> Vec<Value> {
    result["pushed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.get("ready"))
        .map(|c| json!({"id": c["call_id"], "name": c["tool"], "arguments": c["arguments"]}))
        .collect()
}

#[test]
fn every_recorded_stream_gives_its_calls_and_message() {
    let recordings = recordings();
    assert!(recordings.len() >= 50, "{} recordings", recordings.len());
    let mut providers = std::collections::BTreeSet::new();
    for rec in &recordings {
        providers.insert(rec.provider.clone());
        let listing = listing_for(rec);
        let result = read(rec, &listing, &[]);
        let what = format!("{}/{}", rec.provider, rec.case);
        assert_eq!(
            ready_calls(&result),
            *rec.expected["calls"].as_array().unwrap(),
            "{what}: {result:#}"
        );
        match rec.expected.get("error").and_then(Value::as_str) {
            Some(message) => {
                let error = result["error"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{what}: no error"));
                assert!(error.contains(message), "{what}: {error}");
            }
            None => {
                assert!(result.get("error").is_none(), "{what}: {}", result["error"]);
                assert_eq!(result["rejected"], json!([]), "{what}");
                // The stream's calls are what extraction reads from its message.
                let extracted = provider(&rec.provider)
                    .extract_calls(&result["message"], &listing)
                    .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                assert_eq!(
                    json!({"calls": extracted.calls, "rejected": extracted.rejected}),
                    json!({"calls": result["calls"], "rejected": result["rejected"]}),
                    "{what}: the message reads back as the same calls"
                );
            }
        }
        let mut value = result.clone();
        value.as_object_mut().unwrap().remove("pushed");
        snapshot(Stage::Stream, Some(&rec.provider), &rec.case, value);
    }
    // Every provider with recordings of its own; the compatible APIs without any (together,
    // fireworks, vllm, azure-openai, huggingface, minimax) stream as the spec they extend.
    let expected = [
        "anthropic",
        "bedrock-converse",
        "cerebras",
        "cohere",
        "deepseek",
        "gemini",
        "gemini-interactions",
        "gemini-openai",
        "groq",
        "mistral",
        "moonshot",
        "ollama",
        "ollama-openai",
        "openai-chat",
        "openai-responses",
        "openrouter",
        "qwen",
        "xai",
        "zai",
    ];
    assert_eq!(
        providers.iter().map(String::as_str).collect::<Vec<_>>(),
        expected,
        "{providers:?}"
    );
}

/// The same stream cut at every position (small ones) or at random
/// positions (the others) gives the same calls, message and error.
#[test]
fn cutting_the_bytes_anywhere_changes_nothing() {
    let mut rng = common::instances::Rng::new(7);
    for rec in recordings() {
        let listing = listing_for(&rec);
        let whole = read(&rec, &listing, &[]);
        let n = rec.bytes.len();
        let cuts: Vec<Vec<usize>> = if n <= 2500 {
            (0..=n).map(|c| vec![c]).collect()
        } else {
            (0..40)
                .map(|_| {
                    let mut c: Vec<usize> =
                        (0..4).map(|_| rng.below(n as u64 + 1) as usize).collect();
                    c.sort_unstable();
                    c
                })
                .collect()
        };
        for cut in cuts {
            let got = read(&rec, &listing, &cut);
            // Calls come out at the same events, whatever the chunks.
            assert_eq!(got, whole, "{}/{} cut at {cut:?}", rec.provider, rec.case);
        }
        // Byte by byte.
        let every: Vec<usize> = (1..n).collect();
        assert_eq!(
            read(&rec, &listing, &every),
            whole,
            "{}/{} byte by byte",
            rec.provider,
            rec.case
        );
    }
}

/// A stream cut after any number of bytes never yields a call that was
/// incomplete there: every call it hands out is one of the recording's own,
/// arguments and all.
#[test]
fn a_cut_stream_never_yields_an_incomplete_call() {
    for rec in recordings() {
        let listing = listing_for(&rec);
        let expected = rec.expected["calls"].as_array().unwrap().clone();
        let step = (rec.bytes.len() / 300).max(1);
        for end in (0..rec.bytes.len()).step_by(step) {
            let cut = Recording {
                provider: rec.provider.clone(),
                case: rec.case.clone(),
                bytes: rec.bytes[..end].to_vec(),
                framing: rec.framing,
                expected: rec.expected.clone(),
            };
            let result = read(&cut, &listing, &[]);
            let got = ready_calls(&result);
            assert!(
                got.len() <= expected.len() && got[..] == expected[..got.len()],
                "{}/{} cut at {end}: {got:?}",
                rec.provider,
                rec.case
            );
            if let Some(calls) = result["calls"].as_array() {
                assert_eq!(calls.len(), got.len());
            }
        }
    }
}

fn chat_stream(calls: &[(String, Value)], pieces: &[Vec<usize>], order: &[usize]) -> String {
    let mut out = String::new();
    let chunk = |tool_calls: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": tool_calls}, "finish_reason": null}]})
        )
    };
    for (i, (name, _)) in calls.iter().enumerate() {
        out.push_str(&chunk(json!([{"index": i, "id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": ""}}])));
    }
    let texts: Vec<String> = calls.iter().map(|(_, a)| a.to_string()).collect();
    let mut cursor = vec![0usize; calls.len()];
    let mut next = vec![0usize; calls.len()];
    for &i in order {
        let cuts = &pieces[i];
        if next[i] > cuts.len() {
            continue;
        }
        let end = cuts.get(next[i]).copied().unwrap_or(texts[i].len());
        let piece = &texts[i][cursor[i]..end];
        cursor[i] = end;
        next[i] += 1;
        out.push_str(&chunk(
            json!([{"index": i, "function": {"arguments": piece}}]),
        ));
    }
    for i in 0..calls.len() {
        if cursor[i] < texts[i].len() {
            out.push_str(&chunk(
                json!([{"index": i, "function": {"arguments": &texts[i][cursor[i]..]}}]),
            ));
        }
    }
    out.push_str(&format!(
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    ));
    out
}

fn responses_stream(calls: &[(String, Value)], pieces: &[Vec<usize>], order: &[usize]) -> String {
    let mut out = String::new();
    let event = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap());
    for (i, (name, _)) in calls.iter().enumerate() {
        out.push_str(&event(json!({"type": "response.output_item.added", "output_index": i,
            "item": {"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": name, "arguments": ""}})));
    }
    let texts: Vec<String> = calls.iter().map(|(_, a)| a.to_string()).collect();
    let mut cursor = vec![0usize; calls.len()];
    let mut next = vec![0usize; calls.len()];
    for &i in order {
        let end = pieces[i].get(next[i]).copied().unwrap_or(texts[i].len());
        if end < cursor[i] {
            continue;
        }
        out.push_str(&event(
            json!({"type": "response.function_call_arguments.delta", "output_index": i,
            "item_id": format!("fc_{i}"), "delta": &texts[i][cursor[i]..end]}),
        ));
        cursor[i] = end;
        next[i] += 1;
    }
    for (i, (name, _)) in calls.iter().enumerate() {
        out.push_str(&event(
            json!({"type": "response.function_call_arguments.delta", "output_index": i,
            "item_id": format!("fc_{i}"), "delta": &texts[i][cursor[i]..]}),
        ));
        let _ = name;
    }
    for (i, (name, _)) in calls.iter().enumerate() {
        out.push_str(&event(json!({"type": "response.output_item.done", "output_index": i,
            "item": {"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": name, "arguments": texts[i]}})));
    }
    out.push_str(&event(
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ));
    out
}

fn arguments() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(
        "[a-z]{1,6}",
        prop_oneof![
            "[ -~]{0,12}".prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
        ],
        0..5,
    )
    .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Parallel calls whose argument fragments interleave in any order each
    /// get exactly their own arguments, in the model's order.
    #[test]
    fn interleaved_fragments_reach_their_own_calls(
        args in proptest::collection::vec(arguments(), 2..5),
        seed in any::<u64>(),
        responses in any::<bool>(),
    ) {
        let mut rng = common::instances::Rng::new(seed);
        let calls: Vec<(String, Value)> = args.iter().enumerate().map(|(i, a)| (format!("tool_{i}"), a.clone())).collect();
        let pieces: Vec<Vec<usize>> = calls.iter().map(|(_, a)| {
            let len = a.to_string().len();
            let mut cuts: Vec<usize> = (0..3).map(|_| rng.below(len as u64 + 1) as usize).collect();
            cuts.sort_unstable();
            // Cut on character boundaries.
            cuts.retain(|&c| a.to_string().is_char_boundary(c));
            cuts
        }).collect();
        let mut order: Vec<usize> = (0..calls.len()).flat_map(|i| std::iter::repeat_n(i, 4)).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let (id, text) = if responses {
            ("openai-responses", responses_stream(&calls, &pieces, &order))
        } else {
            ("openai-chat", chat_stream(&calls, &pieces, &order))
        };
        let tools: Vec<Tool> = calls.iter().map(|(n, _)| Tool::new(n.clone(), "", json!({"type": "object"}))).collect();
        let toolset = ToolSet::client().server("s", tools).build().unwrap();
        let listing = provider(id).list_tools(&toolset, &ListOptions::new().strict(StrictMode::Off)).unwrap();
        let mut stream = provider(id).stream(&listing).unwrap();
        stream.push(text.as_bytes()).unwrap();
        let streamed = stream.finish().unwrap();
        prop_assert_eq!(streamed.extracted.calls.len(), calls.len());
        for (i, call) in streamed.extracted.calls.iter().enumerate() {
            prop_assert_eq!(call.index, i);
            prop_assert_eq!(&call.tool, &calls[i].0);
            prop_assert_eq!(&Value::Object(call.arguments.clone()), &calls[i].1);
        }
    }
}

/// Quirks users hit, each a small stream of its own.
#[test]
fn quirks() {
    let tools = vec![
        Tool::new("a", "", json!({"type": "object"})),
        Tool::new("b", "", json!({"type": "object"})),
    ];
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let calls_of = |id: &str, text: &str| -> Value {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new().strict(StrictMode::Off))
            .unwrap();
        let mut stream = provider(id).stream(&listing).unwrap();
        let _ = stream.push(text.as_bytes());
        match stream.finish() {
            Ok(s) => json!({
                "calls": s.extracted.calls.iter().map(|c| json!([c.call_id, c.tool, c.arguments])).collect::<Vec<_>>(),
                "rejected": s.extracted.rejected.iter().map(|r| json!([r.call_id, r.error.message()])).collect::<Vec<_>>(),
            }),
            Err(e) => json!({"error": format!("{e:#}")}),
        }
    };
    let sse =
        |events: &[Value]| -> String { events.iter().map(|e| format!("data: {e}\n\n")).collect() };
    // Anthropic input that is not JSON: rejected with why, never run.
    let text: String = [
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "a", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"x\": "}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_stop"}),
    ].iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())).collect();
    let got = calls_of("anthropic", &text);
    assert_eq!(got["calls"], json!([]), "{got}");
    assert_eq!(
        got["rejected"],
        json!([["t1", "the arguments are not valid JSON"]]),
        "{got}"
    );
    // Chat: a call whose arguments parse as JSON before they end is not run early.
    let listing = provider("openai-chat")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    let mut stream = provider("openai-chat").stream(&listing).unwrap();
    let early = stream.push(sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "a", "arguments": "{\"n\": 1"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}}]}),
    ]).as_bytes()).unwrap();
    assert!(
        early.is_empty(),
        "complete only when the choice finishes: {early:?}"
    );
    let more = stream.push(sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]).as_bytes()).unwrap();
    assert_eq!(more.len(), 1);
    // Chat cut before its finish: no call at all.
    let got = calls_of(
        "openai-chat",
        &sse(&[
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}}]}),
        ]),
    );
    assert!(
        got["error"].as_str().unwrap().contains("ended before"),
        "{got}"
    );
    // A call to a tool that was not offered: rejected, with its answer.
    let got = calls_of(
        "ollama",
        "{\"message\": {\"role\": \"assistant\", \"tool_calls\": [{\"function\": {\"name\": \"nope\", \"arguments\": {}}}]}, \"done\": false}\n{\"done\": true}\n",
    );
    assert_eq!(
        got["rejected"][0][1], "unknown tool `nope`: call one of the tools offered",
        "{got}"
    );
    // A repeated id runs once.
    let got = calls_of(
        "ollama",
        "{\"message\": {\"tool_calls\": [{\"id\": \"x\", \"function\": {\"name\": \"a\", \"arguments\": {}}}, {\"id\": \"x\", \"function\": {\"name\": \"b\", \"arguments\": {}}}]}, \"done\": true}\n",
    );
    assert_eq!(got["calls"].as_array().unwrap().len(), 1, "{got}");
    assert_eq!(got["rejected"].as_array().unwrap().len(), 1, "{got}");
}

/// A spec without a `stream:` section, and bytes that are not the stream's
/// framing, are clear errors.
#[test]
fn unreadable_streams_are_errors() {
    let toolset = ToolSet::client().server("s", vec![]).build().unwrap();
    let listing = provider("ollama")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    let mut stream = provider("ollama").stream(&listing).unwrap();
    let err = stream.push(b"data: {}\n").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Stream);
    assert!(format!("{err:#}").contains("ndjson"), "{err:#}");
    // The broken stream says so again.
    assert!(stream.push(b"{}").is_err());
    let listing = provider("anthropic")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    let err = provider("openai-chat").stream(&listing).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
    let mut stream = provider("anthropic").stream(&listing).unwrap();
    let err = stream.push(b"data: not json\n\n").unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
}

/// What the next request must send back verbatim survives into the
/// assembled message: Gemini's thoughtSignature on its part, Anthropic's
/// thinking signature and redacted_thinking, the final encrypted_content of
/// a Responses reasoning item, Bedrock's reasoning signature.
#[test]
fn opaque_pieces_survive_into_the_message() {
    let message_of = |provider: &str, file: &str| -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/streams")
            .join(provider)
            .join(file);
        let rec = recording(&path);
        let listing = listing_for(&rec);
        let mut stream = reader(&rec, &listing);
        stream.push(&rec.bytes).unwrap();
        stream.finish().unwrap().message
    };
    let raw = |provider: &str, file: &str| -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/streams")
                .join(provider)
                .join(file),
        )
        .unwrap()
    };
    // Gemini: the signature is on the part that carried it, unchanged.
    let message = message_of("gemini", "synthetic-parallel-calls-signature.sse");
    let signature = message["parts"][0]["thoughtSignature"].as_str().unwrap();
    assert!(signature.len() > 20);
    assert!(raw("gemini", "synthetic-parallel-calls-signature.sse").contains(signature));
    assert!(message["parts"][0]["functionCall"]["name"].is_string());
    let message = message_of(
        "gemini",
        "test_google_streaming_tool_call_thought_signature.0.sse",
    );
    let part = &message["parts"][0];
    assert!(
        part["thoughtSignature"].is_string() && part["functionCall"].is_object(),
        "{message}"
    );
    // Anthropic: thinking with its signature (the signature delta replaces).
    let message = message_of("anthropic", "anthropic-clear-thinking.1.sse");
    let thinking = &message["content"][0];
    assert_eq!(thinking["type"], "thinking");
    let signature = thinking["signature"].as_str().unwrap();
    assert!(raw("anthropic", "anthropic-clear-thinking.1.sse").contains(signature));
    let message = message_of(
        "anthropic",
        "test_anthropic_model_thinking_part_redacted_stream.sse",
    );
    let redacted: Vec<&Value> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "redacted_thinking")
        .collect();
    assert_eq!(redacted.len(), 2, "{message}");
    assert!(
        redacted
            .iter()
            .all(|b| b["data"].as_str().is_some_and(|d| !d.is_empty()))
    );
    // Responses: the reasoning item as output_item.done gave it (its final encrypted_content).
    let message = message_of(
        "openai-responses",
        "openai-reasoning-encrypted-content.1.resp1.sse",
    );
    let reasoning = &message[0];
    assert_eq!(reasoning["type"], "reasoning");
    let encrypted = reasoning["encrypted_content"].as_str().unwrap();
    let body = raw(
        "openai-responses",
        "openai-reasoning-encrypted-content.1.resp1.sse",
    );
    let done = body
        .lines()
        .find(|l| l.contains("response.output_item.done") && l.contains("\"reasoning\""))
        .unwrap();
    assert!(done.contains(encrypted), "the item of output_item.done");
    // Bedrock: reasoning text and signature in one block.
    let message = message_of("bedrock-converse", "amazon-bedrock-reasoning.jsonl");
    let reasoning = &message["content"][0]["reasoningContent"]["reasoningText"];
    assert!(reasoning["text"].as_str().unwrap().contains("strawberry"));
    assert!(
        reasoning["signature"]
            .as_str()
            .is_some_and(|s| s.len() > 20)
    );
}

/// Hostile streams end in an error in bounded memory: an event that never
/// ends, an in-memory event nested too deep.
#[test]
fn hostile_streams_are_refused() {
    let toolset = ToolSet::client().server("s", vec![]).build().unwrap();
    for (id, framing) in [
        ("ollama", Framing::Ndjson),
        ("openai-chat", Framing::Sse),
        ("bedrock-converse", Framing::Json),
    ] {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        let mut stream = provider(id).stream(&listing).unwrap().framing(framing);
        let start: &[u8] = match framing {
            Framing::Sse => b"data: {\"a\": \"",
            _ => b"{\"a\": \"",
        };
        stream.push(start).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let err = (0..20)
            .find_map(|_| stream.push(&chunk).err())
            .unwrap_or_else(|| panic!("{id}: a 20 MiB event was buffered"));
        assert_eq!(err.kind(), ErrorKind::Stream);
        assert!(format!("{err:#}").contains("bytes"), "{err:#}");
    }
    let listing = provider("ollama")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    let mut stream = provider("ollama").stream(&listing).unwrap();
    let mut deep = json!(1);
    for _ in 0..1000 {
        deep = json!([deep]);
    }
    let event = json!({"message": {"tool_calls": deep}});
    let err = stream.push_event(&event).unwrap_err();
    assert!(err.to_string().contains("deeper"), "{err}");
}
