//! One meaning for `cancel` in `run --answers FILE`, in both sections and at
//! both revisions: a person who cancels stops the turn (as an approver's
//! deny-and-halt does), the server being told what its revision lets it be
//! told; `decline` answers the question and the turn goes on. Each case is
//! a replay of two RESPONSEs whose first has the asking call first and a
//! plain call after it, one call at a time: the plain call is not run and
//! the second RESPONSE is not played.
//!
//! Servers: the pinned reference server `@modelcontextprotocol/server-everything`
//! (MCP 2025-11-25: elicitation and sampling requests sent during the call),
//! and the tests' own servers on the official Python SDK at MCP 2026-07-28
//! (`tests/e2e/probe_server.py`, which logs every `tools/call` it receives;
//! `tests/e2e/input_server.py`, whose `summarize_notes` asks for a completion
//! and the roots in one `input_required` round).
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use common::cli::run;
use serde_json::{Value, json};

fn server(name: &str, (command, args): (String, Vec<String>)) -> String {
    format!("{name}={command} {}", args.join(" "))
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Two responses: `asking` (tool, input) then `plain`, and a second turn
/// calling `plain` again.
fn responses(dir: &Path, asking: (&str, Value), plain: (&str, Value)) -> [String; 2] {
    let first = json!({"content": [
        {"type": "tool_use", "id": "asking", "name": asking.0, "input": asking.1},
        {"type": "tool_use", "id": "plain", "name": plain.0, "input": plain.1},
    ]});
    let second = json!({"content": [
        {"type": "tool_use", "id": "later", "name": plain.0, "input": plain.1},
    ]});
    [
        write(dir, "first.json", &first.to_string()),
        write(dir, "second.json", &second.to_string()),
    ]
}

/// Runs the two turns with `flags`; the turns printed and stderr.
fn replay(server: &str, flags: &[&str], responses: &[String; 2]) -> (Vec<Value>, String) {
    let mut argv = vec![
        "run",
        "--provider",
        "anthropic",
        "--max-concurrency",
        "1",
        "--server",
        server,
    ];
    argv.extend_from_slice(flags);
    argv.extend(responses.iter().map(String::as_str));
    let out = run(&argv);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let turns: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (turns, stderr)
}

/// The turn halted: one turn printed, the plain call not run, the second
/// response not played, and stderr naming the rule's file.
fn halted(turns: &[Value], stderr: &str, answers: &str) {
    assert_eq!(
        turns.len(),
        1,
        "the second response is not played: {turns:?}"
    );
    let turn = &turns[0];
    assert_eq!(turn["status"], "halt", "{turn}");
    let plain = &turn["calls"][1];
    assert_eq!(plain["ran"], false, "{plain}");
    assert!(
        plain["error"]
            .as_str()
            .unwrap()
            .contains("this turn was halted"),
        "{plain}"
    );
    assert!(
        stderr.contains(&format!(
            "cancelled: {answers} cancels it, and the turn halts"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("turn 1 halted; the 1 later turn(s) were not played"),
        "{stderr}"
    );
}

/// The answer's text blocks, joined.
fn text(answer: &Value) -> String {
    answer["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The probe server, logging the calls it receives to `log`.
fn probe(log: &Path) -> String {
    server(
        "probe",
        common::servers::probe(log).unwrap_or_else(|e| panic!("{e}")),
    )
}

/// The tools the probe was called for, in order.
fn called(log: &Path) -> Vec<String> {
    common::servers::logged(log)
        .iter()
        .map(|entry| entry["tool"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn everything() -> String {
    server(
        "everything",
        common::servers::everything().unwrap_or_else(|e| panic!("{e}")),
    )
}

#[test]
fn answers_cancel_at_2025_sends_cancel_to_the_server_and_halts_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "answers.yaml",
        "answers:\n  - {tool: trigger-elicitation-request, action: cancel}\n",
    );
    let responses = responses(
        dir.path(),
        ("trigger-elicitation-request", json!({})),
        ("echo", json!({"message": "hi"})),
    );
    let (turns, stderr) = replay(&everything(), &["--answers", &answers], &responses);
    halted(&turns, &stderr, &answers);
    // The server was told, and its result answers the call.
    let asking = text(&turns[0]["results"][0]);
    assert!(
        asking.contains("User cancelled the elicitation dialog"),
        "{asking}"
    );
    assert_eq!(turns[0]["calls"][0]["ran"], true);
}

#[test]
fn sampling_cancel_at_2025_refuses_the_request_and_halts_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "answers.yaml",
        "sampling:\n  - {tool: trigger-sampling-request, action: cancel}\n",
    );
    let responses = responses(
        dir.path(),
        (
            "trigger-sampling-request",
            json!({"prompt": "The capital of France?"}),
        ),
        ("echo", json!({"message": "hi"})),
    );
    let (turns, stderr) = replay(&everything(), &["--answers", &answers], &responses);
    halted(&turns, &stderr, &answers);
    let asking = &turns[0]["results"][0];
    assert!(
        text(asking).contains("the answers file cancels this sampling request"),
        "{asking}"
    );
}

/// The probe's `transfer` (which asks to confirm, then for a code) then an
/// `append`, replayed with `rule` answering the confirmation: the turns,
/// stderr, the answers file and the tools the probe was called for.
fn transfer_with(rule: &str) -> (Vec<Value>, String, String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("probe.jsonl");
    let answers = write(
        dir.path(),
        "answers.yaml",
        &format!("answers:\n  - {{tool: transfer, key: confirm, {rule}}}\n"),
    );
    let responses = responses(
        dir.path(),
        ("transfer", json!({"amount": 5, "to": "bob"})),
        ("append", json!({"text": "after"})),
    );
    let (turns, stderr) = replay(&probe(&log), &["--answers", &answers], &responses);
    (turns, stderr, answers, called(&log))
}

#[test]
fn answers_cancel_at_2026_calls_the_tool_no_more_and_halts_the_turn() {
    let (turns, stderr, answers, tools) = transfer_with("action: cancel");
    halted(&turns, &stderr, &answers);
    let record = &turns[0]["calls"][0];
    let error = record["error"].as_str().unwrap();
    assert!(error.starts_with("InputRequired"), "{record}");
    assert!(error.contains("the answers file cancels it"), "{record}");
    assert_eq!(tools, ["transfer"], "called once, never with the cancel");
}

#[test]
fn answers_decline_at_2026_answers_the_question_and_the_turn_goes_on() {
    let (turns, stderr, _, tools) = transfer_with("action: decline");
    assert_eq!(turns.len(), 2, "{stderr}");
    assert_eq!(turns[0]["status"], "ok");
    assert_eq!(text(&turns[0]["results"][0]), "Transfer cancelled");
    assert_eq!(
        tools,
        ["transfer", "transfer", "append", "append"],
        "called again with the decline, and both turns ran"
    );
}

#[test]
fn sampling_cancel_at_2026_ends_the_call_and_halts_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let input = server(
        "input",
        common::servers::input().unwrap_or_else(|e| panic!("{e}")),
    );
    let answers = write(
        dir.path(),
        "answers.yaml",
        "sampling:\n  - {tool: summarize_notes, action: cancel}\n",
    );
    let responses = responses(
        dir.path(),
        ("summarize_notes", json!({"topic": "rust"})),
        ("delete_note", json!({"name": "todo"})),
    );
    let root = dir.path().to_str().unwrap();
    let (turns, stderr) = replay(&input, &["--answers", &answers, "--root", root], &responses);
    halted(&turns, &stderr, &answers);
    let record = &turns[0]["calls"][0];
    let error = record["error"].as_str().unwrap();
    assert!(error.starts_with("InputRequired"), "{record}");
    assert!(
        error.contains(
            "the sampling handler cancelled it: the answers file cancels this sampling request"
        ),
        "{record}"
    );
}
