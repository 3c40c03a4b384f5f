//! Turns that outlive a process, through the command line: `run --suspend`
//! in one process, `run --resume` in the next ones, against the tests' probe
//! server (`tests/e2e/probe_server.py`, on the official Python SDK), whose
//! own log of the `tools/call` requests it received shows each sent exactly
//! once, each input round going on from the server's request state, and
//! one idempotency key per call.
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use serde_json::{Value, json};

use common::cli::{run, stderr, stdout_json};
use common::servers::logged;

fn tools(log: &Path) -> Vec<String> {
    logged(log)
        .iter()
        .map(|r| r["tool"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_turn_suspended_in_one_process_finishes_in_others_sending_each_call_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("probe.jsonl");
    let (python, args) = common::servers::probe(&log).unwrap_or_else(|e| panic!("{e}"));
    let server = format!("probe={python} {}", args.join(" "));
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    std::fs::write(
        path("response.json"),
        json!({"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "append", "input": {"text": "one"}},
            {"type": "tool_use", "id": "toolu_2", "name": "publish", "input": {"text": "two"}},
            {"type": "tool_use", "id": "toolu_3", "name": "transfer", "input": {"amount": 5, "to": "bob"}}
        ]})
        .to_string(),
    )
    .unwrap();
    std::fs::write(path("policy.yaml"), "default: allow\nask: [publish]\n").unwrap();
    std::fs::write(
        path("confirm.yaml"),
        "answers:\n  - {tool: transfer, key: confirm, content: {confirm: true}}\n",
    )
    .unwrap();
    std::fs::write(
        path("all.yaml"),
        "answers:\n  - {tool: transfer, key: confirm, content: {confirm: true}}\n  - {tool: transfer, key: code, content: {code: \"1234\"}}\n",
    )
    .unwrap();
    let base = [
        "run",
        "--provider",
        "anthropic",
        "--server",
        &server,
        "--policy",
        &path("policy.yaml"),
    ];
    let with = |extra: &[&str]| {
        let mut argv: Vec<&str> = base.to_vec();
        argv.extend_from_slice(extra);
        run(&argv)
    };

    // First process: `publish` waits for approval, `transfer` for its answer.
    let state = path("state.json");
    let out = with(&["--suspend", &state, &path("response.json")]);
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    let first = stdout_json(&out);
    assert_eq!(first["status"], "suspended");
    assert!(first["results"].as_array().unwrap().is_empty());
    let waiting: Vec<(&str, &str)> = first["waiting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["call_id"].as_str().unwrap(),
                w["waits_for"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(waiting, [("toolu_2", "approval"), ("toolu_3", "input")]);
    assert!(
        first["waiting"][1]["requests"]["confirm"].is_object(),
        "{}",
        first["waiting"][1]
    );
    let err = stderr(&out);
    assert!(
        err.contains("waiting: call toolu_2 (`probe/publish`) waits for approval"),
        "{err}"
    );
    assert!(
        err.contains("waiting: call toolu_3 (`probe/transfer`) waits for answers"),
        "{err}"
    );
    assert!(err.contains("Send 5 to bob?"), "{err}");
    let mut first_sent = tools(&log);
    first_sent.sort();
    assert_eq!(first_sent, ["append", "transfer"].map(String::from));

    // Second process: publish approved, the first question answered; the
    // code still has no answer, so the turn waits again.
    let again = path("state2.json");
    let out = with(&[
        "--resume",
        &state,
        "--approve-call",
        "toolu_2",
        "--answers",
        &path("confirm.yaml"),
        "--suspend",
        &again,
        "--deny-call",
        "toolu_9",
    ]);
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: --deny-call toolu_9 names no call of this turn"),
        "{}",
        stderr(&out)
    );
    let second = stdout_json(&out);
    assert_eq!(second["waiting"].as_array().unwrap().len(), 1);
    assert!(second["waiting"][0]["requests"]["code"].is_object());
    let mut sorted = tools(&log)[2..].to_vec();
    sorted.sort();
    assert_eq!(sorted, ["publish", "transfer"].map(String::from));

    // Third process: the code answered, the turn answered in the model's order.
    let out = with(&["--resume", &again, "--answers", &path("all.yaml")]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let last = stdout_json(&out);
    assert_eq!(last["status"], "ok");
    let texts: Vec<&str> = last["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["appended one", "published two", "Sent 5 to bob (code 1234)"]
    );
    let ids: Vec<&str> = last["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3"]);

    // The server's own record: each request once, the rounds with the state
    // the server gave, one key per call across the three processes.
    let log = logged(&log);
    let count = |tool: &str| log.iter().filter(|r| r["tool"] == tool).count();
    assert_eq!(
        (count("append"), count("publish"), count("transfer")),
        (1, 1, 3)
    );
    let transfer: Vec<&Value> = log.iter().filter(|r| r["tool"] == "transfer").collect();
    let states: Vec<&Value> = transfer.iter().map(|r| &r["state"]).collect();
    assert_eq!(states, [&Value::Null, &json!("confirm"), &json!("code")]);
    let key = &transfer[0]["key"];
    assert!(key.is_string(), "{log:?}");
    assert!(transfer.iter().all(|r| &r["key"] == key), "{log:?}");
    let keys: std::collections::BTreeSet<&str> =
        log.iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 3, "one key per call: {log:?}");
}

#[test]
fn a_state_file_of_another_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    std::fs::write(
        &state,
        json!({"format": "mcp-adapters/turn-state", "version": 999, "library": "9.0.0"})
            .to_string(),
    )
    .unwrap();
    let out = run(&[
        "run",
        "--provider",
        "anthropic",
        "--resume",
        state.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("version 999"), "{err}");
    assert!(err.contains("mcp-adapters 9.0.0"), "{err}");
    assert!(err.contains("state.json"), "{err}");
    assert!(out.stdout.is_empty());
}
