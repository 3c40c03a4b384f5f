//! Helpers shared by the integration tests (`mod common;`): providers and
//! fixtures, snapshot naming, the official-SDK conformance harness, the
//! end-to-end servers and the strict-mode helpers.
#![allow(dead_code)]

pub mod cli;
pub mod conformance;
pub mod install;
pub mod instances;
pub mod postgres;
pub mod scripted;
pub mod servers;
#[cfg(feature = "otel")]
pub mod traces;

use std::path::{Path, PathBuf};

use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::strict::{StrictRules, convert};
use mcp_adapters::{Provider, Registry, Tool};
use serde_json::{Map, Value, json};

/// A runtime for the tests that talk to real servers or streams: two workers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A single-threaded runtime, for the in-process execution tests.
pub fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The names a listing offers (the `name` of each tool definition).
pub fn tool_names(listing: &mcp_adapters::Listing) -> Vec<String> {
    listing
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The call id under `key` of every answer, in order.
pub fn answer_ids<'a>(results: &'a [Value], key: &str) -> Vec<&'a str> {
    results.iter().map(|r| r[key].as_str().unwrap()).collect()
}

/// The bundled rules file for the strict subset used across the tests.
pub const RULES_YAML: &str = include_str!("../../providers/rules/openai-strict.yaml");

pub fn rules() -> StrictRules {
    StrictRules::from_yaml_str(RULES_YAML).expect("bundled rules load")
}

/// The corpus tools files, sorted by name.
pub fn corpus_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    files
}

/// `(tool name, inputSchema)` of every tool in a tools file.
pub fn tools(path: &std::path::Path) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(path).expect("read tools file");
    let doc: Value = serde_json::from_str(&text).expect("tools file is JSON");
    let tools = doc["tools"].as_array().cloned().unwrap_or_default();
    tools
        .into_iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or("").to_owned(),
                t["inputSchema"].clone(),
            )
        })
        .collect()
}

/// The conversion of one schema as a snapshot-friendly value:
/// `{schema, null_paths}` or `{error: {path, reason}}`.
pub fn outcome(schema: &Value, rules: &StrictRules) -> Value {
    match convert(schema, rules) {
        Ok(strict) => json!({"schema": strict.schema, "null_paths": strict.null_paths}),
        Err(e) => json!({"error": {"path": e.pointer(), "reason": e.kind().to_string()}}),
    }
}

/// Map of tool name to outcome for one tools file.
pub fn file_outcomes(path: &std::path::Path, rules: &StrictRules) -> Map<String, Value> {
    tools(path)
        .into_iter()
        .map(|(name, schema)| {
            let out = outcome(&schema, rules);
            (name, out)
        })
        .collect()
}

/// A model response in `provider`'s wire shape calling `calls` (exposed name, arguments).
pub fn model_response(provider: &str, calls: &[(String, Value)]) -> Value {
    let id = |i: usize| format!("call_{i}");
    match provider {
        "anthropic" => {
            json!({"role": "assistant", "stop_reason": "tool_use", "content": calls.iter().enumerate()
            .map(|(i, (n, a))| json!({"type": "tool_use", "id": id(i), "name": n, "input": a})).collect::<Vec<_>>()})
        }
        "openai-chat" => {
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": calls.iter().enumerate().map(|(i, (n, a))| json!({"id": id(i), "type": "function",
                "function": {"name": n, "arguments": a.to_string()}})).collect::<Vec<_>>()}}]})
        }
        "openai-responses" => {
            json!({"object": "response", "status": "completed", "output": calls.iter().enumerate()
            .map(|(i, (n, a))| json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": id(i), "name": n,
                "arguments": a.to_string(), "status": "completed"})).collect::<Vec<_>>()})
        }
        "gemini" | "gemini-multimodal" => {
            json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": calls.iter().enumerate()
            .map(|(i, (n, a))| json!({"functionCall": {"id": id(i), "name": n, "args": a}})).collect::<Vec<_>>()}}]})
        }
        "mistral" => {
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "",
            "tool_calls": calls.iter().enumerate().map(|(i, (n, a))| json!({"id": format!("call{i:05}"), "type": "function",
                "function": {"name": n, "arguments": a.to_string()}})).collect::<Vec<_>>()}}]})
        }
        "bedrock-converse" => {
            json!({"stopReason": "tool_use", "output": {"message": {"role": "assistant", "content": calls.iter().enumerate()
            .map(|(i, (n, a))| json!({"toolUse": {"toolUseId": id(i), "name": n, "input": a}})).collect::<Vec<_>>()}}})
        }
        // The assistant message of Ollama's /api/chat (object arguments).
        "ollama" => {
            json!({"model": "m", "done": true, "message": {"role": "assistant", "content": "",
            "tool_calls": calls.iter().enumerate().map(|(i, (n, a))| json!({"id": id(i),
                "function": {"index": i, "name": n, "arguments": a}})).collect::<Vec<_>>()}})
        }
        // Cohere v2 chat's response: the assistant message with its tool plan.
        "cohere" => {
            json!({"id": "r", "finish_reason": "TOOL_CALL", "message": {"role": "assistant",
            "tool_plan": "I will look.", "tool_calls": calls.iter().enumerate().map(|(i, (n, a))| json!({
                "id": id(i), "type": "function", "function": {"name": n, "arguments": a.to_string()}}))
                .collect::<Vec<_>>()}})
        }
        // A Gemini interaction that requires action: its function_call steps.
        "gemini-interactions" => {
            json!({"id": "i", "status": "requires_action", "steps": calls.iter().enumerate()
            .map(|(i, (n, a))| json!({"type": "function_call", "id": id(i), "name": n, "arguments": a}))
            .collect::<Vec<_>>()})
        }
        other => panic!("no response shape for {other}"),
    }
}

/// The four providers the seeds specify.
pub const CORE_PROVIDERS: &[&str] = &["anthropic", "openai-chat", "openai-responses", "gemini"];

/// Every built-in provider with a wire format of its own: listings are snapshotted for each.
pub const LISTING_PROVIDERS: &[&str] = &[
    "anthropic",
    "openai-chat",
    "openai-responses",
    "gemini",
    "bedrock-converse",
    "mistral",
    "ollama",
    "cohere",
    "gemini-interactions",
];

/// Every built-in provider whose answers differ: result shapes are snapshotted for each.
pub const ANSWER_PROVIDERS: &[&str] = &[
    "anthropic",
    "openai-chat",
    "openai-responses",
    "gemini",
    "gemini-multimodal",
    "bedrock-converse",
    "mistral",
    "ollama",
];

/// Every built-in provider with a `media` option, and the values it offers
/// (Ollama has none): option-on result shapes are snapshotted for each.
pub const MEDIA_OPTIONS: &[(&str, &str)] = &[
    ("anthropic", "full"),
    ("openai-chat", "full"),
    ("openai-responses", "full"),
    ("gemini", "full"),
    ("gemini-multimodal", "full"),
    ("bedrock-converse", "full"),
    ("bedrock-converse", "nova"),
    ("mistral", "full"),
];

/// A snapshot key for a provider with a media option value: the id for
/// `full`, `id media=value` for the others.
pub fn media_label(id: &str, value: &str) -> String {
    if value == "full" {
        id.to_owned()
    } else {
        format!("{id} media={value}")
    }
}

/// The stages of the pipeline, in order: snapshot names start with their
/// number, so `cargo insta review` lists a reviewer's work in pipeline order.
#[derive(Debug, Clone, Copy)]
pub enum Stage {
    /// Exposed names, filters, the toolset report.
    Toolset,
    /// Strict-schema conversion on its own.
    Strict,
    /// Tool definitions per provider.
    Listing,
    /// Calls read from model responses.
    Calls,
    /// Calls assembled from streams.
    Stream,
    /// Answers to results and failures.
    Results,
    /// Whole turns against servers.
    Exec,
}

impl Stage {
    fn prefix(self) -> &'static str {
        match self {
            Stage::Toolset => "1-toolset",
            Stage::Strict => "2-strict",
            Stage::Listing => "3-listing",
            Stage::Calls => "4-calls",
            Stage::Stream => "5-stream",
            Stage::Results => "6-results",
            Stage::Exec => "7-exec",
        }
    }
}

/// insta settings that put snapshots in the top-level `snapshots/` folder.
pub fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

/// A fixture's case name: its file name without the extensions
/// (`fixtures/corpus/time.tools.json` -> `time`).
pub fn case_name(path: &Path) -> String {
    stem(path)
}

/// Asserts a JSON snapshot named `<n>-<stage>[-<provider>]@<case>.snap`;
/// its header's description names the test that produced it.
#[track_caller]
pub fn snapshot(stage: Stage, provider: Option<&str>, case: &str, value: impl serde::Serialize) {
    let name = match provider {
        Some(p) => format!("{}-{p}", stage.prefix()),
        None => stage.prefix().to_owned(),
    };
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let file = std::panic::Location::caller().file();
    let mut s = settings();
    s.set_snapshot_suffix(case);
    s.set_description(format!("{file}: {test}"));
    s.set_omit_expression(true);
    s.bind(|| insta::assert_json_snapshot!(name, value));
}

/// Three of the corpus's GitHub tools, `owner` and `repo` bound (every one
/// of them declares both), and `file` (ours), whose bound `/who/tenant` is
/// nested.
pub fn bound_toolset() -> mcp_adapters::ToolSet {
    use mcp_adapters::toolset::Binding;
    let github = mcp_adapters::mcp::parse_tools_list(read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus/github.tools.json"),
    ))
    .unwrap()
    .into_iter()
    .filter(|t| ["create_issue", "get_file_contents", "push_files"].contains(&t.name.as_str()))
    .collect();
    let file = mcp_adapters::Tool::new(
        "file",
        "Files a note",
        serde_json::json!({"type": "object", "properties": {
            "who": {"type": "object", "properties": {"tenant": {"type": "string"}, "name": {"type": "string"}},
                    "required": ["tenant"]},
            "text": {"type": "string"}}, "required": ["who", "text"]}),
    );
    mcp_adapters::ToolSet::hub()
        .bind(Binding::parse("github/*:/owner=acme").unwrap())
        .bind(Binding::parse("github/*:/repo=widgets").unwrap())
        .bind(Binding::parse("notes/file:/who/tenant=acme").unwrap())
        .server("github", github)
        .server("notes", vec![file])
        .build()
        .unwrap()
}

pub fn provider(id: &str) -> &'static Provider {
    Registry::builtin()
        .expect("built-in specs load")
        .get(id)
        .expect("built-in provider")
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn fixture(rel: &str) -> Value {
    read_json(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
}

/// A corpus server's tools.
pub fn corpus_tools(server: &str) -> Vec<Tool> {
    parse_tools_list(fixture(&format!("corpus/{server}.tools.json"))).expect("corpus tools parse")
}

/// The corpus servers, by file stem.
pub fn corpus_servers() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".tools.json")
                .map(str::to_owned)
        })
        .collect();
    out.sort();
    out
}

/// The server id for a corpus file path (`.../time.tools.json` -> `time`).
pub fn stem(path: &Path) -> String {
    let name = path.file_name().unwrap().to_str().unwrap();
    name.split('.').next().unwrap().to_owned()
}

/// Drops a value of any depth without recursion (serde_json's `Drop` recurses).
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(mut value) = stack.pop() {
        match &mut value {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if let Some(child) = map.shift_remove(&key) {
                        stack.push(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An object from entries, moved in (`json!` would clone interpolated values recursively).
pub fn obj<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// `id`'s listing of `toolset` with default options.
pub fn listed(id: &str, toolset: &mcp_adapters::ToolSet) -> mcp_adapters::Listing {
    provider(id)
        .list_tools(toolset, &mcp_adapters::ListOptions::new())
        .unwrap_or_else(|e| panic!("{id}: {e:#}"))
}

/// What the bundled strict rules say of keywords and formats, read from the
/// rules file by the tests themselves (the library keeps its rules private).
pub struct RulesView {
    listed: std::collections::HashMap<String, String>,
    unknown: String,
    formats: Vec<String>,
}

impl RulesView {
    pub fn bundled() -> RulesView {
        let doc: Value = serde_saphyr::from_str(RULES_YAML).expect("bundled rules are YAML");
        let mut listed = std::collections::HashMap::new();
        for class in ["keep", "drop", "unsupported"] {
            for name in doc["keywords"][class].as_array().into_iter().flatten() {
                listed.insert(name.as_str().unwrap().to_owned(), class.to_owned());
            }
        }
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        RulesView {
            listed,
            unknown: doc["keywords"]["unknown"]
                .as_str()
                .unwrap_or("drop")
                .to_owned(),
            formats: strings(&doc["formats"]["allowed"]),
        }
    }

    /// Whether the converter drops `keyword`.
    pub fn drops(&self, keyword: &str) -> bool {
        self.listed.get(keyword).unwrap_or(&self.unknown) == "drop"
    }

    /// Whether `format` is kept.
    pub fn keeps_format(&self, format: &str) -> bool {
        self.formats.iter().any(|f| f == format)
    }
}

/// The exposed-name rule, `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, as the tests' own oracle.
pub fn is_valid_exposed_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Every string in `value`, depth first.
pub fn strings(value: &Value) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}

/// The one string of an answer that a result budget cut (it holds a notice).
pub fn cut_text(answer: &Value) -> String {
    strings(answer)
        .into_iter()
        .find(|s| s.contains("\n[… "))
        .unwrap_or_else(|| panic!("no cut text in {answer:#}"))
}

/// A cut text's parts: what comes before its notice, the notice, and what
/// comes after it.
pub fn split_notice(text: &str) -> (&str, &str, &str) {
    let start = text.find("\n[… ").expect("a notice");
    let end = start + text[start..].find(']').expect("the notice's end") + 1;
    let tail = text[end..].strip_prefix('\n').unwrap_or(&text[end..]);
    (&text[..start], &text[start..end], tail)
}

/// A number a notice gives after `key` (`"offset": 123` or `bytes 12`).
pub fn number_after(notice: &str, key: &str) -> usize {
    let at = notice
        .find(key)
        .unwrap_or_else(|| panic!("`{key}` in {notice}"))
        + key.len();
    notice[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}
