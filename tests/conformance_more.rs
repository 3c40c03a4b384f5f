//! Every tool definition and result answer of the providers beyond the core four,
//! validated against the official SDK types with unknown keys rejected: Bedrock
//! Converse (botocore's bedrock-runtime shapes), Mistral (mistralai), the
//! gemini-multimodal variant against google-genai's Part and the anthropic-strict
//! variant's tools against Anthropic's ToolParam. Ollama has no official
//! typed SDK in the checker and is not validated here.

mod common;
mod support;

use common::conformance::{Item, check};
use mcp_adapters::listing::{ListOptions, StrictMode};
use mcp_adapters::mcp::{CallToolResult, parse_tools_list};
use mcp_adapters::results::{Outcome, ResultOptions, StructuredMode};
use mcp_adapters::toolset::ToolSet;
use mcp_adapters::{Error, ErrorKind};
use serde_json::json;
use support::*;

/// Provider id and the checker's type for its tools and results.
const TOOLS: &[(&str, &str)] = &[
    ("bedrock-converse", "bedrock-converse/tool"),
    ("mistral", "mistral/tool"),
];
const RESULTS: &[(&str, &str)] = &[
    ("bedrock-converse", "bedrock-converse/result"),
    ("mistral", "mistral/result"),
    (
        "gemini-multimodal",
        "gemini-multimodal/result@gemini/result",
    ),
];

fn tool_items(items: &mut Vec<Item>) {
    let mut toolsets: Vec<(String, ToolSet)> = corpus_servers()
        .into_iter()
        .map(|server| {
            let toolset = ToolSet::client()
                .server(&server, corpus_tools(&server))
                .build()
                .unwrap();
            (server, toolset)
        })
        .collect();
    // Descriptions an API with a non-empty rule would reject if they were sent.
    let blank = parse_tools_list(json!({"tools": [
        {"name": "none", "inputSchema": {"type": "object"}},
        {"name": "empty", "description": "", "inputSchema": {"type": "object"}},
        {"name": "blank", "description": "  ", "inputSchema": {"type": "object"}}
    ]}))
    .unwrap();
    toolsets.push((
        "blank".into(),
        ToolSet::client().server("blank", blank).build().unwrap(),
    ));
    for (server, toolset) in &toolsets {
        // The strict variant's tools, strict or not, are Anthropic ToolParams.
        for mode in [StrictMode::Auto, StrictMode::Off] {
            let listing = provider("anthropic-strict")
                .list_tools(toolset, &ListOptions::new().strict(mode))
                .unwrap();
            for (i, tool) in listing.tools.into_iter().enumerate() {
                let label = format!("anthropic-strict {server} #{i} {mode:?}");
                items.push(Item::new(
                    label,
                    "anthropic-strict/tool@anthropic/tool",
                    tool,
                ));
            }
        }
        for (id, check) in TOOLS {
            let listing = provider(id)
                .list_tools(toolset, &ListOptions::new())
                .unwrap();
            for (i, tool) in listing.tools.into_iter().enumerate() {
                items.push(Item::new(format!("{id} {server} #{i}"), *check, tool));
            }
        }
    }
}

fn result_items(items: &mut Vec<Item>) {
    let mut results: Vec<(String, CallToolResult)> = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        results.push((
            stem(&path),
            serde_json::from_value(read_json(&path)).unwrap(),
        ));
    }
    for server in ["everything", "memory", "sqlite", "time"] {
        let calls = fixture(&format!("corpus/{server}.calls.json"));
        for (i, call) in calls.as_array().unwrap().iter().enumerate() {
            results.push((
                format!("{server}#{i}"),
                serde_json::from_value(call["result"].clone()).unwrap(),
            ));
        }
    }
    let failure = Error::new(ErrorKind::Denied, "denied by policy");
    for (id, check) in RESULTS {
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
                    *check,
                    checked_value(id, answer),
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
            *check,
            checked_value(id, answer),
        ));
    }
}

/// A Bedrock answer is the ContentBlock union `{"toolResult": ToolResultBlock}`;
/// the checker's type is the ToolResultBlock inside, so nothing else may sit beside it.
fn checked_value(id: &str, answer: serde_json::Value) -> serde_json::Value {
    if id != "bedrock-converse" {
        return answer;
    }
    let obj = answer.as_object().expect("an object");
    assert_eq!(obj.len(), 1, "one ContentBlock member: {answer}");
    obj["toolResult"].clone()
}

#[test]
fn emitted_json_validates_against_the_official_sdk_types() {
    let mut items = Vec::new();
    tool_items(&mut items);
    result_items(&mut items);
    assert!(items.len() > 800, "{} items", items.len());
    check(&items).unwrap_or_else(|failures| panic!("{failures}"));
}

/// The checker rejects what these providers must never send, so a pass above means something.
#[test]
fn the_checker_rejects_unknown_keys_and_bad_values() {
    let bad = [
        (
            "bedrock-converse/tool",
            json!({"toolSpec": {"name": "t", "inputSchema": {"json": {}}, "extra": 1}}),
        ),
        (
            "bedrock-converse/tool",
            json!({"toolSpec": {"name": "t", "description": "", "inputSchema": {"json": {}}}}),
        ),
        (
            "bedrock-converse/result",
            json!({"toolUseId": "c", "content": [{"image": {"format": "svg", "source": {"bytes": "QUJD"}}}]}),
        ),
        (
            "mistral/tool",
            json!({"type": "function", "function": {"name": "t", "parameters": {}, "extra": 1}}),
        ),
        (
            "mistral/result",
            json!({"role": "tool", "tool_call_id": "c", "content": "x", "is_error": true}),
        ),
        (
            "gemini-multimodal/result@gemini/result",
            json!({"functionResponse": {"name": "t", "response": {}, "parts": [{"inlineData": {"mimeType": "image/png", "data": "QUJD"}, "extra": 1}]}}),
        ),
    ];
    for (check_type, value) in bad {
        let label = format!("{check_type} {value}");
        let result = check(&[Item::new(label.clone(), check_type, value)]);
        assert!(result.is_err(), "accepted: {label}");
    }
}
