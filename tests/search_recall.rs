//! Retrieval quality of the library's tool search over the whole corpus (19
//! servers, 536 tools): recall at 5 on the natural-language queries of
//! `tests/fixtures/search/queries.json`, each naming the tool it should find.
//! The same ranking answers a model's searches ([`Provider::answer_search`]).

mod common;

use common::*;
use mcp_adapters::search::{SearchCall, ToolIndex};
use mcp_adapters::{ListOptions, ToolSet};

/// The share of queries whose tool is among the first five, at least.
const MIN_RECALL_AT_5: f64 = 0.9;

fn corpus() -> ToolSet {
    let mut builder = ToolSet::hub();
    for server in corpus_servers() {
        builder = builder.server(&server, corpus_tools(&server));
    }
    builder.build().unwrap()
}

fn queries() -> Vec<(String, String)> {
    let file = fixture("search/queries.json");
    file["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let text = q["query"].as_str().unwrap().to_owned();
            (text, q["expect"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[test]
fn recall_at_5_over_the_corpus() {
    let toolset = corpus();
    assert_eq!(toolset.len(), 536);
    let index = ToolIndex::new(&toolset);
    let queries = queries();
    assert!(queries.len() >= 40);
    let mut misses = Vec::new();
    for (query, expect) in &queries {
        let (server, tool) = expect.split_once('/').unwrap();
        assert!(
            toolset.exposed_name(server, tool).is_some(),
            "no tool {expect}"
        );
        let hits = index.search(query, 5, |_| true);
        if !hits.iter().any(|h| h.server_id == server && h.tool == tool) {
            let got: Vec<_> = hits.iter().map(|h| h.exposed_name.as_str()).collect();
            misses.push(format!("{query:?}: wanted {expect}, got {got:?}"));
        }
    }
    let recall = 1.0 - misses.len() as f64 / queries.len() as f64;
    println!(
        "recall@5 = {recall:.3} over {} queries; misses:\n{}",
        queries.len(),
        misses.join("\n")
    );
    assert!(
        recall >= MIN_RECALL_AT_5,
        "recall@5 {recall:.3} < {MIN_RECALL_AT_5}:\n{}",
        misses.join("\n")
    );
}

#[test]
fn a_model_search_over_the_deferred_corpus_finds_the_same_tools() {
    let toolset = corpus();
    let index = ToolIndex::new(&toolset);
    let provider = provider("openai-chat");
    let listing = provider
        .list_tools(&toolset, &ListOptions::new().defer("*").load("time/*"))
        .unwrap();
    for (query, _) in queries().iter().take(10) {
        let answer = provider
            .answer_search(
                &SearchCall::new(Some("c".into()), query.as_str()),
                &listing,
                |_| true,
            )
            .unwrap();
        let direct: Vec<_> = index
            .search(query, 5, |t| t.server_id != "time")
            .into_iter()
            .map(|h| h.exposed_name)
            .collect();
        assert_eq!(answer.found, direct, "{query}");
    }
}
