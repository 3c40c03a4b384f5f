//! What a hostile party can shape, against `tests/e2e/hostile_server.py`
//! (raw JSON-RPC over stdio, no SDK, logging every line it receives) and
//! edited state documents: hidden characters in a schema reach no
//! provider's listing, a message the transport cannot take answers its
//! request at once with why, an approval names one call of one turn, a
//! state document cannot be edited into sending what was not approved, and
//! the server's text reaches the terminal escaped. Each test's hang guard
//! is generous; none measures time.
#![cfg(feature = "cli")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use mcp_adapters::exec::StateKey;
use mcp_adapters::mcp::{InputRequest, InputRequiredResult};
use mcp_adapters::toolset::{DropReason, HiddenIn};
use mcp_adapters::{
    ClientOptions, ErrorKind, ExecOptions, ListOptions, McpClient, Registry, Source,
};
use serde_json::{Value, json};

/// Characters a person cannot see, or a terminal acts on, that the server hides.
const HIDDEN: [char; 4] = ['\u{202e}', '\u{200b}', '\u{E0041}', '\u{1b}'];

/// A generous bound on anything that should end at once.
const HANG_GUARD: Duration = Duration::from_secs(90);

fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/hostile_server.py")
        .display()
        .to_string()
}

/// The hostile server in `mode`, started by the library, logging to `log`.
async fn hostile(mode: &str, log: &Path) -> McpClient {
    let args = vec![script(), mode.to_owned(), log.display().to_string()];
    let options = ClientOptions::new()
        .init_timeout(Duration::from_secs(60))
        .list_timeout(Duration::from_secs(600));
    McpClient::spawn("hostile", "python3", &args, &BTreeMap::new(), &options)
        .await
        .unwrap()
}

/// The `tools/call` requests that reached the server: (tool, arguments).
fn calls_received(log: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| {
            let params = &m["params"];
            (
                params["name"].as_str().unwrap_or_default().to_owned(),
                params["arguments"].clone(),
            )
        })
        .collect()
}

fn guarded<F: std::future::Future>(future: F) -> F::Output {
    runtime().block_on(async {
        tokio::time::timeout(HANG_GUARD, future)
            .await
            .expect("hang guard: the operation did not end")
    })
}

/// Every description and title at any depth of `value`.
fn prose(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("description" | "title" | "$comment", Value::String(s)) => out.push(s.clone()),
                    _ => prose(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| prose(v, out)),
        _ => {}
    }
}

/// Every string and key in `value`.
fn strings_and_keys(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                out.extend(map.keys().cloned());
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    out
}

#[test]
fn no_hidden_character_reaches_any_providers_listing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    guarded(async {
        let registry = Registry::builtin().unwrap();
        let offered = Source::client("hostile", hostile("plain", &log).await)
            .build()
            .unwrap();
        let strict = Source::client("hostile", hostile("plain", &log).await)
            .refuse_hidden_characters(true)
            .build()
            .unwrap();
        let mut providers = 0;
        for provider in registry.providers() {
            providers += 1;
            // Offered: every description and title at any depth is clean, and
            // the names and values that keep theirs are reported.
            let listing = offered.tools(provider, &ListOptions::new()).await.unwrap();
            let mut texts = Vec::new();
            prose(&json!(listing.tools), &mut texts);
            assert!(texts.len() > 10, "{}: {texts:?}", provider.id());
            for text in &texts {
                assert!(!text.contains(HIDDEN), "{}: {text:?}", provider.id());
            }
            let hidden: Vec<(&str, &str, HiddenIn)> = listing
                .report
                .toolset
                .hidden
                .iter()
                .map(|h| (h.tool.as_str(), h.path.as_str(), h.kind))
                .collect();
            assert_eq!(
                hidden,
                [
                    ("set_mode", "/properties/mode/enum/1", HiddenIn::EnumValue),
                    (
                        "set_mode",
                        "/properties/na\\u{202e}me",
                        HiddenIn::PropertyName
                    ),
                ],
                "{}",
                provider.id()
            );
            // Refused: nothing hidden anywhere in the listing.
            let listing = strict.tools(provider, &ListOptions::new()).await.unwrap();
            for s in strings_and_keys(&json!(listing.tools)) {
                assert!(!s.contains(HIDDEN), "{}: {s:?}", provider.id());
            }
            let dropped = &listing.report.toolset.dropped;
            assert!(
                dropped.iter().any(|d| d.tool == "set_mode"
                    && matches!(
                        &d.reason,
                        DropReason::HiddenCharacters {
                            kind: HiddenIn::EnumValue,
                            ..
                        }
                    )),
                "{dropped:?}"
            );
        }
        assert_eq!(providers, 27);
    });
}

/// The call of `tool` through `source`, answered as `anthropic` answers.
async fn call_one(source: &Source, tool: &str) -> mcp_adapters::exec::CallRecord {
    let provider = provider("anthropic");
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let response = model_response("anthropic", &[(tool.to_owned(), json!({}))]);
    let options = ExecOptions::new().call_timeout(Duration::from_secs(600));
    let run = source
        .execute_tool_calls(provider, &response, &listing, &options)
        .await
        .unwrap();
    run.calls.into_iter().next().unwrap()
}

#[test]
fn a_result_the_transport_cannot_take_fails_its_call_at_once_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    guarded(async {
        let source = Source::client("hostile", hostile("plain", &log).await)
            .build()
            .unwrap();
        for (tool, why) in [
            ("big", "over the 16 MiB a message may have"),
            ("deep", "levels deep, deeper than the 127"),
            ("latin1", "is not UTF-8"),
        ] {
            let call = call_one(&source, tool).await;
            let error = call.error.unwrap_or_else(|| panic!("{tool}: no error"));
            assert_ne!(error.kind(), ErrorKind::Timeout, "{tool}: {error}");
            let message = format!("{error:#}");
            assert!(message.contains(why), "{tool}: {message}");
        }
        // The session goes on.
        let call = call_one(&source, "read_file").await;
        assert!(call.error.is_none(), "{:?}", call.error);
    });
}

#[test]
fn a_tool_list_the_transport_cannot_take_loses_only_what_it_could_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    guarded(async {
        for (mode, lost, why) in [
            ("list-deep", "too_deep", "levels deep"),
            ("list-not-utf8", "not_utf8", "not UTF-8"),
        ] {
            let source = Source::client("hostile", hostile(mode, &log).await)
                .build()
                .unwrap();
            let listing = source
                .tools(provider("anthropic"), &ListOptions::new())
                .await
                .unwrap();
            assert!(
                tool_names(&listing).contains(&"read_file".to_owned()),
                "{mode}"
            );
            assert!(!tool_names(&listing).contains(&lost.to_owned()), "{mode}");
            let dropped = &listing.report.toolset.dropped;
            assert!(
                dropped.iter().any(|d| d.tool == lost
                    && matches!(&d.reason, DropReason::Unreadable { why: w } if w.contains(why))),
                "{mode}: {dropped:?}"
            );
        }
        // Too large to read at all: the server's listing fails, saying why.
        let source = Source::client("hostile", hostile("list-too-large", &log).await)
            .build()
            .unwrap();
        let listing = source
            .tools(provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        let failed = &listing.report.toolset.failed_servers;
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].error.contains("over the 16 MiB"), "{failed:?}");
    });
}

// ---- the command line ----

fn cli(args: &[&str]) -> Output {
    cli_keyed(args, None)
}

/// The command line, with `MCP_ADAPTERS_STATE_KEY` set to `key` (unset
/// without one).
fn cli_keyed(args: &[&str], key: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .env_remove("MCP_ADAPTERS_STATE_KEY");
    if let Some(key) = key {
        command.env("MCP_ADAPTERS_STATE_KEY", key);
    }
    command.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

struct Scene {
    dir: tempfile::TempDir,
    log: PathBuf,
}

impl Scene {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        Scene { dir, log }
    }

    fn server(&self, mode: &str) -> String {
        format!("hostile=python3 {} {mode} {}", script(), self.log.display())
    }

    fn file(&self, name: &str, value: &Value) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(value).unwrap()).unwrap();
        path.display().to_string()
    }

    fn response(&self, name: &str, calls: &[(&str, &str, Value)]) -> String {
        let content: Vec<Value> = calls
            .iter()
            .map(|(id, tool, input)| json!({"type": "tool_use", "id": id, "name": tool, "input": input}))
            .collect();
        self.file(
            name,
            &json!({"role": "assistant", "stop_reason": "tool_use", "content": content}),
        )
    }

    fn policy(&self) -> String {
        self.file(
            "policy.json",
            &json!({"ask": ["hostile/delete_file", "hostile/rm*"], "default": "allow"}),
        )
    }

    /// `run --provider anthropic` against the server in `plain` mode,
    /// under `policy` (the scene's own when `None`), with `args` after.
    fn run(&self, policy: Option<&str>, args: &[&str]) -> Output {
        self.run_keyed(policy, args, None)
    }

    /// As [`run`](Self::run), with `MCP_ADAPTERS_STATE_KEY` set to `key`.
    fn run_keyed(&self, policy: Option<&str>, args: &[&str], key: Option<&str>) -> Output {
        let server = self.server("plain");
        let policy = policy.map_or_else(|| self.policy(), str::to_owned);
        let mut all = vec![
            "run",
            "--provider",
            "anthropic",
            "--server",
            &server,
            "--policy",
            &policy,
        ];
        all.extend(args);
        cli_keyed(&all, key)
    }

    fn key(&self) -> String {
        let path = self.dir.path().join("key");
        std::fs::write(&path, "a key of thirty-two bytes, or so\n").unwrap();
        path.display().to_string()
    }
}

#[test]
fn an_approval_names_one_call_of_one_turn() {
    let scene = Scene::new();
    let turn1 = scene.response(
        "turn1.json",
        &[("toolu_1", "delete_file", json!({"path": "/tmp/harmless"}))],
    );
    let turn2 = scene.response(
        "turn2.json",
        &[(
            "toolu_1",
            "delete_file",
            json!({"path": "/turn2/IMPORTANT"}),
        )],
    );
    let run = |approve: &str| scene.run(None, &["--approve-call", approve, &turn1, &turn2]);
    // An id both turns have is refused before anything runs, naming both.
    let out = run("toolu_1");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("turn 1 and one of turn 2"), "{err}");
    assert!(err.contains("1:toolu_1"), "{err}");
    assert!(calls_received(&scene.log).is_empty());
    // Said with its turn, it approves that call only.
    let out = run("1:toolu_1");
    assert!(out.status.success(), "{}", stderr(&out));
    let turns = stdout(&out);
    assert_eq!(turns[0]["calls"][0]["ran"], true, "{turns:#}");
    assert_eq!(turns[1]["calls"][0]["ran"], false, "{turns:#}");
    assert_eq!(
        calls_received(&scene.log),
        [("delete_file".to_owned(), json!({"path": "/tmp/harmless"}))]
    );
    // `#INDEX` names only a call without an id.
    let out = run("#0");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("has the id `toolu_1`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(calls_received(&scene.log).len(), 1);
}

/// `run --suspend` of one call waiting for approval: the state file.
fn suspended(scene: &Scene, key: Option<&str>) -> PathBuf {
    let response = scene.response(
        "response.json",
        &[("toolu_1", "delete_file", json!({"path": "/tmp/harmless"}))],
    );
    let state = scene.dir.path().join("state.json");
    let state_arg = state.display().to_string();
    let mut args = vec!["--suspend", &state_arg, &response];
    if let Some(key) = key {
        args.extend(["--state-key-file", key]);
    }
    let out = scene.run(None, &args);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    state
}

fn resume(scene: &Scene, state: &Path, extra: &[&str]) -> Output {
    let state = state.display().to_string();
    let mut args = vec!["--resume", &state, "--approve-call", "toolu_1"];
    args.extend(extra);
    scene.run(None, &args)
}

fn edit(state: &Path, change: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_slice(&std::fs::read(state).unwrap()).unwrap();
    change(&mut value);
    std::fs::write(state, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

#[test]
fn an_edited_state_document_is_refused_and_sends_nothing() {
    let scene = Scene::new();
    let key = scene.key();
    // With a key, changed arguments are refused, naming the call.
    let state = suspended(&scene, Some(&key));
    edit(&state, |v| {
        v["calls"][0]["arguments"]["path"] = json!("/turn2/IMPORTANT")
    });
    let out = resume(&scene, &state, &["--state-key-file", &key]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("call 0 (`toolu_1`) to `hostile/delete_file` was changed"),
        "{err}"
    );
    // Without the key, a document bound to one is refused too.
    let out = resume(&scene, &state, &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("carries a MAC"), "{}", stderr(&out));
    assert!(calls_received(&scene.log).is_empty());

    // Without a key: a call listed twice (by its id, by its index), or one
    // naming a tool the toolset lacks.
    for change in [
        (|v: &mut Value| {
            let call = v["calls"][0].clone();
            v["calls"].as_array_mut().unwrap().push(call);
        }) as fn(&mut Value),
        |v: &mut Value| {
            let mut call = v["calls"][0].clone();
            call["call_id"] = json!("toolu_2");
            call["arguments"] = json!({"path": "/turn2/IMPORTANT"});
            v["calls"].as_array_mut().unwrap().push(call);
        },
        |v: &mut Value| {
            v["calls"][0]["tool"] = json!("shutdown");
            v["calls"][0]["exposed_name"] = json!("shutdown");
        },
    ] {
        let state = suspended(&scene, None);
        edit(&state, change);
        let out = resume(&scene, &state, &[]);
        assert!(!out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("the turn state is refused"), "{err}");
    }
    assert!(calls_received(&scene.log).is_empty());

    // Unedited, resume says what the approval sends, then sends it.
    let state = suspended(&scene, Some(&key));
    let out = resume(&scene, &state, &["--state-key-file", &key]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(r#"resume: --approve-call toolu_1 sends `hostile/delete_file` with {"path":"/tmp/harmless"}"#),
        "{err}"
    );
    assert_eq!(
        calls_received(&scene.log),
        [("delete_file".to_owned(), json!({"path": "/tmp/harmless"}))]
    );
}

/// Without a key, a call edited to wait for its questions' answers is not
/// taken as decided: the policy and the approvals given at resume judge it
/// before anything more is sent, whatever `--answers` answers.
#[test]
fn a_call_edited_to_wait_for_answers_is_judged_again_at_resume() {
    let scene = Scene::new();
    let policy = scene.file(
        "deny.json",
        &json!({"deny": ["hostile/read_file"], "ask": ["hostile/delete_file"], "default": "allow"}),
    );
    let answers = scene.file(
        "answers.yaml",
        &json!({"answers": [{"content": {"ok": true}}]}),
    );
    let asked = InputRequiredResult::new()
        .ask(
            "ok",
            InputRequest::form(
                "Go on?",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            ),
        )
        .with_request_state("asked");
    let waiting = json!({"waiting_for_input": {"round": 1, "asked": asked}});
    let edited = |path: &str, add_denied: bool| {
        let state = suspended(&scene, None);
        edit(&state, |v| {
            v["calls"][0]["stage"] = waiting.clone();
            v["calls"][0]["arguments"]["path"] = json!(path);
            if add_denied {
                // A call to a tool a `deny` rule names, added as waiting too.
                let mut added = v["calls"][0].clone();
                added["index"] = json!(1);
                added["call_id"] = json!("toolu_2");
                added["tool"] = json!("read_file");
                added["exposed_name"] = json!("read_file");
                v["calls"].as_array_mut().unwrap().push(added);
            }
        });
        state.display().to_string()
    };
    // A call added for a tool the policy denies: that tool is not offered,
    // so the document is refused and nothing is sent.
    let state = edited("/turn2/IMPORTANT", true);
    let out = scene.run(Some(&policy), &["--resume", &state, "--answers", &answers]);
    assert!(!out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("which the toolset does not offer"), "{err}");
    assert!(calls_received(&scene.log).is_empty());
    // Nobody approves now: nothing is sent, though every question is answered.
    let state = edited("/turn2/IMPORTANT", false);
    let out = scene.run(Some(&policy), &["--resume", &state, "--answers", &answers]);
    assert!(out.status.success(), "{}", stderr(&out));
    let turn = stdout(&out);
    let calls = &turn["calls"];
    assert_eq!(calls[0]["ran"], false, "{turn:#}");
    assert!(
        calls[0]["error"].to_string().contains("needs approval"),
        "{turn:#}"
    );
    assert!(calls_received(&scene.log).is_empty());
    // Approved now: the approval is for what resume shows it sends.
    let state = edited("/tmp/shown", false);
    let out = scene.run(
        Some(&policy),
        &[
            "--resume",
            &state,
            "--answers",
            &answers,
            "--approve-call",
            "toolu_1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(r#"resume: --approve-call toolu_1 sends `hostile/delete_file` with {"path":"/tmp/shown"}"#),
        "{err}"
    );
    assert_eq!(
        calls_received(&scene.log),
        [("delete_file".to_owned(), json!({"path": "/tmp/shown"}))]
    );
}

#[test]
fn server_text_reaches_the_terminal_escaped() {
    let scene = Scene::new();
    // A server that crashes with escape sequences in its stderr.
    let out = cli(&[
        "tools",
        "--provider",
        "anthropic",
        "--server",
        &scene.server("crash"),
        "--startup-timeout",
        "60",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("\\x1b[2J"), "{err}");
    assert!(err.contains("\\u{202e}"), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{202e}') && !err.contains('\u{7}'));
    // A tool named with an escape sequence, on `run --suspend`'s waiting line.
    let response = scene.response("rm.json", &[("toolu_9", "rm__31m", json!({}))]);
    let state = scene.dir.path().join("state.json").display().to_string();
    let out = scene.run(None, &["--suspend", &state, &response]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("waiting: call toolu_9 (`hostile/rm\\x1b[31m`)"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err}");
    // A skill whose URI hides escape sequences, refused at listing.
    let out = cli(&[
        "tools",
        "--provider",
        "anthropic",
        "--server",
        &scene.server("skills"),
        "--skills",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("skill `skill://x\\x1b]0;pwned\\x07\\u{202e}/SKILL.md` left out"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}') && !err.contains('\u{202e}'));
}

#[test]
fn a_tool_list_waits_no_longer_than_the_startup_timeout() {
    let scene = Scene::new();
    let out = cli(&[
        "tools",
        "--provider",
        "anthropic",
        "--server",
        &scene.server("list-silent"),
        "--startup-timeout",
        "2",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("tools/list within 2000 ms"), "{err}");
}

#[test]
fn a_state_key_in_the_environment_binds_the_document() {
    let scene = Scene::new();
    let key = "a key of thirty-two bytes, or so";
    let response = scene.response(
        "response.json",
        &[("toolu_1", "delete_file", json!({"path": "/tmp/harmless"}))],
    );
    let state = scene.dir.path().join("state.json");
    let state_arg = state.display().to_string();
    let out = scene.run_keyed(None, &["--suspend", &state_arg, &response], Some(key));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let document: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(document["mac"]["algorithm"], "HMAC-SHA256", "{document:#}");
    edit(&state, |v| {
        v["calls"][0]["arguments"]["path"] = json!("/turn2/IMPORTANT")
    });
    let resume = ["--resume", &state_arg, "--approve-call", "toolu_1"];
    let out = scene.run_keyed(None, &resume, Some(key));
    assert!(!out.status.success());
    assert!(stderr(&out).contains("was changed"), "{}", stderr(&out));
    // A key too short is refused, naming the variable.
    let out = scene.run_keyed(None, &resume, Some("short"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("MCP_ADAPTERS_STATE_KEY: a turn state key is at least 16 bytes"),
        "{}",
        stderr(&out)
    );
    assert!(calls_received(&scene.log).is_empty());
}

#[test]
fn rules_on_no_tool_are_warned_and_run_takes_a_prefix() {
    let scene = Scene::new();
    let policy = scene.file(
        "deny.json",
        &json!({"deny": ["hostile__delete_file"], "default": "allow"}),
    );
    let response = scene.response(
        "response.json",
        &[("toolu_1", "p_read_file", json!({"path": "/tmp/a"}))],
    );
    let out = scene.run(Some(&policy), &["--prefix", "p_", &response]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("the policy deny rule `hostile__delete_file` matches no listed tool (did you mean `hostile/delete_file`?)"),
        "{err}"
    );
    let run = stdout(&out);
    assert_eq!(run["calls"][0]["ran"], true, "{run:#}");
    assert_eq!(
        calls_received(&scene.log),
        [("read_file".to_owned(), json!({"path": "/tmp/a"}))]
    );
}

#[test]
fn a_server_tool_named_like_a_library_tool_gives_up_its_name() {
    let scene = Scene::new();
    let response = scene.response("response.json", &[("toolu_1", "list_resources", json!({}))]);
    let allow = scene.file("allow.json", &json!({"default": "allow"}));
    let out = scene.run(Some(&allow), &["--resources", &response]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = stdout(&out);
    // The library's tool answered (the server's resources), and the
    // server's tool of that name was renamed, as the report says.
    assert_eq!(run["calls"][0]["server_id"], "mcp-adapters", "{run:#}");
    assert!(
        run["results"][0].to_string().contains("file:///notes.txt"),
        "{run:#}"
    );
    let renamed = run["report"]["renamed"].as_array().unwrap();
    assert!(
        renamed
            .iter()
            .any(|r| r["tool"] == "list_resources"
                && r["reasons"][0]["with_server"] == "mcp-adapters"),
        "{renamed:#?}"
    );
    assert!(calls_received(&scene.log).is_empty());
}

#[test]
fn a_state_key_is_at_least_sixteen_bytes() {
    assert!(StateKey::new([0u8; 15]).is_err());
    assert!(StateKey::new([0u8; 16]).is_ok());
}
