//! Result shaping for each core provider: every media row, errors, structured
//! modes, and every `tools/call` result in the public corpus.

mod common;

use common::*;
use mcp_adapters::{
    CallToolResult, Error, ErrorKind, Outcome, ResultOptions, Shape, StructuredMode,
};
use serde_json::{Map, Value, json};

fn answer(id: &str, call_id: &str, result: &CallToolResult, options: &ResultOptions) -> Value {
    provider(id)
        .answer(
            Some(call_id),
            "srv__tool",
            Outcome::Completed(result),
            options,
        )
        .unwrap()
}

fn parse(value: Value) -> CallToolResult {
    serde_json::from_value(value).expect("a CallToolResult")
}

/// Every fixture under `fixtures/results/`, answered by each provider.
#[test]
fn media_rows() {
    insta::glob!("fixtures/results/*.json", |path| {
        let result = parse(read_json(path));
        let answers: Map<String, Value> = ANSWER_PROVIDERS
            .iter()
            .map(|id| {
                (
                    id.to_string(),
                    answer(id, "call_1", &result, &ResultOptions::default()),
                )
            })
            .collect();
        snapshot(Stage::Results, None, &case_name(path), answers);
    });
}

/// Without shaping for a model, unsupported media reach the provider mapping,
/// which still only places the types its table accepts.
#[test]
fn shape_none_keeps_content_for_the_media_table() {
    let result = parse(fixture("results/audio_wav.json"));
    let none = ResultOptions::new().shape(Shape::None);
    let llm = ResultOptions::default();
    for id in ANSWER_PROVIDERS {
        assert_eq!(
            answer(id, "c", &result, &none),
            answer(id, "c", &result, &llm),
            "{id}"
        );
    }
    let svg = parse(fixture("results/image_svg.json"));
    let shaped = answer("anthropic", "c", &svg, &none);
    assert_eq!(
        shaped["content"][0]["type"], "text",
        "SVG is never an image block: {shaped}"
    );
}

#[test]
fn structured_modes() {
    let results = ["structured_only", "structured_and_text", "structured_list"];
    let modes = [
        StructuredMode::Auto,
        StructuredMode::Prefer,
        StructuredMode::Append,
        StructuredMode::Ignore,
    ];
    let mut all = Map::new();
    for name in results {
        let result = parse(fixture(&format!("results/{name}.json")));
        for id in ANSWER_PROVIDERS {
            let per_mode: Map<String, Value> = modes
                .iter()
                .map(|&m| {
                    let options = ResultOptions::new().structured(m);
                    (
                        serde_json::to_value(m)
                            .unwrap()
                            .as_str()
                            .unwrap()
                            .to_owned(),
                        answer(id, "c", &result, &options),
                    )
                })
                .collect();
            all.insert(format!("{name} {id}"), Value::Object(per_mode));
        }
    }
    snapshot(Stage::Results, None, "structured_modes", all);
}

#[test]
fn failures_and_error_prefix() {
    let err = Error::new(ErrorKind::Timeout, "the call took longer than 300000 ms");
    let mut all = Map::new();
    for id in ANSWER_PROVIDERS {
        let default = provider(id)
            .answer(
                Some("c"),
                "srv__tool",
                Outcome::Failed(&err),
                &ResultOptions::default(),
            )
            .unwrap();
        let custom = ResultOptions::new().error_prefix("TOOL FAILED: ");
        let prefixed = provider(id)
            .answer(Some("c"), "srv__tool", Outcome::Failed(&err), &custom)
            .unwrap();
        all.insert(
            id.to_string(),
            json!({"default": default, "custom_prefix": prefixed}),
        );
    }
    snapshot(Stage::Results, None, "failures", all);
}

#[test]
fn gemini_answers_without_an_id_carry_only_the_name() {
    let result = CallToolResult::text("ok");
    let answer = provider("gemini")
        .answer(
            None,
            "srv__tool",
            Outcome::Completed(&result),
            &ResultOptions::default(),
        )
        .unwrap();
    assert_eq!(
        answer,
        json!({"functionResponse": {"name": "srv__tool", "response": {"output": "ok"}}})
    );
    let err = provider("anthropic")
        .answer(
            None,
            "t",
            Outcome::Completed(&result),
            &ResultOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
}

/// Every `tools/call` result of the public corpus, answered by each provider.
#[test]
fn corpus_results() {
    insta::glob!("fixtures/corpus/*.calls.json", |path| {
        let calls = read_json(path);
        for id in ANSWER_PROVIDERS {
            let answers: Vec<Value> = calls
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, call)| {
                    let result = parse(call["result"].clone());
                    json!({"tool": call["tool"], "answer": answer(id, &format!("call_{i}"), &result, &ResultOptions::default())})
                })
                .collect();
            snapshot(Stage::Results, Some(id), &case_name(path), answers);
        }
    });
}
