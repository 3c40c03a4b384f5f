//! Streams: assembling a recorded stream against parsing its events alone;
//! and a scripted stream (events released on a timer, calls of different
//! durations) run with `execute_stream`, against the ideal wall time
//! `max_i(complete_i + duration_i)`, beside the wait-for-the-end baseline
//! `end + max_i(duration_i)`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use mcp_adapters::exec::CallStart;
use mcp_adapters::stream::Framing;
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Listing, Registry, Source,
    StrictMode, Tool, ToolSet,
};
use serde_json::{Value, json};

#[path = "support/baselines.rs"]
#[allow(dead_code)]
mod baselines;
mod support;

/// The recordings measured (whole, see `benches/data/streams/README.md`):
/// provider, file, framing, and the tools the stream calls.
const RECORDINGS: [(&str, &str, Framing, &[&str]); 5] = [
    (
        "anthropic",
        "anthropic-code-execution-20250825.1.chunks.txt",
        Framing::Sse,
        &[],
    ),
    (
        "openai-chat",
        "xai-tool-call.chunks.txt",
        Framing::Sse,
        &["weather"],
    ),
    (
        "openai-responses",
        "openai-reasoning-encrypted-content.1.chunks.txt",
        Framing::Sse,
        &["calculator"],
    ),
    (
        "gemini",
        "google-vertex-stream-tool-call-arguments-nested.1.chunks.txt",
        Framing::Sse,
        &["cookRecipe"],
    ),
    (
        "bedrock-converse",
        "amazon-bedrock-json-with-tools.1.chunks.txt",
        Framing::Ndjson,
        &["json", "tool-a", "tool-b"],
    ),
];

fn recording(file: &str) -> Vec<String> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/data/streams")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The body as the HTTP client receives it.
fn body(events: &[String], framing: Framing) -> Vec<u8> {
    let mut out = String::new();
    for event in events {
        match framing {
            Framing::Sse => out.push_str(&format!("data: {event}\n\n")),
            _ => out.push_str(&format!("{event}\n")),
        }
    }
    out.into_bytes()
}

fn listing(provider: &str, names: &[&str]) -> Listing {
    let tools: Vec<Tool> = names
        .iter()
        .map(|n| Tool::new(*n, "", json!({"type": "object"})))
        .collect();
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    Registry::builtin()
        .unwrap()
        .get(provider)
        .unwrap()
        .list_tools(&toolset, &ListOptions::new().strict(StrictMode::Off))
        .unwrap()
}

fn assemble(provider: &str, listing: &Listing, bytes: &[u8], framing: Framing) -> usize {
    let provider = Registry::builtin().unwrap().get(provider).unwrap();
    let mut stream = provider.stream(listing).unwrap().framing(framing);
    stream.push(bytes).unwrap();
    let streamed = stream.finish().unwrap();
    assert!(streamed.extracted.rejected.is_empty());
    streamed.extracted.len()
}

fn assembling(c: &mut Criterion) {
    let rounds = support::rounds();
    let mut group = c.benchmark_group("stream_assembly");
    for (provider, file, framing, names) in RECORDINGS {
        let events = recording(file);
        let bytes = body(&events, framing);
        let listing = listing(provider, names);
        let parse = || {
            events
                .iter()
                .map(|e| serde_json::from_str::<Value>(e).unwrap())
                .collect::<Vec<_>>()
        };
        group.bench_function(provider, |b| {
            b.iter(|| assemble(provider, &listing, black_box(&bytes), framing))
        });
        let ratio = support::median_ratio(
            rounds,
            || assemble(provider, &listing, &bytes, framing),
            parse,
        );
        support::report(
            &format!(
                "assembling {provider} {file} ({} events) / serde_json parsing its events",
                events.len()
            ),
            ratio,
            Some(1.3),
        );
    }
    #[cfg(feature = "eventstream")]
    {
        // Bedrock's events as its HTTP body carries them: binary frames,
        // each named by its `:event-type` header, the payload the event's
        // value; the baseline parses those payloads.
        let (provider, file, _, names) = RECORDINGS[4];
        let events = recording(file);
        let (bytes, payloads) = baselines::event_stream_body(&events);
        let listing = listing(provider, names);
        let parse = || {
            payloads
                .iter()
                .map(|p| serde_json::from_slice::<Value>(p).unwrap())
                .collect::<Vec<_>>()
        };
        group.bench_function("bedrock-converse-eventstream", |b| {
            b.iter(|| assemble(provider, &listing, black_box(&bytes), Framing::EventStream))
        });
        let ratio = support::median_ratio(
            rounds,
            || assemble(provider, &listing, &bytes, Framing::EventStream),
            parse,
        );
        support::report(
            &format!(
                "assembling {provider} {file} as event-stream frames ({} events) / serde_json parsing their payloads",
                events.len()
            ),
            ratio,
            Some(1.3),
        );
        // What reading the frames by hand costs: the AWS SDK's decoder
        // (each frame checked and its headers read) and serde_json.
        let by_hand = || {
            use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
            use aws_smithy_eventstream::smithy::parse_response_headers;
            let mut buf = bytes::BytesMut::from(&bytes[..]);
            let mut decoder = MessageFrameDecoder::new();
            let mut read = Vec::new();
            while let DecodedFrame::Complete(message) = decoder.decode_frame(&mut buf).unwrap() {
                let headers = parse_response_headers(&message).unwrap();
                let value = serde_json::from_slice::<Value>(message.payload()).unwrap();
                read.push((headers.smithy_type.as_str().to_owned(), value));
            }
            assert_eq!(read.len(), payloads.len());
            read
        };
        let ratio = support::median_ratio(
            rounds,
            || assemble(provider, &listing, &bytes, Framing::EventStream),
            by_hand,
        );
        support::report(
            &format!(
                "assembling {provider} {file} as event-stream frames ({} events) / the AWS SDK's decoder and serde_json reading them",
                events.len()
            ),
            ratio,
            None,
        );
    }
    group.finish();
}

/// An Anthropic stream of `calls` tool_use blocks, each as its start, two
/// argument fragments and its stop: the chunks and, per call, the chunk at
/// which it is complete.
fn scripted(calls: usize) -> (Vec<Vec<u8>>, Vec<usize>) {
    let event =
        |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap()).into_bytes();
    let mut chunks = vec![event(
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
    )];
    let mut complete = Vec::new();
    for i in 0..calls {
        chunks.push(event(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("t{i}"), "name": "work", "input": {}}})));
        chunks.push(event(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": format!("{{\"i\": {i}, ")}})));
        chunks.push(event(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": "\"pad\": true}"}})));
        chunks.push(event(json!({"type": "content_block_stop", "index": i})));
        complete.push(chunks.len() - 1);
    }
    chunks.push(event(json!({"type": "message_stop"})));
    (chunks, complete)
}

/// How long call `i` takes on the server: the first calls are the slowest,
/// as a search the model asks for first and a lookup it adds later.
fn duration(i: u64) -> Duration {
    Duration::from_millis(300 - 30 * i + (i * 37) % 20)
}

fn scripted_stream(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = InProcessServer::new().tool(
        Tool::new("work", "", json!({"type": "object"})),
        |args, _ctx| async move {
            let i = args.get("i").and_then(Value::as_u64).unwrap_or(0);
            tokio::time::sleep(duration(i)).await;
            Ok(CallToolResult::text("done"))
        },
    );
    let source = Source::client("s", server).build().unwrap();
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let listing = rt
        .block_on(source.tools(provider, &ListOptions::new()))
        .unwrap();
    let calls = 8;
    let gap = Duration::from_millis(15);
    let (chunks, complete) = scripted(calls);
    let run = |start: CallStart| {
        let chunks = chunks.clone();
        let started = Instant::now();
        let body = futures_util::stream::unfold(0usize, move |i| {
            let chunk = chunks.get(i).cloned();
            async move {
                let chunk = chunk?;
                tokio::time::sleep_until(tokio::time::Instant::from_std(started + gap * i as u32))
                    .await;
                Some((Ok::<_, std::io::Error>(chunk), i + 1))
            }
        });
        let options = ExecOptions::new().max_concurrency(calls).call_start(start);
        let out = rt
            .block_on(source.execute_stream(provider, body, &listing, &options))
            .unwrap();
        assert_eq!(out.execution.turn.results.len(), calls);
        started.elapsed()
    };
    let ideal = (0..calls)
        .map(|i| gap * complete[i] as u32 + duration(i as u64))
        .max()
        .unwrap();
    let end = gap * (chunks.len() - 1) as u32;
    let wait_ideal = end + (0..calls).map(|i| duration(i as u64)).max().unwrap();
    let mut group = c.benchmark_group("stream_scripted");
    group.bench_function("execute_stream", |b| {
        b.iter(|| run(CallStart::WhenComplete))
    });
    group.finish();
    let rounds = if support::full_run() { 9 } else { 1 };
    let median = |start: CallStart| {
        let mut times: Vec<Duration> = (0..rounds).map(|_| run(start)).collect();
        times.sort();
        times[times.len() / 2]
    };
    let streaming = median(CallStart::WhenComplete);
    let waiting = median(CallStart::AfterStream);
    let verdict = if !support::full_run() {
        "smoke test, not a measurement".to_owned()
    } else if streaming.as_secs_f64() / ideal.as_secs_f64() <= 1.05 {
        "goal <= 1.05x: met".to_owned()
    } else {
        "goal <= 1.05x: MISSED".to_owned()
    };
    println!(
        "ratio scripted stream of {calls} calls / the ideal max(complete + duration) {} ms: {:.3}x ({verdict}); \
         waiting for the end: {:.3}x of the same ideal (its own ideal end + max(duration) = {} ms)",
        ideal.as_millis(),
        streaming.as_secs_f64() / ideal.as_secs_f64(),
        waiting.as_secs_f64() / ideal.as_secs_f64(),
        wait_ideal.as_millis(),
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = assembling, scripted_stream
}

fn main() {
    benches();
    Criterion::default().final_summary();
}
