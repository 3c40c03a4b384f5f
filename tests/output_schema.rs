//! Structured results checked against the tool's `outputSchema`
//! (`ExecOptions::output_schema`): a result that breaks it is answered as an
//! error naming where and why (its answer pinned per provider), or passed on
//! with a warning, or not checked; and the real servers' recorded results
//! (`fixtures/corpus/*.calls.json`) all pass the check.

mod common;

use common::*;
use mcp_adapters::exec::OutputSchemaCheck;
use mcp_adapters::*;
use serde_json::{Map, Value, json};

fn weather_tool() -> Tool {
    let mut tool = Tool::new(
        "weather",
        "The weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    );
    tool.output_schema = Some(json!({
        "type": "object",
        "properties": {
            "temperature": {"type": "number"},
            "conditions": {"type": "string", "enum": ["sunny", "rain", "snow"]}
        },
        "required": ["temperature", "conditions"]
    }));
    tool
}

/// A server whose `weather` answers with `structured` (none when `Null`).
fn source(structured: Value) -> Source {
    let server = InProcessServer::new().tool(weather_tool(), move |_args, _ctx| {
        let structured = structured.clone();
        async move {
            let mut result = CallToolResult::text(structured.to_string());
            result.structured_content = (!structured.is_null()).then_some(structured);
            Ok(result)
        }
    });
    Source::client("wx", server).build().unwrap()
}

fn run(provider_id: &str, source: &Source, check: OutputSchemaCheck) -> Execution {
    let provider = provider(provider_id);
    current_thread_runtime().block_on(async {
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        let name = &listing.toolset().tools()[0].exposed_name;
        let response = match provider_id {
            "anthropic" => json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {"city": "Oslo"}}]}),
            _ => provider_response(provider_id, name),
        };
        source
            .execute_tool_calls(
                provider,
                &response,
                &listing,
                &ExecOptions::new().output_schema(check),
            )
            .await
            .unwrap()
    })
}

/// A response calling `name` once, in `id`'s own shape.
fn provider_response(id: &str, name: &str) -> Value {
    match id {
        "openai-chat" => json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{\"city\":\"Oslo\"}"}}
        ]}}]}),
        "openai-responses" => json!({"output": [
            {"type": "function_call", "call_id": "call_1", "name": name, "arguments": "{\"city\":\"Oslo\"}"}
        ]}),
        "gemini" => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "call_1", "name": name, "args": {"city": "Oslo"}}}
        ]}}]}),
        other => panic!("no response written for {other}"),
    }
}

#[test]
fn a_result_that_breaks_its_output_schema_is_answered_as_an_error_naming_where() {
    let bad = json!({"temperature": "warm", "conditions": "fog"});
    let source = source(bad.clone());
    let mut answers = Map::new();
    for id in CORE_PROVIDERS {
        let run = run(id, &source, OutputSchemaCheck::Enforce);
        let record = &run.calls[0];
        let error = record.error.as_ref().expect("an error");
        assert_eq!(error.kind(), ErrorKind::InvalidResult, "{id}");
        let message = error.to_string();
        // Where and which rule, never the value: the result is not passed
        // on, and what it holds does not reach the model through the error.
        assert!(
            message.contains("/temperature: breaks `type: \"number\"`")
                && message.contains("/conditions: breaks `enum: "),
            "{id}: {message}"
        );
        let answer = run.turn.results[0].to_string();
        assert!(
            !message.contains("warm") && !answer.contains("warm") && !answer.contains("fog"),
            "{id}: {message} / {answer}"
        );
        // The result stays in the record; the model is not shown it.
        assert!(record.ran, "{id}");
        assert_eq!(
            record.result.as_ref().unwrap().structured_content,
            Some(bad.clone())
        );
        assert_eq!(
            run.ran_servers.len(),
            1,
            "{id}: the error names the result's paths"
        );
        answers.insert(id.to_string(), run.turn.results[0].clone());
    }
    snapshot(Stage::Exec, None, "output_schema_broken", answers);
}

#[test]
fn warn_passes_the_result_on_and_off_does_not_check() {
    let source = source(json!({"temperature": "warm", "conditions": "fog"}));
    for check in [OutputSchemaCheck::Warn, OutputSchemaCheck::Off] {
        let run = run("anthropic", &source, check);
        assert!(run.calls[0].error.is_none(), "{check:?}");
        assert_eq!(
            run.turn.results[0]["content"][0]["text"],
            "{\"temperature\":\"warm\",\"conditions\":\"fog\"}"
        );
        let warnings = &run.calls[0].warnings;
        match check {
            OutputSchemaCheck::Warn => assert!(
                warnings.len() == 1
                    && warnings[0].starts_with("the result breaks the tool's outputSchema and was passed on as it is: /temperature"),
                "{warnings:?}"
            ),
            _ => assert!(warnings.is_empty(), "{warnings:?}"),
        }
    }
}

#[test]
fn a_conforming_result_passes_and_a_missing_one_is_an_error() {
    let run_ok = run(
        "anthropic",
        &source(json!({"temperature": 4.5, "conditions": "rain"})),
        OutputSchemaCheck::Enforce,
    );
    assert!(run_ok.calls[0].error.is_none(), "{:?}", run_ok.calls[0]);

    let run_missing = run(
        "anthropic",
        &source(Value::Null),
        OutputSchemaCheck::Enforce,
    );
    let error = run_missing.calls[0].error.as_ref().unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidResult);
    assert!(
        error
            .to_string()
            .contains("it has no `structuredContent`, though the tool declares an `outputSchema`"),
        "{error}"
    );
}

/// Every recorded result of a real server's tool that declares an
/// `outputSchema`, answered again through the pipeline with the check on:
/// none is turned away.
#[test]
fn the_recorded_results_of_real_servers_pass() {
    let mut checked = 0;
    for server in ["everything", "memory", "sqlite", "time"] {
        let tools = fixture(&format!("corpus/{server}.tools.json"));
        let tools = tools
            .get("tools")
            .unwrap_or(&tools)
            .as_array()
            .unwrap()
            .clone();
        let calls = fixture(&format!("corpus/{server}.calls.json"));
        for call in calls.as_array().unwrap() {
            let name = call["tool"].as_str().unwrap();
            let Some(tool) = tools.iter().find(|t| t["name"] == name) else {
                continue;
            };
            if tool.get("outputSchema").is_none() || call["result"]["isError"] == true {
                continue;
            }
            let tool: Tool = serde_json::from_value(tool.clone()).unwrap();
            let result: CallToolResult = serde_json::from_value(call["result"].clone()).unwrap();
            let in_process = InProcessServer::new().tool(tool, move |_args, _ctx| {
                let result = result.clone();
                async move { Ok(result) }
            });
            let source = Source::client(server, in_process).build().unwrap();
            let provider = provider("anthropic");
            let run = current_thread_runtime().block_on(async {
                let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
                let response = json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": call["arguments"]}]});
                source
                    .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                    .await
                    .unwrap()
            });
            assert!(
                run.calls[0].error.is_none(),
                "{server}/{name}: {:?}",
                run.calls[0].error
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 5,
        "only {checked} recorded results have an outputSchema"
    );
    println!("{checked} recorded results checked against their tools' outputSchema");
}
