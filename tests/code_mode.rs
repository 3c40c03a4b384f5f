//! Code mode: the model's program runs here, each call it makes governed.
//! Against real servers (the filesystem server from npm; the tests' probe
//! server on the official Python SDK, through the command line across
//! processes), hostile programs, each alone, against an in-process tool
//! that counts what reaches it, and a property: a resumed program never
//! sends a call its journal holds.
#![cfg(all(feature = "cli", feature = "code-mode"))]

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{current_thread_runtime, provider, runtime, servers};
use mcp_adapters::code::CodeMode;
use mcp_adapters::exec::{InProcessServer, TurnState};
use mcp_adapters::{
    CallToolResult, ExecOptions, HubConfig, ListOptions, Policy, ServerConfig, Source, Status, Tool,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn anthropic_call(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn program(code: &str) -> Value {
    json!({"content": [anthropic_call("toolu_p", "run_code", json!({"code": code}))]})
}

/// The text of every block of the first answer, one after the other.
fn answer_text(answer: &Value) -> String {
    answer["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tokens of what the model reads, by the public `cl100k_base` encoding.
fn tokens(value: &Value) -> usize {
    tiktoken_rs::cl100k_base()
        .unwrap()
        .encode_ordinary(&value.to_string())
        .len()
}

#[test]
fn a_program_reads_fifty_files_in_one_round_trip_and_the_model_reads_its_summary() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..50 {
        let status = if i % 7 == 3 { "failed" } else { "passed" };
        let body = format!(
            "record {i}\nstatus: {status}\nnotes: {}\n",
            "lorem ipsum dolor sit amet ".repeat(20)
        );
        std::fs::write(root.path().join(format!("r{i:02}.txt")), body).unwrap();
    }
    let server = servers::filesystem(root.path()).unwrap_or_else(|e| panic!("{e}"));
    runtime().block_on(async {
        let source = HubConfig::new()
            .server("fs", ServerConfig::stdio(server.0, server.1))
            .connect()
            .await
            .unwrap()
            .policy(Policy::allow_all().programmatic("fs/read_text_file").unwrap())
            .code_mode(CodeMode::new())
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let description = listing
            .tools
            .iter()
            .find(|t| t["name"] == "run_code")
            .and_then(|t| t["description"].as_str())
            .expect("the code tool is listed")
            .to_owned();
        assert!(
            description.contains("read_text_file(args: {"),
            "{description}"
        );
        assert!(!description.contains("write_file"), "{description}");
        let dir = root.path().display().to_string();
        let code = format!(
            "const paths = Array.from({{length: 50}}, (_, i) => `{dir}/r${{String(i).padStart(2, '0')}}.txt`);\n\
             const texts = await Promise.all(paths.map(path => tools.read_text_file({{path}})));\n\
             const failed = texts.map((t, i) => [i, t.content]).filter(([, c]) => c.includes('status: failed')).map(([i]) => i);\n\
             console.log(`read ${{texts.length}} files`);\n\
             return {{read: texts.length, failed}};"
        );
        let options = ExecOptions::new();
        let run = source
            .execute_tool_calls(p, &program(&code), &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        assert_eq!(run.turn.results.len(), 1, "one answer: one round trip");
        let text = answer_text(&run.turn.results[0]);
        assert!(
            text.starts_with(r#"{"read":50,"failed":[3,10,17,24,31,38,45]}"#),
            "{text}"
        );
        assert!(text.contains("console:\nread 50 files"), "{text}");
        assert!(run.ran_servers.contains("fs"), "{:?}", run.ran_servers);

        // The same reads, made by the model one by one.
        let calls: Vec<Value> = (0..50)
            .map(|i| {
                let path = format!("{dir}/r{i:02}.txt");
                anthropic_call(&format!("toolu_{i}"), "read_text_file", json!({"path": path}))
            })
            .collect();
        let one_by_one = source
            .execute_tool_calls(p, &json!({"content": calls}), &listing, &options)
            .await
            .unwrap();
        assert_eq!(one_by_one.turn.results.len(), 50);
        let program_tokens = tokens(&json!(run.turn.results));
        let direct_tokens = tokens(&json!(one_by_one.turn.results));
        println!(
            "the model reads {program_tokens} tokens from the program, {direct_tokens} from fifty calls ({:.1}x fewer)",
            direct_tokens as f64 / program_tokens as f64
        );
        assert!(program_tokens * 20 < direct_tokens);
        source.close().await;
    });
}

// ---- hostile programs ----

/// What reached the in-process tools, by tool name.
type Seen = Arc<Mutex<Vec<String>>>;

/// A source with `read` (open to code) and `delete` (not open to code).
fn counted(seen: &Seen, mode: CodeMode) -> Source {
    let object = json!({"type": "object"});
    let (r, d) = (seen.clone(), seen.clone());
    let server = InProcessServer::new()
        .tool(
            Tool::new("read", "Reads.", object.clone()),
            move |args, _| {
                r.lock().unwrap().push("read".into());
                async move {
                    Ok(CallToolResult::text(format!(
                        "read {}",
                        Value::Object(args)
                    )))
                }
            },
        )
        .tool(Tool::new("delete", "Deletes.", object), move |_, _| {
            d.lock().unwrap().push("delete".into());
            async move { Ok(CallToolResult::text("deleted")) }
        });
    Source::client("s", server)
        .policy(Policy::allow_all().programmatic("s/read").unwrap())
        .code_mode(mode)
        .build()
        .unwrap()
}

/// Runs `code` and answers the model's answer's text and what reached the
/// tools.
fn hostile(code: &str, mode: CodeMode) -> (String, Vec<String>, bool) {
    let seen = Seen::default();
    let source = counted(&seen, mode);
    runtime().block_on(async {
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let run = tokio::time::timeout(
            Duration::from_secs(120),
            source.execute_tool_calls(p, &program(code), &listing, &ExecOptions::new()),
        )
        .await
        .expect("hang guard")
        .unwrap();
        let answer = &run.turn.results[0];
        let is_error = answer["is_error"] == json!(true);
        let sent = seen.lock().unwrap().clone();
        (answer_text(answer), sent, is_error)
    })
}

fn assert_stopped(code: &str, mode: CodeMode, says: &str) -> Vec<String> {
    let (text, sent, is_error) = hostile(code, mode);
    assert!(is_error, "{code}: {text}");
    assert!(text.contains(says), "{code}: {text}");
    assert!(!sent.contains(&"delete".to_owned()), "{sent:?}");
    sent
}

#[test]
fn an_endless_loop_is_stopped_by_the_time_limit_and_sends_nothing_more() {
    let mode = CodeMode::new().time_limit(Duration::from_secs(2));
    let sent = assert_stopped(
        "await tools.read({n: 1}); for (;;) { try { while (true) {} } catch (e) {} } await tools.read({n: 2});",
        mode,
        "time limit (2000 ms)",
    );
    assert_eq!(sent, ["read"]);
}

#[test]
fn a_memory_bomb_is_stopped_by_the_memory_limit() {
    let mode = CodeMode::new().memory_limit(16 << 20);
    assert_stopped(
        "const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length);",
        mode,
        "memory than its limit",
    );
}

#[test]
fn deep_recursion_is_stopped_by_the_stack_limit() {
    assert_stopped(
        "function f(n) { return f(n + 1) + 1; } return f(0);",
        CodeMode::new(),
        "stack limit",
    );
}

#[test]
fn a_huge_output_is_stopped_by_the_output_limit() {
    assert_stopped(
        "for (let i = 0; ; i++) { try { console.log('x'.repeat(4096)); } catch (e) {} await tools.read({i}); }",
        CodeMode::new(),
        "output limit (65536 bytes)",
    );
    assert_stopped(
        "return 'x'.repeat(1 << 20);",
        CodeMode::new(),
        "output limit",
    );
}

#[test]
fn require_is_not_there() {
    assert_stopped(
        "const fs = require('fs'); return fs.readFileSync('/etc/passwd', 'utf8');",
        CodeMode::new(),
        "ReferenceError: require is not defined",
    );
}

#[test]
fn import_loads_no_module() {
    assert_stopped(
        "const fs = await import('fs'); return fs;",
        CodeMode::new(),
        "fs",
    );
    assert_stopped(
        "import fs from 'fs'; return 1;",
        CodeMode::new(),
        "SyntaxError",
    );
}

#[test]
fn fetch_is_not_there() {
    assert_stopped(
        "return await fetch('http://127.0.0.1:1/');",
        CodeMode::new(),
        "ReferenceError: fetch is not defined",
    );
}

#[test]
fn process_is_not_there() {
    assert_stopped(
        "return process.env.HOME;",
        CodeMode::new(),
        "ReferenceError: process is not defined",
    );
}

#[test]
fn eval_of_fetched_code_reaches_nothing() {
    assert_stopped(
        "const code = await fetch('http://127.0.0.1:1/payload.js').then(r => r.text()); return eval(code);",
        CodeMode::new(),
        "ReferenceError: fetch is not defined",
    );
    // eval itself runs only what the program could write anyway.
    assert_stopped(
        "return eval('tools.delete({})');",
        CodeMode::new(),
        "not a function",
    );
}

#[test]
fn prototype_tampering_does_not_widen_the_tools() {
    let (text, sent, is_error) = hostile(
        "'use strict';\n\
         Object.prototype.delete = function () { return 'pwned'; };\n\
         Function.prototype.call = function () { return 'hijacked'; };\n\
         const tries = [];\n\
         for (const f of [() => { tools.delete = tools.read; }, () => { Object.setPrototypeOf(tools, {delete: tools.read}); }, () => { Object.defineProperty(tools, 'delete', {value: tools.read}); }]) {\n\
           try { f(); tries.push('changed'); } catch (e) { tries.push(e.name); }\n\
         }\n\
         return [tries, Object.keys(tools), typeof tools.delete, await tools.read({n: 1})];",
        CodeMode::new(),
    );
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with(
            r#"[["TypeError","TypeError","TypeError"],["read"],"undefined","read {\"n\":1}"]"#
        ),
        "{text}"
    );
    assert_eq!(sent, ["read"]);
}

#[test]
fn a_tool_not_open_to_code_cannot_be_called() {
    assert_stopped(
        "return await tools.delete({});",
        CodeMode::new(),
        "not a function",
    );
    assert_stopped(
        "return await tools['delete']({});",
        CodeMode::new(),
        "not a function",
    );
}

/// A tool open to programs only: left out of the model's listing, declared
/// to programs, refused when the model calls it directly (never sent), and
/// run when a program calls it.
#[test]
fn a_tool_open_to_programs_only_is_not_listed_and_the_models_direct_call_is_refused() {
    let seen = Seen::default();
    let object = json!({"type": "object"});
    let (r, d) = (seen.clone(), seen.clone());
    let server = InProcessServer::new()
        .tool(Tool::new("read", "Reads.", object.clone()), move |_, _| {
            r.lock().unwrap().push("read".into());
            async move { Ok(CallToolResult::text("read")) }
        })
        .tool(Tool::new("delete", "Deletes.", object), move |_, _| {
            d.lock().unwrap().push("delete".into());
            async move { Ok(CallToolResult::text("deleted")) }
        });
    let policy = Policy::allow_all()
        .programmatic("s/read")
        .unwrap()
        .programmatic_only("s/delete")
        .unwrap();
    let source = Source::client("s", server)
        .policy(policy)
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    runtime().block_on(async {
        for id in ["anthropic", "openai-chat", "gemini"] {
            let listing = source
                .tools(provider(id), &ListOptions::new())
                .await
                .unwrap();
            let listed = serde_json::to_string(&listing.tools).unwrap();
            assert!(listed.contains("run_code"), "{id}: {listed}");
            assert!(listed.contains("\"read\""), "{id}: {listed}");
            // Declared to programs in the code tool's description only.
            assert!(!listed.contains("\"delete\""), "{id}: {listed}");
            assert!(listed.contains("delete(args"), "{id}: {listed}");
        }
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let direct = json!({"content": [
            anthropic_call("toolu_d", "delete", json!({})),
            anthropic_call("toolu_r", "read", json!({})),
        ]});
        let run = source
            .execute_tool_calls(p, &direct, &listing, &ExecOptions::new())
            .await
            .unwrap();
        let error = run.calls[0]
            .error
            .as_ref()
            .expect("the direct call is refused");
        assert!(
            error.message().contains("may be called only from code"),
            "{error}"
        );
        assert!(answer_text(&run.turn.results[0]).contains("only from code"));
        assert!(run.calls[1].error.is_none(), "{:?}", run.calls[1].error);
        assert_eq!(
            *seen.lock().unwrap(),
            ["read"],
            "the refused call is never sent"
        );
        let run = source
            .execute_tool_calls(
                p,
                &program("return await tools.delete({});"),
                &listing,
                &ExecOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(answer_text(&run.turn.results[0]), r#""deleted""#);
    });
    assert_eq!(*seen.lock().unwrap(), ["read", "delete"]);
}

#[test]
fn too_many_calls_end_the_program() {
    let sent = assert_stopped(
        "for (let i = 0; ; i++) { try { await tools.read({i}); } catch (e) {} }",
        CodeMode::new().max_calls(5),
        "more tool calls than its limit (5)",
    );
    assert_eq!(sent.len(), 5);
}

#[test]
fn a_streamed_program_runs_as_the_stream_completes_it() {
    let seen = Seen::default();
    let source = counted(&seen, CodeMode::new());
    let code = "return [await tools.read({n: 1}), await tools.read({n: 2})];";
    let input = json!({"code": code}).to_string();
    let (head, tail) = input.split_at(input.len() / 2);
    let events = [
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_s", "name": "run_code", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": head}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": tail}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_stop"}),
    ];
    let bytes: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(bytes.into_bytes())];
    runtime().block_on(async {
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let run = source
            .execute_stream(
                p,
                futures_util::stream::iter(chunks),
                &listing,
                &ExecOptions::new(),
            )
            .await
            .unwrap();
        let text = answer_text(&run.execution.turn.results[0]);
        assert_eq!(text, r#"["read {\"n\":1}","read {\"n\":2}"]"#);
    });
    assert_eq!(*seen.lock().unwrap(), ["read", "read"]);
}

#[test]
fn code_mode_without_a_tool_open_to_code_says_how_to_open_some() {
    let source = Source::hub()
        .server("s", InProcessServer::new())
        .code_mode(CodeMode::new())
        .build()
        .unwrap();
    let err = current_thread_runtime()
        .block_on(source.tools(provider("gemini"), &ListOptions::new()))
        .unwrap_err();
    assert!(err.message().contains("--programmatic GLOB"), "{err}");
}

// ---- across processes, through the command line ----

/// The probe's log: `(tool, arguments)` of each `tools/call` it received.
fn received(log: &Path) -> Vec<(String, Value)> {
    servers::logged(log)
        .into_iter()
        .map(|v| {
            (
                v["tool"].as_str().unwrap().to_owned(),
                v["arguments"].clone(),
            )
        })
        .collect()
}

#[test]
fn an_approval_in_a_programs_loop_suspends_and_another_process_finishes_it_sending_each_call_once()
{
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let code = "const out = [];\n\
                for (let i = 1; i <= 5; i++) {\n\
                  out.push((await tools.append({text: `line ${i}`})).result);\n\
                  if (i === 3) out.push((await tools.publish({text: `three at ${new Date(Date.now()).getUTCFullYear() > 2000}`})).result);\n\
                }\n\
                console.log('done');\n\
                return out;";
    std::fs::write(
        path("response.json"),
        json!({"content": [anthropic_call("toolu_1", "run_code", json!({"code": code}))]})
            .to_string(),
    )
    .unwrap();
    std::fs::write(path("policy.yaml"), "default: allow\nask: [publish]\n").unwrap();
    let turn = |log: &str, extra: &[&str]| {
        let (python, args) =
            servers::probe(Path::new(&path(log))).unwrap_or_else(|e| panic!("{e}"));
        let server = format!("probe={python} {}", args.join(" "));
        let policy = path("policy.yaml");
        let mut argv = vec![
            "run",
            "--provider",
            "anthropic",
            "--server",
            &server,
            "--policy",
            &policy,
            "--code-mode",
            "--programmatic",
            "probe/*",
        ];
        argv.extend_from_slice(extra);
        common::cli::run(&argv)
    };

    // Unsuspended: the approval given up front.
    let whole = turn(
        "whole.jsonl",
        &["--approve-call", "toolu_1/3", &path("response.json")],
    );
    assert_eq!(
        whole.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    let whole = common::cli::stdout_json(&whole);

    // Suspended at the third iteration's approval...
    let state = path("state.json");
    let first = turn(
        "split.jsonl",
        &["--suspend", &state, &path("response.json")],
    );
    assert_eq!(
        first.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let first = common::cli::stdout_json(&first);
    assert_eq!(first["status"], "suspended");
    let waiting = &first["waiting"];
    assert_eq!(waiting.as_array().unwrap().len(), 1, "{waiting}");
    assert_eq!(waiting[0]["call_id"], "toolu_1/3");
    assert_eq!(waiting[0]["waits_for"], "approval");
    assert_eq!(waiting[0]["caller"]["type"], "code");
    let tools = |log: &str| -> Vec<String> {
        received(Path::new(&path(log)))
            .into_iter()
            .map(|(t, a)| format!("{t} {}", a["text"].as_str().unwrap()))
            .collect()
    };
    assert_eq!(
        tools("split.jsonl"),
        ["append line 1", "append line 2", "append line 3"]
    );

    // ... and finished by another process.
    let second = turn(
        "split.jsonl",
        &["--resume", &state, "--approve-call", "toolu_1/3"],
    );
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let second = common::cli::stdout_json(&second);
    assert_eq!(second["status"], "ok");
    let expected = [
        "append line 1",
        "append line 2",
        "append line 3",
        "publish three at true",
        "append line 4",
        "append line 5",
    ];
    assert_eq!(tools("split.jsonl"), expected, "every call once");
    assert_eq!(tools("whole.jsonl"), expected);
    assert_eq!(second["results"], whole["results"]);
    assert!(
        answer_text(&second["results"][0]).contains("console:\ndone"),
        "{}",
        second["results"]
    );
}

// ---- the journal ----

/// A source whose tools `step` (allowed) and `gate` (asked about) log each
/// call they receive, by its `n`.
fn journaled(log: &Arc<Mutex<Vec<u64>>>) -> Source {
    let tool = |name: &str| {
        let seen = log.clone();
        let name = name.to_owned();
        move |args: serde_json::Map<String, Value>, _| {
            let n = args["n"].as_u64().unwrap();
            seen.lock().unwrap().push(n);
            let name = name.clone();
            async move { Ok(CallToolResult::text(format!("{name} {n}"))) }
        }
    };
    let object = json!({"type": "object"});
    let server = InProcessServer::new()
        .tool(Tool::new("step", "A step.", object.clone()), tool("step"))
        .tool(
            Tool::new("gate", "A step someone approves.", object),
            tool("gate"),
        );
    Source::client("s", server)
        .policy(
            Policy::allow_all()
                .programmatic("s/*")
                .unwrap()
                .ask("s/gate")
                .unwrap(),
        )
        .code_mode(CodeMode::new())
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// Programs of sequential and concurrent steps, some of which need an
    /// approval: suspended at each wait, its state written and read back,
    /// resumed with what waits approved, until done. No step is ever
    /// received twice, every step is received, and the result is whole.
    #[test]
    fn a_resumed_program_never_sends_a_call_its_journal_holds(
        groups in prop::collection::vec(1usize..4, 1..5),
        asked in prop::collection::vec(any::<bool>(), 12),
    ) {
        let total: usize = groups.iter().sum();
        let mut code = String::from("const asked = ");
        code.push_str(&json!(asked[..total]).to_string());
        code.push_str(";\nconst out = [];\nlet n = 0;\n");
        for size in &groups {
            code.push_str(&format!(
                "out.push(...await Promise.all(Array.from({{length: {size}}}, () => {{ const i = n++; return tools[asked[i] ? 'gate' : 'step']({{n: i}}); }})));\n"
            ));
        }
        code.push_str("return out;");
        let log = Arc::new(Mutex::new(Vec::new()));
        let source = journaled(&log);
        current_thread_runtime().block_on(async {
            let p = provider("anthropic");
            let listing = source.tools(p, &ListOptions::new()).await.unwrap();
            let options = |decided: &[String]| {
                let mut options = ExecOptions::new().suspend(true);
                for id in decided {
                    options = options.approve_call(id.clone());
                }
                options
            };
            let mut decided: Vec<String> = Vec::new();
            let mut run = source
                .execute_tool_calls(p, &program(&code), &listing, &options(&decided))
                .await
                .unwrap();
            let mut rounds = 0;
            while run.status == Status::Suspended {
                rounds += 1;
                prop_assert!(rounds <= total + 1, "no progress");
                let state = run.suspended.take().unwrap();
                let state = TurnState::from_json(&state.to_json().unwrap()).unwrap();
                prop_assert!(!run.waiting.is_empty());
                for waiting in &run.waiting {
                    decided.push(waiting.call_id.clone().unwrap());
                }
                run = source
                    .resume_turn(p, state, &listing, &options(&decided))
                    .await
                    .unwrap();
            }
            prop_assert_eq!(run.status, Status::Ok);
            let in_order = log.lock().unwrap().clone();
            let mut received = in_order.clone();
            received.sort_unstable();
            let expected: Vec<u64> = (0..total as u64).collect();
            prop_assert_eq!(&received, &expected, "each step once: {:?}", in_order);
            let text = answer_text(&run.turn.results[0]);
            let want: Vec<String> = (0..total)
                .map(|n| format!("{} {n}", if asked[n] { "gate" } else { "step" }))
                .collect();
            prop_assert!(text.starts_with(&json!(want).to_string()), "{}", text);
            Ok(())
        })?;
    }
}

/// Each inner call's span is a child of the program's span, in its trace.
#[cfg(feature = "otel")]
#[test]
fn each_inner_calls_span_nests_under_the_programs_span() {
    let traced = common::traces::traced();
    let seen = Seen::default();
    let source = counted(&seen, CodeMode::new());
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let code = "const one = await tools.read({n: 1});\n\
                    const two = await Promise.all([tools.read({n: 2}), tools.read({n: 3})]);\n\
                    return [one, ...two];";
        let run = source
            .execute_tool_calls(p, &program(code), &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        // A direct call after it: a span of its own, under no program.
        let direct = json!({"content": [anthropic_call("toolu_r", "read", json!({}))]});
        source
            .execute_tool_calls(p, &direct, &listing, &ExecOptions::new())
            .await
            .unwrap();
    });
    let spans = traced.spans();
    let named = |name: &str| -> Vec<_> { spans.iter().filter(|s| s.name == name).collect() };
    let programs = named("execute_tool run_code");
    assert_eq!(programs.len(), 1, "{spans:#?}");
    let program = programs[0];
    let reads = named("execute_tool read");
    assert_eq!(reads.len(), 4, "{spans:#?}");
    let program_id = program.span_context.span_id();
    let trace_id = program.span_context.trace_id();
    let (inner, outer): (Vec<_>, Vec<_>) = reads
        .into_iter()
        .partition(|s| s.parent_span_id == program_id);
    assert_eq!(inner.len(), 3, "each of the program's calls is its child");
    for span in &inner {
        assert_eq!(span.span_context.trace_id(), trace_id);
    }
    assert_eq!(outer.len(), 1);
    assert_ne!(outer[0].span_context.trace_id(), trace_id);
}
