//! The providers beyond the core four (Bedrock Converse, Mistral, Ollama) and the
//! gemini-multimodal variant: listing, call extraction and result shaping over the
//! public corpus, plus a spec loaded from a folder at run time, through the
//! library and through the command-line binary.

mod common;

use common::*;
use mcp_adapters::CallToolResult;
use mcp_adapters::ErrorKind;
use mcp_adapters::Registry;
use mcp_adapters::ToolSet;
use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::{ListOptions, StrictMode};
use mcp_adapters::{Outcome, ResultOptions};
use serde_json::{Value, json};

/// Providers with their own wire format.
const MORE_PROVIDERS: &[&str] = &["bedrock-converse", "mistral", "ollama", "cohere"];
/// Every new id, the variant included, for result shaping.
const WITH_VARIANTS: &[&str] = &["bedrock-converse", "mistral", "ollama", "gemini-multimodal"];

fn hub() -> ToolSet {
    ToolSet::hub()
        .server("everything", corpus_tools("everything"))
        .server("time", corpus_tools("time"))
        .build()
        .unwrap()
}

fn parse(value: Value) -> CallToolResult {
    serde_json::from_value(value).expect("a CallToolResult")
}

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

#[test]
fn the_registry_lists_the_new_providers() {
    let ids: Vec<&str> = Registry::builtin()
        .unwrap()
        .providers()
        .map(|p| p.id())
        .collect();
    for id in WITH_VARIANTS.iter().chain(CORE_PROVIDERS) {
        assert!(ids.contains(id), "{id} missing from {ids:?}");
    }
    for id in WITH_VARIANTS {
        assert_eq!(provider(id).strict_rules(), None, "{id} claims strict mode");
    }
}

/// The variant only changes results: its listing and call reading are gemini's.
#[test]
fn gemini_multimodal_lists_and_reads_calls_like_gemini() {
    let toolset = hub();
    let (base, variant) = (provider("gemini"), provider("gemini-multimodal"));
    let listing = base.list_tools(&toolset, &ListOptions::new()).unwrap();
    assert_eq!(
        serde_json::to_value(&listing).unwrap(),
        serde_json::to_value(variant.list_tools(&toolset, &ListOptions::new()).unwrap()).unwrap()
    );
    for name in ["response", "content", "list", "without_ids", "rejections"] {
        let response = fixture(&format!("responses/gemini/{name}.json"));
        let a = base.extract_calls(&response, &listing);
        let b = variant.extract_calls(&response, &listed("gemini-multimodal", &toolset));
        assert_eq!(
            serde_json::to_value(a.unwrap()).unwrap(),
            serde_json::to_value(b.unwrap()).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn full_response_message_and_list_give_the_same_calls() {
    let toolset = hub();
    for id in MORE_PROVIDERS {
        let read = |name: &str| {
            let extracted = provider(id)
                .extract_calls(
                    &fixture(&format!("responses/{id}/{name}.json")),
                    &listed(id, &toolset),
                )
                .unwrap();
            assert!(extracted.rejected.is_empty(), "{id} {name}");
            serde_json::to_value(extracted.calls).unwrap()
        };
        let full = read("response");
        assert_eq!(full.as_array().unwrap().len(), 2, "{id}");
        assert_eq!(read("message"), full, "{id}");
        assert_eq!(read("list"), full, "{id}");
    }
}

#[test]
fn foreign_or_malformed_input_is_an_error() {
    let toolset = hub();
    let gemini_response = fixture("responses/gemini/response.json");
    for id in MORE_PROVIDERS {
        let err = provider(id)
            .extract_calls(&gemini_response, &listed(id, &toolset))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input, "{id}: {err}");
        assert!(err.to_string().contains(id), "{err}");
        let err = provider(id)
            .extract_calls(&json!("text"), &listed(id, &toolset))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input, "{id}: {err}");
    }
}

#[test]
fn answers_without_a_call_id() {
    let result = CallToolResult::text("ok");
    let none = |id: &str| {
        provider(id).answer(
            None,
            "srv__tool",
            Outcome::Completed(&result),
            &ResultOptions::default(),
        )
    };
    assert_eq!(
        none("ollama").unwrap(),
        json!({"role": "tool", "content": "ok", "tool_name": "srv__tool"})
    );
    for id in ["bedrock-converse", "mistral"] {
        assert_eq!(none(id).unwrap_err().kind(), ErrorKind::Input, "{id}");
    }
}

#[test]
fn bedrock_marks_only_errors_with_a_status() {
    let ok = answer(
        "bedrock-converse",
        "c",
        &CallToolResult::text("fine"),
        &ResultOptions::default(),
    );
    assert_eq!(
        ok,
        json!({"toolResult": {"toolUseId": "c", "content": [{"text": "fine"}]}})
    );
    let failed = parse(fixture("results/is_error.json"));
    let err = answer("bedrock-converse", "c", &failed, &ResultOptions::default());
    assert_eq!(err["toolResult"]["status"], "error", "{err}");
}

/// `missing_description: omit_blank` sends no description for a tool whose
/// description is absent, empty or blank; `omit` (the default) keeps an empty one.
#[test]
fn blank_descriptions_are_left_out_where_the_spec_says_so() {
    let tools = parse_tools_list(json!({"tools": [
        {"name": "none", "inputSchema": {"type": "object"}},
        {"name": "empty", "description": "", "inputSchema": {"type": "object"}},
        {"name": "blank", "description": " \n ", "inputSchema": {"type": "object"}},
        {"name": "some", "description": "Does a thing.", "inputSchema": {"type": "object"}}
    ]}))
    .unwrap();
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let bedrock = provider("bedrock-converse")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    let described: Vec<Option<&Value>> = bedrock
        .tools
        .iter()
        .map(|t| t.pointer("/toolSpec/description"))
        .collect();
    assert_eq!(described, [None, None, None, Some(&json!("Does a thing."))]);
    let mistral = provider("mistral")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    assert_eq!(mistral.tools[0].pointer("/function/description"), None);
    assert_eq!(
        mistral.tools[1].pointer("/function/description"),
        Some(&json!(""))
    );
}

/// A spec written at run time: a renamed copy of the Bedrock spec with other
/// keys, loaded from a folder by the library and by the binary's `--specs`.
#[test]
#[cfg(feature = "cli")]
fn a_spec_from_a_folder_changes_the_shapes_end_to_end() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let original = std::fs::read_to_string(root.join("providers/bedrock-converse.yaml")).unwrap();
    let mut text = original;
    // The tool key, and the id key of both envelopes (success and error).
    for (from, to, count) in [
        ("    toolSpec:\n", "    toolSpecification:\n", 1),
        ("toolUseId: ${call_id}\n", "callId: ${call_id}\n", 2),
    ] {
        assert_eq!(text.matches(from).count(), count, "{from:?} in the spec");
        text = text.replace(from, to);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("my-bedrock.yaml"), &text).unwrap();

    let registry = Registry::with_dir(dir.path()).unwrap();
    let custom = registry.get("my-bedrock").unwrap();
    assert!(
        custom.source().ends_with("my-bedrock.yaml"),
        "{}",
        custom.source()
    );
    let toolset = ToolSet::client()
        .server("time", corpus_tools("time"))
        .build()
        .unwrap();
    let listing = custom.list_tools(&toolset, &ListOptions::new()).unwrap();
    assert_eq!(
        listing.tools[0]["toolSpecification"]["name"],
        "get_current_time"
    );
    assert!(listing.tools[0].get("toolSpec").is_none());
    let text_result = CallToolResult::text("ok");
    let answer = custom
        .answer(
            Some("c1"),
            "get_current_time",
            Outcome::Completed(&text_result),
            &ResultOptions::default(),
        )
        .unwrap();
    assert_eq!(
        answer,
        json!({"toolResult": {"callId": "c1", "content": [{"text": "ok"}]}})
    );
    // The built-in is untouched.
    assert!(
        registry
            .get("bedrock-converse")
            .unwrap()
            .source()
            .starts_with("built-in")
    );

    let bin = env!("CARGO_BIN_EXE_mcp-adapters");
    let run = |args: &[&str]| -> Value {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let specs = dir.path().to_str().unwrap();
    let tools_file = root.join("tests/fixtures/corpus/time.tools.json");
    let listed = run(&[
        "tools",
        "--provider",
        "my-bedrock",
        "--specs",
        specs,
        tools_file.to_str().unwrap(),
    ]);
    assert_eq!(
        listed["tools"][1]["toolSpecification"]["name"], "convert_time",
        "{listed}"
    );
    let result_file = root.join("tests/fixtures/results/is_error.json");
    let answered = run(&[
        "result",
        "--provider",
        "my-bedrock",
        "--specs",
        specs,
        "--call-id",
        "c9",
        "--name",
        "convert_time",
        result_file.to_str().unwrap(),
    ]);
    assert_eq!(answered["toolResult"]["callId"], "c9", "{answered}");
    assert_eq!(answered["toolResult"]["status"], "error", "{answered}");
    let providers = run(&["providers", "--specs", specs]);
    assert!(
        providers
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "my-bedrock"),
        "{providers}"
    );
}

/// anthropic-strict is anthropic plus `strict` on each tool, converted by its rules.
/// No listing snapshots: the converted schemas belong to the strict converter's tests.
#[test]
fn anthropic_strict_is_anthropic_with_a_strict_flag() {
    let registry = Registry::builtin().unwrap();
    let (base, strict) = (provider("anthropic"), provider("anthropic-strict"));
    assert_eq!(strict.strict_rules(), Some("anthropic-strict"));
    assert!(registry.rules("anthropic-strict").is_some());
    for server in corpus_servers() {
        let toolset = ToolSet::client()
            .server(&server, corpus_tools(&server))
            .build()
            .unwrap();
        let plain = base.list_tools(&toolset, &ListOptions::new()).unwrap();
        let off = strict
            .list_tools(&toolset, &ListOptions::new().strict(StrictMode::Off))
            .unwrap();
        let unflagged: Vec<Value> = off
            .tools
            .iter()
            .map(|t| {
                let mut t = t.clone();
                assert_eq!(
                    t.as_object_mut().unwrap().remove("strict"),
                    Some(json!(false))
                );
                t
            })
            .collect();
        assert_eq!(unflagged, plain.tools, "{server}");
        let auto = strict.list_tools(&toolset, &ListOptions::new()).unwrap();
        assert_eq!(auto.tools.len(), toolset.len(), "{server}");
        let strict_count = auto.tools.iter().filter(|t| t["strict"] == true).count();
        assert_eq!(
            strict_count + auto.report.fallbacks.len(),
            toolset.len(),
            "{server}: every tool is strict or a reported fallback"
        );
    }
    let toolset = hub();
    let response = fixture("responses/anthropic/rejections.json");
    assert_eq!(
        serde_json::to_value(
            base.extract_calls(&response, &listed("anthropic", &toolset))
                .unwrap()
        )
        .unwrap(),
        serde_json::to_value(
            strict
                .extract_calls(&response, &listed("anthropic-strict", &toolset))
                .unwrap()
        )
        .unwrap()
    );
    let result = parse(fixture("results/is_error_with_image.json"));
    assert_eq!(
        answer("anthropic", "c", &result, &ResultOptions::default()),
        answer("anthropic-strict", "c", &result, &ResultOptions::default())
    );
}
