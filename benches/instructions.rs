//! Instruction counts (Callgrind) and allocations (DHAT), through gungraun:
//! each figure against its baseline measured in the same run. Times on a
//! shared machine move more between runs than the changes measured here do;
//! instruction and allocation counts do not.
//!
//! Each benchmark runs once, in its own process under Valgrind; what its
//! setup does (starting servers, building toolsets, a first turn that warms
//! the caches) is not counted. A figure per call is the difference between
//! two runs of different sizes, divided by the calls between them, so that
//! what a run does once (a turn's set-up, a session's start) cancels out.
//!
//! Run with `cargo bench --bench instructions --features rmcp,eventstream`
//! (valgrind and `gungraun-runner` of the same version as the `gungraun`
//! crate must be installed; see `benches/README.md`), then
//! `cargo bench --bench instruction_goals` for the ratios and goals.

#[path = "support/baselines.rs"]
#[allow(dead_code)]
mod baselines;
#[path = "support/corpus.rs"]
#[allow(dead_code)]
mod corpus;
#[path = "../tests/common/install.rs"]
#[allow(dead_code)]
mod install;
#[path = "../tests/common/servers.rs"]
mod servers;

use std::hint::black_box;
use std::path::Path;

use baselines::{builtin_sources, event_stream_body, handwritten_anthropic, spawn_join};
use futures_util::StreamExt;
use gungraun::{Dhat, LibraryBenchmarkConfig, library_benchmark, library_benchmark_group, main};
use mcp_adapters::spec::SpecFile;
use mcp_adapters::stream::Framing;

use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Listing, McpClient, Outcome,
    Provider, Registry, ResultOptions, ServerConfig, Source, StrictMode, Tool, ToolSet,
};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn provider(id: &str) -> &'static Provider {
    Registry::builtin().unwrap().get(id).unwrap()
}

// ---- in-process calls: the execution machinery ----

/// A turn of `n` instant calls, ready to run: the first turn (which fills
/// the caches) has run.
struct InProcessTurn {
    rt: tokio::runtime::Runtime,
    source: Source,
    listing: Listing,
    response: Value,
    options: ExecOptions,
}

fn in_process_turn(n: usize) -> InProcessTurn {
    let rt = one_thread();
    let server = InProcessServer::new().tool(
        Tool::new("noop", "", json!({"type": "object"})),
        |_, _| async { Ok(CallToolResult::text("ok")) },
    );
    let source = Source::hub().server("s", server).build().unwrap();
    let listing = rt
        .block_on(source.tools(provider("anthropic"), &ListOptions::new()))
        .unwrap();
    let blocks: Vec<Value> = (0..n)
        .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "s__noop", "input": {}}))
        .collect();
    let turn = InProcessTurn {
        rt,
        source,
        listing,
        response: json!({"content": blocks}),
        options: ExecOptions::new().max_concurrency(n),
    };
    black_box(execute(&turn));
    turn
}

fn execute(turn: &InProcessTurn) -> mcp_adapters::Execution {
    turn.rt
        .block_on(turn.source.execute_tool_calls(
            provider("anthropic"),
            &turn.response,
            &turn.listing,
            &turn.options,
        ))
        .unwrap()
}

/// The same turn's floor: its calls read and their answers shaped, nothing run.
fn read_and_shape(turn: &InProcessTurn) -> Vec<Value> {
    let provider = provider("anthropic");
    let result = CallToolResult::text("ok");
    let extracted = provider
        .extract_calls(&turn.response, &turn.listing)
        .unwrap();
    extracted
        .calls
        .iter()
        .map(|call| {
            provider
                .answer(
                    call.call_id.as_deref(),
                    &call.exposed_name,
                    Outcome::Completed(&result),
                    &ResultOptions::default(),
                )
                .unwrap()
        })
        .collect()
}

fn spawn_setup(n: usize) -> (tokio::runtime::Runtime, usize) {
    let rt = one_thread();
    rt.block_on(spawn_join(n));
    (rt, n)
}

#[library_benchmark]
#[bench::calls_100(in_process_turn(100))]
#[bench::calls_200(in_process_turn(200))]
fn exec_turn(turn: InProcessTurn) -> (mcp_adapters::Execution, InProcessTurn) {
    let execution = execute(black_box(&turn));
    (execution, turn)
}

#[library_benchmark]
#[bench::calls_100(in_process_turn(100))]
#[bench::calls_200(in_process_turn(200))]
fn exec_floor(turn: InProcessTurn) -> (Vec<Value>, InProcessTurn) {
    let answers = read_and_shape(black_box(&turn));
    (answers, turn)
}

#[library_benchmark]
#[bench::tasks_100(spawn_setup(100))]
#[bench::tasks_200(spawn_setup(200))]
fn exec_spawn_join(setup: (tokio::runtime::Runtime, usize)) -> tokio::runtime::Runtime {
    let (rt, n) = setup;
    rt.block_on(spawn_join(black_box(n)));
    rt
}

library_benchmark_group!(
    name = exec,
    benchmarks = [exec_turn, exec_floor, exec_spawn_join]
);

// ---- a call over stdio: the library against rmcp directly ----

fn everything() -> (String, Vec<String>) {
    servers::everything().expect("the pinned server-everything (npm)")
}

fn echo_blocks(n: usize) -> Value {
    let blocks: Vec<Value> = (0..n)
        .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "echo", "input": {"message": format!("hello {i}")}}))
        .collect();
    json!({"content": blocks})
}

/// `n` echo calls through the library, ready to run (a first turn has run).
struct StdioLibrary {
    rt: tokio::runtime::Runtime,
    source: Source,
    listing: Listing,
    response: Value,
    options: ExecOptions,
}

fn stdio_library(n: usize) -> StdioLibrary {
    let (command, args) = everything();
    let rt = one_thread();
    let config = ServerConfig::Stdio {
        command,
        args,
        env: Default::default(),
    };
    let (source, listing) = rt.block_on(async {
        let client = McpClient::connect("everything", &config, &Default::default())
            .await
            .unwrap();
        let source = Source::client("everything", client).build().unwrap();
        let listing = source
            .tools(provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        (source, listing)
    });
    let turn = StdioLibrary {
        rt,
        source,
        listing,
        response: echo_blocks(n),
        options: ExecOptions::new().max_concurrency(8),
    };
    black_box(run_library(&turn));
    turn
}

fn run_library(turn: &StdioLibrary) -> mcp_adapters::Execution {
    let run = turn
        .rt
        .block_on(turn.source.execute_tool_calls(
            provider("anthropic"),
            &turn.response,
            &turn.listing,
            &turn.options,
        ))
        .unwrap();
    assert!(run.calls.iter().all(|c| c.error.is_none()));
    run
}

type Direct = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// `n` echo calls on an rmcp client session of its own, ready to run.
fn stdio_rmcp(n: usize) -> (tokio::runtime::Runtime, Direct, usize) {
    let (command, args) = everything();
    let rt = one_thread();
    let direct = rt.block_on(async {
        let mut child = tokio::process::Command::new(&command);
        child.args(&args);
        ().serve(rmcp::transport::TokioChildProcess::new(child).unwrap())
            .await
            .unwrap()
    });
    black_box(run_rmcp(&rt, &direct, n));
    (rt, direct, n)
}

fn run_rmcp(
    rt: &tokio::runtime::Runtime,
    direct: &Direct,
    n: usize,
) -> Vec<rmcp::model::CallToolResult> {
    rt.block_on(async {
        futures_util::stream::iter(0..n)
            .map(|i| {
                let Value::Object(arguments) = json!({"message": format!("hello {i}")}) else {
                    unreachable!()
                };
                direct.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
            })
            .buffer_unordered(8)
            .map(|result| result.unwrap())
            .collect::<Vec<_>>()
            .await
    })
}

/// The servers' own processes are not measured (Valgrind does not follow
/// children); the environment is kept, for `node` on the `PATH`.
fn stdio_config() -> LibraryBenchmarkConfig {
    let mut config = LibraryBenchmarkConfig::default();
    config
        .env_clear(false)
        .valgrind_args(["--trace-children=no"])
        .tool(Dhat::default());
    config
}

#[library_benchmark(config = stdio_config())]
#[bench::calls_25(stdio_library(25))]
#[bench::calls_50(stdio_library(50))]
fn stdio_through_library(turn: StdioLibrary) -> (mcp_adapters::Execution, StdioLibrary) {
    let run = run_library(black_box(&turn));
    (run, turn)
}

#[library_benchmark(config = stdio_config())]
#[bench::calls_25(stdio_rmcp(25))]
#[bench::calls_50(stdio_rmcp(50))]
fn stdio_with_rmcp(
    setup: (tokio::runtime::Runtime, Direct, usize),
) -> (
    Vec<rmcp::model::CallToolResult>,
    (tokio::runtime::Runtime, Direct),
) {
    let (rt, direct, n) = setup;
    let results = run_rmcp(&rt, black_box(&direct), n);
    (results, (rt, direct))
}

library_benchmark_group!(
    name = stdio,
    benchmarks = [stdio_through_library, stdio_with_rmcp]
);

// ---- the first strict listing of the corpus ----

/// The corpus as a hub toolset listed by nothing yet; the provider's spec
/// loaded, and a listing of another toolset made (the rules compiled).
fn fresh_corpus(id: &'static str) -> (ToolSet, &'static Provider) {
    let provider = provider(id);
    let warm = corpus::corpus_toolset();
    black_box(provider.list_tools(&warm, &ListOptions::new()).unwrap());
    black_box(handwritten_anthropic(&warm));
    (corpus::corpus_toolset(), provider)
}

#[library_benchmark]
#[bench::openai_chat(fresh_corpus("openai-chat"))]
#[bench::openai_responses(fresh_corpus("openai-responses"))]
fn listing_first(setup: (ToolSet, &'static Provider)) -> (Listing, ToolSet) {
    let (toolset, provider) = setup;
    let listing = provider
        .list_tools(black_box(&toolset), &ListOptions::new())
        .unwrap();
    (listing, toolset)
}

#[library_benchmark]
#[bench::handwritten(fresh_corpus("anthropic"))]
fn listing_baseline(setup: (ToolSet, &'static Provider)) -> (Vec<Value>, ToolSet) {
    let (toolset, _) = setup;
    let listed = handwritten_anthropic(black_box(&toolset));
    (listed, toolset)
}

library_benchmark_group!(
    name = listing,
    benchmarks = [listing_first, listing_baseline]
);

// ---- loading the built-in specs ----

/// The built-in specs' texts, loaded once already (the JSON Schema
/// validators are compiled once per process).
fn warm_sources() -> Vec<SpecFile> {
    let sources = builtin_sources();
    black_box(Registry::from_files(sources.clone()).unwrap());
    black_box(parse_yaml(&sources));
    sources
}

fn parse_yaml(sources: &[SpecFile]) -> Vec<Value> {
    sources
        .iter()
        .map(|s| serde_saphyr::from_str::<Value>(s.text()).unwrap())
        .collect()
}

#[library_benchmark]
#[bench::builtin(warm_sources())]
fn specs_load(sources: Vec<SpecFile>) -> (Registry, Vec<SpecFile>) {
    let registry = Registry::from_files(black_box(sources.clone())).unwrap();
    (registry, sources)
}

#[library_benchmark]
#[bench::builtin(warm_sources())]
fn specs_yaml(sources: Vec<SpecFile>) -> (Vec<Value>, Vec<SpecFile>) {
    let values = parse_yaml(black_box(&sources));
    (values, sources)
}

library_benchmark_group!(name = specs, benchmarks = [specs_load, specs_yaml]);

// ---- Bedrock's binary event stream ----

const BEDROCK_TOOLS: [&str; 3] = ["json", "tool-a", "tool-b"];

/// The recorded Bedrock stream as `application/vnd.amazon.eventstream`
/// frames (written by the AWS SDK's codec), each frame's payload, and the
/// listing its calls resolve against; assembled once already.
struct Frames {
    bytes: Vec<u8>,
    payloads: Vec<Vec<u8>>,
    listing: Listing,
}

fn bedrock_frames() -> Frames {
    let text = std::fs::read_to_string(
        root().join("benches/data/streams/amazon-bedrock-json-with-tools.1.chunks.txt"),
    )
    .unwrap();
    let events: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let (bytes, payloads) = event_stream_body(&events);
    let tools: Vec<Tool> = BEDROCK_TOOLS
        .iter()
        .map(|n| Tool::new(*n, "", json!({"type": "object"})))
        .collect();
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let listing = provider("bedrock-converse")
        .list_tools(&toolset, &ListOptions::new().strict(StrictMode::Off))
        .unwrap();
    let frames = Frames {
        bytes,
        payloads,
        listing,
    };
    black_box(assemble(&frames));
    black_box(by_hand(&frames));
    frames
}

fn assemble(frames: &Frames) -> usize {
    let mut stream = provider("bedrock-converse")
        .stream(&frames.listing)
        .unwrap()
        .framing(Framing::EventStream);
    stream.push(&frames.bytes).unwrap();
    stream.finish().unwrap().extracted.len()
}

/// Reading the frames by hand: the AWS SDK's decoder (each frame checked and
/// its headers read) and serde_json for each payload.
fn by_hand(frames: &Frames) -> Vec<(String, Value)> {
    use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
    use aws_smithy_eventstream::smithy::parse_response_headers;
    let mut buf = bytes::BytesMut::from(&frames.bytes[..]);
    let mut decoder = MessageFrameDecoder::new();
    let mut read = Vec::new();
    while let DecodedFrame::Complete(message) = decoder.decode_frame(&mut buf).unwrap() {
        let headers = parse_response_headers(&message).unwrap();
        let value = serde_json::from_slice::<Value>(message.payload()).unwrap();
        read.push((headers.smithy_type.as_str().to_owned(), value));
    }
    read
}

#[library_benchmark]
#[bench::library(bedrock_frames())]
fn bedrock_assemble(frames: Frames) -> (usize, Frames) {
    (assemble(black_box(&frames)), frames)
}

#[library_benchmark]
#[bench::aws_sdk(bedrock_frames())]
fn bedrock_by_hand(frames: Frames) -> (Vec<(String, Value)>, Frames) {
    (by_hand(black_box(&frames)), frames)
}

#[library_benchmark]
#[bench::payloads(bedrock_frames())]
fn bedrock_payloads(frames: Frames) -> (Vec<Value>, Frames) {
    let values = frames
        .payloads
        .iter()
        .map(|p| serde_json::from_slice::<Value>(black_box(p)).unwrap())
        .collect();
    (values, frames)
}

library_benchmark_group!(
    name = stream,
    benchmarks = [bedrock_assemble, bedrock_by_hand, bedrock_payloads]
);

main!(
    library_benchmark_groups = exec,
    stdio,
    listing,
    specs,
    stream
);
