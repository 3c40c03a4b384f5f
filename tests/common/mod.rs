//! Helpers shared by the integration tests (`mod common;`): the official-SDK
//! conformance harness and the strict-mode test helpers.
#![allow(dead_code)]

pub mod conformance;
pub mod install;
pub mod instances;
pub mod servers;

use std::path::PathBuf;

use mcp_adapters::strict::{StrictRules, convert};
use serde_json::{Map, Value, json};

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
        Err(e) => json!({"error": {"path": e.pointer, "reason": e.reason.to_string()}}),
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
