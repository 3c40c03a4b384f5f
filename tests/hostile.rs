//! Hostile inputs across the library's entry points. Each must end in a clear
//! error or a correct answer, in bounded time and memory: never a panic, a
//! stack overflow or a hang. Sizes are chosen so that every test runs in well
//! under five seconds in a debug build.

mod common;

use common::{drop_deep, listed, obj, provider};
use mcp_adapters::ErrorKind;
use mcp_adapters::ListOptions;
use mcp_adapters::Registry;
use mcp_adapters::ToolSet;
use mcp_adapters::results::StructuredMode;
use mcp_adapters::spec::SpecFile;
use mcp_adapters::strict::convert;
use mcp_adapters::{CallToolResult, Tool};
use mcp_adapters::{ExecOptions, InProcessServer, Source as ExecSource};
use mcp_adapters::{Outcome, ResultOptions};
use serde_json::{Map, Value, json};

/// `levels` objects nested through one property each, built without recursion.
fn nested_schema(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        schema = obj([
            ("type", json!("object")),
            ("properties", obj([("a", schema)])),
        ]);
    }
    schema
}

fn rules(id: &str) -> &'static mcp_adapters::strict::StrictRules {
    Registry::builtin().unwrap().rules(id).unwrap()
}

fn object_schema() -> Value {
    json!({"type": "object", "properties": {"q": {"type": "string"}}})
}

// ---------------------------------------------------------------- schemas

#[test]
fn a_schema_100_000_levels_deep_as_text_is_refused_by_the_parser() {
    let levels = 100_000;
    let text = format!(
        "{}{{\"type\": \"string\"}}{}",
        "{\"type\": \"object\", \"properties\": {\"a\": ".repeat(levels),
        "}}".repeat(levels)
    );
    let err = serde_json::from_str::<Value>(&text).unwrap_err();
    assert!(err.to_string().contains("recursion limit"), "{err}");
    let tools = format!("{{\"tools\": [{{\"name\": \"t\", \"inputSchema\": {text}}}]}}");
    let err = serde_json::from_str::<Value>(&tools).unwrap_err();
    assert!(err.to_string().contains("recursion limit"), "{err}");
}

#[test]
fn a_schema_100_000_levels_deep_in_memory_fails_strict_conversion() {
    let schema = nested_schema(100_000);
    for id in ["openai-strict", "anthropic-strict"] {
        let err = convert(&schema, rules(id)).unwrap_err();
        assert_eq!(err.kind().to_string(), "max_depth", "{id}");
    }
    drop_deep(schema);
}

#[test]
fn ref_cycles_and_fan_out_bombs_end_quickly() {
    let cycle = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
    let self_ref = json!({"type": "object", "properties": {"a": {"$ref": "#"}}});
    // 40 definitions, each referring twice to the next: 2^40 paths if expanded.
    let mut defs = Map::new();
    for i in 0..40 {
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {
                "x": {"$ref": format!("#/$defs/d{}", i + 1)},
                "y": {"$ref": format!("#/$defs/d{}", i + 1)}},
                "required": ["x", "y"]}),
        );
    }
    defs.insert(
        "d40".into(),
        json!({"type": "object", "properties": {"leaf": {"type": "string"}}}),
    );
    let bomb = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}},
        "required": ["root"], "$defs": defs});
    for schema in [&cycle, &self_ref, &bomb] {
        for id in ["openai-strict", "anthropic-strict"] {
            let _ = convert(schema, rules(id));
        }
    }
    assert_eq!(
        convert(&cycle, rules("openai-strict"))
            .unwrap_err()
            .kind()
            .to_string(),
        "recursive_ref"
    );
    let err = convert(&bomb, rules("openai-strict")).unwrap_err();
    assert_eq!(err.kind().to_string(), "max_properties");
}

// The two slowest tests here (about 3 s each in a debug build, mostly
// building the input); the limits they check are counted, not timed.
#[test]
fn a_million_properties() {
    let props: Map<String, Value> = (0..1_000_000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let wide = obj([
        ("type", json!("object")),
        ("properties", Value::Object(props)),
    ]);
    for id in ["openai-strict", "anthropic-strict"] {
        assert!(convert(&wide, rules(id)).is_err(), "{id}");
    }
    // The property limit where the rules set one, the node budget otherwise.
    assert_eq!(
        convert(&wide, rules("openai-strict"))
            .unwrap_err()
            .kind()
            .to_string(),
        "max_properties"
    );
}

#[test]
fn a_million_enum_values() {
    let values: Vec<Value> = (0..1_000_000).map(|i| json!(format!("v{i}"))).collect();
    let many = json!({"type": "object", "properties": {
        "e": {"type": "string", "enum": values}}});
    for id in ["openai-strict", "anthropic-strict"] {
        // Rules without an enum limit convert it (linearly); the others refuse it.
        let _ = convert(&many, rules(id));
    }
    assert_eq!(
        convert(&many, rules("openai-strict"))
            .unwrap_err()
            .kind()
            .to_string(),
        "max_enum_values"
    );
}

// ----------------------------------------------------------- descriptions

#[test]
fn a_100_mb_description_is_listed_capped_at_4_kib_quickly() {
    let huge = "a".repeat(100 * 1024 * 1024);
    let tool = Tool::new("big", huge, object_schema());
    let toolset = ToolSet::client().server("s", vec![tool]).build().unwrap();
    for id in ["anthropic", "openai-chat", "gemini"] {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        let text = listing.tools[0].to_string();
        assert!(text.len() < 8 * 1024, "{id}: {} bytes", text.len());
    }
}

#[test]
fn a_100_mb_description_of_invisible_characters_lists_as_nothing() {
    // Zero-width spaces throughout, one visible word at the very end.
    let mut huge = "\u{200B}".repeat(1024 * 1024); // 3 MB that must all be read and skipped
    huge.push_str("visible");
    let tool = Tool::new("hidden", huge, object_schema());
    let toolset = ToolSet::client().server("s", vec![tool]).build().unwrap();
    let listing = provider("anthropic")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    assert_eq!(listing.tools[0]["description"], "visible");
}

// ------------------------------------------------------------------ calls

fn echo_toolset() -> ToolSet {
    ToolSet::client()
        .server("s", vec![Tool::new("echo", "Echoes", object_schema())])
        .build()
        .unwrap()
}

fn chat_calls(count: usize, id: impl Fn(usize) -> String) -> Value {
    let calls: Vec<Value> = (0..count)
        .map(|i| {
            json!({"id": id(i), "type": "function",
                "function": {"name": "echo", "arguments": format!("{{\"q\": \"{i}\"}}")}})
        })
        .collect();
    json!({"role": "assistant", "tool_calls": calls})
}

#[test]
fn ten_thousand_calls_in_one_response_are_extracted() {
    let toolset = echo_toolset();
    let response = chat_calls(10_000, |i| format!("call_{i}"));
    let extracted = provider("openai-chat")
        .extract_calls(&response, &listed("openai-chat", &toolset))
        .unwrap();
    assert_eq!(extracted.calls.len(), 10_000);
    assert!(extracted.rejected.is_empty());
    assert!(
        extracted
            .calls
            .iter()
            .enumerate()
            .all(|(i, c)| c.index == i)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_in_one_response_are_executed_and_answered_in_order() {
    let server = InProcessServer::new().tool(
        Tool::new("echo", "Echoes", object_schema()),
        |args, _ctx| async move { Ok(CallToolResult::text(args["q"].to_string())) },
    );
    let client = ExecSource::client("s", server)
        .policy(mcp_adapters::Policy::allow_all())
        .build()
        .unwrap();
    let provider = provider("openai-chat");
    let listing = client.tools(provider, &ListOptions::new()).await.unwrap();
    let response = chat_calls(10_000, |i| format!("call_{i}"));
    let run = client
        .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
        .await
        .unwrap();
    assert_eq!(run.turn.results.len(), 10_000);
    for (i, answer) in run.turn.results.iter().enumerate() {
        assert_eq!(answer["tool_call_id"], format!("call_{i}"));
        assert_eq!(answer["content"], format!("\"{i}\""));
    }
}

#[test]
fn duplicate_call_ids_run_once() {
    let toolset = echo_toolset();
    let response = chat_calls(4, |i| format!("call_{}", i % 2));
    let extracted = provider("openai-chat")
        .extract_calls(&response, &listed("openai-chat", &toolset))
        .unwrap();
    let sent: Vec<usize> = extracted.calls.iter().map(|c| c.index).collect();
    let rejected: Vec<usize> = extracted.rejected.iter().map(|r| r.index).collect();
    assert_eq!((sent, rejected), (vec![0, 1], vec![2, 3]));
    for r in &extracted.rejected {
        assert_eq!(r.error.kind(), ErrorKind::Input);
        assert!(r.error.message().contains("already used"), "{}", r.error);
        assert_eq!(r.answer["role"], "tool");
    }
}

#[test]
fn deeply_nested_arguments_are_refused_by_the_parser() {
    let toolset = echo_toolset();
    let deep = format!("{{\"q\": {}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let response = json!({"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": deep}}]});
    let extracted = provider("openai-chat")
        .extract_calls(&response, &listed("openai-chat", &toolset))
        .unwrap();
    assert_eq!(extracted.rejected.len(), 1);
    assert!(
        extracted.rejected[0]
            .error
            .message()
            .contains("not valid JSON"),
        "{}",
        extracted.rejected[0].error
    );
}

#[test]
fn deep_arguments_built_in_memory_are_rejected() {
    let toolset = echo_toolset();
    let mut deep = json!(1);
    for _ in 0..10_000 {
        deep = Value::Array(vec![deep]);
    }
    let call = obj([
        ("type", json!("tool_use")),
        ("id", json!("toolu_1")),
        ("name", json!("echo")),
        ("input", obj([("q", deep)])),
    ]);
    let response = Value::Array(vec![call]);
    let extracted = provider("anthropic")
        .extract_calls(&response, &listed("anthropic", &toolset))
        .unwrap();
    assert!(extracted.calls.is_empty());
    assert_eq!(extracted.rejected.len(), 1);
    let message = extracted.rejected[0].error.message().to_owned();
    assert!(message.contains("deeper than 256"), "{message}");
    drop(extracted);
    drop_deep(response);
}

// ---------------------------------------------------------------- results

const MODES: [StructuredMode; 4] = [
    StructuredMode::Auto,
    StructuredMode::Prefer,
    StructuredMode::Append,
    StructuredMode::Ignore,
];

fn answer_all(result: &CallToolResult) -> Vec<Value> {
    answer_with(result, &MODES)
}

/// The answers of every provider, in every mode of `modes`, and (as a list:
/// the answer, then its follow-ups) with every value of its `media` option.
fn answer_with(result: &CallToolResult, modes: &[StructuredMode]) -> Vec<Value> {
    let mut out = Vec::new();
    for p in Registry::builtin().unwrap().providers() {
        let media: Vec<&str> = p
            .options()
            .filter(|(name, _)| *name == "media")
            .flat_map(|(_, values)| values)
            .collect();
        for &mode in modes {
            let options = ResultOptions::new().structured(mode);
            out.push(
                p.answer(Some("c1"), "t", Outcome::Completed(result), &options)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.id())),
            );
            for value in &media {
                let turn = p
                    .answer_all(
                        [(Some("c1"), "t", Outcome::Completed(result))],
                        &options.clone().option("media", *value),
                    )
                    .unwrap_or_else(|e| panic!("{} media={value}: {e}", p.id()));
                let mut items = turn.results;
                items.extend(turn.follow_ups);
                out.push(Value::Array(items));
            }
        }
    }
    out
}

#[test]
fn broken_base64_becomes_a_placeholder() {
    let result: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "image", "mimeType": "image/png", "data": "!!not base64!!"},
        {"type": "audio", "mimeType": "audio/wav", "data": "Q"},
        {"type": "resource", "resource": {"uri": "file:///x", "mimeType": "image/png", "blob": "%%%"}}
    ]}))
    .unwrap();
    for answer in answer_all(&result) {
        let text = answer.to_string();
        assert!(text.contains("invalid base64"), "{text}");
        assert!(!text.contains("!!not base64!!"), "{text}");
    }
}

#[test]
fn empty_base64_becomes_a_placeholder() {
    // An API refuses a medium with no data as it refuses a malformed one.
    let result: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "image", "mimeType": "image/png", "data": ""},
        {"type": "audio", "mimeType": "audio/wav", "data": ""},
        {"type": "resource", "resource": {"uri": "file:///x", "mimeType": "image/png", "blob": ""}}
    ]}))
    .unwrap();
    for answer in answer_all(&result) {
        let text = answer.to_string();
        assert_eq!(text.matches("no data]").count(), 3, "{text}");
    }
}

#[test]
fn content_types_nobody_knows_become_placeholders() {
    let result: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "hologram", "data": {"x": 1}},
        {"type": "image"},
        {"no_type": true},
        42
    ]}))
    .unwrap();
    for answer in answer_all(&result) {
        let text = answer.to_string();
        assert!(text.contains("[unsupported content: hologram]"), "{text}");
    }
}

#[test]
fn structured_content_that_is_a_string_or_a_list_is_answered() {
    for structured in [json!("just text"), json!([1, "two", {"three": 3}])] {
        let result = CallToolResult {
            structured_content: Some(structured.clone()),
            ..Default::default()
        };
        // `ignore` leaves structured content out by design.
        let shown = [
            StructuredMode::Auto,
            StructuredMode::Prefer,
            StructuredMode::Append,
        ];
        for answer in answer_with(&result, &shown) {
            let text = answer.to_string();
            let want = match &structured {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let compact = text.replace("\\\"", "\"");
            assert!(
                compact.contains(&want) || text.contains(&want),
                "{want} in {text}"
            );
        }
    }
}

// ------------------------------------------------------------------ specs

#[test]
fn a_spec_file_that_is_not_utf8_is_a_spec_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.yaml");
    std::fs::write(&path, b"title: caf\xe9\n").unwrap();
    let err = Registry::with_dir(dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Spec);
    let shown = err.to_string();
    assert!(shown.contains("latin1.yaml"), "{shown}");
    assert!(shown.contains("UTF-8"), "{shown}");
}

#[test]
fn a_yaml_alias_bomb_is_a_clear_error_in_bounded_time() {
    let mut text = String::from(
        "a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    let names: Vec<char> = ('b'..='j').collect();
    let mut prev = 'a';
    for &name in &names {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        prev = name;
    }
    for source in [
        SpecFile::provider("bomb", "bomb.yaml", text.clone()),
        SpecFile::rules("bomb", "rules/bomb.yaml", text.clone()),
    ] {
        let err = Registry::from_files(vec![source]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Spec);
        assert!(err.to_string().contains("bomb.yaml"), "{err}");
    }
}

#[test]
fn deeply_nested_yaml_is_a_clear_error() {
    let text = format!("title: {}x{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let err =
        Registry::from_files(vec![SpecFile::provider("deep", "deep.yaml", text)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Spec);
    let block = (0..1_000)
        .map(|i| format!("{}k:", " ".repeat(i)))
        .collect::<Vec<_>>()
        .join("\n");
    let err =
        Registry::from_files(vec![SpecFile::provider("deep", "deep.yaml", block)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Spec);
    assert!(err.to_string().contains("Depth"), "{err}");
}

#[test]
fn a_spec_file_over_1_mib_is_refused_before_parsing() {
    let text = format!(
        "title: x
description: {}
",
        "y".repeat(2 * 1024 * 1024)
    );
    let err = Registry::from_files(vec![SpecFile::provider("big", "big.yaml", text)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Spec);
    assert!(err.to_string().contains("big.yaml"), "{err}");
    assert!(
        err.to_string().contains("limited to 1048576 bytes"),
        "{err}"
    );
}

// ------------------------------------------- deep JSON in listing/answering

#[test]
fn a_tool_schema_10_000_levels_deep_is_left_out_of_every_listing() {
    let deep = Tool::new("deep", "Too deep", nested_schema(10_000));
    let fine = Tool::new("fine", "Fine", object_schema());
    let toolset = ToolSet::client()
        .server("s", vec![deep, fine])
        .build()
        .unwrap();
    let names: Vec<&str> = toolset
        .tools()
        .iter()
        .map(|t| t.exposed_name.as_str())
        .collect();
    assert_eq!(names, ["fine"]);
    let dropped = &toolset.report().dropped;
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].tool, "deep");
    for p in Registry::builtin().unwrap().providers() {
        let listing = p.list_tools(&toolset, &ListOptions::new()).unwrap();
        assert_eq!(listing.tools.len(), 1, "{}", p.id());
    }
}

#[test]
fn deep_structured_content_is_answered_with_a_placeholder() {
    let mut deep = json!(1);
    for _ in 0..10_000 {
        deep = obj([("a", deep)]);
    }
    let result = CallToolResult {
        structured_content: Some(deep),
        ..Default::default()
    };
    let shown = [
        StructuredMode::Auto,
        StructuredMode::Prefer,
        StructuredMode::Append,
    ];
    for answer in answer_with(&result, &shown) {
        assert!(
            answer.to_string().contains("nested deeper than"),
            "{answer}"
        );
    }
    let CallToolResult {
        structured_content, ..
    } = result;
    drop_deep(structured_content.unwrap());
}

#[test]
fn deep_unknown_content_is_answered_with_a_placeholder() {
    let mut deep = json!(1);
    for _ in 0..10_000 {
        deep = Value::Array(vec![deep]);
    }
    let block = obj([("type", json!("hologram")), ("data", deep)]);
    // Deserializing a deep in-memory value recurses inside serde; build the
    // content block directly instead.
    let result = CallToolResult {
        content: vec![mcp_adapters::Content::Unknown(block)],
        ..Default::default()
    };
    for answer in answer_all(&result) {
        assert!(
            answer
                .to_string()
                .contains("[unsupported content: hologram]"),
            "{answer}"
        );
    }
    let CallToolResult { content, .. } = result;
    for c in content {
        if let mcp_adapters::Content::Unknown(v) = c {
            drop_deep(v);
        }
    }
}
