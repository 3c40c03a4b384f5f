//! The conformance harness itself: its Python self-test, and hand-written
//! known-good items for every check going through the Rust glue.

mod common;

use common::conformance::{Item, check, self_test};
use serde_json::json;

#[test]
fn harness_self_test_passes() {
    self_test().unwrap_or_else(|e| panic!("{e}"));
}

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": false
    })
}

fn known_good() -> Vec<Item> {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    vec![
        Item::new(
            "anthropic tool",
            "anthropic/tool",
            json!({
                "name": "read_file", "description": "Read a file", "input_schema": schema()
            }),
        ),
        Item::new(
            "anthropic tool, strict",
            "anthropic/tool",
            json!({
                "name": "read_file", "input_schema": schema(), "strict": true
            }),
        ),
        Item::new(
            "anthropic result, text",
            "anthropic/result",
            json!({
                "type": "tool_result", "tool_use_id": "toolu_01", "content": [{"type": "text", "text": "hi"}]
            }),
        ),
        Item::new(
            "anthropic result, error image",
            "anthropic/result",
            json!({
                "type": "tool_result", "tool_use_id": "toolu_02", "is_error": true,
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]
            }),
        ),
        Item::new(
            "openai-chat tool",
            "openai-chat/tool",
            json!({
                "type": "function",
                "function": {"name": "read_file", "description": "Read a file", "parameters": schema(), "strict": true}
            }),
        ),
        Item::new(
            "openai-chat result",
            "openai-chat/result",
            json!({
                "role": "tool", "tool_call_id": "call_1", "content": "hi"
            }),
        ),
        Item::new(
            "openai-chat result, parts",
            "openai-chat/result",
            json!({
                "role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "hi"}]
            }),
        ),
        Item::new(
            "openai-responses tool",
            "openai-responses/tool",
            json!({
                "type": "function", "name": "read_file", "description": "Read a file",
                "parameters": schema(), "strict": false
            }),
        ),
        Item::new(
            "openai-responses result",
            "openai-responses/result",
            json!({
                "type": "function_call_output", "call_id": "call_1", "output": "hi"
            }),
        ),
        Item::new(
            "openai-responses result, image",
            "openai-responses/result",
            json!({
                "type": "function_call_output", "call_id": "call_1",
                "output": [
                    {"type": "input_text", "text": "hi"},
                    {"type": "input_image", "image_url": format!("data:image/png;base64,{png}")}
                ]
            }),
        ),
        Item::new(
            "gemini tool",
            "gemini/tool",
            json!({
                "name": "read_file", "description": "Read a file", "parametersJsonSchema": schema()
            }),
        ),
        Item::new(
            "gemini result",
            "gemini/result",
            json!({
                "functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "hi"}}
            }),
        ),
        Item::new(
            "gemini result, error",
            "gemini/result",
            json!({
                "functionResponse": {"name": "read_file", "response": {"error": "no such file"}}
            }),
        ),
        Item::new(
            "bedrock tool",
            "bedrock-converse/tool",
            json!({
                "toolSpec": {"name": "read_file", "description": "Read a file", "inputSchema": {"json": schema()}}
            }),
        ),
        Item::new(
            "bedrock result",
            "bedrock-converse/result",
            json!({
                "toolUseId": "tooluse_1", "content": [{"text": "hi"}, {"json": {"lines": 1}}]
            }),
        ),
        Item::new(
            "bedrock result, error",
            "bedrock-converse/result",
            json!({
                "toolUseId": "tooluse_1", "content": [{"text": "no such file"}], "status": "error"
            }),
        ),
        Item::new(
            "mistral tool",
            "mistral/tool",
            json!({
                "type": "function",
                "function": {"name": "read_file", "description": "Read a file", "parameters": schema()}
            }),
        ),
        Item::new(
            "mistral result",
            "mistral/result",
            json!({
                "role": "tool", "tool_call_id": "D681PevKs", "name": "read_file", "content": "hi"
            }),
        ),
        Item::new(
            "gateway tool via sdk_type",
            "some-gateway/tool@openai-chat/tool",
            json!({
                "type": "function", "function": {"name": "read_file", "parameters": schema()}
            }),
        ),
    ]
}

#[test]
fn known_good_items_pass() {
    check(&known_good()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn failures_are_reported_per_item() {
    let items = vec![
        Item::new(
            "chat tool, nested extra",
            "openai-chat/tool",
            json!({
                "type": "function", "function": {"name": "read_file", "parameters": schema(), "extra": 1}
            }),
        ),
        Item::new(
            "responses tool without strict",
            "openai-responses/tool",
            json!({
                "type": "function", "name": "read_file", "parameters": schema()
            }),
        ),
        Item::new(
            "fine",
            "mistral/result",
            json!({"role": "tool", "content": "hi"}),
        ),
    ];
    let err = check(&items).expect_err("two items are invalid");
    assert!(
        err.contains("chat tool, nested extra") && err.contains("$.function.extra"),
        "{err}"
    );
    assert!(
        err.contains("responses tool without strict") && err.contains("'strict'"),
        "{err}"
    );
    assert!(!err.contains("FAIL fine"), "{err}");
    assert!(err.contains("1 passed, 2 failed"), "{err}");
}

#[test]
fn unknown_check_is_a_harness_error() {
    let err = check(&[Item::new("x", "nope/tool", json!({}))]).expect_err("unknown check");
    assert!(
        err.contains("harness error") && err.contains("unknown check"),
        "{err}"
    );
}
