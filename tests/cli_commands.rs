//! The command-line interface: JSON on stdout, errors on stderr with a non-zero exit.
#![cfg(feature = "cli")]

mod common;

use std::process::{Command, Output};

use common::*;
use serde_json::Value;

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn providers_lists_every_spec() {
    let out = json(&run(&["providers"], None));
    let ids: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    for id in CORE_PROVIDERS {
        assert!(ids.contains(id), "{ids:?}");
    }
    assert!(
        out.as_array()
            .unwrap()
            .iter()
            .all(|p| p["title"].is_string())
    );
}

#[test]
fn tools_on_the_bundled_demo_and_on_files() {
    let demo = json(&run(&["tools", "--provider", "openai-chat"], None));
    assert_eq!(demo["tools"].as_array().unwrap().len(), 4);
    assert!(demo["null_paths"]["notes_search"].is_array());
    assert_eq!(demo["report"]["fallbacks"][0]["reason"], "open_map");
    let hub = json(&run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--cache-control",
            "last",
            "tests/fixtures/corpus/time.tools.json",
            "clock=tests/fixtures/corpus/fetch.tools.json",
        ],
        None,
    ));
    let names: Vec<&str> = hub["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "time__get_current_time",
            "time__convert_time",
            "clock__fetch"
        ]
    );
    assert_eq!(hub["tools"][2]["cache_control"]["type"], "ephemeral");
}

#[test]
fn calls_and_result() {
    let out = json(&run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--tools",
            "everything=tests/fixtures/corpus/everything.tools.json",
            "tests/fixtures/responses/anthropic/rejections.json",
            "--tools",
            "time=tests/fixtures/corpus/time.tools.json",
        ],
        None,
    ));
    assert_eq!(out["calls"].as_array().unwrap().len(), 1);
    assert_eq!(out["rejected"].as_array().unwrap().len(), 6);
    // One file per --tools, so the response may come before or after them.
    let reordered = json(&run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "tests/fixtures/responses/anthropic/rejections.json",
            "--tools",
            "everything=tests/fixtures/corpus/everything.tools.json",
            "--tools",
            "time=tests/fixtures/corpus/time.tools.json",
        ],
        None,
    ));
    assert_eq!(reordered, out);
    let answer = json(&run(
        &[
            "result",
            "--provider",
            "openai-responses",
            "--call-id",
            "call_1",
            "--name",
            "t",
            "tests/fixtures/results/image_png.json",
        ],
        None,
    ));
    assert_eq!(answer["output"][1]["type"], "input_image");
    let failed = json(&run(
        &[
            "result",
            "--provider",
            "gemini",
            "--name",
            "t",
            "--error",
            "timed out",
        ],
        None,
    ));
    assert_eq!(failed["functionResponse"]["response"]["error"], "timed out");
    let prefixed = json(&run(
        &[
            "result",
            "--provider",
            "openai-chat",
            "--call-id",
            "c",
            "--name",
            "t",
            "--error-prefix",
            "FAILED: ",
            "-",
        ],
        Some(r#"{"content": [{"type": "text", "text": "x"}], "isError": true}"#),
    ));
    assert_eq!(prefixed["content"], "FAILED: x");
}

#[test]
fn strict_schema_exit_codes() {
    let ok = run(
        &["strict-schema", "-"],
        Some(r#"{"type": "object", "properties": {"a": {"type": "string"}}}"#),
    );
    let ok = json(&ok);
    assert_eq!(ok["null_paths"], serde_json::json!([["a"]]));
    let bad = run(
        &["strict-schema", "-"],
        Some(r#"{"type": "object", "properties": {"a": {"not": {}}}}"#),
    );
    assert_eq!(bad.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert_eq!(err["error"]["reason"], "not");
    assert_eq!(err["error"]["path"], "/properties/a/not");
}

#[test]
fn check_prints_a_table_or_json() {
    let table = run(
        &[
            "check",
            "--provider",
            "openai-chat",
            "tests/fixtures/corpus/kubernetes.tools.json",
        ],
        None,
    );
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.starts_with("SERVER"), "{text}");
    assert!(
        text.contains("fallback") && text.contains("open_map"),
        "{text}"
    );
    let rows = json(&run(
        &["check", "--json", "tests/fixtures/corpus/time.tools.json"],
        None,
    ));
    let statuses: Vec<&str> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert!(
        statuses.contains(&"strict") && statuses.contains(&"as is"),
        "{statuses:?}"
    );
}

#[test]
fn errors_go_to_stderr_with_a_non_zero_exit() {
    for (args, needle) in [
        (vec!["tools", "--provider", "nope"], "no provider `nope`"),
        (
            vec!["tools", "--provider", "anthropic", "missing.json"],
            "missing.json",
        ),
        (
            vec!["tools", "--provider", "gemini", "--cache-control", "last"],
            "has no option",
        ),
        (
            vec!["tools", "--provider", "anthropic", "--specs", "no/such/dir"],
            "no/such/dir",
        ),
    ] {
        let out = run(&args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let bad_json = run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--tools",
            "tests/fixtures/corpus/time.tools.json",
            "--",
            "-",
        ],
        Some("{not json"),
    );
    assert_eq!(bad_json.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_json.stderr).contains("invalid JSON"));
}

/// `run` without servers or a response replays a bundled recorded response per
/// provider against the in-process demo server: the whole cycle, nothing installed.
#[test]
fn run_replays_the_bundled_cycle_for_every_provider() {
    let providers = json(&run(&["providers"], None));
    for p in providers.as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let out = run(&["run", "--provider", id], None);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(stderr.contains("no --policy"), "{id}: {stderr}");
        let cycle = json(&out);
        assert_eq!(cycle["status"], "ok", "{id}");
        let ran: Vec<bool> = cycle["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["ran"].as_bool().unwrap())
            .collect();
        assert_eq!(
            ran,
            [true, true, true, false],
            "{id}: the unknown tool is answered, never sent"
        );
        let last = cycle["results"][3].to_string();
        assert!(
            last.contains("unknown tool `notes_delete_all`"),
            "{id}: {last}"
        );
    }
}

/// A policy file: `deny` wins, then `allow`, then `ask`, which the command line answers with a denial.
#[test]
fn run_with_a_policy_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.yaml");
    std::fs::write(
        &file,
        "allow: [\"notes/notes.*\"]\nask: [\"notes/*\"]\ndeny: [\"notes/notes.render\"]\n",
    )
    .unwrap();
    let out = run(
        &[
            "run",
            "--provider",
            "openai-chat",
            "--policy",
            file.to_str().unwrap(),
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("no --policy"), "{stderr}");
    let cycle = json(&out);
    let content: Vec<&str> = cycle["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"].as_str().unwrap())
        .collect();
    assert!(content[0].starts_with("2 notes match"), "{content:?}");
    assert!(content[1].starts_with("Created note"), "{content:?}");
    assert!(
        content[2].contains("denied by policy (rule `notes/notes.render`)"),
        "{content:?}"
    );
    std::fs::write(
        &file,
        "allow: [\"notes/notes.search\"]\nask: [\"notes/*\"]\n",
    )
    .unwrap();
    let cycle = json(&run(
        &[
            "run",
            "--provider",
            "openai-chat",
            "--policy",
            file.to_str().unwrap(),
        ],
        None,
    ));
    assert!(
        cycle["results"][1]["content"]
            .as_str()
            .unwrap()
            .contains("needs approval"),
        "{cycle}"
    );
    std::fs::write(&file, "allow: [\"[\"]\n").unwrap();
    let bad = run(
        &[
            "run",
            "--provider",
            "openai-chat",
            "--policy",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("policy.yaml"));
}

/// `run --answers FILE` against the tests' MCP 2026-07-28 server: canned
/// answers answer the questions; a question without one, and every question
/// without the file, is declined, and stderr says so.
#[test]
fn run_answers_questions_from_a_file() {
    let (python, args) = common::servers::input().unwrap_or_else(|e| panic!("{e}"));
    let server = format!("input={python} {}", args.join(" "));
    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("response.json");
    std::fs::write(
        &response,
        serde_json::json!({"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "delete_note", "input": {"name": "todo"}},
            {"type": "tool_use", "id": "toolu_2", "name": "transfer", "input": {"amount": 5, "to": "bob"}}
        ]})
        .to_string(),
    )
    .unwrap();
    let answers = dir.path().join("answers.yaml");
    let texts = |out: &Output| -> Vec<String> {
        json(out)["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["content"][0]["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let run_with = |extra: &[&str]| {
        let mut argv = vec!["run", "--provider", "anthropic", "--server", &server];
        argv.extend_from_slice(extra);
        argv.push(response.to_str().unwrap());
        run(&argv, None)
    };

    std::fs::write(
        &answers,
        "answers:\n  - {key: confirm, content: {confirm: true}}\n  - {tool: \"input/transfer\", key: code, content: {code: \"1234\"}}\n",
    )
    .unwrap();
    let out = run_with(&["--answers", answers.to_str().unwrap()]);
    assert_eq!(
        texts(&out),
        ["Deleted note todo", "Sent 5 to bob (code 1234)"]
    );

    // No answer for the code: the second round is declined.
    std::fs::write(
        &answers,
        "answers:\n  - {key: confirm, content: {confirm: true}}\n",
    )
    .unwrap();
    let out = run_with(&["--answers", answers.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("has no answer for code"), "{stderr}");
    let results = texts(&out);
    assert_eq!(results[0], "Deleted note todo");
    assert!(
        results[1].contains("the answers file has no answer for code"),
        "{results:?}"
    );

    // A declining answer goes to the server, which decides.
    std::fs::write(
        &answers,
        "answers:\n  - {tool: \"input/delete_*\", action: decline}\n",
    )
    .unwrap();
    let out = run_with(&["--answers", answers.to_str().unwrap()]);
    assert_eq!(texts(&out)[0], "Kept note todo");

    // Without the file every question is declined.
    let out = run_with(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains(
            "`input/delete_note` asked for input (confirm: \"Delete note 'todo'?\"); declined"
        ),
        "{stderr}"
    );
    assert!(
        texts(&out)
            .iter()
            .all(|t| t.contains("no --answers file was given"))
    );

    // A malformed file is an error naming where.
    std::fs::write(&answers, "answers:\n  - {key: confirm, content: 3}\n").unwrap();
    let out = run_with(&["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("at answers/0/content"), "{stderr}");
}
