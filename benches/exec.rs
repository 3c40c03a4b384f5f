//! Execution overhead and concurrency.
//!
//! * 1,000 calls to an instant in-process server through `execute_tool_calls`
//!   (policy, ordering, answers included), against a bare `tokio::spawn` + join
//!   of 1,000 no-op tasks in the same run. Goal: ≤ 2x.
//! * 64 calls that each sleep 100 ms, at `max_concurrency` 64 and 8, against
//!   the ideal wall time (100 ms and 800 ms). Goal: ≤ 1.05x.
//!
//! Ratios are printed at the end of the run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
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

async fn spawn_join(n: usize) {
    let handles: Vec<_> = (0..n)
        .map(|_| tokio::spawn(async { black_box(1) }))
        .collect();
    for h in handles {
        h.await.unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
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

    let ratio = median_ratio(
        || {
            rt.block_on(source.execute_tool_calls(provider, &calls, &listing, &options))
                .unwrap();
        },
        || rt.block_on(spawn_join(1000)),
        30,
    );
    println!(
        "ratio execute 1000 instant calls / spawn+join 1000 no-op tasks: {ratio:.2}x (goal <= 2x)"
    );
    // The pure floor of the same turn: reading the 1,000 calls and shaping 1,000 answers.
    let result = CallToolResult::text("ok");
    let floor = median_ratio(
        || {
            let extracted = provider.extract_calls(&calls, &listing).unwrap();
            for call in &extracted.calls {
                let outcome = Outcome::Completed(&result);
                let answer = provider.answer(
                    call.call_id.as_deref(),
                    &call.exposed_name,
                    outcome,
                    &ResultOptions::default(),
                );
                black_box(answer.unwrap());
            }
        },
        || rt.block_on(spawn_join(1000)),
        30,
    );
    println!(
        "  of which reading the calls and shaping the answers alone: {floor:.2}x the same baseline"
    );

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

/// Median over `rounds` interleaved runs of time(a) / time(b).
fn median_ratio(mut a: impl FnMut(), mut b: impl FnMut(), rounds: usize) -> f64 {
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            a();
            let ta = t.elapsed();
            let t = Instant::now();
            b();
            ta.as_secs_f64() / t.elapsed().as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[rounds / 2]
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
