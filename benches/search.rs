//! Deferred loading over the public corpus (19 servers, 536 tools): the size
//! of each provider's tool list with every tool loaded and with everything
//! deferred but a handful (`time/*` and `github/get_issue`, the search tool
//! added), in bytes of JSON and in o200k_base tokens (tiktoken-rs); and the
//! time of a deferred listing and of answering a search, against the full
//! listing measured in the same run.

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use mcp_adapters::search::SearchCall;
use mcp_adapters::{ListOptions, Listing, Registry, ToolSet};
use serde_json::Value;

#[path = "support/corpus.rs"]
mod corpus;
mod support;
use corpus::corpus_toolset;

/// The providers with a wire format of their own (the variants list alike).
const PROVIDERS: [&str; 9] = [
    "anthropic",
    "openai-chat",
    "openai-responses",
    "gemini",
    "bedrock-converse",
    "mistral",
    "cohere",
    "gemini-interactions",
    "ollama",
];

fn deferred() -> ListOptions {
    ListOptions::new()
        .defer("*")
        .load("time/*")
        .load("github/get_issue")
}

/// The bytes of the tool list as the request sends it, and the tokens of
/// what the prompt holds of it: a tool the spec marks deferred is sent but
/// kept out of the prompt until a search loads it (the providers' documented
/// behaviour); of a namespace, its name, description and loaded tools.
fn size(listing: &Listing, bpe: &tiktoken_rs::CoreBPE) -> (usize, usize) {
    let text = serde_json::to_string(&listing.tools).expect("JSON");
    let prompt: Vec<Value> = listing.tools.iter().filter_map(in_prompt).collect();
    let prompt = serde_json::to_string(&prompt).expect("JSON");
    (text.len(), bpe.encode_ordinary(&prompt).len())
}

fn in_prompt(def: &Value) -> Option<Value> {
    if def.get("defer_loading") == Some(&Value::Bool(true)) {
        return None;
    }
    let mut def = def.clone();
    if let Some(Value::Array(tools)) = def.get_mut("tools") {
        tools.retain(|t| t.get("defer_loading") != Some(&Value::Bool(true)));
    }
    Some(def)
}

fn print_sizes(toolset: &ToolSet, registry: &Registry) {
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
    println!(
        "tool list of the corpus ({} tools), all loaded then deferred but 3: request bytes, prompt tokens (o200k_base)",
        toolset.len()
    );
    println!(
        "{:<22} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "provider", "bytes", "deferred", "tokens", "deferred", "tokens%"
    );
    for id in PROVIDERS {
        let provider = registry.get(id).expect("provider");
        let full = provider
            .list_tools(toolset, &ListOptions::new())
            .expect("listing");
        let small = provider
            .list_tools(toolset, &deferred())
            .expect("deferred listing");
        let ((fb, ft), (sb, st)) = (size(&full, &bpe), size(&small, &bpe));
        println!(
            "{id:<22} {fb:>10} {sb:>10} {ft:>9} {st:>9} {:>7.1}%",
            100.0 * st as f64 / ft as f64
        );
    }
}

fn search(c: &mut Criterion) {
    let toolset = corpus_toolset();
    let registry = Registry::builtin().expect("built-in specs");
    print_sizes(&toolset, registry);
    let mut group = c.benchmark_group("deferred");
    for id in ["anthropic", "openai-responses", "openai-chat"] {
        let provider = registry.get(id).expect("provider");
        group.bench_function(format!("{id} full listing"), |b| {
            b.iter(|| provider.list_tools(black_box(&toolset), &ListOptions::new()))
        });
        group.bench_function(format!("{id} deferred listing"), |b| {
            b.iter(|| provider.list_tools(black_box(&toolset), &deferred()))
        });
        let listing = provider
            .list_tools(&toolset, &deferred())
            .expect("deferred");
        let call = SearchCall::new(Some("call_1".into()), "send an SMS text message");
        // The listing's index is built on the first search and kept.
        group.bench_function(format!("{id} search answer"), |b| {
            b.iter(|| provider.answer_search(black_box(&call), &listing, |_| true))
        });
    }
    group.finish();
    let rounds = support::rounds();
    for id in ["anthropic", "openai-responses", "openai-chat"] {
        let provider = registry.get(id).expect("provider");
        let ratio = support::median_ratio(
            rounds,
            || provider.list_tools(&toolset, &deferred()),
            || provider.list_tools(&toolset, &ListOptions::new()),
        );
        support::report(
            &format!("deferred listing {id} / full listing"),
            ratio,
            Some(1.5),
        );
        let listing = provider
            .list_tools(&toolset, &deferred())
            .expect("deferred");
        let call = SearchCall::new(Some("call_1".into()), "send an SMS text message");
        let ratio = support::median_ratio(
            rounds,
            || provider.answer_search(&call, &listing, |_| true),
            || provider.list_tools(&toolset, &ListOptions::new()),
        );
        support::report(
            &format!("search answer {id} / full listing"),
            ratio,
            Some(1.0),
        );
    }
}

criterion_group!(benches, search);

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
