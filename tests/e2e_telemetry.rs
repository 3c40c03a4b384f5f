//! Spans received by a real OpenTelemetry receiver: Arize Phoenix (from
//! PyPI, pinned in `tests/e2e/phoenix-requirements.txt`), fed over OTLP/HTTP
//! by the command line's `--otlp-endpoint` from a turn against the tests'
//! lab server (the official Python SDK), which reports the `_meta` it got.
#![cfg(feature = "cli")]

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::install::manifest_dir;
use common::{runtime, servers};
use serde_json::{Value, json};

/// Phoenix, stopped when dropped.
struct Phoenix {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_phoenix() -> Phoenix {
    let python = servers::phoenix().unwrap_or_else(|e| panic!("{e}"));
    let port = servers::free_port();
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(python)
        .args(["-m", "phoenix.server.main", "serve"])
        .env("PHOENIX_HOST", "127.0.0.1")
        .env("PHOENIX_PORT", port.to_string())
        .env("PHOENIX_GRPC_PORT", servers::free_port().to_string())
        .env("PHOENIX_WORKING_DIR", dir.path())
        .env("PHOENIX_TELEMETRY_ENABLED", "false")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("phoenix starts");
    Phoenix {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    }
}

/// GET `url` as JSON, or `None` while the server does not answer.
async fn get(url: &str) -> Option<Value> {
    let response = reqwest::get(url).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

/// An attribute by its dotted name, whether the receiver keeps it flat or nested.
fn attribute<'a>(attributes: &'a Value, name: &str) -> Option<&'a Value> {
    attributes.get(name).or_else(|| {
        name.split('.')
            .try_fold(attributes, |node, key| node.get(key))
    })
}

#[test]
fn phoenix_receives_the_spans_of_a_turn_by_the_conventions() {
    let phoenix = start_phoenix();
    let lab_python = servers::python().unwrap_or_else(|e| panic!("{e}"));
    let script = manifest_dir().join("tests/e2e/lab_server.py");
    let rt = runtime();
    // Ready when it answers (it creates its database first).
    rt.block_on(async {
        for _ in 0..600 {
            if get(&format!("{}/v1/projects", phoenix.url)).await.is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("phoenix did not answer at {}", phoenix.url);
    });

    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("response.json");
    let turn = json!({"role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "meta", "input": {}}]});
    std::fs::write(&response, turn.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args([
            "run",
            "--provider",
            "anthropic",
            "--otlp-endpoint",
            &phoenix.url,
        ])
        .arg("--server")
        .arg(format!("lab={} {}", lab_python.display(), script.display()))
        .arg(&response)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen: Value =
        serde_json::from_str(run["results"][0]["content"][0]["text"].as_str().unwrap()).unwrap();
    let traceparent = seen["traceparent"]
        .as_str()
        .unwrap_or_else(|| panic!("{seen}"));

    // Phoenix takes the spans in the background: wait for the call's.
    let spans = rt.block_on(async {
        for _ in 0..300 {
            let url = format!("{}/v1/projects/default/spans?limit=1000", phoenix.url);
            if let Some(page) = get(&url).await {
                let spans = page["data"].as_array().cloned().unwrap_or_default();
                if spans.iter().any(|s| s["name"] == "tools/call meta") {
                    return spans;
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("phoenix never listed the span `tools/call meta`");
    });
    let find = |name: &str| {
        spans
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no span `{name}` in {spans:#?}"))
    };
    let execute = find("execute_tool meta");
    let call = find("tools/call meta");
    let list = find("tools/list");
    assert_eq!(
        attribute(&call["attributes"], "mcp.method.name"),
        Some(&json!("tools/call"))
    );
    assert_eq!(
        attribute(&call["attributes"], "gen_ai.tool.name"),
        Some(&json!("meta"))
    );
    assert_eq!(
        attribute(&call["attributes"], "network.transport"),
        Some(&json!("pipe"))
    );
    assert_eq!(
        attribute(&execute["attributes"], "gen_ai.operation.name"),
        Some(&json!("execute_tool"))
    );
    assert_eq!(
        attribute(&list["attributes"], "mcp.method.name"),
        Some(&json!("tools/list"))
    );
    assert_eq!(call["parent_id"], execute["context"]["span_id"]);
    let trace = call["context"]["trace_id"].as_str().unwrap();
    assert_eq!(execute["context"]["trace_id"], trace);
    // The server's `_meta` carried the same trace, and the call's span.
    let span = call["context"]["span_id"].as_str().unwrap();
    assert_eq!(traceparent, format!("00-{trace}-{span}-01"));
}
