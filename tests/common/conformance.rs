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

use super::install::{Lock, manifest_dir, target_dir};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
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
    let python = venv_python()?;
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
    let python = venv_python()?;
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

fn conformance_dir() -> PathBuf {
    manifest_dir().join("tests").join("conformance")
}

fn check_py() -> PathBuf {
    conformance_dir().join("check.py")
}

fn python_in(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// FNV-1a: enough to notice that requirements.txt changed, with no extra crate.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Returns the virtualenv's python, creating the venv first when it is missing,
/// half-built or built from another requirements.txt.
fn venv_python() -> Result<PathBuf, String> {
    let requirements = conformance_dir().join("requirements.txt");
    let content = fs::read(&requirements)
        .map_err(|e| format!("conformance: cannot read {}: {e}", requirements.display()))?;
    let stamp_text = format!("requirements.txt fnv1a64 {:016x}\n", fnv1a(&content));
    let target = target_dir();
    let venv = target.join("conformance-venv");
    let stamp = venv.join(".requirements-stamp");
    let python = python_in(&venv);
    let ready = || {
        python.exists() && fs::read_to_string(&stamp).ok().as_deref() == Some(stamp_text.as_str())
    };
    if ready() {
        return Ok(python);
    }
    fs::create_dir_all(&target)
        .map_err(|e| format!("conformance: cannot create {}: {e}", target.display()))?;
    let _lock = Lock::acquire(&target.join("conformance-venv.lock"), "conformance")?;
    // Another test binary may have finished the venv while this one waited.
    if ready() {
        return Ok(python);
    }
    if venv.exists() {
        fs::remove_dir_all(&venv).map_err(|e| {
            format!(
                "conformance: cannot remove the stale venv {}: {e}",
                venv.display()
            )
        })?;
    }
    let base = std::env::var("CONFORMANCE_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let out = Command::new(&base)
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| {
            format!(
                "conformance: could not run `{base} -m venv`: {e}. Install Python 3.9 or newer \
                 with its venv module (Debian/Ubuntu: `apt-get install python3 python3-venv`) \
                 or point CONFORMANCE_PYTHON at a python3 binary."
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "conformance: `{base} -m venv {}` failed ({}):\n{}{}\nOn Debian/Ubuntu install the \
             venv module with `apt-get install python3-venv`, or set CONFORMANCE_PYTHON to a \
             python3 that has it.",
            venv.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut pip = Command::new(&python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "-q",
        "-r",
    ])
    .arg(&requirements);
    let out = run(&mut pip, "pip install")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(25).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "conformance: `{} -m pip install -r {}` failed ({}):\n{}\nCheck that PyPI is \
             reachable (proxy settings: PIP_INDEX_URL, HTTPS_PROXY) and that every pin in \
             requirements.txt exists for this Python version; the venv is rebuilt on the next run.",
            python.display(),
            requirements.display(),
            out.status,
            tail.join("\n")
        ));
    }
    // Written last: a venv without this stamp is treated as half-built.
    fs::write(&stamp, &stamp_text)
        .map_err(|e| format!("conformance: cannot write {}: {e}", stamp.display()))?;
    Ok(python)
}

fn run(cmd: &mut Command, what: &str) -> Result<Output, String> {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .output()
        .map_err(|e| {
            format!(
                "conformance: could not run {what} ({}): {e}. Delete {} to rebuild the venv.",
                cmd.get_program().to_string_lossy(),
                target_dir().join("conformance-venv").display()
            )
        })
}
