//! What sampling conversion refuses, and how it says so: requests that break
//! MCP's rules or hold what a provider cannot take, responses that are not
//! answers, and `sampling:` sections that would lose part of a request.
//! One table each, one line per case.

mod common;

use common::*;
use mcp_adapters::mcp::CreateMessageParams;
use mcp_adapters::sampling::SamplingOptions;
use mcp_adapters::spec::SpecFile;
use mcp_adapters::{ErrorKind, Registry};
use serde_json::{Value, json};

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn user(content: Value) -> Value {
    json!({"role": "user", "content": content})
}

fn assistant(content: Value) -> Value {
    json!({"role": "assistant", "content": content})
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "get_weather", "input": {"city": "Oslo"}})
}

fn tool_result(id: &str) -> Value {
    json!({"type": "tool_result", "toolUseId": id, "content": [text("3°C")]})
}

fn image(mime: &str, data: &str) -> Value {
    json!({"type": "image", "mimeType": mime, "data": data})
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn weather_tool() -> Value {
    json!({"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}})
}

/// A request of `messages` (and `extra` fields) for at most 100 tokens.
fn request(messages: Vec<Value>, extra: Value) -> CreateMessageParams {
    let mut params = json!({"messages": messages, "maxTokens": 100, "tools": [weather_tool()]});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    CreateMessageParams::from_value(params).unwrap()
}

/// Provider, request, the error's path and a phrase of its message.
type RequestCase = (
    &'static str,
    CreateMessageParams,
    &'static str,
    &'static str,
);

#[test]
fn requests_that_cannot_be_sent_are_input_errors_naming_their_place() {
    let none = json!({});
    let big = "A".repeat(5_200_000);
    let cases: Vec<RequestCase> = vec![
        // MCP's own rules (client/sampling.mdx): answered with -32602.
        (
            "openai-chat",
            request(vec![], none.clone()),
            "/messages",
            "no messages",
        ),
        (
            "openai-chat",
            request(
                vec![
                    user(text("hi")),
                    assistant(json!([tool_use("c1")])),
                    user(json!([tool_result("c1"), text("and?")])),
                ],
                none.clone(),
            ),
            "/messages/2",
            "mixes tool_result blocks with other content",
        ),
        (
            "openai-chat",
            request(
                vec![
                    user(text("hi")),
                    assistant(json!([tool_use("c1")])),
                    user(text("well?")),
                ],
                none.clone(),
            ),
            "/messages/2",
            "does not answer tool use `c1` of message 1",
        ),
        (
            "openai-chat",
            request(
                vec![user(text("hi")), assistant(json!([tool_use("c1")]))],
                none.clone(),
            ),
            "/messages/1",
            "no message answers them",
        ),
        (
            "openai-chat",
            request(
                vec![
                    user(text("hi")),
                    assistant(json!([tool_use("c1")])),
                    user(json!([tool_result("c1"), tool_result("c2")])),
                ],
                none.clone(),
            ),
            "/messages/2",
            "answers tool use `c2`, which message 1 does not call",
        ),
        (
            "openai-chat",
            request(
                vec![user(text("hi")), user(json!([tool_result("c1")]))],
                none.clone(),
            ),
            "/messages/1",
            "the message before it calls no tools",
        ),
        (
            "openai-chat",
            request(vec![user(json!([tool_use("c1")]))], none.clone()),
            "/messages/0/content/0",
            "a tool_use block is the assistant's",
        ),
        (
            "openai-chat",
            request(
                vec![user(text("hi")), assistant(json!([tool_result("c1")]))],
                none.clone(),
            ),
            "/messages/1/content/0",
            "a tool_result block is the user's",
        ),
        (
            "openai-chat",
            request(
                vec![
                    user(text("hi")),
                    assistant(json!([tool_use("c1"), tool_use("c1")])),
                ],
                none.clone(),
            ),
            "/messages/1",
            "uses the id `c1` twice",
        ),
        // Content a provider does not take.
        (
            "anthropic",
            request(
                vec![user(
                    json!([{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}]),
                )],
                none.clone(),
            ),
            "/messages/0/content/0",
            "takes no audio in user messages",
        ),
        (
            "anthropic",
            request(
                vec![user(json!([image("image/svg+xml", "PHN2Zz4=")]))],
                none.clone(),
            ),
            "/messages/0/content/0",
            "does not take image of type image/svg+xml in user messages; it takes image/jpeg, image/png, image/gif, image/webp",
        ),
        (
            "gemini",
            request(
                vec![user(json!([image("image/png", "not base64!")]))],
                none.clone(),
            ),
            "/messages/0/content/0",
            "not valid base64",
        ),
        (
            "bedrock-converse",
            request(vec![user(json!([image("image/png", &big)]))], none.clone()),
            "/messages/0/content/0",
            "is over provider `bedrock-converse`'s limit of 3750000 bytes",
        ),
        (
            "openai-chat",
            request(
                vec![
                    user(text("draw")),
                    assistant(json!([image("image/png", PNG)])),
                    user(text("again")),
                ],
                none.clone(),
            ),
            "/messages/1/content/0",
            "takes no image in assistant messages",
        ),
        (
            "ollama",
            request(
                vec![user(json!([{"type": "video", "data": "AAAA"}]))],
                none.clone(),
            ),
            "/messages/0/content/0",
            "a `video` block is not sampling content",
        ),
        // Tools and tool choices.
        (
            "openai-chat",
            request(
                vec![user(text("hi"))],
                json!({"tools": [weather_tool(), weather_tool()]}),
            ),
            "/tools/1",
            "tool `get_weather` cannot be offered: an earlier tool of the request has the same name",
        ),
        (
            "ollama",
            request(
                vec![user(text("hi"))],
                json!({"toolChoice": {"mode": "required"}}),
            ),
            "/toolChoice/mode",
            "cannot express `toolChoice: required`",
        ),
        (
            "anthropic",
            request(
                vec![user(text("hi"))],
                json!({"toolChoice": {"mode": "any"}}),
            ),
            "/toolChoice/mode",
            "not one of auto, required and none",
        ),
    ];
    for (id, params, path, phrase) in cases {
        let err = provider(id)
            .sampling_request(&params, &SamplingOptions::new("m"))
            .expect_err(phrase);
        assert_eq!(err.kind(), ErrorKind::Input, "{id} {phrase}: {err}");
        assert_eq!(
            err.location().path.as_deref(),
            Some(path),
            "{id} {phrase}: {err}"
        );
        assert!(err.to_string().contains(phrase), "{id}: {err}");
    }
}

#[test]
fn responses_that_are_not_answers_are_errors() {
    let tools = request(vec![user(text("hi"))], json!({}));
    let chat = provider("openai-chat");
    let request = chat
        .sampling_request(&tools, &SamplingOptions::new("m"))
        .unwrap();
    let call = |arguments: &str| {
        json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]}}]})
    };
    let cases: Vec<(&str, Value, ErrorKind, &str)> = vec![
        (
            "openai-chat",
            call("{\"city\": "),
            ErrorKind::InvalidArguments,
            "the call of `get_weather` (id `call_9`): the arguments are not valid JSON",
        ),
        (
            "openai-chat",
            call("[1]"),
            ErrorKind::InvalidArguments,
            "must be a JSON object",
        ),
        (
            "openai-chat",
            json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
            ErrorKind::Input,
            "answered with an error: Rate limit reached",
        ),
        (
            "openai-chat",
            json!({"candidates": []}),
            ErrorKind::Input,
            "not a `openai-chat` response",
        ),
        (
            "openai-chat",
            json!("hello"),
            ErrorKind::Input,
            "expected a `openai-chat` response object",
        ),
        (
            "openai-chat",
            json!({"choices": [{"message": {"content": 7}}]}),
            ErrorKind::Input,
            "`choices/0/message/content` is a number: expected text or a list of items",
        ),
    ];
    for (id, response, kind, phrase) in cases {
        let err = provider(id)
            .sampling_result(&response, &request)
            .expect_err(phrase);
        assert_eq!(err.kind(), kind, "{phrase}: {err}");
        assert!(err.to_string().contains(phrase), "{err}");
    }
    let err = provider("mistral")
        .sampling_result(&call("{}"), &request)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("read the response with the provider that built the request"),
        "{err}"
    );
    let twice = json!({"content": [
        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}},
        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}], "stop_reason": "tool_use"});
    let anthropic = provider("anthropic")
        .sampling_request(&tools, &SamplingOptions::new("m"))
        .unwrap();
    let err = provider("anthropic")
        .sampling_result(&twice, &anthropic)
        .unwrap_err();
    assert_eq!(err.location().call_id.as_deref(), Some("t1"), "{err}");
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let err = provider("anthropic")
        .sampling_result(&overloaded, &anthropic)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("provider `anthropic` answered with an error: Overloaded"),
        "{err}"
    );
    let bedrock = provider("bedrock-converse")
        .sampling_request(&tools, &SamplingOptions::new("m"))
        .unwrap();
    let err = provider("bedrock-converse")
        .sampling_result(
            &json!({"message": "The security token included in the request is invalid."}),
            &bedrock,
        )
        .unwrap_err();
    assert!(err.to_string().contains("security token"), "{err}");
}

/// A minimal spec with a `sampling:` section; cases edit its text.
const SPEC: &str = r#"title: Test
tools:
  definition: {name: "${name}", parameters: "${schema}"}
calls:
  locate: [items]
  select: {path: type, equals: call}
  id: id
  name: name
  arguments: {path: args, format: object}
results:
  content: string
  envelope: {id: "${call_id}", content: "${content}"}
sampling:
  request: {model: "${model}", messages: "${messages}", max_tokens: "${max_tokens}", tools: "${tools?}", choice: "${tool_choice?}"}
  ignore: [system, temperature, metadata]
  messages:
    user:
      content: string
      envelope: {role: user, content: "${content}"}
    assistant:
      content: string
      envelope: {role: assistant, content: "${content?}", calls: "${tool_calls?}"}
    tool_use: {into: tool_calls, item: {id: "${id}", name: "${name}", args: "${input}"}}
    tool_results: messages
  tool_choice: {auto: auto}
  response:
    content: [text, items]
    stop_reason: {from: [stop], map: {done: endTurn}}
"#;

fn load(text: &str) -> mcp_adapters::Result<Registry> {
    Registry::from_files(vec![SpecFile::provider("t", "t.yaml", text)])
}

#[test]
fn sampling_sections_that_would_lose_a_request_do_not_load() {
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("max_tokens unplaced", SPEC.replace(r#" max_tokens: "${max_tokens}","#, ""), "/sampling/request", "must place ${max_tokens}"),
        ("messages unplaced", SPEC.replace(r#" messages: "${messages}","#, ""), "/sampling/request", "must place ${messages}"),
        ("tools unplaced", SPEC.replace(r#" tools: "${tools?}","#, ""), "/sampling/request", "must place ${tools}"),
        ("unknown variable", SPEC.replace(r#"{role: user, content: "${content}"}"#, r#"{role: user, content: "${contnet}"}"#), "/sampling/messages/user/envelope/content", "unknown variable `contnet`; known here: content, attachments, tool_calls"),
        ("envelope loses the content", SPEC.replace(r#"{role: user, content: "${content}"}"#, "{role: user}"), "/sampling/messages/user/envelope", "must place ${content}"),
        ("ignored and placed", SPEC.replace("ignore: [system, temperature", r#"ignore: [system, temperature, stop_sequences"#).replace(r#"choice: "${tool_choice?}""#, r#"choice: "${tool_choice?}", stop: "${stop_sequences?}""#), "/sampling/ignore/2", "cannot also be ignored"),
        ("tool calls unplaced", SPEC.replace(r#", calls: "${tool_calls?}""#, ""), "/sampling/messages/assistant/envelope", "${tool_calls}"),
        ("tool uses into a string", SPEC.replace("into: tool_calls", "into: content"), "/sampling/messages/tool_use/into", "one string"),
        ("results into a string", SPEC.replace("tool_results: messages", "tool_results: content"), "/sampling/messages/tool_results", "one string"),
        ("a tool use without arguments", SPEC.replace(r#", args: "${input}""#, ""), "/sampling/messages/tool_use/item", "${input} or ${arguments}"),
        ("a meta variable that clashes", SPEC.replace(r#"args: "${input}"}}"#, r#"args: "${input}"}, meta: {name: x}}"#), "/sampling/messages/tool_use/meta/name", "cannot name a variable"),
        ("a tool choice with a variable", SPEC.replace("{auto: auto}", r#"{auto: "${model}"}"#), "/sampling/tool_choice/auto", "unknown variable `model`"),
        ("a tool choice nowhere to go", SPEC.replace(r#", choice: "${tool_choice?}""#, ""), "/sampling/tool_choice", "neither the request nor tools.wrap places"),
        ("a wrapper without the tools", SPEC.replace("  tool_choice: {auto: auto}", "  tools: {wrap: {x: 1}}\n  tool_choice: {auto: auto}"), "/sampling/tools/wrap", "must place ${tools}"),
        ("a system message and ${system}", SPEC.replace("ignore: [system, ", "system: {message: {role: system, content: \"${text}\"}}\n  ignore: [").replace(r#"model: "${model}","#, r#"model: "${model}", system: "${system?}","#), "/sampling/request", "so ${system} has no value here"),
        ("a block in one string", SPEC.replace("      envelope: {role: user, content: \"${content}\"}", "      envelope: {role: user, content: \"${content}\"}\n      media:\n        image: [{block: {img: \"${data}\"}}]"), "/sampling/messages/user/media/image/0/block", "one string"),
        ("an attachment nowhere to go", SPEC.replace("      envelope: {role: user, content: \"${content}\"}", "      envelope: {role: user, content: \"${content}\"}\n      media:\n        image: [{attach: \"${data}\"}]"), "/sampling/messages/user/envelope", "${attachments}"),
        ("a media rule sending follow-ups", SPEC.replace("      envelope: {role: user, content: \"${content}\"}", "      envelope: {role: user, content: \"${content}\"}\n      media:\n        image: [{follow_up: \"${data}\"}]"), "/sampling/messages/user/media/image/0", "follow_up"),
        ("an item rule of two actions", SPEC.replace("content: [text, items]", "content: [text, items]\n    items: [{text: a, skip: true}]"), "/sampling/response/items/0", ""),
        ("a stop reason MCP does not have", SPEC.replace("{done: endTurn}", "{done: finished}"), "/sampling/response/stop_reason/map/done", "finished"),
        ("an unknown key", SPEC.replace("  tool_choice: {auto: auto}", "  tool_choice: {auto: auto}\n  stream: true"), "/sampling", "stream"),
    ];
    for (name, text, path, phrase) in cases {
        let err = load(&text).expect_err(name);
        assert_eq!(err.kind(), ErrorKind::Spec, "{name}: {err}");
        assert_eq!(err.location().path.as_deref(), Some(path), "{name}: {err}");
        assert!(err.to_string().contains(phrase), "{name}: {err}");
    }
}

/// The minimal spec works end to end, and refuses what it neither places
/// nor ignores: here, stop sequences and a required tool choice.
#[test]
fn a_minimal_sampling_section_converts_and_refuses_what_it_cannot_place() {
    let registry = load(SPEC).unwrap();
    let t = registry.get("t").unwrap();
    assert!(t.supports_sampling());
    let params = request(
        vec![
            user(text("hi")),
            assistant(json!([text("on it"), tool_use("c1")])),
            user(json!([tool_result("c1")])),
        ],
        json!({"temperature": 0.5}),
    );
    let converted = t
        .sampling_request(&params, &SamplingOptions::new("m"))
        .unwrap();
    assert_eq!(
        converted.body,
        json!({"model": "m", "max_tokens": 100,
        "tools": [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "on it", "calls": [{"id": "c1", "name": "get_weather", "args": {"city": "Oslo"}}]},
            {"id": "c1", "content": "3°C"}]})
    );
    assert_eq!(
        converted.warnings,
        ["`temperature` is not sent: provider `t` has no place for it"]
    );
    let response = json!({"text": "Sunny.", "items": [{"type": "call", "id": "k", "name": "get_weather", "args": {"city": "Rome"}}], "stop": "done"});
    let result = t.sampling_result(&response, &converted).unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"role": "assistant", "model": "m", "stopReason": "endTurn",
        "content": [{"type": "text", "text": "Sunny."}, {"type": "tool_use", "id": "k", "name": "get_weather", "input": {"city": "Rome"}}]})
    );
    let stops = request(vec![user(text("hi"))], json!({"stopSequences": ["END"]}));
    let err = t
        .sampling_request(&stops, &SamplingOptions::new("m"))
        .unwrap_err();
    assert_eq!(
        err.location().path.as_deref(),
        Some("/stopSequences"),
        "{err}"
    );
    assert!(
        err.to_string().contains("has no place for `stopSequences`"),
        "{err}"
    );
    let required = request(
        vec![user(text("hi"))],
        json!({"toolChoice": {"mode": "required"}}),
    );
    assert!(
        t.sampling_request(&required, &SamplingOptions::new("m"))
            .is_err()
    );
    let plain = load(&SPEC[..SPEC.find("sampling:").unwrap()]).unwrap();
    let err = plain
        .get("t")
        .unwrap()
        .sampling_request(&stops, &SamplingOptions::new("m"))
        .unwrap_err();
    assert!(
        err.to_string().contains("has no `sampling:` section"),
        "{err}"
    );
}

/// A derived spec is checked as a whole: Bedrock's follow-ups are blocks,
/// so placing them after the answers is refused; OpenAI Chat's are a
/// message, so putting them into the answers' content is.
#[test]
fn follow_up_placement_must_fit_every_results_section() {
    let dir = tempfile::tempdir().unwrap();
    for (id, base, placement) in [
        ("b", "bedrock-converse", "after"),
        ("c", "openai-chat", "content"),
    ] {
        let text = format!(
            "extends: {base}\ntitle: derived\nsampling:\n  messages:\n    follow_ups: {placement}\n"
        );
        std::fs::write(dir.path().join(format!("{id}.yaml")), text).unwrap();
        let err = Registry::with_dir(dir.path()).unwrap_err();
        assert_eq!(
            err.location().path.as_deref(),
            Some("/sampling/messages/follow_ups"),
            "{id}: {err}"
        );
        std::fs::remove_file(dir.path().join(format!("{id}.yaml"))).unwrap();
    }
}
