//! Shared helpers for the integration tests.
#![allow(dead_code)]

use std::path::Path;

use mcp_adapters::mcp::{Tool, parse_tools_list};
use mcp_adapters::spec::{Provider, Registry};
use serde_json::Value;

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

/// insta settings that put snapshots in the top-level `snapshots/` folder.
pub fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
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
