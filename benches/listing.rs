//! Listing the public corpus (19 servers, 536 tools) in each core format,
//! against a hand-written converter for the Anthropic shape: the first
//! listing of a toolset built anew, and a listing of a toolset listed
//! before (what an agent loop does every turn); and cold start (loading and
//! validating every built-in spec) against parsing their YAML alone.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group};
use mcp_adapters::ListOptions;
use mcp_adapters::Registry;
use mcp_adapters::spec::SpecFile;
use serde_json::Value;

#[path = "support/baselines.rs"]
#[allow(dead_code)]
mod baselines;
#[path = "support/corpus.rs"]
#[allow(dead_code)]
mod corpus;
mod support;
use baselines::{builtin_sources, handwritten_anthropic};
use corpus::{corpus_servers, hub_of};

const FORMATS: [&str; 4] = ["anthropic", "openai-chat", "openai-responses", "gemini"];

/// The formats whose repeated listing has a goal: at most 1.3x the baseline.
const GOALS: [&str; 3] = ["anthropic", "openai-chat", "openai-responses"];

fn parse_yaml_only(sources: &[SpecFile]) -> Vec<Value> {
    sources
        .iter()
        .map(|s| serde_saphyr::from_str::<Value>(s.text()).expect("valid YAML"))
        .collect()
}

fn load_registry(sources: &[SpecFile]) -> Registry {
    Registry::from_files(sources.to_vec()).expect("valid built-in specs")
}

fn listing(c: &mut Criterion) {
    let servers = corpus_servers();
    let toolset = hub_of(&servers);
    let registry = Registry::builtin().expect("built-in specs");
    let options = ListOptions::new();
    let mut group = c.benchmark_group("listing");
    group.bench_function("handwritten anthropic", |b| {
        b.iter(|| handwritten_anthropic(black_box(&toolset)))
    });
    for id in FORMATS {
        let provider = registry.get(id).expect("core provider");
        // The toolset was listed before: what it keeps is reused.
        group.bench_function(format!("{id} repeated"), |b| {
            b.iter(|| provider.list_tools(black_box(&toolset), &options))
        });
        // A toolset built anew (outside the timed part) for every listing.
        group.bench_function(format!("{id} first"), |b| {
            b.iter_batched(
                || hub_of(&servers),
                |fresh| {
                    let listing = provider.list_tools(black_box(&fresh), &options);
                    (listing, fresh)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn cold_start(c: &mut Criterion) {
    let sources = builtin_sources();
    let mut group = c.benchmark_group("cold start");
    group.bench_function("yaml parse", |b| {
        b.iter(|| parse_yaml_only(black_box(&sources)))
    });
    group.bench_function("load and validate", |b| {
        b.iter(|| load_registry(black_box(&sources)))
    });
    group.finish();
}

fn ratios() {
    let rounds = support::rounds();
    println!();
    let servers = corpus_servers();
    let toolset = hub_of(&servers);
    println!("corpus: {} tools", toolset.len());
    let registry = Registry::builtin().expect("built-in specs");
    let options = ListOptions::new();
    for id in FORMATS {
        let provider = registry.get(id).expect("core provider");
        let ratio = support::median_ratio(
            rounds,
            || provider.list_tools(&toolset, &options),
            || handwritten_anthropic(&toolset),
        );
        let goal = GOALS.contains(&id).then_some(1.3);
        support::report(&format!("listing {id} (repeated) / baseline"), ratio, goal);
        let ratio = support::median_ratio_with_setup(
            rounds,
            || hub_of(&servers),
            |fresh| provider.list_tools(fresh, &options),
            handwritten_anthropic,
        );
        support::report(&format!("listing {id} (first) / baseline"), ratio, None);
    }
    let sources = builtin_sources();
    let ratio = support::median_ratio(
        rounds,
        || load_registry(&sources),
        || parse_yaml_only(&sources),
    );
    support::report("cold start / yaml parse", ratio, Some(2.0));
}

criterion_group!(benches, listing, cold_start);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
