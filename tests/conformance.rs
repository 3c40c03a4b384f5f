//! Every tool definition and result answer the core providers emit, validated
//! against the providers' official SDK types with unknown keys rejected
//! (Python: anthropic, openai, google-genai; see `tests/conformance/`).

mod common;
mod support;

use common::conformance::{Item, check};
use mcp_adapters::listing::{ListOptions, StrictMode};
use mcp_adapters::mcp::CallToolResult;
use mcp_adapters::results::{Outcome, ResultOptions, StructuredMode};
use mcp_adapters::toolset::ToolSet;
use mcp_adapters::{Error, ErrorKind};
use support::*;

fn tool_items(items: &mut Vec<Item>) {
    for server in corpus_servers() {
        let toolset = ToolSet::client()
            .server(&server, corpus_tools(&server))
            .build()
            .unwrap();
        for id in CORE_PROVIDERS {
            for mode in [StrictMode::Auto, StrictMode::Off] {
                let listing = provider(id)
                    .list_tools(&toolset, &ListOptions::new().strict(mode))
                    .unwrap();
                for tool in listing.tools {
                    let label = format!("{id} {server} {} strict={mode:?}", tool_name(&tool));
                    items.push(Item::new(label, format!("{id}/tool"), tool));
                }
            }
        }
    }
}

fn tool_name(tool: &serde_json::Value) -> &str {
    tool.get("name")
        .or_else(|| tool.pointer("/function/name"))
        .and_then(|v| v.as_str())
        .unwrap_or("?")
}

fn result_items(items: &mut Vec<Item>) {
    let mut results: Vec<(String, CallToolResult)> = Vec::new();
    for entry in std::fs::read_dir(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results"),
    )
    .unwrap()
    {
        let path = entry.unwrap().path();
        results.push((
            stem(&path),
            serde_json::from_value(read_json(&path)).unwrap(),
        ));
    }
    for server in ["everything", "memory", "sqlite", "time"] {
        for (i, call) in fixture(&format!("corpus/{server}.calls.json"))
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            results.push((
                format!("{server}#{i}"),
                serde_json::from_value(call["result"].clone()).unwrap(),
            ));
        }
    }
    let failure = Error::new(ErrorKind::Denied, "denied by policy");
    for id in CORE_PROVIDERS {
        for (name, result) in &results {
            for mode in [
                StructuredMode::Auto,
                StructuredMode::Prefer,
                StructuredMode::Append,
            ] {
                let options = ResultOptions {
                    structured: Some(mode),
                    ..Default::default()
                };
                let answer = provider(id)
                    .answer(
                        Some("call_1"),
                        "srv__tool",
                        Outcome::Result(result),
                        &options,
                    )
                    .unwrap();
                items.push(Item::new(
                    format!("{id} {name} {mode:?}"),
                    format!("{id}/result"),
                    answer,
                ));
            }
        }
        let answer = provider(id)
            .answer(
                Some("call_1"),
                "srv__tool",
                Outcome::Error(&failure),
                &ResultOptions::default(),
            )
            .unwrap();
        items.push(Item::new(
            format!("{id} failure"),
            format!("{id}/result"),
            answer,
        ));
    }
}

#[test]
fn emitted_json_validates_against_the_official_sdk_types() {
    let mut items = Vec::new();
    tool_items(&mut items);
    result_items(&mut items);
    assert!(items.len() > 4000, "{} items", items.len());
    check(&items).unwrap_or_else(|failures| panic!("{failures}"));
}
