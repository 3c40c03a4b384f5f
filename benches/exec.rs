//! Execution overhead and concurrency.
//!
//! * 1,000 calls to an instant in-process server through `execute_tool_calls`
//!   (policy, ordering, answers included), against a bare `tokio::spawn` + join
//!   of 1,000 no-op tasks in the same run, both on one thread; beside it the
//!   floor of the same turn (reading the calls and shaping the answers) against
//!   the same baseline. Goal: the execution machinery (the difference) ≤ 1x.
//! * 64 calls that each sleep 100 ms, at `max_concurrency` 64 and 8, against
//!   the ideal wall time (100 ms and 800 ms). Goal: ≤ 1.05x.
//!
//! * Code mode (feature `code-mode`): a program that makes 1,000 calls to the
//!   same instant in-process tool (`Promise.all`), against the same 1,000
//!   calls made by the model directly through `Source::execute_tool_calls`,
//!   in the same run. Goal: ≤ 2x.
//!
//! Ratios are printed at the end of the run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/baselines.rs"]
#[allow(dead_code)]
mod baselines;
mod support;
use baselines::spawn_join;
use mcp_adapters::ListOptions;
use mcp_adapters::Registry;
use mcp_adapters::{CallToolResult, Tool};
use mcp_adapters::{ExecOptions, InProcessServer, Listing, Source};
use mcp_adapters::{Outcome, ResultOptions};
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One thread: a turn's calls run in the task that awaits them, and the
/// baseline's tasks on the same thread, so that neither side's figure
/// depends on how a loaded machine schedules worker threads.
fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn source() -> Source {
    let server = InProcessServer::new()
        .tool(
            Tool::new("noop", "", json!({"type": "object"})),
            |_, _| async { Ok(CallToolResult::text("ok")) },
        )
        .tool(
            Tool::new("sleep", "", json!({"type": "object"})),
            |_, _| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(CallToolResult::text("ok"))
            },
        );
    Source::hub().server("s", server).build().unwrap()
}

fn response(tool: &str, n: usize) -> Value {
    let blocks: Vec<Value> = (0..n)
        .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": tool, "input": {}}))
        .collect();
    json!({"content": blocks})
}

fn listing(rt: &tokio::runtime::Runtime, source: &Source) -> Listing {
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    rt.block_on(source.tools(provider, &ListOptions::new()))
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let rt = one_thread();
    let source = source();
    let listing = listing(&rt, &source);
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let calls = response("s__noop", 1000);
    let options = ExecOptions::new().max_concurrency(1000);
    let mut group = c.benchmark_group("exec_1000_instant");
    group.bench_function("execute_tool_calls", |b| {
        b.iter(|| {
            rt.block_on(source.execute_tool_calls(provider, black_box(&calls), &listing, &options))
                .unwrap()
        })
    });
    group.bench_function("baseline_spawn_join", |b| {
        b.iter(|| rt.block_on(spawn_join(1000)))
    });
    group.finish();

    let execute = || {
        rt.block_on(source.execute_tool_calls(provider, &calls, &listing, &options))
            .unwrap()
    };
    // The pure floor of the same turn: reading the 1,000 calls and shaping 1,000 answers.
    let result = CallToolResult::text("ok");
    let read_and_shape = || {
        let extracted = provider.extract_calls(&calls, &listing).unwrap();
        let answers: Vec<Value> = extracted
            .calls
            .iter()
            .map(|call| {
                let outcome = Outcome::Completed(&result);
                provider
                    .answer(
                        call.call_id.as_deref(),
                        &call.exposed_name,
                        outcome,
                        &ResultOptions::default(),
                    )
                    .unwrap()
            })
            .collect();
        answers
    };
    let baseline = || rt.block_on(spawn_join(1000));
    let rounds = support::rounds();
    let measure = |how: &str| {
        let total = support::median_ratio(rounds, execute, baseline);
        let floor = support::median_ratio(rounds, read_and_shape, baseline);
        support::report(
            &format!("execute 1000 instant calls / spawn+join 1000 no-op tasks{how}"),
            total,
            None,
        );
        support::report(
            "  reading the calls and shaping the answers alone / the same baseline",
            floor,
            None,
        );
        support::report(
            "  the execution machinery (the difference) / the same baseline",
            total - floor,
            Some(1.0),
        );
    };
    measure("");
    // glibc hands the top of its heap back to the system when a free leaves
    // more than its trim threshold there, and raises that threshold each time
    // it frees a block it had mapped: whether a turn's memory is faulted in
    // again at the next turn depends on which blocks the process freed
    // before. The same turns, with trimming held off for both sides:
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets a malloc parameter; no allocation is in flight.
        unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30) };
        measure(", heap trimming held off");
    }

    let rt = runtime();
    let sleepy = response("s__sleep", 64);
    for concurrency in [64usize, 8] {
        let options = ExecOptions::new().max_concurrency(concurrency);
        let ideal = Duration::from_millis(100) * (64 / concurrency as u32);
        let mut times: Vec<Duration> = (0..5)
            .map(|_| {
                let start = Instant::now();
                rt.block_on(source.execute_tool_calls(provider, &sleepy, &listing, &options))
                    .unwrap();
                start.elapsed()
            })
            .collect();
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "ratio 64 calls of 100 ms at max_concurrency {concurrency}: {:.3}x of the ideal {} ms (median {} ms, goal <= 1.05x)",
            median.as_secs_f64() / ideal.as_secs_f64(),
            ideal.as_millis(),
            median.as_millis()
        );
    }
}

/// 1,000 calls made by a code-mode program against the same calls made by
/// the model directly, through the same source.
#[cfg(feature = "code-mode")]
fn code_mode(c: &mut Criterion) {
    use mcp_adapters::Policy;
    use mcp_adapters::code::CodeMode;
    let rt = one_thread();
    let server = InProcessServer::new().tool(
        Tool::new("noop", "", json!({"type": "object"})),
        |_, _| async { Ok(CallToolResult::text("ok")) },
    );
    let source = Source::client("s", server)
        .policy(Policy::allow_all().programmatic("s/noop").unwrap())
        .code_mode(CodeMode::new().max_calls(1000))
        .build()
        .unwrap();
    let listing = listing(&rt, &source);
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let direct = response("noop", 1000);
    let code = "const all = await Promise.all(Array.from({length: 1000}, () => tools.noop({}))); return all.length;";
    let program = json!({"content": [
        {"type": "tool_use", "id": "toolu_p", "name": "run_code", "input": {"code": code}}
    ]});
    let options = ExecOptions::new().max_concurrency(1000);
    let run = |calls: &Value| {
        rt.block_on(source.execute_tool_calls(provider, calls, &listing, &options))
            .unwrap()
    };
    assert_eq!(run(&program).turn.results.len(), 1);
    let mut group = c.benchmark_group("code_mode_1000_instant");
    group.bench_function("program", |b| b.iter(|| run(black_box(&program))));
    group.bench_function("baseline_direct", |b| b.iter(|| run(black_box(&direct))));
    group.finish();
    let ratio = support::median_ratio(support::rounds(), || run(&program), || run(&direct));
    support::report(
        "a program's 1000 instant calls / the same 1000 calls made directly",
        ratio,
        Some(2.0),
    );
}

#[cfg(not(feature = "code-mode"))]
fn code_mode(_: &mut Criterion) {}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench, code_mode
}
criterion_main!(benches);
