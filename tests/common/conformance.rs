//! Glue between integration tests and `tests/conformance/check.py`, which
//! validates emitted JSON against the providers' official Python SDK types.
//!
//! The first call creates a virtualenv in `<target>/conformance-venv` with the
//! exact versions from `tests/conformance/requirements.txt`; later calls (and
//! other test binaries) reuse it until that file changes. A lock file keeps two
//! test binaries from building it at once.
//!
//! ```ignore
//! mod common;
//! use common::conformance::{Item, check};
//! let items = vec![Item::new("weather tool", "openai-chat/tool", json!({...}))];
//! check(&items).unwrap_or_else(|e| panic!("{e}"));
//! ```
//!
//! A provider that is a variant of one the checker knows (an OpenAI-compatible
//! gateway, say) names the SDK type with `@`: `"my-gateway/tool@openai-chat/tool"`.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Provider id and the checker's type for its tool definitions.
pub const TOOLS: &[(&str, &str)] = &[
    ("anthropic", "anthropic/tool"),
    ("openai-chat", "openai-chat/tool"),
    ("openai-responses", "openai-responses/tool"),
    ("gemini", "gemini/tool"),
    ("anthropic-strict", "anthropic-strict/tool@anthropic/tool"),
    ("bedrock-converse", "bedrock-converse/tool"),
    ("mistral", "mistral/tool"),
    ("cohere", "cohere/tool"),
    ("gemini-interactions", "gemini-interactions/tool"),
    ("xai", "xai/tool@openai-chat/tool"),
    ("groq", "groq/tool@openai-chat/tool"),
    ("deepseek", "deepseek/tool@openai-chat/tool"),
    ("moonshot", "moonshot/tool@openai-chat/tool"),
    ("qwen", "qwen/tool@openai-chat/tool"),
    ("zai", "zai/tool@openai-chat/tool"),
    ("cerebras", "cerebras/tool@openai-chat/tool"),
    ("fireworks", "fireworks/tool@openai-chat/tool"),
    ("together", "together/tool@openai-chat/tool"),
    ("openrouter", "openrouter/tool@openai-chat/tool"),
    ("vllm", "vllm/tool@openai-chat/tool"),
    ("azure-openai", "azure-openai/tool@openai-chat/tool"),
    ("gemini-openai", "gemini-openai/tool@openai-chat/tool"),
    ("ollama-openai", "ollama-openai/tool@openai-chat/tool"),
    // Hugging Face's Responses tools carry no `strict`, which OpenAI's FunctionToolParam
    // requires: there is no SDK type of its own to check them against.
    ("minimax", "minimax/tool@anthropic/tool"),
];

/// Provider id and the checker's type for its answers.
pub const RESULTS: &[(&str, &str)] = &[
    ("anthropic", "anthropic/result"),
    ("openai-chat", "openai-chat/result"),
    ("openai-responses", "openai-responses/result"),
    ("gemini", "gemini/result"),
    (
        "gemini-multimodal",
        "gemini-multimodal/result@gemini/result",
    ),
    ("bedrock-converse", "bedrock-converse/result"),
    ("mistral", "mistral/result"),
    ("cohere", "cohere/result"),
    ("gemini-interactions", "gemini-interactions/result"),
    ("xai", "xai/result@openai-chat/result"),
    ("groq", "groq/result@openai-chat/result"),
    ("deepseek", "deepseek/result@openai-chat/result"),
    ("moonshot", "moonshot/result@openai-chat/result"),
    ("qwen", "qwen/result@openai-chat/result"),
    ("zai", "zai/result@openai-chat/result"),
    ("cerebras", "cerebras/result@openai-chat/result"),
    ("fireworks", "fireworks/result@openai-chat/result"),
    ("together", "together/result@openai-chat/result"),
    ("openrouter", "openrouter/result@openai-chat/result"),
    ("vllm", "vllm/result@openai-chat/result"),
    ("azure-openai", "azure-openai/result@openai-chat/result"),
    ("gemini-openai", "gemini-openai/result@openai-chat/result"),
    ("ollama-openai", "ollama-openai/result@openai-chat/result"),
    ("huggingface", "huggingface/result@openai-responses/result"),
    ("minimax", "minimax/result@anthropic/result"),
];

/// One JSON value to validate.
pub struct Item {
    /// Shown in failure messages.
    pub label: String,
    /// `"<provider>/<kind>"`, e.g. `"anthropic/tool"` or `"bedrock-converse/result"`;
    /// `"<variant>/<kind>@<sdk type>"` for a provider variant.
    pub check: String,
    /// The JSON the library emitted.
    pub value: serde_json::Value,
}

impl Item {
    pub fn new(
        label: impl Into<String>,
        check: impl Into<String>,
        value: serde_json::Value,
    ) -> Self {
        Item {
            label: label.into(),
            check: check.into(),
            value,
        }
    }
}

/// Validates every item; `Err` lists each failing item with its validation error.
pub fn check(items: &[Item]) -> Result<(), String> {
    let python = test_installs::conformance_python()?;
    let entries: Vec<serde_json::Value> = items
        .iter()
        .map(|item| {
            let (check, sdk_type) = match item.check.split_once('@') {
                Some((check, sdk_type)) => (check, Some(sdk_type)),
                None => (item.check.as_str(), None),
            };
            let mut entry = serde_json::json!({
                "label": item.label,
                "check": check,
                "value": item.value,
            });
            if let Some(sdk_type) = sdk_type {
                entry["sdk_type"] = serde_json::Value::from(sdk_type);
            }
            entry
        })
        .collect();
    let doc = serde_json::json!({ "items": entries });
    let mut file = tempfile::Builder::new()
        .prefix("conformance-items-")
        .suffix(".json")
        .tempfile()
        .map_err(|e| format!("conformance: cannot create a temp file: {e}"))?;
    file.write_all(doc.to_string().as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| format!("conformance: cannot write {}: {e}", file.path().display()))?;
    let mut cmd = Command::new(&python);
    cmd.arg(check_py()).arg(file.path());
    interpret(&run(&mut cmd, "check.py")?)
}

/// Runs the checker's own tests (`check.py --self-test`).
pub fn self_test() -> Result<(), String> {
    let python = test_installs::conformance_python()?;
    let mut cmd = Command::new(&python);
    cmd.arg(check_py()).arg("--self-test");
    interpret(&run(&mut cmd, "check.py --self-test")?)
}

fn interpret(out: &Output) -> Result<(), String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(format!("conformance failures:\n{}", stdout.trim_end())),
        _ => Err(format!(
            "conformance harness error ({}):\n{}{}",
            out.status,
            stdout,
            stderr.trim_end()
        )),
    }
}

fn check_py() -> PathBuf {
    test_installs::conformance_dir().join("check.py")
}

fn run(cmd: &mut Command, what: &str) -> Result<Output, String> {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .map_err(|e| {
            format!(
                "conformance: could not run {what} ({}): {e}. Delete {} to rebuild the venv.",
                cmd.get_program().to_string_lossy(),
                test_installs::target_dir()
                    .join("conformance-venv")
                    .display()
            )
        })
}
