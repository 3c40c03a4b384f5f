//! Sampling conversion for every built-in provider: each request under
//! `tests/fixtures/sampling/requests/` as the provider's body (or the error
//! that refuses it), with the `media` option off and on, and the recorded
//! responses under `tests/fixtures/sampling/responses/` read back as MCP
//! results. Snapshots: `8-sampling_request-<provider>@<case>` and
//! `9-sampling_result-<provider>@<case>`.

mod common;

use std::path::Path;

use common::*;
use mcp_adapters::mcp::{CreateMessageParams, SamplingContent, StopReason};
use mcp_adapters::sampling::{PreparedSampling, SamplingOptions};
use serde_json::{Value, json};

/// A variant and the base it inherits its sampling section from, with the
/// request cases where its body differs (its tools or its tool results).
const VARIANTS: &[(&str, &str, &[&str])] = &[
    (
        "anthropic-strict",
        "anthropic",
        &[
            "mcp_follow_up_with_tool_results",
            "mcp_request_with_tools",
            "tool_results_media",
            "choice_required",
            "choice_none_after_tools",
        ],
    ),
    ("gemini-multimodal", "gemini", &["tool_results_media"]),
];

fn snap(stage: &str, provider: &str, case: &str, value: &Value) {
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let mut s = settings();
    s.set_snapshot_suffix(case);
    s.set_description(format!("tests/sampling.rs: {test}"));
    s.set_omit_expression(true);
    s.bind(|| insta::assert_json_snapshot!(format!("{stage}-{provider}"), value));
}

fn params(path: &Path) -> CreateMessageParams {
    CreateMessageParams::from_value(read_json(path))
        .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn options() -> SamplingOptions {
    SamplingOptions::new("test-model")
}

/// The body and warnings, or the error, as a snapshot value.
fn converted(id: &str, params: &CreateMessageParams, options: &SamplingOptions) -> Value {
    match provider(id).sampling_request(params, options) {
        Ok(request) => json!({"body": request.body, "warnings": request.warnings}),
        Err(e) => json!({"error": e.to_string(), "kind": format!("{:?}", e.kind())}),
    }
}

#[test]
fn request_bodies() {
    insta::glob!("fixtures/sampling/requests/*.json", |path| {
        let case = case_name(path);
        let params = params(path);
        for id in LISTING_PROVIDERS {
            snap(
                "8-sampling_request",
                id,
                &case,
                &converted(id, &params, &options()),
            );
        }
        for (variant, base, differs) in VARIANTS {
            let value = converted(variant, &params, &options());
            if differs.contains(&case.as_str()) {
                snap("8-sampling_request", variant, &case, &value);
            } else {
                // Errors name the provider: the variant's is the base's but for its id.
                let value = value.to_string().replace(variant, base);
                assert_eq!(
                    value,
                    converted(base, &params, &options()).to_string(),
                    "{variant} {case}"
                );
            }
        }
    });
}

/// With `media` = `full`, the tool results' media go where each API takes
/// them: inside the answers, or after them (OpenAI Chat and Mistral: a user
/// message after the tool messages; Gemini: a user Content after the
/// functionResponse one; Bedrock: blocks after the toolResult blocks).
#[test]
fn request_bodies_with_full_media() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sampling/requests/tool_results_media.json");
    let params = params(&path);
    for (id, value) in MEDIA_OPTIONS {
        let options = options().option("media", *value);
        let case = format!("tool_results_media-media_{value}");
        snap(
            "8-sampling_request",
            id,
            &case,
            &converted(id, &params, &options),
        );
    }
}

/// The request a recorded response answers: the MCP example with a
/// `get_weather` tool (the recordings call `get_weather`; Ollama's
/// documentation example calls `get_current_weather`, offered here too).
fn weather_request(id: &str) -> PreparedSampling {
    let mut params = fixture("sampling/requests/mcp_request_with_tools.json");
    let mut other = params["tools"][0].clone();
    other["name"] = json!("get_current_weather");
    params["tools"].as_array_mut().unwrap().push(other);
    let params = CreateMessageParams::from_value(params).unwrap();
    provider(id)
        .sampling_request(&params, &options())
        .unwrap_or_else(|e| panic!("{id}: {e:#}"))
}

#[test]
fn recorded_responses() {
    for id in LISTING_PROVIDERS {
        let request = weather_request(id);
        for case in ["text", "tool_use"] {
            let response = fixture(&format!("sampling/responses/{id}/{case}.json"));
            let result = provider(id)
                .sampling_result(&response, &request)
                .unwrap_or_else(|e| panic!("{id} {case}: {e:#}"));
            let value = serde_json::to_value(&result).unwrap();
            snap("9-sampling_result", id, case, &value);
            let calls = result.tool_uses().count();
            assert_eq!(calls > 0, case == "tool_use", "{id} {case}");
            let want = if case == "tool_use" {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            };
            assert_eq!(result.stop_reason, Some(want), "{id} {case}");
            // The result is what the server gets: it reads back as MCP.
            let again: mcp_adapters::mcp::CreateMessageResult =
                serde_json::from_value(value).unwrap();
            assert_eq!(again, result, "{id} {case}");
        }
    }
}

/// A tool whose name the providers would refuse is offered under the
/// toolset's name, and the model's call of it comes back under the
/// server's; the history's tool uses are renamed the same way.
#[test]
fn tool_names_are_the_servers_on_both_sides() {
    let params = params(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sampling/requests/tool_results_media.json"),
    );
    for id in [
        "anthropic",
        "openai-chat",
        "openai-responses",
        "gemini",
        "bedrock-converse",
        "mistral",
    ] {
        let request = provider(id).sampling_request(&params, &options()).unwrap();
        let body = request.body.to_string();
        assert!(body.contains("\"weather_forecast_chart\""), "{id}: {body}");
        assert!(!body.contains("weather.forecast_chart"), "{id}: {body}");
        let renamed = &request.listing().unwrap().report.toolset.renamed;
        assert_eq!(renamed[0].tool, "weather.forecast_chart", "{id}");
        let response = model_response(
            id,
            &[("weather_forecast_chart".into(), json!({"city": "Bergen"}))],
        );
        let result = provider(id).sampling_result(&response, &request).unwrap();
        let call = result.tool_uses().next().unwrap();
        assert_eq!(call.name, "weather.forecast_chart", "{id}");
        assert_eq!(call.input["city"], "Bergen", "{id}");
    }
}

/// Gemini's thoughtSignature goes from the response into the tool use's
/// `_meta`, and from there into the next request's functionCall part.
#[test]
fn gemini_thought_signatures_round_trip() {
    let gemini = provider("gemini");
    let request = weather_request("gemini");
    let response = fixture("sampling/responses/gemini/tool_use.json");
    let signature = response["candidates"][0]["content"]["parts"][0]["thoughtSignature"].clone();
    let result = gemini.sampling_result(&response, &request).unwrap();
    let call = result.tool_uses().next().unwrap().clone();
    assert_eq!(call.id, "call_0", "the recording's call has no id");
    assert_eq!(
        call.meta.as_ref().unwrap()["mcp-adapters/gemini-thought-signature"],
        signature
    );
    let mut next = fixture("sampling/requests/mcp_request_with_tools.json");
    next["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": result.content}),
        json!({"role": "user", "content": [{"type": "tool_result", "toolUseId": call.id,
            "content": [{"type": "text", "text": "18°C"}]}]}),
    ]);
    let next = CreateMessageParams::from_value(next).unwrap();
    let body = gemini.sampling_request(&next, &options()).unwrap().body;
    let parts = &body["contents"][1]["parts"];
    assert_eq!(parts[0]["thoughtSignature"], signature, "{body}");
    assert_eq!(parts[0]["functionCall"]["id"], "call_0", "{body}");
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["id"], "call_0",
        "{body}"
    );
}

/// What each provider does with a request field or mode it cannot express.
#[test]
fn unsupported_fields_warn_or_fail_as_each_spec_says() {
    let stops = params(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sampling/requests/stop_temperature.json"),
    );
    let responses = provider("openai-responses")
        .sampling_request(&stops, &options())
        .unwrap();
    assert!(responses.body.get("stop").is_none(), "{}", responses.body);
    assert!(
        responses
            .warnings
            .iter()
            .any(|w| w.contains("stopSequences")),
        "{:?}",
        responses.warnings
    );
    for id in LISTING_PROVIDERS {
        let request = provider(id).sampling_request(&stops, &options()).unwrap();
        assert!(
            request.warnings.iter().any(|w| w.contains("`metadata`")),
            "{id}: {:?}",
            request.warnings
        );
        assert!(
            !request.body.to_string().contains("u-42"),
            "{id}: metadata sent"
        );
    }
    let required = params(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sampling/requests/choice_required.json"),
    );
    let err = provider("ollama")
        .sampling_request(&required, &options())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot express `toolChoice: required`"),
        "{err}"
    );
    let none = params(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sampling/requests/choice_none_after_tools.json"),
    );
    let bedrock = provider("bedrock-converse")
        .sampling_request(&none, &options())
        .unwrap();
    assert!(
        bedrock.body["toolConfig"]["tools"].is_array(),
        "{}",
        bedrock.body
    );
    assert!(
        bedrock.body["toolConfig"].get("toolChoice").is_none(),
        "{}",
        bedrock.body
    );
    assert_eq!(bedrock.warnings.len(), 1, "{:?}", bedrock.warnings);
    let mut fresh = none.clone();
    fresh.messages.truncate(1);
    let bedrock = provider("bedrock-converse")
        .sampling_request(&fresh, &options())
        .unwrap();
    assert!(bedrock.body.get("toolConfig").is_none(), "{}", bedrock.body);
}

/// `SamplingOptions::merge` adds to and takes from the body; `strict` switches strict tools.
#[test]
fn options_shape_the_body() {
    let tools = params(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sampling/requests/mcp_request_with_tools.json"),
    );
    let extra = json!({"store": false, "max_output_tokens": null, "reasoning": {"effort": "low"}});
    let options = options().merge(extra.as_object().unwrap().clone());
    let body = provider("openai-responses")
        .sampling_request(&tools, &options)
        .unwrap()
        .body;
    assert_eq!(body["store"], false);
    assert_eq!(body["reasoning"]["effort"], "low");
    assert!(body.get("max_output_tokens").is_none(), "{body}");
    assert_eq!(
        body["tools"][0]["strict"], false,
        "sampling tools are not strict by default"
    );
    let strict = provider("openai-chat")
        .sampling_request(
            &tools,
            &SamplingOptions::new("m").strict(mcp_adapters::StrictMode::Auto),
        )
        .unwrap();
    assert_eq!(
        strict.body["tools"][0]["function"]["strict"], true,
        "{}",
        strict.body
    );
    assert_eq!(
        provider("anthropic-strict")
            .sampling_request(&tools, &SamplingOptions::new("m"))
            .unwrap()
            .body["tools"][0]["strict"],
        true
    );
}

/// Strict tools make the model send `null` for optional arguments; the
/// result's tool uses have them stripped again, as extracted calls do.
#[test]
fn strict_nulls_are_stripped_from_results() {
    let tools = params(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sampling/requests/tool_results_media.json"),
    );
    let chat = provider("openai-chat");
    let request = chat
        .sampling_request(
            &tools,
            &SamplingOptions::new("m").strict(mcp_adapters::StrictMode::Auto),
        )
        .unwrap();
    let response = model_response(
        "openai-chat",
        &[(
            "weather_forecast_chart".into(),
            json!({"city": "Oslo", "days": null}),
        )],
    );
    let result = chat.sampling_result(&response, &request).unwrap();
    let call = result.tool_uses().next().unwrap();
    assert_eq!(Value::Object(call.input.clone()), json!({"city": "Oslo"}));
}

/// Media a provider returns (Gemini's image models) become MCP image blocks.
#[test]
fn returned_media_are_image_blocks() {
    let request = weather_request("gemini");
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Here:"}, {"thought": true, "text": "drawing"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}, "finishReason": "STOP"}],
        "modelVersion": "gemini-2.5-flash-image"});
    let result = provider("gemini")
        .sampling_result(&response, &request)
        .unwrap();
    assert_eq!(result.content.len(), 2, "{:?}", result.content);
    assert!(matches!(&result.content[1], SamplingContent::Image(m) if m.mime_type == "image/png"));
    assert_eq!(result.model, "gemini-2.5-flash-image");
    assert_eq!(result.stop_reason, Some(StopReason::EndTurn));
}
