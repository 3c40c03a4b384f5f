//! The recorded programmatic exchanges (tests/fixtures/programmatic) played
//! end to end with `run` against a real stdio server on the official Python
//! SDK that serves the recorded tools: OpenAI Responses' three responses
//! and Anthropic's fifteen streamed messages, each a turn. Every call a
//! program made reaches the server once (its log says so, with its
//! idempotency key), every answer carries what the provider needs to give
//! it back to the program, and the answers validate with the official SDKs'
//! types.
#![cfg(feature = "cli")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::conformance::{Item, check};
use serde_json::Value;

fn run(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// Each turn's output (`--ndjson`), the command having succeeded.
fn turns(out: &Output) -> Vec<Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `(tool, arguments, idempotency key present)` of each call the server got.
fn logged(log: &Path) -> Vec<(String, Value, bool)> {
    common::servers::logged(log)
        .into_iter()
        .map(|line| {
            (
                line["tool"].as_str().unwrap().to_owned(),
                line["arguments"].clone(),
                line["key"].is_string(),
            )
        })
        .collect()
}

fn fixture(rel: &str) -> String {
    format!("tests/fixtures/programmatic/{rel}")
}

/// `run` against the recorded tools' server as `name`, with the tools
/// `glob` names open to programs only, printing each turn as a line; and
/// the file the server logs each call to.
fn replay(dir: &Path, provider: &str, name: &str, glob: &str) -> (Vec<String>, PathBuf) {
    let log = dir.join("calls.jsonl");
    let (python, args) = common::servers::programmatic(&log).unwrap_or_else(|e| panic!("{e}"));
    let argv = [
        "run",
        "--provider",
        provider,
        "--server",
        &format!("{name}={python} {}", args.join(" ")),
        "--programmatic-only",
        glob,
        "--ndjson",
    ]
    .map(String::from)
    .to_vec();
    (argv, log)
}

#[test]
fn the_recorded_openai_exchange_replays_against_a_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let (mut argv, log) = replay(
        dir.path(),
        "openai-responses",
        "inventory",
        "inventory/get*",
    );
    for n in 1..=3 {
        argv.push(fixture(&format!(
            "openai-responses/vercel__programmatic-tool-calling.{n}.json"
        )));
    }
    let out = run(&argv);
    let turns = turns(&out);
    assert_eq!(turns.len(), 3);
    let program = "call_O2IvSLQcJ0bwIvJZ2ovGV69M";
    let mut items = Vec::new();
    for (turn, (tool, output)) in turns.iter().zip([
        ("getInventory", r#"{"sku":"sku_123","availableUnits":42}"#),
        ("getDemand", r#"{"sku":"sku_123","requestedUnits":31}"#),
    ]) {
        assert_eq!(turn["calls"][0]["exposed_name"], tool, "{turn}");
        assert_eq!(turn["calls"][0]["caller"]["program_id"], program);
        assert_eq!(turn["calls"][0]["ran"], true);
        let answer = &turn["results"][0];
        assert_eq!(answer["caller"]["caller_id"], program, "{answer}");
        // The structured result, as the tool's output schema says it is.
        assert_eq!(answer["output"], output, "{answer}");
        items.push(Item::new(tool, "openai-responses/result", answer.clone()));
    }
    assert_eq!(turns[0]["programs"]["programs"][0]["id"], program);
    assert!(turns[2]["results"].as_array().unwrap().is_empty());
    assert!(
        turns[2]["programs"]["outputs"][0]["output"]
            .as_str()
            .unwrap()
            .contains("\"sufficient\":true")
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("the model wrote program `{program}`")),
        "{stderr}"
    );
    assert!(
        stderr.contains("written in an earlier response"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("program: `{program}` ended (completed)")),
        "{stderr}"
    );
    // Each call reached the server once, with its idempotency key.
    let calls = logged(&log);
    let names: Vec<&str> = calls.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(names, ["getInventory", "getDemand"]);
    assert!(
        calls
            .iter()
            .all(|(_, args, key)| args["sku"] == "sku_123" && *key)
    );
    check(&items).unwrap_or_else(|e| panic!("{e}"));
}

/// The Anthropic recording's fifteen messages back to back, each from
/// `message_start` to `message_stop`, as files of their own.
fn messages(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(fixture(
        "anthropic/vercel__anthropic-programmatic-tool-calling.1.chunks.jsonl",
    ))
    .unwrap();
    let mut files = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        current.push_str(line);
        current.push('\n');
        if line.contains(r#""type":"message_stop""#) {
            let file = dir.join(format!("message{}.jsonl", files.len() + 1));
            std::fs::write(&file, std::mem::take(&mut current)).unwrap();
            files.push(file.display().to_string());
        }
    }
    files
}

#[test]
fn the_recorded_anthropic_exchange_replays_against_a_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let (mut argv, log) = replay(dir.path(), "anthropic", "dice", "dice/rollDie");
    argv.extend(["--framing".into(), "json".into()]);
    let streams = messages(dir.path());
    assert_eq!(streams.len(), 15);
    for file in &streams {
        argv.push("--stream".into());
        argv.push(file.clone());
    }
    let out = run(&argv);
    let turns = turns(&out);
    assert_eq!(turns.len(), 15);
    let program = "srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK";
    let container = "container_011CWHPPTDTn1XufeRB9uHeH";
    let mut items = Vec::new();
    for (i, turn) in turns.iter().take(14).enumerate() {
        assert_eq!(
            turn["calls"][0]["caller"]["program_id"],
            program,
            "turn {}: {turn}",
            i + 1
        );
        let answer = &turn["results"][0];
        assert_eq!(answer["type"], "tool_result");
        assert_eq!(answer["tool_use_id"], turn["calls"][0]["call_id"]);
        assert!(
            answer["content"].as_str().unwrap().parse::<u8>().is_ok(),
            "{answer}"
        );
        // A message of tool results only, and the container named next.
        assert_eq!(turn["results_only"], true);
        assert_eq!(turn["request"]["container"], container);
        items.push(Item::new(
            format!("turn {}", i + 1),
            "anthropic/result",
            answer.clone(),
        ));
    }
    let last = &turns[14];
    assert!(last["results"].as_array().unwrap().is_empty());
    assert_eq!(last["programs"]["outputs"][0]["program_id"], program);
    assert!(
        last["programs"]["outputs"][0]["output"]["stdout"]
            .as_str()
            .unwrap()
            .contains("DICE GAME")
    );
    // The fourteen rolls, each sent once, in the model's order.
    let calls = logged(&log);
    assert_eq!(calls.len(), 14);
    let players: Vec<&str> = calls
        .iter()
        .map(|(_, a, _)| a["player"].as_str().unwrap())
        .collect();
    assert_eq!(players[..4], ["player1", "player2", "player1", "player2"]);
    assert!(calls.iter().all(|(tool, _, key)| tool == "rollDie" && *key));
    check(&items).unwrap_or_else(|e| panic!("{e}"));
}
