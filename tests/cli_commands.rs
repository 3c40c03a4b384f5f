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
fn select_adds_the_filter_argument_and_calls_take_it_out() {
    let listed = json(&run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--select",
            "tests/fixtures/corpus/time.tools.json",
        ],
        None,
    ));
    let properties = &listed["tools"][0]["input_schema"]["properties"];
    assert_eq!(properties["jq_filter"]["type"], "string", "{listed:#}");
    let named = json(&run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--select=_pick",
            "tests/fixtures/corpus/time.tools.json",
        ],
        None,
    ));
    assert!(named["tools"][0]["input_schema"]["properties"]["_pick"].is_object());
    let response = r#"{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
        "name": "get_current_time", "input": {"timezone": "UTC", "jq_filter": ".datetime"}}]}"#;
    let calls = json(&run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--select",
            "--tools",
            "tests/fixtures/corpus/time.tools.json",
            "-",
        ],
        Some(response),
    ));
    let call = &calls["calls"][0];
    assert_eq!(call["arguments"], serde_json::json!({"timezone": "UTC"}));
    assert_eq!(call["select"], ".datetime");
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
        assert!(
            stderr.ends_with(
                "summary: 4 call(s): 3 ran, 1 rejected before sending, 0 denied, 0 failed, 0 waiting\n"
            ),
            "{id}: {stderr}"
        );
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

/// A policy file: `deny` wins, then `ask` (which the command line answers with a denial), then
/// `allow`, whatever the order of the lists; a tool no rule can allow is not offered, and a call
/// to it is an unknown tool.
#[test]
fn run_with_a_policy_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.yaml");
    std::fs::write(
        &file,
        "ask: [\"notes/notes.render\"]\nallow: [\"notes/*\"]\ndeny: [\"notes/notes.render\"]\n",
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
    assert!(!stderr.contains("warning"), "{stderr}");
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
        content[2].contains("unknown tool `notes_render`"),
        "{content:?}"
    );
    let dropped = &cycle["report"]["dropped"];
    assert_eq!(
        dropped[0],
        serde_json::json!({"server_id": "notes", "tool": "notes.render",
                           "reason": "denied_by_policy", "rule": "notes/notes.render"}),
        "{dropped}"
    );
    std::fs::write(
        &file,
        "allow: [\"notes/notes.search\"]\nask: [\"notes/*\"]\n",
    )
    .unwrap();
    // An `allow` written as an exception to the `ask`: its tool is asked about, and the load warns.
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
    assert!(
        stderr.contains(
            "policy.yaml: the policy's `allow: notes/notes.search` is inside its `ask: notes/*`"
        ),
        "{stderr}"
    );
    let cycle = json(&out);
    for result in cycle["results"].as_array().unwrap().iter().take(2) {
        assert!(
            result["content"]
                .as_str()
                .unwrap()
                .contains("needs approval"),
            "{cycle}"
        );
    }
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

#[test]
fn calls_from_a_recorded_stream() {
    let tools = "tests/fixtures/corpus/time.tools.json";
    // A Bedrock stream of event objects: the framing is told from the bytes.
    let out = json(&run(
        &[
            "calls",
            "--provider",
            "bedrock-converse",
            "--tools",
            tools,
            "--stream",
            "tests/fixtures/streams/bedrock-converse/amazon-bedrock-tool-call.1.jsonl",
        ],
        None,
    ));
    assert_eq!(out["rejected"][0]["exposed_name"], "test-tool", "{out}");
    assert_eq!(
        out["message"]["content"][0]["toolUse"]["input"],
        serde_json::json!({"value": "Sparkle Day"})
    );
    // From stdin, with the framing named.
    let sse = std::fs::read_to_string(
        "tests/fixtures/streams/openai-chat/synthetic-parallel-interleaved.sse",
    )
    .unwrap();
    let out = json(&run(
        &[
            "calls",
            "--provider",
            "openai-chat",
            "--tools",
            tools,
            "--stream",
            "-",
            "--framing",
            "sse",
        ],
        Some(&sse),
    ));
    assert_eq!(out["rejected"].as_array().unwrap().len(), 2, "{out}");
    assert_eq!(out["message"]["tool_calls"].as_array().unwrap().len(), 2);
    // A stream that ends in an error fails, naming the provider's message.
    let failed = run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--tools",
            tools,
            "--stream",
            "tests/fixtures/streams/anthropic/synthetic-error-after-partial-input.sse",
        ],
        None,
    );
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("Overloaded"));
}

#[test]
fn run_executes_a_recorded_stream_against_the_demo_server() {
    let events = [
        serde_json::json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "notes_search", "input": {}}}),
        serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"groceries\"}"}}),
        serde_json::json!({"type": "content_block_stop", "index": 0}),
        serde_json::json!({"type": "message_stop"}),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let out = json(&run(
        &["run", "--provider", "anthropic", "--stream", "-"],
        Some(&body),
    ));
    assert_eq!(out["status"], "ok", "{out}");
    assert_eq!(out["results"][0]["tool_use_id"], "toolu_1");
    assert!(
        out["results"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("notes match")
    );
    assert_eq!(out["message"]["content"][0]["input"]["query"], "groceries");
}

/// `--option media=full`: `result` prints the answer then the follow-up items,
/// `run` prints `follow_ups`, and both refuse an option the spec lacks.
#[test]
fn media_option_on_result_and_run() {
    let args = |provider: &'static str| {
        vec![
            "result",
            "--provider",
            provider,
            "--call-id",
            "call_1",
            "--name",
            "t",
            "--option",
            "media=full",
            "tests/fixtures/results/image_png.json",
        ]
    };
    let chat = json(&run(&args("openai-chat"), None));
    let items = chat.as_array().expect("the answer and the follow-ups");
    assert_eq!(items.len(), 2, "{chat}");
    assert_eq!(items[0]["role"], "tool");
    assert_eq!(items[1]["role"], "user");
    assert_eq!(items[1]["content"][1]["type"], "image_url");
    // Without follow-ups the answer is printed alone, as without the option.
    let anthropic = json(&run(&args("anthropic"), None));
    assert_eq!(anthropic["type"], "tool_result", "{anthropic}");
    let ollama = run(&args("ollama"), None);
    assert_eq!(ollama.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&ollama.stderr).contains("has no option `media`"));

    let cycle = json(&run(
        &["run", "--provider", "gemini", "--option", "media=full"],
        None,
    ));
    // Gemini's follow-ups: one user Content after the functionResponse one.
    let follow_ups = cycle["follow_ups"].as_array().expect("follow_ups");
    assert_eq!(follow_ups.len(), 1, "{cycle}");
    let parts = &follow_ups[0]["parts"];
    assert_eq!(follow_ups[0]["role"], "user");
    assert!(parts[0]["text"].as_str().unwrap().contains("notes_render"));
    assert_eq!(parts[1]["inlineData"]["mimeType"], "image/png");
    let plain = json(&run(&["run", "--provider", "gemini"], None));
    assert!(plain.get("follow_ups").is_none(), "{plain}");
}

#[test]
fn providers_and_check_show_the_options() {
    let providers = json(&run(&["providers"], None));
    let chat = providers
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "openai-chat")
        .unwrap();
    assert_eq!(
        chat["options"]["media"]["values"]["full"]["changes"],
        serde_json::json!(["results"])
    );
    let table = run(
        &[
            "check",
            "--provider",
            "anthropic",
            "tests/fixtures/corpus/time.tools.json",
        ],
        None,
    );
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("OPTIONS"), "{text}");
    assert!(text.contains("cache_control=last  tools:"), "{text}");
    assert!(text.contains("media=full          results:"), "{text}");
    let rows = json(&run(
        &[
            "check",
            "--json",
            "--provider",
            "bedrock-converse",
            "tests/fixtures/corpus/time.tools.json",
        ],
        None,
    ));
    let options: Vec<&str> = rows["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["option"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["media=full", "media=nova"]);
}

/// `run --answers FILE` against the tests' MCP 2026-07-28 server: canned
/// answers answer the questions; a question without one is declined, and
/// stderr says so; without `answers:` rules nothing is declared.
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

    // A bare tool name matches that tool on any server.
    std::fs::write(
        &answers,
        "answers:\n  - {key: confirm, content: {confirm: true}}\n  - {tool: transfer, key: code, content: {code: \"1234\"}}\n",
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

    // Without the file the client declares no elicitation: the library
    // answers that no input handler is configured, and stderr names the flag.
    // So it does with a file of `sampling:` rules only.
    let only_sampling = dir.path().join("sampling.yaml");
    std::fs::write(
        &only_sampling,
        "sampling:\n  - result: {role: assistant, content: {type: text, text: hi}, model: canned}\n",
    )
    .unwrap();
    for extra in [&[][..], &["--answers", only_sampling.to_str().unwrap()][..]] {
        let out = run_with(extra);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            stderr.contains(
                "note: call `toolu_1` to `delete_note` (server `input`): the tool asked for input and the call did not complete: no input handler is configured. It asked: confirm: \"Delete note 'todo'?\""
            ),
            "{stderr}"
        );
        assert!(
            stderr.contains("`answers:` rules in --answers FILE answer forms"),
            "{stderr}"
        );
        assert!(
            texts(&out)
                .iter()
                .all(|t| t.contains("no input handler is configured")),
            "{:?}",
            texts(&out)
        );
    }

    // A malformed file is an error naming where.
    std::fs::write(&answers, "answers:\n  - {key: confirm, content: 3}\n").unwrap();
    let out = run_with(&["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("at answers/0/content"), "{stderr}");
}

#[test]
fn tools_with_deferral_and_search_tools() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/corpus/");
    let (github, time) = (
        format!("{dir}github.tools.json"),
        format!("{dir}time.tools.json"),
    );
    let out = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--defer",
            "*",
            "--load",
            "time/get_*",
            &github,
            &time,
        ],
        None,
    );
    let listing = json(&out);
    assert_eq!(listing["tool_search"], "client");
    assert_eq!(listing["deferred"].as_array().unwrap().len(), 27);
    let tools = listing["tools"].as_array().unwrap();
    let loaded: Vec<_> = tools
        .iter()
        .filter(|t| t.get("defer_loading").is_none())
        .map(|t| &t["name"])
        .collect();
    assert_eq!(loaded, ["time__get_current_time", "search_tools"]);
    assert_eq!(tools.last().unwrap()["name"], "search_tools");
    let out = run(
        &[
            "search-tools",
            "--tools",
            &github,
            &time,
            "--query",
            "merge a pull request",
            "--limit",
            "2",
        ],
        None,
    );
    let ranked = json(&out);
    assert_eq!(ranked[0]["exposed_name"], "github__merge_pull_request");
    assert_eq!(ranked.as_array().unwrap().len(), 2);
    let out = run(
        &[
            "tools",
            "--provider",
            "gemini",
            "--defer",
            "*",
            "--search",
            "client",
            &time,
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("search.client"));
    // An empty query is an error, not an empty ranking.
    let out = run(&["search-tools", "--tools", &time, "--query", " "], None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--query is empty"), "{stderr}");
}

/// A server that cannot start is an error naming the server, the command and
/// the cause, and the command exits non-zero: a missing command, a process
/// that exits at once (with its status and last stderr lines) and one that
/// never answers within `--startup-timeout` (and is still running then).
#[test]
fn a_server_that_does_not_start_fails_the_command_and_says_why() {
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "x=no-such-mcp-command",
            &[],
            &["server `x`", "cannot start `no-such-mcp-command`", "PATH"],
        ),
        (
            "x=sh -c 'echo config missing >&2; exit 3'",
            &[],
            &["server `x`", "exited with status 3", "config missing"],
        ),
        (
            "x=sleep 60",
            &["--startup-timeout", "1"],
            &[
                "server `x`",
                "answered nothing within 1000 ms",
                "`sleep 60` was still running",
            ],
        ),
    ];
    for (server, extra, said) in cases {
        for command in ["tools", "run"] {
            let mut argv = vec![command, "--provider", "anthropic", "--server", server];
            argv.extend_from_slice(extra);
            if command == "run" {
                argv.push("tests/fixtures/responses/anthropic/rejections.json");
            }
            let out = run(&argv, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{argv:?} exited 0: {stderr}");
            assert!(out.stdout.is_empty(), "{argv:?} printed a result");
            for words in said {
                assert!(
                    stderr.contains(words),
                    "{argv:?}: no `{words}` in: {stderr}"
                );
            }
        }
    }
}

/// `tools --policy FILE` narrows a local server's listing: a policy allowing
/// two of the everything server's tools lists those two, and the report
/// names each of the others as dropped by the policy; with tools/list files,
/// which no policy judges, the flag is refused.
#[test]
fn tools_with_a_policy_lists_only_what_it_can_allow() {
    let (node, args) = common::servers::everything().unwrap_or_else(|e| panic!("{e}"));
    let server = format!("everything={node} {}", args.join(" "));
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, "allow: [everything/echo, everything/get-sum]\n").unwrap();
    for provider in ["anthropic", "openai-chat"] {
        let listed = json(&run(
            &[
                "tools",
                "--provider",
                provider,
                "--server",
                &server,
                "--policy",
                policy.to_str().unwrap(),
            ],
            None,
        ));
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or(t["function"]["name"].as_str())
                    .unwrap()
            })
            .collect();
        assert_eq!(names, ["echo", "get-sum"], "{provider}: {listed}");
        let dropped = listed["report"]["dropped"].as_array().unwrap();
        assert!(dropped.len() > 8, "{listed}");
        for entry in dropped {
            assert_eq!(entry["reason"], "denied_by_policy", "{entry}");
            assert_eq!(entry["rule"], Value::Null, "{entry}");
        }
    }
    let out = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--policy",
            policy.to_str().unwrap(),
            "tests/fixtures/corpus/time.tools.json",
        ],
        None,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--policy goes with live servers"),
        "{stderr}"
    );
}

/// `--keep-going` names each server that did not start on stderr and goes on
/// with the others; a call to its tools is answered "unknown tool", as the
/// model was offered none of them.
/// With no server started, it fails all the same.
#[test]
fn keep_going_warns_and_goes_on_with_the_servers_that_started() {
    let (python, args) = common::servers::input().unwrap_or_else(|e| panic!("{e}"));
    let good = format!("input={python} {}", args.join(" "));
    let dir = tempfile::tempdir().unwrap();
    let response = dir.path().join("response.json");
    std::fs::write(
        &response,
        serde_json::json!({"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "gone__status", "input": {}}
        ]})
        .to_string(),
    )
    .unwrap();
    let argv = [
        "run",
        "--provider",
        "anthropic",
        "--server",
        &good,
        "--server",
        "gone=no-such-mcp-command",
        "--keep-going",
        response.to_str().unwrap(),
    ];
    let out = run(&argv, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains("warning: server `gone` is down: cannot start `no-such-mcp-command`"),
        "{stderr}"
    );
    let answer = &json(&out)["results"][0];
    assert_eq!(answer["is_error"], true, "{answer}");
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "unknown tool `gone__status`: call one of the tools offered"
    );

    let out = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--server",
            "gone=no-such-mcp-command",
            "--keep-going",
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("server `gone` is down"));
}

/// Each command takes only the flags that do something there: strict mode
/// belongs to listings, not to a search's ranking; `--hub` to tools/list
/// files, not to live servers.
#[test]
fn flags_that_would_do_nothing_are_refused() {
    let out = run(
        &[
            "search-tools",
            "--tools",
            "tests/fixtures/corpus/time.tools.json",
            "--query",
            "time",
            "--strict",
            "auto",
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--strict"));
    let out = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--hub",
            "--server",
            "x=no-such-mcp-command",
        ],
        None,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hub goes with tools/list files"));
}

/// `tools --raw` writes a tools/list result that `check` and `calls --tools`
/// read back; the provider's definitions `tools` prints are refused with a
/// pointer to `--raw`.
#[test]
fn tools_raw_is_read_back_by_check_and_calls() {
    let dir = tempfile::tempdir().unwrap();
    let raw = run(&["tools", "--provider", "anthropic", "--raw"], None);
    let listed = json(&raw);
    assert!(listed["tools"][0]["inputSchema"].is_object(), "{listed}");
    let file = dir.path().join("notes.json");
    std::fs::write(&file, &raw.stdout).unwrap();
    let file = file.to_str().unwrap();
    let out = run(
        &["check", "--provider", "openai-chat", "--json", file],
        None,
    );
    assert!(json(&out).to_string().contains("notes.search"));
    let name = listed["tools"][0]["name"].as_str().unwrap();
    let response = serde_json::json!({"content": [
        {"type": "tool_use", "id": "t1", "name": name.replace('.', "_"), "input": {"query": "x"}}
    ]});
    let out = run(
        &["calls", "--provider", "anthropic", "--tools", file, "-"],
        Some(&response.to_string()),
    );
    let calls = json(&out);
    assert_eq!(calls["calls"][0]["tool"], name, "{calls}");

    let definitions = dir.path().join("definitions.json");
    let out = run(&["tools", "--provider", "anthropic"], None);
    std::fs::write(&definitions, &out.stdout).unwrap();
    let out = run(&["check", definitions.to_str().unwrap()], None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not a tools/list result: write one with `tools --raw`"),
        "{stderr}"
    );
}

/// Every command's help ends with examples of it.
#[test]
fn every_command_explains_itself_with_examples() {
    for command in [
        "providers",
        "tools",
        "search-tools",
        "calls",
        "run",
        "result",
        "strict-schema",
        "check",
        "turns",
    ] {
        let out = run(&[command, "--help"], None);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{command}");
        let examples = help.split("Examples:\n").nth(1).unwrap_or_default();
        assert!(
            examples
                .lines()
                .all(|l| l.starts_with(&format!("  mcp-adapters {command}")) || l.is_empty()),
            "{command}: {help}"
        );
        assert!(
            !examples.trim().is_empty(),
            "{command} --help has no examples: {help}"
        );
    }
}

/// `result --max-result-tokens` cuts an answer to its budget, and `run`
/// with a budget offers `read_result`, with which a later turn of the same
/// run reads on in what an earlier one cut.
#[test]
fn budgets_cut_answers_and_a_later_turn_reads_on() {
    let lines: String = (0..2_000).map(|i| format!("line {i:04}\n")).collect();
    let result = serde_json::json!({"content": [{"type": "text", "text": lines}]}).to_string();
    let answer = json(&run(
        &[
            "result",
            "--provider",
            "openai-chat",
            "--call-id",
            "c",
            "--name",
            "t",
            "--max-result-tokens",
            "300",
            "-",
        ],
        Some(&result),
    ));
    let text = answer["content"].as_str().unwrap();
    assert!(
        text.starts_with("line 0000\n") && text.ends_with("line 1999\n"),
        "{text}"
    );
    assert!(text.contains("left out here: bytes "), "{text}");
    assert!(text.len() < 3_000, "{}", text.len());

    // Two turns over the bundled demo server: the first cuts each answer,
    // the second reads on in the first one's cut text.
    let dir = tempfile::tempdir().unwrap();
    let first = run(
        &["run", "--provider", "anthropic", "--max-result-tokens", "5"],
        None,
    );
    let first = json(&first);
    let response = &first["response"];
    let turn1 = dir.path().join("turn1.json");
    std::fs::write(&turn1, response.to_string()).unwrap();
    let read = serde_json::json!({"role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_read", "name": "read_result", "input": {"handle": "r1", "offset": 0}}]});
    let turn2 = dir.path().join("turn2.json");
    std::fs::write(&turn2, read.to_string()).unwrap();
    let out = json(&run(
        &[
            "run",
            "--provider",
            "anthropic",
            "--max-result-tokens",
            "5",
            turn1.to_str().unwrap(),
            turn2.to_str().unwrap(),
        ],
        None,
    ));
    let turns = out.as_array().unwrap();
    assert_eq!(turns.len(), 2);
    let read_on = &turns[1]["results"][0];
    assert_eq!(read_on["tool_use_id"], "toolu_read");
    let text = read_on["content"][0]["text"].as_str().unwrap();
    let first_text = first["results"][0]["content"][0]["text"].as_str().unwrap();
    let head = first_text.split("\n[… ").next().unwrap();
    assert!(text.starts_with(head), "{text}");
    assert!(
        text.contains("To read on, call `read_result` with {\"handle\": \"r1\", \"offset\": "),
        "{text}"
    );
}

/// `--skills` offers a skills server's catalogue and answers the model's
/// loads; a server without skills is a warning, not silence.
#[test]
fn skills_are_offered_and_loaded_on_the_command_line() {
    let (command, args) = common::servers::skills().unwrap_or_else(|e| panic!("{e}"));
    let server = format!("docs={command} {}", args.join(" "));
    let listed = json(&run(
        &[
            "tools",
            "--provider",
            "openai-chat",
            "--skills",
            "--server",
            &server,
        ],
        None,
    ));
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{listed}");
    let about = tools[0]["function"]["description"].as_str().unwrap();
    assert!(about.contains("- pdf-processing: Extract, fill"), "{about}");

    let response = serde_json::json!({"role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "load_skill", "input": {"skill": "release-notes"}},
        {"type": "tool_use", "id": "toolu_2", "name": "load_skill",
         "input": {"skill": "release-notes", "file": "CHANGELOG.md"}}
    ]})
    .to_string();
    let out = run(
        &[
            "run",
            "--provider",
            "anthropic",
            "--skills",
            "--server",
            &server,
            "-",
        ],
        Some(&response),
    );
    let ran = json(&out);
    assert!(
        ran["results"][0]
            .to_string()
            .contains("Group the changes as Added"),
        "{ran}"
    );
    assert_eq!(ran["results"][1]["is_error"], true, "{ran}");
    assert!(
        ran["calls"][1]["error"]
            .as_str()
            .unwrap()
            .contains("not in the manifest"),
        "{ran}"
    );

    // No server lists a skill: said on stderr.
    let (python, args) = common::servers::input().unwrap_or_else(|e| panic!("{e}"));
    let plain = format!("plain={python} {}", args.join(" "));
    let out = run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--skills",
            "--server",
            &plain,
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("no server lists a skill"), "{stderr}");
}

/// `tools --hosted` declares a server for the provider to call; `run` reports
/// a recorded response's hosted items and prints the policy's answer to its
/// approval request; a server the provider cannot host runs here, said on
/// stderr, and the command fails when it cannot start.
#[test]
fn hosted_servers_on_the_command_line() {
    let listed = json(&run(
        &[
            "tools",
            "--provider",
            "openai-responses",
            "--hosted",
            "deepwiki=https://mcp.deepwiki.com/mcp",
        ],
        None,
    ));
    assert_eq!(listed["tools"][0]["type"], "mcp", "{listed}");
    assert_eq!(listed["tools"][0]["server_label"], "deepwiki");
    assert_eq!(listed["tools"][0]["require_approval"], "never");

    let anthropic = json(&run(
        &[
            "tools",
            "--provider",
            "anthropic",
            "--hosted",
            "deepwiki=https://mcp.deepwiki.com/mcp",
        ],
        None,
    ));
    assert_eq!(anthropic["tools"][0]["type"], "mcp_toolset", "{anthropic}");
    assert_eq!(anthropic["request"]["mcp_servers"][0]["name"], "deepwiki");
    assert_eq!(
        anthropic["headers"]["anthropic-beta"],
        "mcp-client-2025-11-20"
    );

    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(&policy, r#"{"deny": ["zip1/*"], "default": "allow"}"#).unwrap();
    let out = run(
        &[
            "run",
            "--provider",
            "openai-responses",
            "--policy",
            policy.to_str().unwrap(),
            "tests/fixtures/hosted/openai-responses/vercel__openai-mcp-tool-approval.1.json",
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let ran = json(&out);
    assert_eq!(
        ran["hosted"]["approvals"][0]["tool"], "create_short_url",
        "{ran}"
    );
    assert_eq!(ran["approvals"][0]["approved"], false);
    assert_eq!(ran["approvals"][0]["item"]["type"], "mcp_approval_response");
    assert_eq!(ran["approvals"][0]["item"]["approve"], false);
    assert!(
        stderr.contains("`zip1/create_short_url` awaits approval: denied"),
        "{stderr}"
    );

    let called = json(&run(
        &[
            "run",
            "--provider",
            "openai-responses",
            "tests/fixtures/hosted/openai-responses/vercel__openai-mcp-tool.1.json",
        ],
        None,
    ));
    assert_eq!(
        called["hosted"]["calls"][0]["server_id"], "dmcp",
        "{called}"
    );
    assert!(
        called["ran_servers"]
            .as_array()
            .unwrap()
            .contains(&"dmcp".into())
    );

    // `calls` reports the hosted items of a response and of a stream.
    let dir_tools = dir.path().join("none.json");
    std::fs::write(&dir_tools, r#"{"tools": []}"#).unwrap();
    let read = json(&run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--tools",
            dir_tools.to_str().unwrap(),
            "tests/fixtures/hosted/anthropic/vercel__anthropic-mcp.1.json",
        ],
        None,
    ));
    assert_eq!(read["calls"], serde_json::json!([]), "{read}");
    assert_eq!(read["hosted"]["calls"][0]["server_id"], "echo", "{read}");
    let streamed = json(&run(
        &[
            "calls",
            "--provider",
            "openai-responses",
            "--tools",
            dir_tools.to_str().unwrap(),
            "--stream",
            "tests/fixtures/hosted/openai-responses/pydantic-ai__openai_mcp_server_tool_stream.1.response.sse",
        ],
        None,
    ));
    assert_eq!(
        streamed["hosted"]["calls"][0]["tool"], "ask_question",
        "{streamed}"
    );

    // A policy that names the server's tools exactly needs no listing:
    // the server is never contacted (it cannot be reached from here).
    let exact = dir.path().join("exact.yaml");
    std::fs::write(
        &exact,
        "allow: [\"unreached/ask_question\"]\nask: [\"unreached/read_wiki_contents\"]\n",
    )
    .unwrap();
    let out = run(
        &[
            "tools",
            "--provider",
            "openai-responses",
            "--hosted",
            "unreached=https://127.0.0.1:9/mcp",
            "--policy",
            exact.to_str().unwrap(),
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let declared = json(&out);
    assert_eq!(
        declared["tools"][0]["allowed_tools"],
        serde_json::json!(["ask_question", "read_wiki_contents"]),
        "{declared}"
    );
    assert_eq!(
        declared["tools"][0]["require_approval"],
        serde_json::json!({"always": {"tool_names": ["read_wiki_contents"]}, "never": {"tool_names": ["ask_question"]}})
    );

    // No hosted MCP here: the server runs locally, and it cannot be reached.
    let out = run(
        &[
            "tools",
            "--provider",
            "openai-chat",
            "--hosted",
            "nowhere=http://127.0.0.1:9/mcp",
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("server `nowhere` runs here, not hosted"),
        "{stderr}"
    );
    assert!(stderr.contains("nowhere"), "{stderr}");
}

/// `tools`, `calls` and `run` take the callers rule: tools open to code are
/// declared so (refused where the provider has no programmatic calling),
/// and a response's calls are printed with their caller and its programs.
#[test]
fn the_command_line_opens_tools_to_code() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("inventory.json");
    std::fs::write(
        &tools,
        serde_json::json!({"tools": [
            {"name": "getInventory", "inputSchema": {"type": "object", "properties": {"sku": {"type": "string"}}},
             "outputSchema": {"type": "object", "properties": {"availableUnits": {"type": "number"}}}},
            {"name": "getDemand", "inputSchema": {"type": "object", "properties": {"sku": {"type": "string"}}}},
            {"name": "peek", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
        ]})
        .to_string(),
    )
    .unwrap();
    let tools = tools.to_str().unwrap();
    let listed = json(&run(
        &[
            "tools",
            "--provider",
            "openai-responses",
            "--programmatic-only",
            "inventory/get*",
            "--programmatic-read-only",
            tools,
        ],
        None,
    ));
    assert_eq!(
        listed["tools"][0]["allowed_callers"],
        serde_json::json!(["programmatic"]),
        "{listed}"
    );
    assert_eq!(
        listed["tools"][0]["output_schema"]["properties"]["availableUnits"]["type"],
        "number"
    );
    assert_eq!(
        listed["tools"][2]["allowed_callers"],
        serde_json::json!(["direct", "programmatic"])
    );
    assert_eq!(
        listed["tools"][3],
        serde_json::json!({"type": "programmatic_tool_calling"})
    );

    let out = run(
        &[
            "tools",
            "--provider",
            "openai-chat",
            "--programmatic",
            "*",
            tools,
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("has no programmatic tool calling"),
        "{stderr}"
    );

    let read = json(&run(
        &[
            "calls",
            "--provider",
            "openai-responses",
            "--tools",
            tools,
            "--programmatic-only",
            "inventory/get*",
            "tests/fixtures/programmatic/openai-responses/vercel__programmatic-tool-calling.1.json",
        ],
        None,
    ));
    assert_eq!(
        read["calls"][0]["caller"]["program_id"], "call_O2IvSLQcJ0bwIvJZ2ovGV69M",
        "{read}"
    );
    assert_eq!(
        read["programs"]["programs"][0]["id"],
        "call_O2IvSLQcJ0bwIvJZ2ovGV69M"
    );
    // Not opened: the program's call is refused, never run.
    let refused = json(&run(
        &[
            "calls",
            "--provider",
            "openai-responses",
            "--tools",
            tools,
            "tests/fixtures/programmatic/openai-responses/vercel__programmatic-tool-calling.1.json",
        ],
        None,
    ));
    assert_eq!(refused["calls"], serde_json::json!([]));
    assert!(
        refused["rejected"][0]["error"]
            .as_str()
            .unwrap()
            .contains("not open to code")
    );
    // The container goes on to the next request.
    let dice = dir.path().join("dice.json");
    std::fs::write(
        &dice,
        r#"{"tools": [{"name": "rollDie", "inputSchema": {"type": "object"}}]}"#,
    )
    .unwrap();
    let read = json(&run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--tools",
            dice.to_str().unwrap(),
            "--programmatic-only",
            "*",
            "tests/fixtures/programmatic/anthropic/vercel__anthropic-programmatic-tool-calling.1.json",
        ],
        None,
    ));
    assert_eq!(read["calls"].as_array().unwrap().len(), 4, "{read}");
    assert_eq!(
        read["request"]["container"],
        "container_011CWHQB57xVregfCMPrKgew"
    );

    // A policy file opens tools to code for `run`.
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nprogrammatic_only: [\"rollDie\"]\n",
    )
    .unwrap();
    let out = run(
        &[
            "run",
            "--provider",
            "anthropic",
            "--policy",
            policy.to_str().unwrap(),
            "tests/fixtures/programmatic/anthropic/vercel__anthropic-programmatic-tool-calling.1.json",
        ],
        None,
    );
    // The bundled demo server has no `rollDie`: unknown, never sent, and
    // the answers go to the program as errors.
    let ran = json(&out);
    assert_eq!(ran["results"].as_array().unwrap().len(), 4, "{ran}");
    assert_eq!(ran["results"][0]["is_error"], true);
    assert_eq!(ran["results_only"], true);
}

#[test]
fn bind_rules_from_the_flag_and_the_policy_file() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nbind: [\"notes/notes.create:/color=json:\\\"blue\\\"\"]\n",
    )
    .unwrap();
    let response = dir.path().join("response.json");
    std::fs::write(
        &response,
        json!({"content": [
            {"type": "tool_use", "id": "a", "name": "notes_create", "input": {"body": "x"}},
            {"type": "tool_use", "id": "b", "name": "notes_create", "input": {"body": "y", "title": "mine"}}]})
        .to_string(),
    )
    .unwrap();
    let (policy, response) = (policy.to_str().unwrap(), response.to_str().unwrap());
    let out = run(
        &[
            "tools",
            "--provider",
            "openai-chat",
            "--bind",
            "notes.create:/title=Bound",
        ],
        None,
    );
    let listed = json(&out);
    let create = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "notes_create")
        .unwrap();
    let parameters = &create["function"]["parameters"];
    assert!(
        parameters["properties"].get("title").is_none(),
        "{parameters}"
    );
    assert!(
        !parameters["required"]
            .as_array()
            .unwrap()
            .contains(&json!("title"))
    );

    let args = [
        "run",
        "--provider",
        "anthropic",
        "--validate",
        "--policy",
        policy,
        "--bind",
        "notes.create:/title=env:MCP_ADAPTERS_TEST_TITLE",
        response,
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"));
    child
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("MCP_ADAPTERS_TEST_TITLE", "From the environment");
    let out = child.output().unwrap();
    let cycle = json(&out);
    let texts: Vec<&str> = cycle["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap())
        .collect();
    // The demo server echoes the title it received: the bound one.
    assert!(
        texts[0].starts_with("Created note `From the environment`"),
        "{texts:?}"
    );
    assert!(
        texts[1].contains("the argument `/title` is the application's to write"),
        "{texts:?}"
    );

    // Bad rules are named, with the file and the place in it.
    let unset = run(&args, None);
    assert_eq!(unset.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert!(
        stderr.contains("`MCP_ADAPTERS_TEST_TITLE` is not set"),
        "{stderr}"
    );
    std::fs::write(
        dir.path().join("policy.yaml"),
        "bind: [\"notes.create:title=1\"]\n",
    )
    .unwrap();
    let bad = run(
        &[
            "run",
            "--provider",
            "anthropic",
            "--policy",
            policy,
            response,
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("policy.yaml") && stderr.contains("bind/0") && stderr.contains("no `:/`"),
        "{stderr}"
    );
}

#[test]
fn calls_rejects_a_call_that_writes_a_bound_argument() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        json!({"tools": [{"name": "create", "inputSchema": {"type": "object",
            "properties": {"title": {"type": "string"}, "body": {"type": "string"}}}}]})
        .to_string(),
    )
    .unwrap();
    let response = dir.path().join("response.json");
    std::fs::write(
        &response,
        json!({"content": [
            {"type": "tool_use", "id": "a", "name": "create", "input": {"body": "x"}},
            {"type": "tool_use", "id": "b", "name": "create", "input": {"body": "y", "title": "mine"}}]})
        .to_string(),
    )
    .unwrap();
    let tools = format!("notes={}", tools.display());
    let out = json(&run(
        &[
            "calls",
            "--provider",
            "anthropic",
            "--tools",
            &tools,
            "--bind",
            "notes/create:/title=Bound",
            response.to_str().unwrap(),
        ],
        None,
    ));
    assert_eq!(out["calls"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["calls"][0]["call_id"], "a", "{out}");
    let rejected = &out["rejected"][0];
    assert_eq!(rejected["call_id"], "b", "{out}");
    let error = rejected["error"].as_str().unwrap();
    assert!(
        error.contains("the argument `/title` is the application's to write"),
        "{error}"
    );
    // The bound value is not the model's to read, and is not printed.
    assert!(!out.to_string().contains("Bound"), "{out}");
}
