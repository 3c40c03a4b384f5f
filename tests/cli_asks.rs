//! What servers ask, through the command line: `--answers FILE` (`answers:`
//! and `sampling:` rules) and `--root PATH` declare exactly what they answer,
//! against the pinned reference server `@modelcontextprotocol/server-everything`
//! (MCP 2025-11-25), which lists its elicitation, sampling and roots tools
//! only to a client that declares them and asks during the call.
#![cfg(feature = "cli")]

mod common;

use std::path::Path;

use common::cli::{run, stderr, success_json};
use serde_json::{Value, json};

/// The tools server-everything offers only to a client that declares what they ask for.
const ASKING: [&str; 4] = [
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "trigger-sampling-request",
    "get-roots-list",
];

fn everything() -> String {
    let (command, args) = common::servers::everything().unwrap_or_else(|e| panic!("{e}"));
    format!("everything={command} {}", args.join(" "))
}

/// The names `tools` lists for server-everything with `flags`.
fn listed(flags: &[&str]) -> Vec<String> {
    let server = everything();
    let mut argv = vec!["tools", "--provider", "anthropic", "--server", &server];
    argv.extend_from_slice(flags);
    success_json(&run(&argv))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn asking(names: &[String]) -> Vec<&'static str> {
    ASKING
        .into_iter()
        .filter(|tool| names.iter().any(|n| n == tool))
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// `run` on an Anthropic response calling `tool` with `input`, with `flags`:
/// the answer's text, the call's record and stderr; the turn's status is `ok`.
fn call(tool: &str, input: Value, flags: &[&str]) -> (String, Value, String) {
    call_ending(tool, input, flags, "ok")
}

/// [`call`], for a turn whose status is `status`.
fn call_ending(tool: &str, input: Value, flags: &[&str], status: &str) -> (String, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let response = json!({"content": [
        {"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}
    ]});
    let response = write(dir.path(), "response.json", &response.to_string());
    let server = everything();
    let mut argv = vec!["run", "--provider", "anthropic", "--server", &server];
    argv.extend_from_slice(flags);
    argv.push(&response);
    let out = run(&argv);
    let value = success_json(&out);
    assert_eq!(value["status"], status, "{value}");
    let result = &value["results"][0];
    let text: Vec<&str> = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{result}"))
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    (text.join("\n"), value["calls"][0].clone(), stderr(&out))
}

const CANNED: &str = "sampling:\n  - tool: \"everything/trigger-sampling-*\"\n    result:\n      role: assistant\n      content: {type: text, text: \"Paris is the capital.\"}\n      model: canned-model\n      stopReason: endTurn\n";

#[test]
fn tools_lists_what_asks_only_for_a_client_that_declares_it() {
    let dir = tempfile::tempdir().unwrap();
    let forms = write(
        dir.path(),
        "forms.yaml",
        "answers:\n  - {action: decline}\n",
    );
    let sampling = write(dir.path(), "sampling.yaml", CANNED);
    let both = write(
        dir.path(),
        "both.yaml",
        &format!("answers:\n  - {{action: decline}}\n{CANNED}"),
    );
    let root = dir.path().to_str().unwrap();

    let plain = listed(&[]);
    assert!(plain.iter().any(|n| n == "echo"), "{plain:?}");
    assert_eq!(asking(&plain), Vec::<&str>::new(), "{plain:?}");
    assert_eq!(
        asking(&listed(&["--answers", &forms])),
        ["trigger-elicitation-request", "trigger-url-elicitation"]
    );
    assert_eq!(
        asking(&listed(&["--answers", &sampling])),
        ["trigger-sampling-request"]
    );
    assert_eq!(asking(&listed(&["--root", root])), ["get-roots-list"]);
    assert_eq!(
        asking(&listed(&["--answers", &both, "--root", root])),
        ASKING
    );
}

#[test]
fn tools_from_files_take_no_answers_or_roots() {
    let out = run(&[
        "tools",
        "--provider",
        "anthropic",
        "--root",
        ".",
        "tests/fixtures/corpus/time.tools.json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--answers and --root go with live servers"),
        "{}",
        stderr(&out)
    );
}

/// A 2025 server's form, asked during the call: accepted with the rule's
/// content and the form's defaults for the rest, or declined.
#[test]
fn run_answers_a_form_asked_during_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "answers.yaml",
        "answers:\n  - {key: confirm, action: cancel}\n  - tool: \"everything/trigger-elicitation-*\"\n    content: {name: Ada Lovelace, check: true, number: 7}\n",
    );
    let (text, record, _) = call(
        "trigger-elicitation-request",
        json!({}),
        &["--answers", &answers],
    );
    assert!(
        text.contains("User provided the requested information"),
        "{text}"
    );
    assert!(
        text.contains("- Name: Ada Lovelace") && text.contains("- Agreed to terms: true"),
        "{text}"
    );
    // Left out: the defaults the form declares; given: the rule's value.
    assert!(
        text.contains("- Favorite Integer: 42") && text.contains("- Favorite Number: 7"),
        "{text}"
    );
    assert!(
        text.contains("It was a dark and stormy night.") && text.contains("\"hero-1\""),
        "{text}"
    );
    assert_eq!(record["ran"], true);

    let declining = write(
        dir.path(),
        "decline.yaml",
        "answers:\n  - {tool: \"everything/*\", action: decline}\n",
    );
    let (text, _, _) = call(
        "trigger-elicitation-request",
        json!({}),
        &["--answers", &declining],
    );
    assert!(
        text.contains("User declined to provide the requested information"),
        "{text}"
    );
}

/// A question no rule answers (a `key` never matches a request sent during
/// a call), or one whose rule leaves out a required field without default,
/// is declined, and stderr says who asked what.
#[test]
fn run_declines_a_form_no_rule_answers() {
    let dir = tempfile::tempdir().unwrap();
    let keyed = write(
        dir.path(),
        "keyed.yaml",
        "answers:\n  - {key: \"0\", content: {name: Ada}}\n  - {tool: \"other/*\", content: {name: Ada}}\n",
    );
    let (text, _, stderr) = call(
        "trigger-elicitation-request",
        json!({}),
        &["--answers", &keyed],
    );
    assert!(
        text.contains("User declined to provide the requested information"),
        "{text}"
    );
    assert!(
        stderr.contains(&format!(
            "note: `everything/trigger-elicitation-request` asked for input (\"Please provide inputs for the following fields:\"); declined: {keyed} has no answer for the request"
        )),
        "{stderr}"
    );

    let bare = write(dir.path(), "bare.yaml", "answers:\n  - {action: accept}\n");
    let (text, _, stderr) = call(
        "trigger-elicitation-request",
        json!({}),
        &["--answers", &bare],
    );
    assert!(text.contains("User declined"), "{text}");
    assert!(
        stderr.contains(
            "cannot answer the request: the answer leaves out `name`, which the form requires"
        ),
        "{stderr}"
    );
}

#[test]
fn run_answers_a_page_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "answers.yaml",
        "answers:\n  - {tool: \"everything/trigger-url-elicitation\", content: {ignored: true}}\n",
    );
    let input = json!({"url": "https://example.com/sign-in"});
    let (text, _, _) = call(
        "trigger-url-elicitation",
        input.clone(),
        &["--answers", &answers],
    );
    assert!(
        text.contains("User completed the URL elicitation flow")
            && text.contains("URL: https://example.com/sign-in"),
        "{text}"
    );
    // A page is accepted without content.
    assert!(!text.contains("ignored"), "{text}");

    let cancelling = write(
        dir.path(),
        "cancel.yaml",
        "answers:\n  - {action: cancel}\n",
    );
    // A page dismissed: the server is told, and the turn halts.
    let (text, _, _) = call_ending(
        "trigger-url-elicitation",
        input,
        &["--answers", &cancelling],
        "halt",
    );
    assert!(
        text.contains("User cancelled the URL elicitation"),
        "{text}"
    );
}

#[test]
fn run_answers_sampling_with_a_canned_message() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(dir.path(), "answers.yaml", CANNED);
    let input = json!({"prompt": "The capital of France?"});
    let (text, record, _) = call(
        "trigger-sampling-request",
        input.clone(),
        &["--answers", &answers],
    );
    assert!(
        text.contains("LLM sampling result:") && text.contains("Paris is the capital."),
        "{text}"
    );
    assert!(text.contains("\"model\": \"canned-model\""), "{text}");
    assert_eq!(record["error"], Value::Null);

    // A request no rule answers is declined (the server gets MCP's rejection).
    let other = write(
        dir.path(),
        "other.yaml",
        "sampling:\n  - tool: \"other/*\"\n    result: {role: assistant, content: {type: text, text: no}, model: m}\n",
    );
    let (text, _, stderr) = call("trigger-sampling-request", input, &["--answers", &other]);
    assert!(
        text.contains(
            "the answers file has no sampling rule for `everything/trigger-sampling-request`"
        ),
        "{text}"
    );
    assert!(
        stderr.contains(&format!(
            "note: `everything/trigger-sampling-request` asked for a completion (\"Resource trigger-sampling-request context: The capital of France?\", at most 100 tokens); declined: {other} has no sampling rule for it"
        )),
        "{stderr}"
    );
}

#[test]
fn run_offers_the_roots_given() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("my project");
    std::fs::create_dir(&project).unwrap();
    let uri = mcp_adapters::mcp::Root::from_path(std::fs::canonicalize(&project).unwrap())
        .unwrap()
        .uri;
    assert!(uri.ends_with("/my%20project"), "{uri}");
    let (text, _, _) = call(
        "get-roots-list",
        json!({}),
        &["--root", project.to_str().unwrap()],
    );
    assert!(
        text.contains("Current MCP Roots (1 total)")
            && text.contains("1. my project")
            && text.contains(&uri),
        "{text}"
    );

    let missing = dir.path().join("missing");
    let out = run(&[
        "tools",
        "--provider",
        "anthropic",
        "--server",
        &everything(),
        "--root",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("--root `{}` cannot be a root", missing.display())),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_invalid_canned_message_is_an_error_naming_file_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "answers.yaml",
        "sampling:\n  - result: {role: assistant, content: {type: text, text: hi}}\n",
    );
    let out = run(&["run", "--provider", "anthropic", "--answers", &answers]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "{answers}:2: at sampling/0/result: `model` is missing"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_sends_a_dismissed_form_as_cancel_and_halts_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write(
        dir.path(),
        "cancel.yaml",
        "answers:\n  - {tool: \"everything/trigger-elicitation-*\", action: cancel}\n",
    );
    let (text, call, stderr) = call_ending(
        "trigger-elicitation-request",
        json!({}),
        &["--answers", &answers],
        "halt",
    );
    assert!(
        stderr.contains("cancels it, and the turn halts"),
        "{stderr}"
    );
    assert!(
        text.contains("User cancelled the elicitation dialog"),
        "{text}"
    );
    assert_eq!(call["ran"], true, "{call}");
}

#[test]
fn run_follows_a_task_and_answers_what_it_asks() {
    let dir = tempfile::tempdir().unwrap();
    // simulate-research-query runs only as a task (MCP 2025-11-25); with
    // `ambiguous` it asks, through the task, which interpretation is meant.
    let answers = write(
        dir.path(),
        "research.yaml",
        "answers:\n  - tool: \"everything/simulate-research-query\"\n    content: {interpretation: technical}\n",
    );
    let (text, call, _) = call(
        "simulate-research-query",
        json!({"topic": "rust", "ambiguous": true}),
        &["--answers", &answers],
    );
    assert!(
        text.contains("# Research Report: rust (technical)"),
        "{text}"
    );
    assert!(text.contains("`input_required`"), "{text}");
    assert_eq!(call["ran"], true, "{call}");
}

#[test]
fn run_plays_several_responses_as_turns_over_the_same_servers() {
    let dir = tempfile::tempdir().unwrap();
    let first = json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"message": "one"}}]});
    let second = json!({"content": [{"type": "tool_use", "id": "toolu_2", "name": "get-sum", "input": {"a": 2, "b": 3}}]});
    let first = write(dir.path(), "1.json", &first.to_string());
    let second = write(dir.path(), "2.json", &second.to_string());
    let server = everything();
    let out = run(&[
        "run",
        "--provider",
        "anthropic",
        "--server",
        &server,
        &first,
        &second,
    ]);
    let turns = success_json(&out);
    let turns = turns.as_array().unwrap_or_else(|| panic!("{turns}"));
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["results"][0]["content"][0]["text"], "Echo: one");
    assert!(
        turns[1]["results"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains('5'),
        "{}",
        turns[1]
    );
    assert_eq!(turns[1]["response"], second.as_str());
    assert_eq!(turns[1]["servers"]["everything"], "up");
    // Each turn's servers taint the next.
    assert_eq!(turns[0]["ran_servers"], json!(["everything"]));
}

/// One turn calling every tool that asks, with others beside them, at
/// concurrency 4 and 16, with rules written as bare tool names and as
/// `server/tool` globs: each call whose tool a rule names runs alone on the
/// server, so every question is attributed to its call and answered by its
/// rule (the research query's through its task), never by another's.
#[test]
fn run_answers_every_question_of_a_concurrent_turn() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("workspace");
    std::fs::create_dir(&root).unwrap();
    let rules = |prefix: &str| {
        format!(
            "answers:\n  - tool: \"{prefix}trigger-elicitation-request\"\n    content: {{name: Ada Lovelace, check: true, number: 7}}\n  - tool: \"{prefix}simulate-research-query\"\n    content: {{interpretation: technical}}\nsampling:\n  - tool: \"{prefix}trigger-sampling-request\"\n    result: {{role: assistant, content: {{type: text, text: Paris is the capital.}}, model: canned-model, stopReason: endTurn}}\n"
        )
    };
    let bare = write(dir.path(), "bare.yaml", &rules(""));
    let full = write(dir.path(), "full.yaml", &rules("everything/"));
    let mut calls = vec![
        json!({"type": "tool_use", "id": "t_elicit", "name": "trigger-elicitation-request", "input": {}}),
        json!({"type": "tool_use", "id": "t_sample", "name": "trigger-sampling-request", "input": {"prompt": "The capital of France?"}}),
        json!({"type": "tool_use", "id": "t_roots", "name": "get-roots-list", "input": {}}),
        json!({"type": "tool_use", "id": "t_research", "name": "simulate-research-query", "input": {"topic": "rust", "ambiguous": true}}),
    ];
    for i in 0..6 {
        calls.push(json!({"type": "tool_use", "id": format!("t_echo{i}"), "name": "echo", "input": {"message": format!("hello {i}")}}));
    }
    let response = write(
        dir.path(),
        "response.json",
        &json!({"content": calls}).to_string(),
    );
    let server = everything();
    for (concurrency, answers) in [("4", &bare), ("16", &full), ("16", &bare)] {
        let out = run(&[
            "run",
            "--provider",
            "anthropic",
            "--server",
            &server,
            "--max-concurrency",
            concurrency,
            "--answers",
            answers,
            "--root",
            root.to_str().unwrap(),
            &response,
        ]);
        let value = success_json(&out);
        let context = format!("--max-concurrency {concurrency} --answers {answers}");
        let text = |i: usize| -> String {
            value["results"][i]["content"]
                .as_array()
                .unwrap_or_else(|| panic!("{context}: {value}"))
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        for (i, record) in value["calls"].as_array().unwrap().iter().enumerate() {
            assert_eq!(record["error"], Value::Null, "{context}: call {i}: {value}");
        }
        assert!(
            text(0).contains("- Name: Ada Lovelace"),
            "{context}: {}",
            text(0)
        );
        assert!(
            text(1).contains("Paris is the capital."),
            "{context}: {}",
            text(1)
        );
        assert!(
            text(2).contains("Current MCP Roots (1 total)"),
            "{context}: {}",
            text(2)
        );
        assert!(
            text(3).contains("# Research Report: rust (technical)"),
            "{context}: {}",
            text(3)
        );
        for i in 0..6 {
            assert!(
                text(4 + i).contains(&format!("hello {i}")),
                "{context}: {}",
                text(4 + i)
            );
        }
        assert!(
            !stderr(&out).contains("declined"),
            "{context}: {}",
            stderr(&out)
        );
    }
}
