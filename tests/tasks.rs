//! Calls that run as tasks, against scripted MCP servers of both
//! generations: MCP 2025-11-25 task-augmented calls (`params.task`,
//! `tasks/get`, `tasks/result`, `tasks/cancel`; input asked with requests
//! tied to the task) and the 2026-07-28 tasks extension (a task handle,
//! `tasks/get` with the outcome inline, input answered with `tasks/update`).
//! A task is followed at the server's interval, its statuses relayed as
//! progress, its input answered through the handlers, cancelled when its
//! call times out or its turn halts, and its end answered like any call's.
#![cfg(feature = "rmcp")]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::scripted::{self, Peer, Reply, Request, Server};
use mcp_adapters::client::Lifecycle;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{ElicitResult, InputResponses};
use mcp_adapters::*;
use serde_json::{Value, json};

const STAMP: &str = "2026-01-01T00:00:00Z";

fn task(id: &str, status: &str, message: &str) -> Value {
    json!({"taskId": id, "status": status, "statusMessage": message,
           "createdAt": STAMP, "lastUpdatedAt": STAMP})
}

/// A 2025-11-25 server whose tool `research` runs only as a task.
fn legacy_server(script: scripted::Script) -> Server {
    Server {
        tools: vec![
            json!({"name": "research", "inputSchema": {"type": "object"},
                   "execution": {"taskSupport": "required"}}),
            json!({"name": "plain", "inputSchema": {"type": "object"}}),
        ],
        capabilities: json!({"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}}),
        ..Server::legacy(&[], script)
    }
}

type Asked = Arc<Mutex<Vec<InputQuestions>>>;

fn answering(asked: &Asked, cancel: bool) -> Handlers {
    let asked = asked.clone();
    Handlers::new().input(move |questions| {
        asked.lock().unwrap().push(questions.clone());
        let answers: InputResponses = questions
            .requests
            .keys()
            .map(|k| (k.clone(), ElicitResult::accept(json!({"ok": true})).into()))
            .collect();
        Box::pin(async move {
            if cancel {
                InputAnswer::Cancel("the user closed the window".into())
            } else {
                InputAnswer::Respond(answers)
            }
        })
    })
}

fn options(modern: bool, handlers: Handlers) -> ClientOptions {
    let lifecycle = if modern {
        Lifecycle::Modern
    } else {
        Lifecycle::Legacy
    };
    ClientOptions::new().lifecycle(lifecycle).handlers(handlers)
}

fn response(calls: &[&str]) -> Value {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, name)| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": {"q": i}}))
        .collect();
    json!({"content": blocks})
}

async fn run(source: &Source, calls: &[&str], options: &ExecOptions) -> (Vec<String>, Execution) {
    let provider = common::provider("anthropic");
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let run = source
        .execute_tool_calls(provider, &response(calls), &listing, options)
        .await
        .unwrap();
    let texts = run
        .turn
        .results
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap_or("").to_owned())
        .collect();
    (texts, run)
}

/// 2025-11-25: the task works, then asks (through a request tied to it)
/// while another call is in flight, then completes.
fn asking_task() -> scripted::Script {
    let polls = Arc::new(AtomicUsize::new(0));
    Arc::new(move |request: Request, peer: Peer| {
        let polls = polls.clone();
        Box::pin(async move {
            match request.method.as_str() {
                "tools/call" if request.params["name"] == "plain" => {
                    peer.calls_arrived(2).await;
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    scripted::text("plain done")
                }
                "tools/call" => {
                    assert!(request.params.get("task").is_some(), "{}", request.params);
                    Ok(
                        json!({"task": {"taskId": "t1", "status": "working", "createdAt": STAMP,
                        "lastUpdatedAt": STAMP, "ttl": null, "pollInterval": 20}}),
                    )
                }
                "tasks/get" => {
                    let n = polls.fetch_add(1, Ordering::SeqCst);
                    Ok(if n == 0 {
                        task("t1", "working", "Gathering sources")
                    } else {
                        task("t1", "input_required", "Which one?")
                    })
                }
                "tasks/result" => {
                    let answer = peer
                        .ask("elicitation/create", json!({
                            "mode": "form", "message": "Which one?",
                            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}
                        }))
                        .await;
                    scripted::text(format!("report after {}", answer["result"]["action"]))
                }
                _ => Err(json!({"code": -32601, "message": "not here"})),
            }
        })
    })
}

#[test]
fn a_task_only_tool_runs_as_a_task_and_its_questions_belong_to_its_call() {
    common::current_thread_runtime().block_on(async {
        let (transport, server) = scripted::start(legacy_server(asking_task()));
        let asked = Asked::default();
        let client = McpClient::from_streams(
            "lab",
            transport.0,
            transport.1,
            &options(false, answering(&asked, false)),
        )
        .await
        .unwrap();
        let source = Source::client("lab", client).build().unwrap();
        let progress: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = progress.clone();
        let exec = ExecOptions::new().progress(move |p| {
            seen.lock().unwrap().push(p.message.unwrap_or_default());
        });
        let (texts, _) = run(&source, &["research", "plain"], &exec).await;
        assert_eq!(texts, [r#"report after "accept""#, "plain done"]);
        // Two calls were in flight, but the request named its task.
        let first = asked.lock().unwrap()[0].clone();
        let call = first.call.call().expect("attributed through the task");
        assert_eq!(call.call.tool, "research");
        assert_eq!(
            progress.lock().unwrap()[..2],
            ["task t1: working", "task t1: working: Gathering sources"]
        );
        // The tool list kept the tool's task support.
        let listing = source
            .tools(common::provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        assert_eq!(
            listing.toolset().resolve("research").unwrap().tool.extra["execution"]["taskSupport"],
            "required"
        );
        assert!(server.seen("tasks/cancel").is_empty());
    });
}

/// A task that never ends.
fn endless(modern: bool) -> scripted::Script {
    Arc::new(move |request: Request, peer: Peer| {
        Box::pin(async move {
            match request.method.as_str() {
                "tools/call" if request.params["name"] == "plain" => {
                    // Asks, and the handler cancels: the turn halts.
                    peer.calls_arrived(2).await;
                    let answer = peer
                        .ask(
                            "elicitation/create",
                            json!({"mode": "form", "message": "Go?",
                            "requestedSchema": {"type": "object", "properties": {}}}),
                        )
                        .await;
                    scripted::text(format!("plain got {}", answer["result"]["action"]))
                }
                "tools/call" if modern => Ok(json!({"resultType": "task", "taskId": "t9",
                    "status": "working", "createdAt": STAMP, "lastUpdatedAt": STAMP,
                    "ttlMs": null, "pollIntervalMs": 20})),
                "tools/call" => Ok(
                    json!({"task": {"taskId": "t9", "status": "working", "createdAt": STAMP,
                    "lastUpdatedAt": STAMP, "ttl": null, "pollInterval": 20}}),
                ),
                "tasks/get" => {
                    let mut working = task("t9", "working", "still going");
                    if modern {
                        working["resultType"] = json!("complete");
                    }
                    Ok(working)
                }
                "tasks/cancel" => Ok(if modern {
                    json!({"resultType": "complete"})
                } else {
                    task("t9", "cancelled", "")
                }),
                _ => Err(json!({"code": -32601, "message": "not here"})),
            }
        })
    })
}

fn modern_server(script: scripted::Script) -> Server {
    Server {
        modern: true,
        tools: vec![
            json!({"name": "research", "inputSchema": {"type": "object"}}),
            json!({"name": "plain", "inputSchema": {"type": "object"}}),
        ],
        capabilities: json!({"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}),
        ..Server::legacy(&[], script)
    }
}

#[test]
fn a_task_is_cancelled_when_its_call_times_out() {
    for modern in [false, true] {
        common::current_thread_runtime().block_on(async {
            let shape = if modern {
                modern_server(endless(true))
            } else {
                legacy_server(endless(false))
            };
            let (transport, server) = scripted::start(shape);
            let client = McpClient::from_streams(
                "lab",
                transport.0,
                transport.1,
                &options(modern, Handlers::new()),
            )
            .await
            .unwrap();
            let source = Source::client("lab", client).build().unwrap();
            let exec = ExecOptions::new().call_timeout(Duration::from_millis(300));
            let (texts, run) = run(&source, &["research"], &exec).await;
            assert!(texts[0].contains("took longer than 300 ms"), "{texts:?}");
            assert_eq!(
                run.calls[0].error.as_ref().unwrap().kind(),
                ErrorKind::Timeout
            );
            let cancelled = server.wait_for("tasks/cancel").await;
            assert_eq!(cancelled[0]["params"]["taskId"], "t9", "modern: {modern}");
        });
    }
}

#[test]
fn a_task_is_cancelled_when_its_turn_halts() {
    for modern in [false, true] {
        common::current_thread_runtime().block_on(async {
            let shape = if modern {
                modern_server(endless(true))
            } else {
                legacy_server(endless(false))
            };
            let (transport, server) = scripted::start(shape);
            let asked = Asked::default();
            let client = McpClient::from_streams(
                "lab",
                transport.0,
                transport.1,
                &options(modern, answering(&asked, true)),
            )
            .await
            .unwrap();
            let source = Source::client("lab", client).build().unwrap();
            let (texts, run) = run(&source, &["research", "plain"], &ExecOptions::new()).await;
            assert_eq!(run.status, Status::Halt, "modern: {modern}");
            assert!(
                texts[0].contains("the turn was halted, so task `t9` of the call was cancelled"),
                "{texts:?}"
            );
            assert_eq!(texts[1], r#"plain got "cancel""#);
            assert_eq!(server.seen("tasks/cancel")[0]["params"]["taskId"], "t9");
        });
    }
}

#[test]
fn a_failed_task_is_an_error_answer() {
    let legacy: scripted::Script = Arc::new(|request: Request, _peer: Peer| {
        Box::pin(async move {
            match request.method.as_str() {
                "tools/call" => Ok(
                    json!({"task": {"taskId": "t2", "status": "working", "createdAt": STAMP,
                    "lastUpdatedAt": STAMP, "ttl": 1000}}),
                ),
                "tasks/get" => Ok(task("t2", "failed", "the database is on fire")),
                "tasks/result" => {
                    Err(json!({"code": -32603, "message": "the database is on fire"}))
                }
                _ => Err(json!({"code": -32601, "message": "not here"})),
            }
        }) as futures_util::future::BoxFuture<'static, Reply>
    });
    let modern: scripted::Script = Arc::new(|request: Request, _peer: Peer| {
        Box::pin(async move {
            match request.method.as_str() {
                "tools/call" => Ok(
                    json!({"resultType": "task", "taskId": "t2", "status": "working",
                    "createdAt": STAMP, "lastUpdatedAt": STAMP, "ttlMs": 1000}),
                ),
                "tasks/get" => {
                    let mut failed = task("t2", "failed", "gave up");
                    failed["resultType"] = json!("complete");
                    failed["error"] = json!({"code": -32603, "message": "the database is on fire"});
                    Ok(failed)
                }
                _ => Err(json!({"code": -32601, "message": "not here"})),
            }
        }) as futures_util::future::BoxFuture<'static, Reply>
    });
    for (is_modern, script) in [(false, legacy), (true, modern)] {
        common::current_thread_runtime().block_on(async {
            let shape = if is_modern {
                modern_server(script)
            } else {
                legacy_server(script)
            };
            let (transport, _server) = scripted::start(shape);
            let client = McpClient::from_streams(
                "lab",
                transport.0,
                transport.1,
                &options(is_modern, Handlers::new()),
            )
            .await
            .unwrap();
            let source = Source::client("lab", client).build().unwrap();
            let (texts, run) = run(&source, &["research"], &ExecOptions::new()).await;
            assert!(texts[0].contains("the database is on fire"), "{texts:?}");
            assert!(run.calls[0].error.is_some());
        });
    }
}

#[test]
fn a_2026_task_asks_with_input_requests_answered_by_tasks_update() {
    common::current_thread_runtime().block_on(async {
        let updates: Arc<Mutex<Vec<Value>>> = Arc::default();
        let seen = updates.clone();
        let script: scripted::Script = Arc::new(move |request: Request, _peer: Peer| {
            let updates = seen.clone();
            Box::pin(async move {
                match request.method.as_str() {
                    "tools/call" => Ok(json!({"resultType": "task", "taskId": "t3", "status": "working",
                        "createdAt": STAMP, "lastUpdatedAt": STAMP, "ttlMs": null, "pollIntervalMs": 10})),
                    "tasks/get" => {
                        let answered = !updates.lock().unwrap().is_empty();
                        let mut state = if answered {
                            let mut done = task("t3", "completed", "done");
                            done["result"] = json!({"content": [{"type": "text", "text": "deployed"}]});
                            done
                        } else {
                            let mut asking = task("t3", "input_required", "confirm first");
                            asking["inputRequests"] = json!({"confirm": {"method": "elicitation/create", "params": {
                                "mode": "form", "message": "Deploy?",
                                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}});
                            asking
                        };
                        state["resultType"] = json!("complete");
                        Ok(state)
                    }
                    "tasks/update" => {
                        updates.lock().unwrap().push(request.params);
                        Ok(json!({"resultType": "complete"}))
                    }
                    _ => Err(json!({"code": -32601, "message": "not here"})),
                }
            })
        });
        let (transport, server) = scripted::start(modern_server(script));
        let asked = Asked::default();
        let client = McpClient::from_streams("lab", transport.0, transport.1, &options(true, answering(&asked, false)))
            .await
            .unwrap();
        let source = Source::client("lab", client).build().unwrap();
        let (texts, _) = run(&source, &["research"], &ExecOptions::new()).await;
        assert_eq!(texts, ["deployed"]);
        let update = &updates.lock().unwrap()[0];
        assert_eq!(update["taskId"], "t3");
        assert_eq!(update["inputResponses"]["confirm"]["action"], "accept");
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "asked once");
        assert_eq!(asked[0].asking, Asking::InputRequired);
        assert_eq!(asked[0].call.call().unwrap().call.tool, "research");
        // The call declared the tasks extension.
        let call = &server.seen("tools/call")[0];
        let declared = &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert!(declared["extensions"]["io.modelcontextprotocol/tasks"].is_object(), "{call}");
    });
}
