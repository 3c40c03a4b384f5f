//! Every tool definition, result answer and follow-up the providers emit
//! (with the `media` option off and on), and every sampling request body
//! built from `tests/fixtures/sampling/requests/`, validated against
//! the providers' official SDK types with unknown keys rejected (Python:
//! anthropic, openai, google-genai, botocore's bedrock-runtime shapes,
//! mistralai, cohere; see `tests/conformance/`). Variants are checked against their
//! base's type (`variant/kind@base/kind`), the compatible APIs against the API
//! they are compatible with. Ollama has no official typed SDK in the checker and
//! is not validated here.

mod common;

use common::conformance::{Item, RESULTS, TOOLS, check};
use common::*;
use mcp_adapters::CallToolResult;
use mcp_adapters::ToolSet;
use mcp_adapters::listing::ToolSearch;
use mcp_adapters::mcp::CreateMessageParams;
use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::results::StructuredMode;
use mcp_adapters::sampling::SamplingOptions;
use mcp_adapters::search::SearchCall;
use mcp_adapters::{Error, ErrorKind};
use mcp_adapters::{ListOptions, StrictMode};
use mcp_adapters::{Outcome, ResultOptions, Turn};
use serde_json::{Value, json};

/// The compatible APIs and Gemini Interactions with a `media` option, beside MEDIA_OPTIONS.
const COMPATIBLE_MEDIA: &[&str] = &[
    "gemini-interactions",
    "xai",
    "groq",
    "moonshot",
    "qwen",
    "openrouter",
    "azure-openai",
    "gemini-openai",
    "ollama-openai",
];

/// How a provider's follow-ups are checked: the one follow-up message itself
/// (OpenAI Chat and Mistral: a user message; Gemini: a user `Content`), or
/// the whole user message they end, answers first (Bedrock). The other
/// providers send none.
#[derive(Clone, Copy)]
enum FollowUps {
    Message(&'static str),
    Content(&'static str),
}

const FOLLOW_UPS: &[(&str, FollowUps)] = &[
    ("openai-chat", FollowUps::Message("openai-chat/follow_up")),
    ("mistral", FollowUps::Message("mistral/follow_up")),
    ("gemini", FollowUps::Message("gemini/follow_up")),
    (
        "gemini-multimodal",
        FollowUps::Message("gemini-multimodal/follow_up@gemini/follow_up"),
    ),
    (
        "bedrock-converse",
        FollowUps::Content("bedrock-converse/turn"),
    ),
    (
        "xai",
        FollowUps::Message("xai/follow_up@openai-chat/follow_up"),
    ),
    (
        "groq",
        FollowUps::Message("groq/follow_up@openai-chat/follow_up"),
    ),
    (
        "moonshot",
        FollowUps::Message("moonshot/follow_up@openai-chat/follow_up"),
    ),
    (
        "qwen",
        FollowUps::Message("qwen/follow_up@openai-chat/follow_up"),
    ),
    (
        "openrouter",
        FollowUps::Message("openrouter/follow_up@openai-chat/follow_up"),
    ),
    (
        "azure-openai",
        FollowUps::Message("azure-openai/follow_up@openai-chat/follow_up"),
    ),
    (
        "gemini-openai",
        FollowUps::Message("gemini-openai/follow_up@openai-chat/follow_up"),
    ),
    (
        "ollama-openai",
        FollowUps::Message("ollama-openai/follow_up@openai-chat/follow_up"),
    ),
];

/// The items a turn adds: each answer, and its follow-ups as the provider takes them.
fn turn_items(items: &mut Vec<Item>, id: &str, label: &str, check: &str, turn: Turn) {
    let how = FOLLOW_UPS
        .iter()
        .find(|(p, _)| *p == id)
        .map(|(_, how)| *how);
    for (i, answer) in turn.results.iter().enumerate() {
        let value = checked_value(id, answer.clone());
        items.push(Item::new(format!("{label} answer {i}"), check, value));
    }
    if turn.follow_ups.is_empty() {
        return;
    }
    let whole = || {
        let mut all = turn.results.clone();
        all.extend(turn.follow_ups.iter().cloned());
        json!({"role": "user", "content": all})
    };
    match how {
        Some(FollowUps::Message(check)) => {
            assert_eq!(turn.follow_ups.len(), 1, "{label}: one user message");
            items.push(Item::new(
                format!("{label} follow-ups"),
                check,
                turn.follow_ups[0].clone(),
            ));
        }
        Some(FollowUps::Content(check)) => {
            items.push(Item::new(format!("{label} turn"), check, whole()))
        }
        None => panic!("{label}: {id} sent follow-ups: {:?}", turn.follow_ups),
    }
}

/// The corpus servers, plus tools whose descriptions an API with a non-empty
/// rule would reject if they were sent.
fn toolsets() -> Vec<(String, ToolSet)> {
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
    // Arguments the application binds, left out of the schemas.
    toolsets.push(("bound".into(), bound_toolset()));
    toolsets
}

fn tool_items(items: &mut Vec<Item>) {
    for (server, toolset) in toolsets() {
        for (id, check) in TOOLS {
            for mode in [StrictMode::Auto, StrictMode::Off] {
                let listing = provider(id)
                    .list_tools(&toolset, &ListOptions::new().strict(mode))
                    .unwrap();
                for (i, tool) in listing.tools.into_iter().enumerate() {
                    let label = format!("{id} {server} #{i} strict={mode:?}");
                    items.push(Item::new(label, *check, tool));
                }
            }
        }
    }
}

/// Listings with the selection argument, strict and not, for two servers.
fn select_items(items: &mut Vec<Item>) {
    for (server, toolset) in toolsets().into_iter().take(2) {
        for (id, check) in TOOLS {
            for mode in [StrictMode::Auto, StrictMode::Off] {
                let options = ListOptions::new()
                    .strict(mode)
                    .select(mcp_adapters::select::SELECT_ARGUMENT);
                let listing = provider(id).list_tools(&toolset, &options).unwrap();
                for (i, tool) in listing.tools.into_iter().enumerate() {
                    let label = format!("{id} {server} #{i} strict={mode:?} select");
                    items.push(Item::new(label, *check, tool));
                }
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
            let result = serde_json::from_value(call["result"].clone()).unwrap();
            results.push((format!("{server}#{i}"), result));
        }
    }
    let failure = Error::new(ErrorKind::Denied, "denied by policy");
    for (id, check) in RESULTS {
        let answer = |outcome: Outcome<'_>, options: &ResultOptions| {
            let value = provider(id)
                .answer(Some("call_1"), "srv__tool", outcome, options)
                .unwrap();
            checked_value(id, value)
        };
        for (name, result) in &results {
            for mode in [
                StructuredMode::Auto,
                StructuredMode::Prefer,
                StructuredMode::Append,
            ] {
                let options = ResultOptions::new().structured(mode);
                let value = answer(Outcome::Completed(result), &options);
                items.push(Item::new(format!("{id} {name} {mode:?}"), *check, value));
            }
        }
        let value = answer(Outcome::Failed(&failure), &ResultOptions::default());
        items.push(Item::new(format!("{id} failure"), *check, value));
        // Cut to a budget: texts keep their head and tail, media their placeholders.
        for (name, result) in &results {
            let value = answer(
                Outcome::Completed(result),
                &ResultOptions::new().max_result_tokens(12),
            );
            items.push(Item::new(format!("{id} {name} budgeted"), *check, value));
        }
    }
    // With the media option: every result alone, in every mode, then all of them in one turn.
    let compatible = COMPATIBLE_MEDIA.iter().map(|id| (*id, "full"));
    let media: Vec<(&str, &str)> = MEDIA_OPTIONS.iter().copied().chain(compatible).collect();
    for (id, value) in &media {
        let check = RESULTS
            .iter()
            .find(|(p, _)| p == id)
            .map(|(_, c)| *c)
            .unwrap();
        let provider = provider(id);
        for (name, result) in &results {
            for mode in [
                StructuredMode::Auto,
                StructuredMode::Prefer,
                StructuredMode::Append,
            ] {
                let options = ResultOptions::new()
                    .option("media", *value)
                    .structured(mode);
                let turn = provider
                    .answer_all(
                        [(Some("call_1"), "srv__tool", Outcome::Completed(result))],
                        &options,
                    )
                    .unwrap();
                let label = format!("{id} media={value} {name} {mode:?}");
                turn_items(items, id, &label, check, turn);
            }
        }
        let ids: Vec<String> = (0..results.len()).map(|i| format!("call_{i}")).collect();
        let turn = provider
            .answer_all(
                results.iter().zip(&ids).map(|((_, result), call_id)| {
                    (
                        Some(call_id.as_str()),
                        "srv__tool",
                        Outcome::Completed(result),
                    )
                }),
                &ResultOptions::new().option("media", *value),
            )
            .unwrap();
        let label = format!("{id} media={value} every result in one turn");
        turn_items(items, id, &label, check, turn);
        let turn = provider
            .answer_all(
                results.iter().zip(&ids).map(|((_, result), call_id)| {
                    (
                        Some(call_id.as_str()),
                        "srv__tool",
                        Outcome::Completed(result),
                    )
                }),
                &ResultOptions::new()
                    .option("media", *value)
                    .max_result_tokens(400)
                    .max_turn_tokens(2_000),
            )
            .unwrap();
        let label = format!("{id} media={value} every result in one turn, budgeted");
        turn_items(items, id, &label, check, turn);
    }
}

/// Provider id and the checker's type for its sampling request bodies
/// (the SDKs' request-params types; Ollama has none in the checker).
const SAMPLING: &[(&str, &str)] = &[
    ("anthropic", "anthropic/sampling_request"),
    (
        "anthropic-strict",
        "anthropic-strict/sampling_request@anthropic/sampling_request",
    ),
    ("openai-chat", "openai-chat/sampling_request"),
    ("openai-responses", "openai-responses/sampling_request"),
    ("gemini", "gemini/sampling_request"),
    (
        "gemini-multimodal",
        "gemini-multimodal/sampling_request@gemini/sampling_request",
    ),
    ("bedrock-converse", "bedrock-converse/sampling_request"),
    ("mistral", "mistral/sampling_request"),
    ("cohere", "cohere/sampling_request"),
    (
        "gemini-interactions",
        "gemini-interactions/sampling_request",
    ),
    // The compatible APIs' bodies against the API they follow. Not checked: DeepSeek's (its
    // assistant messages carry `reasoning_content`), Fireworks' (`tool_choice: "any"`) and Hugging
    // Face's (tools without `strict`), which OpenAI's types do not have.
    ("xai", "xai/sampling_request@openai-chat/sampling_request"),
    ("groq", "groq/sampling_request@openai-chat/sampling_request"),
    (
        "moonshot",
        "moonshot/sampling_request@openai-chat/sampling_request",
    ),
    ("qwen", "qwen/sampling_request@openai-chat/sampling_request"),
    ("zai", "zai/sampling_request@openai-chat/sampling_request"),
    (
        "cerebras",
        "cerebras/sampling_request@openai-chat/sampling_request",
    ),
    (
        "together",
        "together/sampling_request@openai-chat/sampling_request",
    ),
    (
        "openrouter",
        "openrouter/sampling_request@openai-chat/sampling_request",
    ),
    ("vllm", "vllm/sampling_request@openai-chat/sampling_request"),
    (
        "azure-openai",
        "azure-openai/sampling_request@openai-chat/sampling_request",
    ),
    (
        "gemini-openai",
        "gemini-openai/sampling_request@openai-chat/sampling_request",
    ),
    (
        "ollama-openai",
        "ollama-openai/sampling_request@openai-chat/sampling_request",
    ),
    (
        "minimax",
        "minimax/sampling_request@anthropic/sampling_request",
    ),
];

/// The model a sampling body names: google-genai types the Interactions API's model as one of
/// its known names.
fn sampling_model(id: &str) -> &'static str {
    if id == "gemini-interactions" {
        "gemini-2.5-flash"
    } else {
        "model-1"
    }
}

/// Every sampling request fixture as each provider's body, with each
/// `media` option value too; requests a provider refuses (audio for
/// Anthropic, say) have no body to check and are skipped.
fn sampling_items(items: &mut Vec<Item>) -> usize {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sampling/requests");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let params = CreateMessageParams::from_value(read_json(&path)).unwrap();
        let case = stem(&path);
        for (id, check) in SAMPLING {
            let model = sampling_model(id);
            let mut variants = vec![("none", SamplingOptions::new(model))];
            let compatible = COMPATIBLE_MEDIA.iter().map(|p| (*p, "full"));
            for (p, value) in MEDIA_OPTIONS.iter().copied().chain(compatible) {
                if p == *id {
                    variants.push((value, SamplingOptions::new(model).option("media", value)));
                }
            }
            for (media, options) in variants {
                let Ok(request) = provider(id).sampling_request(&params, &options) else {
                    continue;
                };
                checked += 1;
                let label = format!("{id} sampling {case} media={media}");
                items.push(Item::new(label, *check, request.body));
            }
        }
    }
    checked
}

/// A Bedrock answer is the ContentBlock union `{"toolResult": ToolResultBlock}`;
/// the checker's type is the ToolResultBlock inside, so nothing else may sit beside it.
fn checked_value(id: &str, answer: Value) -> Value {
    if id != "bedrock-converse" {
        return answer;
    }
    let obj = answer.as_object().expect("an object");
    assert_eq!(obj.len(), 1, "one ContentBlock member: {answer}");
    obj["toolResult"].clone()
}

/// Listings with deferred tools (corpus servers, everything deferred but the
/// first tool) and the answers to a search, for every provider with an SDK
/// type: deferred definitions, the search tools, namespaces, and the search
/// answers (`tool_reference` blocks, `tool_search_output`, ordinary answers).
fn deferred_items(items: &mut Vec<Item>) {
    let mut hub = ToolSet::hub();
    for server in ["github", "time", "memory", "sqlite"] {
        hub = hub.server(server, corpus_tools(server));
    }
    let hub = hub.build().unwrap();
    let base = ListOptions::new().defer("*").load("time/get_*");
    let check_of = |id: &str, def: &Value, plain: &str| -> String {
        match (id, def["type"].as_str()) {
            ("anthropic", Some("tool_search_tool_bm25_20251119")) => {
                "anthropic/search_tool_bm25".into()
            }
            ("anthropic", Some("tool_search_tool_regex_20251119")) => {
                "anthropic/search_tool_regex".into()
            }
            ("openai-responses", Some("namespace")) => "openai-responses/namespace".into(),
            ("openai-responses", Some("tool_search")) => "openai-responses/tool_search".into(),
            _ => plain.to_owned(),
        }
    };
    let mut cases: Vec<(&str, ListOptions)> = Vec::new();
    for (id, _) in TOOLS {
        cases.push((id, base.clone()));
    }
    cases.push((
        "anthropic",
        base.clone().search(ToolSearch::Server("bm25".into())),
    ));
    cases.push((
        "anthropic",
        base.clone().search(ToolSearch::Server("regex".into())),
    ));
    cases.push(("anthropic", base.clone().search(ToolSearch::Library)));
    cases.push((
        "openai-responses",
        base.clone().search(ToolSearch::Server("hosted".into())),
    ));
    cases.push(("openai-responses", base.clone().search(ToolSearch::Library)));
    cases.push(("openai-responses", base.clone().namespaces(false)));
    for (n, (id, options)) in cases.into_iter().enumerate() {
        let provider = provider(id);
        let plain = TOOLS.iter().find(|(p, _)| *p == id).unwrap().1;
        let listing = provider.list_tools(&hub, &options).unwrap();
        for (i, def) in listing.tools.iter().enumerate() {
            let label = format!("{id} deferred case {n} #{i}");
            items.push(Item::new(label, check_of(id, def, plain), def.clone()));
        }
        if matches!(listing.tool_search(), Some(ToolSearch::Server(_))) {
            continue;
        }
        let call = SearchCall::new(Some("call_1".into()), "create a table in the database");
        let answer = provider.answer_search(&call, &listing, |_| true).unwrap();
        let result = RESULTS.iter().find(|(p, _)| *p == id).map(|(_, c)| *c);
        let check = match (id, answer.answer["type"].as_str()) {
            ("openai-responses", Some("tool_search_output")) => "openai-responses/search_output",
            _ => match result {
                Some(check) => check,
                None => continue,
            },
        };
        let value = checked_value(id, answer.answer);
        items.push(Item::new(
            format!("{id} deferred case {n} search answer"),
            check,
            value,
        ));
    }
}

#[test]
fn emitted_json_validates_against_the_official_sdk_types() {
    let mut items = Vec::new();
    deferred_items(&mut items);
    tool_items(&mut items);
    select_items(&mut items);
    result_items(&mut items);
    let bodies = sampling_items(&mut items);
    assert!(bodies > 80, "{bodies} sampling bodies");
    assert!(items.len() > 8000, "{} items", items.len());
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
        (
            "openai-chat/follow_up",
            json!({"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "QUJD", "format": "aac"}}]}),
        ),
        (
            "openai-chat/follow_up",
            json!({"role": "user", "content": [{"type": "file", "file": {"file_data": "QUJD", "file_url": "https://x"}}]}),
        ),
        (
            "mistral/follow_up",
            json!({"role": "user", "content": [{"type": "document", "document_url": "data:application/pdf;base64,QUJD"}]}),
        ),
        (
            "gemini/follow_up",
            json!({"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "QUJD", "displayNames": "x"}}]}),
        ),
        (
            "bedrock-converse/turn",
            json!({"role": "user", "content": [{"document": {"format": "pages", "name": "a", "source": {"bytes": "QUJD"}}}]}),
        ),
        (
            "bedrock-converse/turn",
            json!({"role": "user", "content": [{"text": "x", "video": {"format": "mp4", "source": {"bytes": "QUJD"}}}]}),
        ),
        // Cohere: tool content is text or documents; its chat takes no max_completion_tokens.
        (
            "cohere/result",
            json!({"role": "tool", "tool_call_id": "c", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}),
        ),
        (
            "cohere/sampling_request",
            json!({"model": "m", "messages": [], "max_completion_tokens": 5}),
        ),
        // Gemini Interactions: no unknown keys in a result; a result is not user_input content.
        (
            "gemini-interactions/result",
            json!({"type": "function_result", "call_id": "c", "result": "x", "extra": 1}),
        ),
        (
            "gemini-interactions/sampling_request",
            json!({"model": "gemini-2.5-flash", "input": [{"type": "user_input", "content": [{"type": "function_result", "call_id": "c", "result": "x"}]}]}),
        ),
        // Sampling bodies: what each API has no place for.
        (
            "anthropic/sampling_request",
            json!({"model": "m", "max_tokens": 5, "messages": [], "temperature": 0.5}),
        ),
        (
            "openai-responses/sampling_request",
            json!({"model": "m", "input": [], "stop": ["x"]}),
        ),
        (
            "openai-responses/sampling_request",
            json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,QUJD"}]}]}),
        ),
        (
            "gemini/sampling_request",
            json!({"model": "m", "contents": []}),
        ),
        (
            "bedrock-converse/sampling_request",
            json!({"modelId": "m", "messages": []}),
        ),
        (
            "mistral/sampling_request",
            json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "QUJD"}}]}]}),
        ),
        (
            "openai-chat/sampling_request",
            json!({"model": "m", "messages": [{"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}),
        ),
    ];
    for (check_type, value) in bad {
        let label = format!("{check_type} {value}");
        let result = check(&[Item::new(label.clone(), check_type, value)]);
        assert!(result.is_err(), "accepted: {label}");
    }
}
