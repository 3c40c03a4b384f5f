//! The providers beyond the big APIs: Cohere v2 chat and the Gemini Interactions API
//! (wire formats of their own) and the compatible APIs (variants of openai-chat,
//! openai-responses and anthropic). Their sources, their listings of the public corpus
//! (what `check` says of every tool), their answers to every result fixture, their
//! sampling bodies, recorded responses read back, and each documented quirk as a row
//! of a table: the request the provider refuses is never produced, the response shape
//! it sends is read right.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::mcp::{CreateMessageParams, StopReason, ToolChoiceMode};
use mcp_adapters::sampling::SamplingOptions;
use mcp_adapters::spec::ToolChoiceParam;
use mcp_adapters::{
    CallToolResult, ErrorKind, ListOptions, Listing, Outcome, ResultOptions, StrictMode, Tool,
    ToolSet,
};
use serde_json::{Map, Value, json};

/// Every provider id this file is about.
const NEW: &[&str] = &[
    "azure-openai",
    "cerebras",
    "cohere",
    "deepseek",
    "fireworks",
    "gemini-interactions",
    "gemini-openai",
    "groq",
    "huggingface",
    "minimax",
    "moonshot",
    "ollama-openai",
    "openrouter",
    "qwen",
    "together",
    "vllm",
    "xai",
    "zai",
];

/// The providers of `NEW` that offer `media: full`.
fn with_media_option() -> Vec<&'static str> {
    NEW.iter()
        .copied()
        .filter(|id| provider(id).options().any(|(name, _)| name == "media"))
        .collect()
}

fn corpus_hub() -> ToolSet {
    let mut builder = ToolSet::hub();
    for server in corpus_servers() {
        builder = builder.server(&server, corpus_tools(&server));
    }
    builder.build().unwrap()
}

#[test]
fn every_new_provider_is_built_in_with_dated_sources() {
    for id in NEW {
        let p = provider(id);
        let sources: Vec<_> = p.sources().collect();
        assert!(!sources.is_empty(), "{id} names no source");
        for (url, checked, _) in &sources {
            assert!(!url.is_empty(), "{id}");
            let date: Vec<&str> = checked.split('-').collect();
            assert!(
                date.len() == 3 && date.iter().all(|d| d.chars().all(|c| c.is_ascii_digit())),
                "{id}: {checked}"
            );
        }
        let info = p.info();
        assert!(info["sources"].is_array(), "{id}: {info}");
        assert!(p.source().starts_with("built-in"), "{id}");
    }
}

/// What `check` says of every tool of the public corpus, per provider: as is, converted
/// (the provider's schema rules rewrote it), strict, a fallback or excluded, and why.
#[test]
fn the_corpus_checked_for_every_new_provider() {
    let toolset = corpus_hub();
    for id in NEW {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap_or_else(|e| panic!("{id}: {e:#}"));
        let issue = |list: &[mcp_adapters::listing::StrictIssue], name: &str| {
            list.iter()
                .find(|i| i.exposed_name == name)
                .map(|i| format!("{} at {}", i.reason, i.path))
        };
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut rows = Map::new();
        for tool in toolset.tools() {
            let name = tool.exposed_name.as_str();
            let (status, why) = if let Some(why) = issue(&listing.report.unsupported, name) {
                ("excluded", Some(why))
            } else if let Some(why) = issue(&listing.report.excluded, name) {
                ("excluded", Some(why))
            } else if let Some(why) = issue(&listing.report.fallbacks, name) {
                ("fallback", Some(why))
            } else if listing.is_strict(name) {
                ("strict", None)
            } else if listing.is_rewritten(name) {
                ("converted", None)
            } else {
                ("as is", None)
            };
            *counts.entry(status).or_default() += 1;
            if status != "as is" && status != "strict" {
                rows.insert(name.to_owned(), json!({"status": status, "why": why}));
            }
        }
        let listed = listing.tools.len();
        assert_eq!(
            listed + listing.report.unsupported.len() + listing.report.excluded.len(),
            toolset.len(),
            "{id}: every tool is listed or reported"
        );
        snapshot(
            Stage::Listing,
            Some(id),
            "corpus_check",
            json!({"counts": counts, "not_as_is": rows}),
        );
    }
}

/// The tool definitions of one corpus server, per provider (the wire formats of their
/// own list the whole corpus in tests/listing.rs).
#[test]
fn one_server_listed_by_every_variant() {
    let toolset = ToolSet::client()
        .server("everything", corpus_tools("everything"))
        .build()
        .unwrap();
    for id in NEW {
        if LISTING_PROVIDERS.contains(id) {
            continue;
        }
        snapshot(Stage::Listing, Some(id), "everything", listed(id, &toolset));
    }
}

/// A recording under `fixtures/recorded/<provider>/`: the body as the provider sent it,
/// and its `.expected.json` (source and calls).
struct Recorded {
    provider: String,
    case: String,
    body: Value,
    expected: Value,
}

fn recorded() -> Vec<Recorded> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorded");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        let provider = dir.file_name().unwrap().to_str().unwrap().to_owned();
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            let Some(case) = name.strip_suffix(".json") else {
                continue;
            };
            if case.ends_with(".expected") {
                continue;
            }
            out.push(Recorded {
                provider: provider.clone(),
                case: case.replace('.', "_"),
                body: read_json(&path),
                expected: read_json(&path.with_file_name(format!("{case}.expected.json"))),
            });
        }
    }
    out.sort_by(|a, b| (&a.provider, &a.case).cmp(&(&b.provider, &b.case)));
    out
}

fn offering(names: &[&str]) -> ToolSet {
    let tools: Vec<Tool> = names
        .iter()
        .map(|n| Tool::new(*n, "", json!({"type": "object"})))
        .collect();
    ToolSet::client().server("s", tools).build().unwrap()
}

/// Recorded responses read to the calls they hold, and (where the provider reads
/// sampling responses) to the MCP result a server would get.
#[test]
fn recorded_responses_read_to_their_calls() {
    let recordings = recorded();
    assert!(recordings.len() >= 11, "{} recordings", recordings.len());
    for rec in recordings {
        let what = format!("{}/{}", rec.provider, rec.case);
        assert!(
            rec.expected["source"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{what}: no source"
        );
        let expected = rec.expected["calls"].as_array().unwrap();
        let mut names: Vec<&str> = expected
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        names.push("never_called");
        let listing = provider(&rec.provider)
            .list_tools(
                &offering(&names),
                &ListOptions::new().strict(StrictMode::Off),
            )
            .unwrap();
        let extracted = provider(&rec.provider)
            .extract_calls(&rec.body, &listing)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        assert!(
            extracted.rejected.is_empty(),
            "{what}: {:?}",
            extracted.rejected
        );
        let got: Vec<Value> = extracted
            .calls
            .iter()
            .map(|c| json!({"id": c.call_id, "name": c.tool, "arguments": c.arguments}))
            .collect();
        assert_eq!(got, *expected, "{what}");
        snapshot(Stage::Calls, Some(&rec.provider), &rec.case, &extracted);
        let p = provider(&rec.provider);
        if !p.supports_sampling() {
            continue;
        }
        let mut params = CreateMessageParams::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Go"}}],
            "maxTokens": 100
        }))
        .unwrap();
        params.tools = Some(
            names
                .iter()
                .map(|n| Tool::new(*n, "", json!({"type": "object"})))
                .collect(),
        );
        let request = p
            .sampling_request(&params, &SamplingOptions::new("model-1"))
            .unwrap();
        let result = p
            .sampling_result(&rec.body, &request)
            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
        assert_eq!(result.tool_uses().count(), expected.len(), "{what}");
        if !expected.is_empty() {
            assert_eq!(result.stop_reason, Some(StopReason::ToolUse), "{what}");
        }
        let value = serde_json::to_value(&result).unwrap();
        let mut s = settings();
        s.set_snapshot_suffix(&rec.case);
        s.set_description(format!("tests/compatible.rs: recorded {what}"));
        s.set_omit_expression(true);
        s.bind(|| {
            insta::assert_json_snapshot!(format!("9-sampling_result-{}", rec.provider), value)
        });
    }
}

/// Every result fixture answered by every new provider, with its media option off and on.
#[test]
fn result_shapes() {
    let media = with_media_option();
    insta::glob!("fixtures/results/*.json", |path| {
        let result: CallToolResult = serde_json::from_value(read_json(path)).unwrap();
        let mut answers = Map::new();
        for id in NEW {
            let answer = provider(id)
                .answer(
                    Some("call_1"),
                    "srv__tool",
                    Outcome::Completed(&result),
                    &ResultOptions::default(),
                )
                .unwrap_or_else(|e| panic!("{id}: {e:#}"));
            answers.insert(id.to_string(), answer);
        }
        for id in &media {
            let turn = provider(id)
                .answer_all(
                    [(Some("call_1"), "srv__tool", Outcome::Completed(&result))],
                    &ResultOptions::new().option("media", "full"),
                )
                .unwrap_or_else(|e| panic!("{id}: {e:#}"));
            answers.insert(
                format!("{id} media=full"),
                json!({"results": turn.results, "follow_ups": turn.follow_ups}),
            );
        }
        snapshot(
            Stage::Results,
            Some("compatible"),
            &case_name(path),
            answers,
        );
    });
}

/// Each variant's sampling bodies for every request fixture (the wire formats of their own
/// have one snapshot per request in tests/sampling.rs).
#[test]
fn sampling_bodies_of_every_variant() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sampling/requests");
    let mut requests: Vec<(String, CreateMessageParams)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            (
                stem(&path),
                CreateMessageParams::from_value(read_json(&path)).unwrap(),
            )
        })
        .collect();
    requests.sort_by(|a, b| a.0.cmp(&b.0));
    for id in NEW {
        if LISTING_PROVIDERS.contains(id) {
            continue;
        }
        let mut bodies = Map::new();
        for (case, params) in &requests {
            let value =
                match provider(id).sampling_request(params, &SamplingOptions::new("model-1")) {
                    Ok(request) => json!({"body": request.body, "warnings": request.warnings}),
                    Err(e) => json!({"error": e.to_string()}),
                };
            bodies.insert(case.clone(), value);
        }
        let mut s = settings();
        s.set_snapshot_suffix("all_requests");
        s.set_description("tests/compatible.rs: sampling_bodies_of_every_variant");
        s.set_omit_expression(true);
        s.bind(|| insta::assert_json_snapshot!(format!("8-sampling_request-{id}"), bodies));
    }
}

fn request(json_params: Value) -> CreateMessageParams {
    CreateMessageParams::from_value(json_params).unwrap()
}

fn weather_request(choice: &str) -> CreateMessageParams {
    request(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}],
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "toolChoice": {"mode": choice},
        "maxTokens": 100
    }))
}

/// A history with a tool use and its result, under a server's own call id.
fn history(meta: Option<Value>) -> CreateMessageParams {
    let mut assistant = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]});
    if let Some(meta) = meta {
        assistant["_meta"] = meta;
    }
    request(json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
            assistant,
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "call_1",
                "content": [{"type": "text", "text": "Sunny"}]}]}
        ],
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
        "maxTokens": 100
    }))
}

fn body(id: &str, params: &CreateMessageParams) -> Value {
    provider(id)
        .sampling_request(params, &SamplingOptions::new("m"))
        .unwrap_or_else(|e| panic!("{id}: {e:#}"))
        .body
}

/// The schemas every listed tool carries.
fn schemas(listing: &Listing) -> Vec<Value> {
    listing
        .tools
        .iter()
        .map(|t| {
            t.pointer("/function/parameters")
                .or_else(|| t.get("parameters"))
                .or_else(|| t.get("input_schema"))
                .cloned()
                .unwrap()
        })
        .collect()
}

/// Whether any node of `value` has `key` (optionally holding `equals`).
fn has_key(value: &Value, key: &str, test: &dyn Fn(&Value) -> bool) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (k == key && test(v)) || has_key(v, key, test)),
        Value::Array(items) => items.iter().any(|v| has_key(v, key, test)),
        _ => false,
    }
}

/// The quirks the reference notes and the providers' documentation name, each a row:
/// the request the provider refuses is never produced; the shape it sends is read right.
#[test]
fn quirks_table() {
    let corpus = corpus_hub();
    let listing = |id: &str| listed(id, &corpus);

    // Tool choices: what each provider can say, and what it cannot.
    let choices: &[(&str, ToolChoiceMode, Option<Value>)] = &[
        // Fireworks wants `any` for a forced call (BerriAI/litellm#4416), as Mistral does.
        ("fireworks", ToolChoiceMode::Required, Some(json!("any"))),
        ("mistral", ToolChoiceMode::Required, Some(json!("any"))),
        // Cohere: REQUIRED and NONE; auto is no tool_choice at all.
        ("cohere", ToolChoiceMode::Required, Some(json!("REQUIRED"))),
        ("cohere", ToolChoiceMode::None, Some(json!("NONE"))),
        (
            "gemini-interactions",
            ToolChoiceMode::Required,
            Some(json!("any")),
        ),
        // No `required` at DeepSeek (thinking mode), Moonshot, Z.ai or Ollama's OpenAI endpoint.
        ("deepseek", ToolChoiceMode::Required, None),
        ("moonshot", ToolChoiceMode::Required, None),
        ("zai", ToolChoiceMode::Required, None),
        ("ollama-openai", ToolChoiceMode::Required, None),
    ];
    for (id, mode, want) in choices {
        match (provider(id).tool_choice(mode), want) {
            (Ok(ToolChoiceParam::Value(got)), Some(want)) => assert_eq!(&got, want, "{id} {mode}"),
            (Err(e), None) => assert_eq!(e.kind(), ErrorKind::Input, "{id} {mode}"),
            (other, _) => panic!("{id} {mode}: {other:?}"),
        }
        let sampled = provider(id).sampling_request(
            &weather_request(&mode.to_string()),
            &SamplingOptions::new("m"),
        );
        match want {
            Some(_) => assert!(sampled.is_ok(), "{id}: {sampled:?}"),
            None => assert!(
                sampled.unwrap_err().to_string().contains("cannot express"),
                "{id}"
            ),
        }
    }
    // Ollama's OpenAI endpoint never gets a tool_choice (its compatibility page lists it as
    // unsupported; LiteLLM: it hangs the native API); none leaves the tools out.
    for mode in ["auto", "none"] {
        let b = body("ollama-openai", &weather_request(mode));
        assert!(b.get("tool_choice").is_none(), "{b}");
        assert_eq!(b.get("tools").is_some(), mode == "auto", "{b}");
    }
    assert_eq!(
        provider("cohere")
            .tool_choice(&ToolChoiceMode::Auto)
            .unwrap(),
        ToolChoiceParam::Omit
    );
    // Z.ai and Hugging Face have no `none`: the tools are left out.
    for id in ["zai", "huggingface"] {
        let b = body(id, &weather_request("none"));
        assert!(
            b.get("tools").is_none() && b.get("tool_choice").is_none(),
            "{id}: {b}"
        );
    }

    // Strict mode: never sent where the provider has none (xAI always decodes strictly and
    // LiteLLM strips the flag; Moonshot, DeepSeek's standard endpoint, Ollama, ...).
    for id in [
        "xai",
        "groq",
        "deepseek",
        "moonshot",
        "qwen",
        "zai",
        "fireworks",
        "together",
        "vllm",
        "gemini-openai",
        "ollama-openai",
        "huggingface",
        "cohere",
        "gemini-interactions",
    ] {
        let l = listing(id);
        assert!(
            l.tools.iter().all(|t| !has_key(t, "strict", &|_| true)),
            "{id} sends strict"
        );
        assert_eq!(provider(id).strict_rules(), None, "{id}");
    }
    // Cerebras: strict tools exist, off unless asked.
    assert!(
        listing("cerebras")
            .tools
            .iter()
            .all(|t| t["function"]["strict"] == false)
    );
    let asked = provider("cerebras")
        .list_tools(&corpus, &ListOptions::new().strict(StrictMode::Auto))
        .unwrap();
    assert!(asked.tools.iter().any(|t| t["function"]["strict"] == true));

    // Schema subsets: what the provider refuses is never in a listed schema.
    let gemini = schemas(&listing("gemini-openai"));
    for key in [
        "additionalProperties",
        "$schema",
        "const",
        "$ref",
        "$defs",
        "propertyNames",
        "oneOf",
    ] {
        assert!(
            !gemini.iter().any(|s| has_key(s, key, &|_| true)),
            "gemini-openai lists {key}"
        );
    }
    assert!(
        !gemini.iter().any(|s| has_key(s, "type", &Value::is_array)),
        "a type list"
    );
    let qwen = schemas(&listing("qwen"));
    assert!(
        !qwen
            .iter()
            .any(|s| has_key(s, "$ref", &|_| true) || has_key(s, "$defs", &|_| true))
    );
    let subset = |id: &str, schema: Value| -> Result<Value, String> {
        let tools =
            parse_tools_list(json!({"tools": [{"name": "t", "inputSchema": schema}]})).unwrap();
        let toolset = ToolSet::client().server("s", tools).build().unwrap();
        let l = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        match l.report.unsupported.first() {
            Some(issue) => Err(format!("{} at {}", issue.reason, issue.path)),
            None => Ok(schemas(&l).remove(0)),
        }
    };
    // Moonshot's MFJS: an object root, tuple items as prefixItems, anyOf types in the branches.
    assert_eq!(
        subset("moonshot", json!({"type": "string"})),
        Err("root_not_object at ".into())
    );
    assert_eq!(
        subset(
            "moonshot",
            json!({"type": "object", "properties": {
            "p": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]},
            "v": {"type": "string", "anyOf": [{"format": "date"}, {"maxLength": 3}]}}})
        ),
        Ok(json!({"type": "object", "properties": {
            "p": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
            "v": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "maxLength": 3}]}}}))
    );
    // xAI: "non-circular references only".
    let recursive = json!({"type": "object", "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}},
        "properties": {"head": {"$ref": "#/$defs/n"}}});
    assert_eq!(
        subset("xai", recursive.clone()),
        Err("recursive_ref at /$defs/n/properties/next/$ref".into())
    );
    assert!(subset("openai-chat", recursive).is_ok());
    // Gemini's OpenAPI subset: const as enum, a type list as nullable, formats described.
    assert_eq!(
        subset(
            "gemini-openai",
            json!({"type": "object", "additionalProperties": false, "properties": {
            "k": {"const": "x"}, "n": {"type": ["integer", "null"]}, "u": {"type": "string", "format": "uuid"}}})
        ),
        Ok(json!({"type": "object", "properties": {
            "k": {"type": "string", "enum": ["x"]}, "n": {"type": "integer", "nullable": true},
            "u": {"type": "string", "description": "Format: uuid"}}}))
    );

    // Cohere sends "null" arguments for a tool without parameters: {}.
    let one = offering(&["currentTime"]);
    let cohere = provider("cohere")
        .list_tools(&one, &ListOptions::new())
        .unwrap();
    let calls = provider("cohere")
        .extract_calls(
            &json!({"message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "currentTime", "arguments": "null"}}]}, "finish_reason": "TOOL_CALL"}),
            &cohere,
        )
        .unwrap();
    assert_eq!(calls.calls[0].arguments, Map::new());

    // xAI ends a tool-call turn with finish_reason "": toolUse with calls, no reason without.
    let xai_request = provider("xai")
        .sampling_request(&weather_request("auto"), &SamplingOptions::new("m"))
        .unwrap();
    let answer = |tool_calls: Value| {
        json!({"choices": [{"index": 0, "finish_reason": "",
        "message": {"role": "assistant", "content": "", "tool_calls": tool_calls}}]})
    };
    let with_call = provider("xai")
        .sampling_result(
            &answer(json!([{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}])),
            &xai_request,
        )
        .unwrap();
    assert_eq!(with_call.stop_reason, Some(StopReason::ToolUse));
    let without = provider("xai")
        .sampling_result(&answer(json!(null)), &xai_request)
        .unwrap();
    assert_eq!(without.stop_reason, None);
    // Elsewhere an empty reason is kept as sent.
    let chat_request = provider("openai-chat")
        .sampling_request(&weather_request("auto"), &SamplingOptions::new("m"))
        .unwrap();
    let kept = provider("openai-chat")
        .sampling_result(&answer(json!(null)), &chat_request)
        .unwrap();
    assert_eq!(kept.stop_reason, Some(StopReason::Other(String::new())));

    // DeepSeek's thinking mode: reasoning_content comes back in the result's _meta and goes out
    // on the assistant message; a history without it gets the single space DeepSeek takes.
    let ds = provider("deepseek")
        .sampling_request(&weather_request("auto"), &SamplingOptions::new("m"))
        .unwrap();
    let read = provider("deepseek")
        .sampling_result(&json!({"model": "deepseek-v4", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": "", "reasoning_content": "Paris first.",
                "tool_calls": [{"id": "call_00_x", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}}]}), &ds)
        .unwrap();
    let meta = read.meta.clone().unwrap();
    assert_eq!(meta["mcp-adapters/reasoning-content"], "Paris first.");
    let sent = body("deepseek", &history(Some(Value::Object(meta))));
    assert_eq!(
        sent["messages"][1]["reasoning_content"], "Paris first.",
        "{sent}"
    );
    let sent = body("deepseek", &history(None));
    assert_eq!(sent["messages"][1]["reasoning_content"], " ", "{sent}");
    // Moonshot and Z.ai send it back when the history has it, and nothing otherwise.
    for id in ["moonshot", "zai"] {
        let sent = body(
            id,
            &history(Some(json!({"mcp-adapters/reasoning-content": "Hm."}))),
        );
        assert_eq!(
            sent["messages"][1]["reasoning_content"], "Hm.",
            "{id}: {sent}"
        );
        let sent = body(id, &history(None));
        assert!(
            sent["messages"][1].get("reasoning_content").is_none(),
            "{id}: {sent}"
        );
    }
    // OpenRouter calls it `reasoning`, and takes max_tokens.
    let sent = body(
        "openrouter",
        &history(Some(json!({"mcp-adapters/reasoning": "Hm."}))),
    );
    assert_eq!(sent["messages"][1]["reasoning"], "Hm.");
    assert!(sent.get("max_tokens").is_some() && sent.get("max_completion_tokens").is_none());

    // Mistral's call ids are 9 letters and digits: the history's `call_1` is made one, the
    // same in the tool use and in the result that answers it.
    let sent = body("mistral", &history(None));
    let id = sent["messages"][1]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()),
        "{id}"
    );
    assert_eq!(sent["messages"][2]["tool_call_id"], json!(id));
    assert_eq!(body("mistral", &history(None)), sent, "the same every time");

    // Z.ai takes one stop word: stop sequences are left out with a warning, never sent as a list.
    let stops = request(
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
        "stopSequences": ["a", "b"], "maxTokens": 10}),
    );
    let z = provider("zai")
        .sampling_request(&stops, &SamplingOptions::new("m"))
        .unwrap();
    assert!(
        z.body.get("stop").is_none() && z.warnings.iter().any(|w| w.contains("stopSequences")),
        "{:?}",
        z.warnings
    );
    // MiniMax ignores stop sequences and takes no image: neither is sent.
    let m = provider("minimax")
        .sampling_request(&stops, &SamplingOptions::new("m"))
        .unwrap();
    assert!(m.body.get("stop_sequences").is_none());
    let image = request(
        json!({"messages": [{"role": "user", "content": {"type": "image", "mimeType": "image/png",
        "data": "iVBORw0KGgo="}}], "maxTokens": 10}),
    );
    assert_eq!(
        provider("minimax")
            .sampling_request(&image, &SamplingOptions::new("m"))
            .unwrap_err()
            .kind(),
        ErrorKind::Input
    );

    // Media: Azure's and Qwen's Chat Completions take no file parts; Hugging Face's and MiniMax's
    // answers are text.
    let pdf: CallToolResult =
        serde_json::from_value(fixture("results/resource_blob_pdf.json")).unwrap();
    for id in ["azure-openai", "qwen"] {
        let turn = provider(id)
            .answer_all(
                [(Some("c"), "t", Outcome::Completed(&pdf))],
                &ResultOptions::new().option("media", "full"),
            )
            .unwrap();
        assert!(turn.follow_ups.is_empty(), "{id}: {:?}", turn.follow_ups);
    }
    let png: CallToolResult = serde_json::from_value(fixture("results/image_png.json")).unwrap();
    for id in ["huggingface", "minimax"] {
        let answer = provider(id)
            .answer(
                Some("c"),
                "t",
                Outcome::Completed(&png),
                &ResultOptions::default(),
            )
            .unwrap();
        assert!(
            answer.to_string().contains("[image: image/png"),
            "{id}: {answer}"
        );
    }
    // Gemini Interactions: images in the result; a failure marked is_error.
    let answer = provider("gemini-interactions")
        .answer(
            Some("c"),
            "t",
            Outcome::Completed(&png),
            &ResultOptions::default(),
        )
        .unwrap();
    assert_eq!(answer["result"][1]["type"], "image", "{answer}");
    let failed: CallToolResult = serde_json::from_value(fixture("results/is_error.json")).unwrap();
    let answer = provider("gemini-interactions")
        .answer(
            Some("c"),
            "t",
            Outcome::Completed(&failed),
            &ResultOptions::default(),
        )
        .unwrap();
    assert_eq!(answer["is_error"], true, "{answer}");
}

/// Streams: Gemini Interactions' argument deltas under either field name the sources give;
/// Gemini's OpenAI endpoint's calls without an index; deltas of reasoning kept where the
/// next request must send them back.
#[test]
fn stream_quirks() {
    let toolset = offering(&["get_weather", "get_time"]);
    let read = |id: &str, text: &str| {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        let mut stream = provider(id).stream(&listing).unwrap();
        stream.push(text.as_bytes()).unwrap();
        stream.finish().unwrap()
    };
    let event = |v: Value| {
        format!(
            "event: {}\ndata: {v}\n\n",
            v["event_type"].as_str().unwrap()
        )
    };
    for field in ["arguments", "partial_arguments"] {
        let text: String = [
            json!({"event_type": "step.start", "index": 0, "step": {"type": "function_call", "id": "f1", "name": "get_weather", "arguments": {}}}),
            json!({"event_type": "step.delta", "index": 0, "delta": {"type": "arguments_delta", field: "{\"city\":"}}),
            json!({"event_type": "step.delta", "index": 0, "delta": {"type": "arguments_delta", field: " \"Paris\"}"}}),
            json!({"event_type": "step.stop", "index": 0}),
            json!({"event_type": "interaction.completed", "interaction": {"status": "requires_action"}}),
        ]
        .into_iter()
        .map(event)
        .collect();
        let streamed = read("gemini-interactions", &text);
        assert_eq!(streamed.extracted.calls.len(), 1, "{field}");
        assert_eq!(
            Value::Object(streamed.extracted.calls[0].arguments.clone()),
            json!({"city": "Paris"}),
            "{field}"
        );
    }
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    // Two calls in one delta, neither with an index: each id is its own call.
    let text = chunk(
        json!({"tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]}),
        json!(null),
    ) + &chunk(json!({}), json!("tool_calls"))
        + "data: [DONE]\n\n";
    let streamed = read("gemini-openai", &text);
    let ids: Vec<_> = streamed
        .extracted
        .calls
        .iter()
        .map(|c| c.call_id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    for (id, field) in [
        ("deepseek", "reasoning_content"),
        ("xai", "reasoning_content"),
        ("ollama-openai", "reasoning"),
        ("openrouter", "reasoning"),
    ] {
        let text = chunk(json!({field: "think"}), json!(null))
            + &chunk(json!({}), json!("stop"))
            + "data: [DONE]\n\n";
        assert_eq!(read(id, &text).message[field], "think", "{id}");
    }
}

/// The YAML blocks of the spec author's guide's second worked example, as the guide gives them:
/// (the file each names in its first comment line, its text).
fn worked_example() -> Vec<(String, String)> {
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec-authors-guide.md"),
    )
    .unwrap();
    let section = guide
        .split("## Worked example: a compatible API with two quirks")
        .nth(1)
        .expect("the guide has the worked example");
    section
        .split("```yaml\n")
        .skip(1)
        .map(|block| {
            let text = block.split("```").next().unwrap().to_string();
            let file = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# my-specs/"))
                .expect("each block names its file")
                .to_string();
            (file, text)
        })
        .collect()
}

#[test]
fn the_guides_worked_example_loads_and_does_what_it_says() {
    let blocks = worked_example();
    assert_eq!(
        blocks.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>(),
        ["rules/acme-schema.yaml", "acme.yaml"]
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("rules")).unwrap();
    for (file, text) in &blocks {
        // The guide's schema line is relative to the checkout; the folder here is elsewhere.
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    let registry = mcp_adapters::Registry::with_dir(dir.path()).unwrap();
    let acme = registry.get("acme").unwrap();
    assert_eq!(acme.schema_rules(), Some("acme-schema"));
    assert_eq!(acme.strict_rules(), None);
    assert_eq!(
        acme.tool_choice(&ToolChoiceMode::Required).unwrap(),
        ToolChoiceParam::Value(json!("any"))
    );
    let sources: Vec<_> = acme.sources().collect();
    assert_eq!(sources.len(), 1, "{sources:?}");

    // Its `$ref`s are inlined and no `strict` key is sent; a recursive schema is excluded.
    let tools = parse_tools_list(json!({"tools": [
        {"name": "find", "inputSchema": {"type": "object",
            "properties": {"where": {"$ref": "#/$defs/place"}},
            "$defs": {"place": {"type": "object", "properties": {"city": {"type": "string"}}}}}},
        {"name": "tree", "inputSchema": {"type": "object",
            "properties": {"node": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}}}
    ]}))
    .unwrap();
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let listing = acme.list_tools(&toolset, &ListOptions::new()).unwrap();
    assert_eq!(listing.tools.len(), 1, "{:#?}", listing.tools);
    let find = &listing.tools[0]["function"];
    assert_eq!(find["name"], "find");
    assert!(find.get("strict").is_none(), "{find}");
    assert_eq!(
        find["parameters"]["properties"]["where"]["properties"]["city"]["type"], "string",
        "{find}"
    );
    assert!(find["parameters"].get("$defs").is_none(), "{find}");
    assert!(listing.is_rewritten("find"));
    let excluded: Vec<_> = listing
        .report
        .unsupported
        .iter()
        .map(|i| i.tool.as_str())
        .collect();
    assert_eq!(excluded, ["tree"]);

    // A sampling request asking for a tool call carries `"tool_choice": "any"`.
    let body = acme
        .sampling_request(&weather_request("required"), &SamplingOptions::new("m"))
        .unwrap()
        .body;
    assert_eq!(body["tool_choice"], "any", "{body}");
}
