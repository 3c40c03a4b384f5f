//! Execution with in-process servers that are slow, failing, panicking,
//! hanging and approval-gated: every call answered exactly once and in order.

mod common;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_adapters::ErrorKind;
use mcp_adapters::ListOptions;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::CallToolResponse;
use mcp_adapters::toolset::{Binding, BoundValue};
use mcp_adapters::*;
use mcp_adapters::{CallToolResult, Tool};
use proptest::prelude::*;
use serde_json::{Value, json};

fn schema() -> Value {
    json!({"type": "object", "properties": {"n": {"type": "integer"}, "ms": {"type": "integer"}}, "required": ["n"]})
}

/// A server whose tools behave as their names say, counting the calls it receives.
fn server(received: Arc<AtomicUsize>) -> InProcessServer {
    let tool = |name: &str| Tool::new(name, name, schema());
    let counted = move |r: &Arc<AtomicUsize>| {
        r.fetch_add(1, Ordering::SeqCst);
    };
    let (r1, r2, r3, r4, r5) = (
        received.clone(),
        received.clone(),
        received.clone(),
        received.clone(),
        received,
    );
    InProcessServer::new()
        .tool(tool("echo"), move |args, _| {
            counted(&r1);
            async move { Ok(CallToolResult::text(format!("n={}", args["n"]))) }
        })
        .tool(tool("slow"), move |args, _| {
            counted(&r2);
            async move {
                tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(50))).await;
                Ok(CallToolResult::text(format!("slept n={}", args["n"])))
            }
        })
        .tool(tool("fail"), move |_, _| {
            counted(&r3);
            async move { Err(mcp_adapters::Error::new(ErrorKind::Server, "disk full")) }
        })
        .tool(tool("panic"), move |_, _| {
            counted(&r4);
            async move { panic!("boom") }
        })
        .tool(tool("hang"), move |_, _| {
            counted(&r5);
            std::future::pending()
        })
}

fn approver_from(
    answers: Arc<Mutex<Vec<Approval>>>,
) -> impl Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync {
    move |_req| {
        let answer = answers.lock().unwrap().pop().unwrap_or(Approval::Allow);
        Box::pin(async move { answer })
    }
}

fn anthropic_response(calls: &[(&str, Value)]) -> Value {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": input}))
        .collect();
    json!({"content": blocks})
}

fn options() -> ExecOptions {
    // Far above the slow tool's 80 ms, so that a loaded machine does not time it out.
    ExecOptions::new().call_timeout(Duration::from_millis(2000))
}

/// A server whose tools return media: `frames` (three images, the slowest to
/// answer), `chart` (text, an image, text), `report` (a PDF labelled
/// `application/octet-stream`, as the reference filesystem server sends one)
/// and `note` (text).
fn media_server() -> InProcessServer {
    let results: Vec<(&str, &str, u64)> = vec![
        ("frames", "several_images", 60),
        ("chart", "mixed_text_image_text", 0),
        ("report", "resource_blob_octet_pdf", 10),
        ("note", "text", 0),
    ];
    let mut server = InProcessServer::new();
    for (name, fixture_name, ms) in results {
        let result: CallToolResult =
            serde_json::from_value(fixture(&format!("results/{fixture_name}.json"))).unwrap();
        server = server.tool(
            Tool::new(name, name, json!({"type": "object"})),
            move |_args, _ctx| {
                let result = result.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(result)
                }
            },
        );
    }
    server
}

/// A response calling `calls` (id, tool) in the format of `provider`.
fn response_for(provider: &str, calls: &[(&str, &str)]) -> Value {
    let each = |f: &dyn Fn(&str, &str) -> Value| -> Vec<Value> {
        calls.iter().map(|(id, name)| f(id, name)).collect()
    };
    match provider {
        "anthropic" => {
            json!({"content": each(&|id, name| json!({"type": "tool_use", "id": id, "name": name, "input": {}}))})
        }
        "openai-chat" | "mistral" => json!({"choices": [{"message": {"role": "assistant",
            "tool_calls": each(&|id, name| json!({"id": id, "type": "function", "function": {"name": name, "arguments": "{}"}}))}}]}),
        "openai-responses" => {
            json!({"output": each(&|id, name| json!({"type": "function_call", "call_id": id, "name": name, "arguments": "{}"}))})
        }
        "gemini" | "gemini-multimodal" => json!({"candidates": [{"content": {"role": "model",
            "parts": each(&|id, name| json!({"functionCall": {"id": id, "name": name, "args": {}}}))}}]}),
        "bedrock-converse" => json!({"output": {"message": {"role": "assistant",
            "content": each(&|id, name| json!({"toolUse": {"toolUseId": id, "name": name, "input": {}}}))}}}),
        other => panic!("no response format for {other}"),
    }
}

/// With the `media` option, `execute_tool_calls` returns the answers in the
/// model's order, then the follow-ups of every call, in the model's order too
/// (not the order the calls finished), each introduced by a text naming its call.
#[test]
fn execute_tool_calls_returns_answers_then_follow_ups_in_the_model_order() {
    current_thread_runtime().block_on(async {
        let source = Source::client("media", media_server())
            .policy(Policy::allow_all())
            .build()
            .unwrap();
        let calls = [
            ("callA0001", "frames"),
            ("callB0002", "note"),
            ("callC0003", "chart"),
            ("callD0004", "report"),
        ];
        for (id, value) in MEDIA_OPTIONS {
            let p = provider(id);
            let listing = source.tools(p, &ListOptions::new()).await.unwrap();
            let options = ExecOptions::new().results(ResultOptions::new().option("media", *value));
            let run = source
                .execute_tool_calls(p, &response_for(id, &calls), &listing, &options)
                .await
                .unwrap();
            assert_eq!(run.turn.results.len(), 4, "{id}");
            let answered: Vec<&str> = run
                .calls
                .iter()
                .map(|c| c.call_id.as_deref().unwrap())
                .collect();
            assert_eq!(answered, calls.map(|(call_id, _)| call_id), "{id}");
            // The follow-ups name their calls in the model's order.
            let text = serde_json::to_string(&run.turn.follow_ups).unwrap();
            let named: Vec<&str> = calls
                .iter()
                .map(|(call_id, _)| *call_id)
                .filter(|call_id| text.contains(&format!("(call {call_id})")))
                .collect();
            let mut positions: Vec<usize> = named
                .iter()
                .map(|call_id| text.find(&format!("(call {call_id})")).unwrap())
                .collect();
            let in_order = positions.clone();
            positions.sort();
            assert_eq!(in_order, positions, "{id} {value}: {named:?}");
            // Without the option the answers are what they were, and nothing follows.
            let plain = source
                .execute_tool_calls(p, &response_for(id, &calls), &listing, &ExecOptions::new())
                .await
                .unwrap();
            assert!(plain.turn.follow_ups.is_empty(), "{id}");
            let case = format!("media_{value}");
            snapshot(Stage::Exec, Some(id), &case, &run);
        }
    });
}

#[test]
fn every_call_answered_once_in_order() {
    current_thread_runtime().block_on(async {
        let received = Arc::new(AtomicUsize::new(0));
        let hub = Source::hub()
            .server("s", server(received.clone()))
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = hub.tools(p, &ListOptions::new()).await.unwrap();
        let response = anthropic_response(&[
            ("s__slow", json!({"n": 0, "ms": 80})),
            ("s__echo", json!({"n": 1})),
            ("s__fail", json!({"n": 2})),
            ("s__panic", json!({"n": 3})),
            ("s__hang", json!({"n": 4})),
            ("s__nope", json!({"n": 5})),
            ("s__echo", json!("not an object")),
        ]);
        let run = hub
            .execute_tool_calls(p, &response, &listing, &options())
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        let ids = answer_ids(&run.turn.results, "tool_use_id");
        assert_eq!(
            ids,
            [
                "toolu_0", "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5", "toolu_6"
            ]
        );
        let text = |i: usize| {
            run.turn.results[i]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(text(0), "slept n=0");
        assert_eq!(text(1), "n=1");
        assert_eq!(text(2), "disk full");
        assert!(text(3).contains("panicked: boom"), "{}", text(3));
        assert!(text(4).contains("longer than 2000 ms"), "{}", text(4));
        assert!(text(5).contains("unknown tool"));
        for (i, is_error) in [false, false, true, true, true, true, true]
            .iter()
            .enumerate()
        {
            assert_eq!(
                run.turn.results[i].get("is_error").is_some(),
                *is_error,
                "answer {i}"
            );
        }
        assert_eq!(
            received.load(Ordering::SeqCst),
            5,
            "rejected calls never reach the server"
        );
        let kinds: Vec<Option<ErrorKind>> = run
            .calls
            .iter()
            .map(|c| c.error.as_ref().map(|e| e.kind()))
            .collect();
        assert_eq!(kinds[4], Some(ErrorKind::Timeout));
        assert_eq!(run.ran_servers, BTreeSet::from(["s".to_owned()]));
    });
}

#[test]
fn policy_denies_and_approver_halts_with_complete_results() {
    current_thread_runtime().block_on(async {
        let received = Arc::new(AtomicUsize::new(0));
        let answers = Arc::new(Mutex::new(vec![Approval::DenyAndHalt("user said stop".into())]));
        let hub = Source::hub()
            .server("s", server(received.clone()))
            // `fail` is denied once `web` tainted the conversation; `panic` is
            // asked about once `mail` did, and no rule allows it before.
            .policy(
                Policy::new()
                    .allow("s/echo")
                    .unwrap()
                    .ask("s/slow")
                    .unwrap()
                    .allow("s/fail")
                    .unwrap()
                    .deny_when_tainted("s/fail", ["web"])
                    .unwrap()
                    .ask_when_tainted("s/panic", ["mail"])
                    .unwrap(),
            )
            .approver(approver_from(answers))
            .build()
            .unwrap();
        let p = provider("openai-chat");
        let listing = hub.tools(p, &ListOptions::new()).await.unwrap();
        // `hang`, which no rule can allow, is not offered.
        let names: Vec<&str> = listing.tools.iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["s__echo", "s__slow", "s__fail", "s__panic"]);
        let taint = BTreeSet::from(["web".to_owned()]);
        let calls: Vec<Value> = [("s__echo", json!({"n": 1})), ("s__slow", json!({"n": 2, "ms": 1})), ("s__fail", json!({"n": 3})), ("s__panic", json!({"n": 4}))]
            .iter()
            .enumerate()
            .map(|(i, (name, args))| json!({"id": format!("c{i}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
            .collect();
        let run = hub
            .execute_tool_calls(p, &json!({"tool_calls": calls}), &listing, &options().max_concurrency(1).taint(&taint))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Halt);
        let outcomes: Vec<CallOutcome> = run.calls.iter().map(|c| c.outcome).collect();
        assert_eq!(outcomes, [CallOutcome::Ran, CallOutcome::Denied, CallOutcome::Denied, CallOutcome::Denied]);
        assert_eq!(run.turn.results.len(), 4);
        let content: Vec<&str> = run.turn.results.iter().map(|r| r["content"].as_str().unwrap()).collect();
        assert_eq!(content[0], "n=1");
        assert_eq!(content[1], "Error: denied by the approver: user said stop");
        assert_eq!(content[2], "Error: denied by policy (rule `s/fail`)");
        assert_eq!(content[3], "Error: denied by policy (no rule allows this tool)");
        assert_eq!(received.load(Ordering::SeqCst), 1, "denied calls never reach the server");
    });
}

#[test]
fn taint_rules_react_to_earlier_turns() {
    current_thread_runtime().block_on(async {
        let received = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let hub = Source::hub()
            .server("s", server(received.clone()))
            .policy(
                Policy::new()
                    .allow("s/*")
                    .unwrap()
                    .ask_when_tainted("s/echo", ["web"])
                    .unwrap(),
            )
            .approver(move |req: ApprovalRequest| {
                seen2.lock().unwrap().push(req.taint.clone());
                Box::pin(async { Approval::Deny("not after reading the web".into()) })
            })
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = hub.tools(p, &ListOptions::new()).await.unwrap();
        let response = anthropic_response(&[("s__echo", json!({"n": 1}))]);
        let clean = hub
            .execute_tool_calls(p, &response, &listing, &options())
            .await
            .unwrap();
        assert_eq!(clean.turn.results[0]["content"][0]["text"], "n=1");
        let tainted = options().taint(BTreeSet::from(["web".to_owned()]));
        let run = hub
            .execute_tool_calls(p, &response, &listing, &tainted)
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["is_error"], true);
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert!(run.ran_servers.is_empty());
    });
}

#[test]
fn validation_hooks_and_context() {
    struct Doubler;
    impl Hooks for Doubler {
        fn before<'a>(
            &'a self,
            call: &'a mut mcp_adapters::ToolCall,
            ctx: &'a CallContext,
        ) -> BoxFuture<'a, mcp_adapters::Result<()>> {
            Box::pin(async move {
                assert_eq!(ctx.principal.as_deref(), Some("user-7"));
                let n = call.arguments["n"].as_i64().unwrap();
                call.arguments.insert("n".into(), json!(n * 2));
                Ok(())
            })
        }
        fn after<'a>(
            &'a self,
            _call: &'a mcp_adapters::ToolCall,
            result: &'a mut CallToolResult,
            _ctx: &'a CallContext,
        ) -> BoxFuture<'a, mcp_adapters::Result<()>> {
            Box::pin(async move {
                result
                    .content
                    .push(mcp_adapters::Content::text("(checked)"));
                Ok(())
            })
        }
    }
    current_thread_runtime().block_on(async {
        let received = Arc::new(AtomicUsize::new(0));
        let client = Source::client("s", server(received.clone()))
            .validate_arguments()
            .hooks(Doubler)
            .build()
            .unwrap();
        assert!(client.policy().is_none());
        let p = provider("anthropic");
        let listing = hub_listing(&client, p).await;
        let response = anthropic_response(&[
            ("echo", json!({"n": 21})),
            ("echo", json!({"n": "x"})),
            ("echo", json!({})),
        ]);
        let opts = options().principal("user-7");
        let run = client
            .execute_tool_calls(p, &response, &listing, &opts)
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["content"][0]["text"], "n=42");
        assert_eq!(run.turn.results[0]["content"][1]["text"], "(checked)");
        let invalid = run.turn.results[1]["content"][0]["text"].as_str().unwrap();
        assert!(invalid.starts_with("invalid arguments: /n:"), "{invalid}");
        assert!(
            run.turn.results[2]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("required")
        );
        assert_eq!(
            received.load(Ordering::SeqCst),
            1,
            "invalid calls are not sent"
        );
    });
}

async fn hub_listing(source: &Source, p: &mcp_adapters::Provider) -> Listing {
    source.tools(p, &ListOptions::new()).await.unwrap()
}

#[test]
fn failed_listing_leaves_the_server_out_and_pagination_is_followed() {
    struct Down;
    impl Server for Down {
        fn list_tools(
            &self,
            _cursor: Option<String>,
        ) -> BoxFuture<'_, mcp_adapters::Result<ToolsPage>> {
            Box::pin(async {
                Err(mcp_adapters::Error::new(
                    ErrorKind::Unavailable,
                    "connection refused",
                ))
            })
        }
        fn call_tool(
            &self,
            _: &str,
            _: serde_json::Map<String, Value>,
            _: CallContext,
        ) -> BoxFuture<'_, mcp_adapters::Result<CallToolResponse>> {
            unreachable!("a server that failed to list is never called")
        }
    }
    current_thread_runtime().block_on(async {
        let paged = server(Arc::new(AtomicUsize::new(0))).page_size(2);
        let hub = Source::hub()
            .server("up", paged)
            .server("down", Down)
            .build()
            .unwrap();
        let listing = hub_listing(&hub, provider("gemini")).await;
        assert_eq!(listing.tools.len(), 5);
        assert_eq!(listing.report.toolset.failed_servers[0].server_id, "down");
        let run = hub
            .execute_tool_calls(
                provider("gemini"),
                &json!({"parts": [{"functionCall": {"name": "down__x", "args": {}}}]}),
                &listing,
                &options(),
            )
            .await
            .unwrap();
        assert_eq!(
            run.turn.results[0]["functionResponse"]["response"]["error"],
            "unknown tool `down__x`: call one of the tools offered",
            "{}",
            run.turn.results[0]
        );
    });
}

#[test]
fn concurrency_is_bounded() {
    current_thread_runtime().block_on(async {
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (r, pk) = (running.clone(), peak.clone());
        let server = InProcessServer::new().tool(
            Tool::new("work", "", json!({"type": "object"})),
            move |_, _| {
                let (r, pk) = (r.clone(), pk.clone());
                async move {
                    let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                    pk.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    r.fetch_sub(1, Ordering::SeqCst);
                    Ok(CallToolResult::text("done"))
                }
            },
        );
        let hub = Source::hub().server("s", server).build().unwrap();
        let listing = hub_listing(&hub, provider("anthropic")).await;
        let calls: Vec<(&str, Value)> = (0..12).map(|_| ("s__work", json!({}))).collect();
        let opts = options().max_concurrency(3);
        let run = hub
            .execute_tool_calls(
                provider("anthropic"),
                &anthropic_response(&calls),
                &listing,
                &opts,
            )
            .await
            .unwrap();
        assert_eq!(run.turn.results.len(), 12);
        assert_eq!(peak.load(Ordering::SeqCst), 3);
    });
}

#[derive(Debug, Clone)]
enum Behaviour {
    Ok,
    Slow(u8),
    Fail,
    Panic,
    Hang,
    Unknown,
    Denied,
    Asked(u8), // 0 allow, 1 deny, 2 halt
}

fn behaviour() -> impl Strategy<Value = Behaviour> {
    prop_oneof![
        Just(Behaviour::Ok),
        (0u8..30).prop_map(Behaviour::Slow),
        Just(Behaviour::Fail),
        Just(Behaviour::Panic),
        Just(Behaviour::Hang),
        Just(Behaviour::Unknown),
        Just(Behaviour::Denied),
        (0u8..3).prop_map(Behaviour::Asked),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Over random mixes of delays, faults and policy answers: every call is
    /// answered exactly once, in order; denied and rejected calls never reach
    /// the server; halt is reported exactly when an approver halted.
    #[test]
    fn invariants_under_faults(mix in proptest::collection::vec(behaviour(), 1..10), concurrency in 1usize..5) {
        current_thread_runtime().block_on(async {
            let received = Arc::new(AtomicUsize::new(0));
            let asked_answers: Vec<Approval> = mix.iter().rev().filter_map(|b| match b {
                Behaviour::Asked(0) => Some(Approval::Allow),
                Behaviour::Asked(1) => Some(Approval::Deny("no".into())),
                Behaviour::Asked(_) => Some(Approval::DenyAndHalt("stop".into())),
                _ => None,
            }).collect();
            let asked_tools = Arc::new(Mutex::new(Vec::new()));
            let (answers, log) = (Arc::new(Mutex::new(asked_answers)), asked_tools.clone());
            let hub = Source::hub()
                .server("s", server(received.clone()))
                .server("g", server(received.clone()))
                .policy(Policy::new().deny("s/fail").unwrap().ask("g/*").unwrap().allow("s/*").unwrap())
                .approver(move |req: ApprovalRequest| {
                    log.lock().unwrap().push(req.call.call_id.clone());
                    let answer = answers.lock().unwrap().pop().unwrap_or(Approval::Allow);
                    Box::pin(async move { answer })
                })
                .build()
                .unwrap();
            let p = provider("anthropic");
            let listing = hub_listing(&hub, p).await;
            let calls: Vec<(String, Value)> = mix.iter().enumerate().map(|(i, b)| match b {
                Behaviour::Ok => ("s__echo".to_owned(), json!({"n": i})),
                Behaviour::Slow(ms) => ("s__slow".to_owned(), json!({"n": i, "ms": ms})),
                Behaviour::Fail => ("s__panic".to_owned(), json!({"n": i})),
                Behaviour::Panic => ("s__panic".to_owned(), json!({"n": i})),
                Behaviour::Hang => ("s__hang".to_owned(), json!({"n": i})),
                Behaviour::Unknown => ("nope".to_owned(), json!({"n": i})),
                Behaviour::Denied => ("s__fail".to_owned(), json!({"n": i})),
                Behaviour::Asked(_) => ("g__echo".to_owned(), json!({"n": i})),
            }).collect();
            let refs: Vec<(&str, Value)> = calls.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
            let opts = ExecOptions::new().max_concurrency(concurrency).call_timeout(Duration::from_millis(60));
            let run = hub.execute_tool_calls(p, &anthropic_response(&refs), &listing, &opts).await.unwrap();
            assert_eq!(run.turn.results.len(), mix.len());
            for (i, answer) in run.turn.results.iter().enumerate() {
                assert_eq!(answer["tool_use_id"], format!("toolu_{i}"));
            }
            let never_sent = mix.iter().filter(|b| matches!(b, Behaviour::Unknown | Behaviour::Denied)).count();
            let asked_not_allowed = mix.iter().filter(|b| matches!(b, Behaviour::Asked(1 | 2))).count();
            assert!(received.load(Ordering::SeqCst) <= mix.len() - never_sent - asked_not_allowed);
            let halted = mix.iter().any(|b| matches!(b, Behaviour::Asked(2)));
            assert_eq!(run.status == Status::Halt, halted);
            assert_eq!(asked_tools.lock().unwrap().len(), mix.iter().filter(|b| matches!(b, Behaviour::Asked(_))).count());
        });
    }
}

/// A server whose tools change while the source runs, counting its listings
/// and the calls it receives; `version` is what a real client bumps on
/// `notifications/tools/list_changed`.
#[derive(Default)]
struct Changing {
    tools: Mutex<Vec<&'static str>>,
    version: std::sync::atomic::AtomicU64,
    lists: AtomicUsize,
    calls: Mutex<Vec<String>>,
    hints: Mutex<(Option<Duration>, Option<mcp_adapters::mcp::CacheScope>)>,
}

impl Changing {
    fn with(tools: &[&'static str]) -> Arc<Changing> {
        let server = Changing::default();
        *server.tools.lock().unwrap() = tools.to_vec();
        Arc::new(server)
    }

    fn change(&self, tools: &[&'static str]) {
        *self.tools.lock().unwrap() = tools.to_vec();
        self.version.fetch_add(1, Ordering::SeqCst);
    }
}

impl Server for Changing {
    fn list_tools(
        &self,
        _cursor: Option<String>,
    ) -> BoxFuture<'_, mcp_adapters::Result<ToolsPage>> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        let tools = self
            .tools
            .lock()
            .unwrap()
            .iter()
            .map(|n| Tool::new(*n, *n, schema()))
            .collect();
        let (ttl, scope) = *self.hints.lock().unwrap();
        let mut page = ToolsPage::new(tools);
        if let Some(ttl) = ttl {
            page = page.with_ttl(ttl);
        }
        if let Some(scope) = scope {
            page = page.with_cache_scope(scope);
        }
        Box::pin(async move { Ok(page) })
    }

    fn call_tool(
        &self,
        name: &str,
        _arguments: serde_json::Map<String, Value>,
        _context: CallContext,
    ) -> BoxFuture<'_, mcp_adapters::Result<CallToolResponse>> {
        self.calls.lock().unwrap().push(name.to_owned());
        let text = format!("{name} ran");
        Box::pin(async move { Ok(CallToolResult::text(text).into()) })
    }

    fn tools_version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }
}

#[test]
fn a_changed_tool_list_reaches_the_next_listing_and_calls() {
    current_thread_runtime().block_on(async {
        let changing = Changing::with(&["a", "b"]);
        let hub = Source::hub()
            .shared_server("c", changing.clone())
            .build()
            .unwrap();
        let p = provider("anthropic");
        let before = hub_listing(&hub, p).await;
        assert_eq!(tool_names(&before), ["c__a", "c__b"]);
        // No change announced: the cached list is used.
        hub_listing(&hub, p).await;
        assert_eq!(changing.lists.load(Ordering::SeqCst), 1);
        // The server drops `b` and adds `d`, and says so.
        changing.change(&["a", "d"]);
        let response = anthropic_response(&[("c__b", json!({"n": 1})), ("c__a", json!({"n": 2}))]);
        let run = hub
            .execute_tool_calls(p, &response, &before, &options())
            .await
            .unwrap();
        let gone = run.calls[0].error.as_ref().expect("b is gone");
        assert_eq!(gone.kind(), ErrorKind::UnknownTool);
        assert!(
            gone.message().contains("`c/b` is no longer offered"),
            "{gone}"
        );
        assert_eq!(run.turn.results[1]["content"][0]["text"], "a ran");
        assert_eq!(
            *changing.calls.lock().unwrap(),
            ["a"],
            "the call to the removed tool was not sent"
        );
        assert_eq!(
            changing.lists.load(Ordering::SeqCst),
            2,
            "listed again once for the turn"
        );
        // The next listing has the new tool.
        let after = hub_listing(&hub, p).await;
        assert_eq!(tool_names(&after), ["c__a", "c__d"]);
        assert_eq!(changing.lists.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_call_the_policy_denies_asks_no_server_not_even_for_its_tools() {
    current_thread_runtime().block_on(async {
        let changing = Changing::with(&["a", "b"]);
        let hub = Source::hub()
            .shared_server("c", changing.clone())
            // Offered (it runs until `web` taints the conversation), denied now.
            .policy(
                Policy::new()
                    .deny_when_tainted("c/a", ["web"])
                    .unwrap()
                    .allow("c/*")
                    .unwrap(),
            )
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = hub_listing(&hub, p).await;
        assert_eq!(changing.lists.load(Ordering::SeqCst), 1);
        // The server says its tools changed: a call that reached it would
        // list them again before it is sent.
        changing.change(&["a", "b"]);
        let response = anthropic_response(&[("c__a", json!({"n": 1}))]);
        let taint = BTreeSet::from(["web".to_owned()]);
        let run = hub
            .execute_tool_calls(p, &response, &listing, &options().taint(&taint))
            .await
            .unwrap();
        let denied = run.calls[0]
            .error
            .as_ref()
            .expect("the policy denies `c/a`");
        assert_eq!(denied.kind(), ErrorKind::Denied, "{denied}");
        assert_eq!(
            changing.lists.load(Ordering::SeqCst),
            1,
            "the denied call had the server list its tools again"
        );
        assert!(changing.calls.lock().unwrap().is_empty());
    });
}

#[test]
fn tool_list_cache_hints_are_honoured() {
    use mcp_adapters::mcp::CacheScope;
    current_thread_runtime().block_on(async {
        let p = provider("openai-chat");
        // ttlMs 0: stale at once, listed for every listing.
        let fresh_never = Changing::with(&["a"]);
        *fresh_never.hints.lock().unwrap() = (Some(Duration::ZERO), Some(CacheScope::Private));
        // An hour: listed once.
        let fresh_long = Changing::with(&["b"]);
        *fresh_long.hints.lock().unwrap() =
            (Some(Duration::from_secs(3600)), Some(CacheScope::Public));
        let hub = Source::hub()
            .shared_server("zero", fresh_never.clone())
            .shared_server("hour", fresh_long.clone())
            .build()
            .unwrap();
        assert_eq!(hub.cache_scope(), None, "not listed yet");
        for _ in 0..3 {
            hub_listing(&hub, p).await;
        }
        assert_eq!(fresh_never.lists.load(Ordering::SeqCst), 3);
        assert_eq!(fresh_long.lists.load(Ordering::SeqCst), 1);
        assert_eq!(hub.cache_scope(), Some(CacheScope::Private));
        hub.refresh().await.unwrap();
        assert_eq!(
            fresh_long.lists.load(Ordering::SeqCst),
            2,
            "refresh lists every server"
        );
        let public = Source::hub()
            .shared_server("hour", fresh_long.clone())
            .build()
            .unwrap();
        hub_listing(&public, p).await;
        assert_eq!(public.cache_scope(), Some(CacheScope::Public));
        // A short TTL runs out.
        *fresh_long.hints.lock().unwrap() = (Some(Duration::from_millis(50)), None);
        public.refresh().await.unwrap();
        let listed = fresh_long.lists.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(80)).await;
        hub_listing(&public, p).await;
        assert_eq!(fresh_long.lists.load(Ordering::SeqCst), listed + 1);
        assert_eq!(public.cache_scope(), None, "the server gave no scope");
    });
}

/// A tool that counts the calls in flight on its server, and the most seen.
fn counting(in_flight: Arc<AtomicUsize>, most: Arc<AtomicUsize>) -> InProcessServer {
    InProcessServer::new().tool(Tool::new("work", "Works", schema()), move |_args, _ctx| {
        let (in_flight, most) = (in_flight.clone(), most.clone());
        async move {
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            for _ in 0..8 {
                tokio::task::yield_now().await;
            }
            in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(CallToolResult::text("done"))
        }
    })
}

/// The most calls in flight at once on servers `a` and `b` in a turn of
/// six calls to each, alternating, with `options` (and `b`'s calls run
/// alone when `b_alone`).
fn most_in_flight(b_alone: bool, options: ExecOptions) -> [usize; 2] {
    let most = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
    let mut builder = Source::hub()
        .server(
            "a",
            counting(Arc::new(AtomicUsize::new(0)), most[0].clone()),
        )
        .server(
            "b",
            counting(Arc::new(AtomicUsize::new(0)), most[1].clone()),
        );
    if b_alone {
        builder = builder.run_alone("b/work");
    }
    let source = builder.build().unwrap();
    let calls: Vec<Value> = (0..12)
        .map(|i| {
            let server = if i % 2 == 0 { "a" } else { "b" };
            json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": format!("{server}__work"), "input": {}})
        })
        .collect();
    let response = json!({"content": calls});
    let provider = provider("anthropic");
    current_thread_runtime().block_on(async {
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        let run = source
            .execute_tool_calls(provider, &response, &listing, &options.max_concurrency(12))
            .await
            .unwrap();
        assert!(
            run.calls.iter().all(|c| c.error.is_none()),
            "{:?}",
            run.calls
        );
    });
    [
        most[0].load(Ordering::SeqCst),
        most[1].load(Ordering::SeqCst),
    ]
}

#[test]
fn a_per_server_bound_holds_on_each_server_and_the_run_alone_calls_are_alone() {
    let bounded = ExecOptions::new().max_concurrency_per_server(2);
    assert_eq!(most_in_flight(false, bounded), [2, 2]);
    // Without the bound, every call is in flight at once; with `b`'s calls
    // run alone, `b` has one at a time and `a` all of its own.
    assert_eq!(most_in_flight(false, ExecOptions::new()), [6, 6]);
    assert_eq!(most_in_flight(true, ExecOptions::new()), [6, 1]);

    let bad = Source::hub()
        .server("a", InProcessServer::new())
        .run_alone("a/[")
        .build()
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::Input);
    assert!(
        bad.to_string().contains("run_alone: invalid glob `a/[`"),
        "{bad}"
    );
}

#[test]
fn blocks_for_the_user_only_stay_out_of_the_answer_and_in_the_record() {
    let server =
        InProcessServer::new().tool(Tool::new("pay", "Pays", schema()), |_args, _ctx| async {
            let mut result = CallToolResult::text("Paid.");
            result
                .content
                .push(mcp_adapters::Content::from_value(json!({
                    "type": "text", "text": "Receipt #4471", "annotations": {"audience": ["user"]}
                })));
            Ok(result)
        });
    let only_user = InProcessServer::new().tool(Tool::new("code", "Codes", schema()), |_a, _c| async {
        Ok(CallToolResult {
            content: vec![mcp_adapters::Content::from_value(json!({
                "type": "text", "text": "829144", "annotations": {"audience": ["user"], "priority": 1}
            }))],
            ..CallToolResult::text("")
        })
    });
    let source = Source::hub()
        .server("bank", server)
        .server("otp", only_user)
        .build()
        .unwrap();
    let provider = provider("anthropic");
    let response = json!({"content": [
        {"type": "tool_use", "id": "toolu_1", "name": "bank__pay", "input": {}},
        {"type": "tool_use", "id": "toolu_2", "name": "otp__code", "input": {}},
    ]});
    let run = current_thread_runtime().block_on(async {
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        source
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap()
    });
    assert_eq!(
        run.turn.results[0]["content"],
        json!([{"type": "text", "text": "Paid."}])
    );
    assert_eq!(
        run.turn.results[1]["content"][0]["text"],
        "[the result's 1 content block(s) are for the user only (audience: user) and are not shown here]"
    );
    let kept = run.calls[0].result.as_ref().unwrap();
    assert_eq!(kept.content.len(), 2);
    assert!(!kept.content[1].for_model());
    assert_eq!(run.calls[1].result.as_ref().unwrap().content.len(), 1);
}

/// An in-process server's resources and prompts, through the source.
#[test]
fn an_in_process_server_lists_and_serves_its_resources_and_prompts() {
    use mcp_adapters::mcp::{Catalog, PromptMessage, ResourceContents};
    let server = InProcessServer::new()
        .resource(ResourceContents {
            uri: "notes://today".into(),
            mime_type: Some("text/plain".into()),
            text: Some("Buy milk.".into()),
            blob: None,
            meta: None,
        })
        .prompt(
            "summarize",
            "Summarizes the notes",
            vec![PromptMessage::new(
                "user",
                Content::text("Summarize my notes."),
            )],
        );
    let source = Source::hub().server("notes", server).build().unwrap();
    current_thread_runtime().block_on(async {
        let resources = source
            .list_catalog("notes", Catalog::Resources)
            .await
            .unwrap();
        assert_eq!(resources[0]["uri"], "notes://today");
        assert_eq!(resources[0]["mimeType"], "text/plain");
        let read = source
            .read_resource("notes", "notes://today")
            .await
            .unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("Buy milk."));
        let prompts = source
            .list_catalog("notes", Catalog::Prompts)
            .await
            .unwrap();
        assert_eq!(prompts[0]["name"], "summarize");
        let prompt = source
            .get_prompt("notes", "summarize", Default::default())
            .await
            .unwrap();
        assert_eq!(prompt.messages[0].role, "user");
        assert_eq!(
            prompt.messages[0].content,
            Content::text("Summarize my notes.")
        );
        let err = source
            .get_prompt("notes", "nope", Default::default())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no prompt `nope`"), "{err}");
        assert_eq!(err.kind(), ErrorKind::Server);
        let err = source
            .list_catalog("elsewhere", Catalog::Prompts)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input);
    });
}

/// `Execution`'s JSON form (what `run` prints of a turn), pinned by a
/// snapshot; the agent loop chapter shows the same value.
#[test]
fn an_execution_as_json() {
    current_thread_runtime().block_on(async {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let notes = InProcessServer::new()
            .tool(
                Tool::new("search", "Searches the notes", schema),
                |args, _| async move {
                    Ok(CallToolResult::text(format!("2 notes match {}", args["q"])))
                },
            )
            .tool(
                Tool::new("delete", "Deletes a note", json!({"type": "object"})),
                |_, _| async { Ok(CallToolResult::text("deleted")) },
            );
        let source = Source::client("notes", notes)
            .policy(
                Policy::new()
                    .allow("notes/search")
                    .unwrap()
                    .ask("notes/delete")
                    .unwrap(),
            )
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = json!({"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "milk"}},
            {"type": "tool_use", "id": "toolu_2", "name": "delete", "input": {}},
            {"type": "tool_use", "id": "toolu_3", "name": "export", "input": {}}]});
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        let outcomes: Vec<CallOutcome> = run.calls.iter().map(|c| c.outcome).collect();
        assert_eq!(
            outcomes,
            [CallOutcome::Ran, CallOutcome::Denied, CallOutcome::Rejected]
        );
        let value = serde_json::to_value(&run).unwrap();
        snapshot(Stage::Exec, None, "execution_json", &value);

        let guide =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/agent-loop.md"))
                .unwrap();
        let shown = guide
            .split("**An `Execution` as JSON.**")
            .nth(1)
            .and_then(|rest| rest.split("```json\n").nth(1))
            .and_then(|block| block.split("\n```").next())
            .expect("the chapter's example");
        let shown: Value = serde_json::from_str(shown).unwrap();
        assert_eq!(shown, value, "the chapter's example is not the turn's JSON");
    });
}

/// A server with one tool, `file(tenant, owner: {id}, text)`, that keeps the
/// arguments of every call it receives.
fn binding_server(received: Arc<Mutex<Vec<Value>>>) -> InProcessServer {
    let schema = json!({"type": "object", "properties": {
        "tenant": {"type": "string", "description": "Whose files."},
        "owner": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        "text": {"type": "string"}},
        "required": ["tenant", "owner", "text"]});
    InProcessServer::new().tool(Tool::new("file", "Files a note", schema), move |args, _| {
        received.lock().unwrap().push(Value::Object(args));
        async move { Ok(CallToolResult::text("filed")) }
    })
}

fn bound_source(received: Arc<Mutex<Vec<Value>>>) -> Source {
    Source::hub()
        .server("crm", binding_server(received))
        .bind(Binding::parse("crm/file:/tenant=acme").unwrap())
        .bind(Binding::new("file", "/owner/id", BoundValue::Supplied("user".into())).unwrap())
        .policy(Policy::allow_all())
        .validate_arguments()
        .build()
        .unwrap()
}

#[test]
fn bound_arguments_are_hidden_refused_when_written_and_filled_when_sent() {
    current_thread_runtime().block_on(async {
        let received = Arc::new(Mutex::new(Vec::new()));
        let source = bound_source(received.clone());
        let p = provider("anthropic");
        let listing = hub_listing(&source, p).await;
        let schema = &listing.tools[0]["input_schema"];
        assert_eq!(
            schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["text"]
        );
        assert_eq!(schema["required"], json!(["text"]));
        let response = anthropic_response(&[
            ("crm__file", json!({"text": "a"})),
            ("crm__file", json!({"text": "b", "tenant": "globex"})),
            ("crm__file", json!({"text": "c", "owner": {"id": 99}})),
        ]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &options().bound_value("user", 7))
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["content"][0]["text"], "filed");
        for (i, pointer) in [(1, "/tenant"), (2, "/owner/id")] {
            let refused = run.turn.results[i]["content"][0]["text"].as_str().unwrap();
            assert!(
                refused.contains(&format!("`{pointer}` is the application's to write"))
                    && refused.contains("not sent"),
                "{refused}"
            );
        }
        assert_eq!(
            *received.lock().unwrap(),
            [json!({"text": "a", "tenant": "acme", "owner": {"id": 7}})],
            "the refused calls are not sent"
        );
        // What the turn records is what the model wrote.
        let recorded = serde_json::to_string(&run.calls).unwrap();
        assert!(!recorded.contains("acme"), "{recorded}");
        // A turn that supplies no value sends nothing.
        let response = anthropic_response(&[("crm__file", json!({"text": "d"}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &options())
            .await
            .unwrap();
        let refused = run.turn.results[0]["content"][0]["text"].as_str().unwrap();
        assert!(
            refused.contains("supplies none") && refused.contains("`/owner/id`"),
            "{refused}"
        );
        assert_eq!(received.lock().unwrap().len(), 1);
    });
}

#[test]
fn a_bound_value_the_schema_refuses_is_named_but_never_quoted() {
    current_thread_runtime().block_on(async {
        let received = Arc::new(Mutex::new(Vec::new()));
        let source = Source::hub()
            .server("crm", binding_server(received.clone()))
            .bind(Binding::parse("file:/tenant=json:{\"key\": \"sekrit-4711\"}").unwrap())
            .bind(Binding::parse("file:/owner/id=json:7").unwrap())
            .validate_arguments()
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = hub_listing(&source, p).await;
        let response = anthropic_response(&[("crm__file", json!({"text": 5}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &options())
            .await
            .unwrap();
        let answer = run.turn.results[0]["content"][0]["text"].as_str().unwrap();
        assert!(
            answer.contains("/tenant (bound by the application): breaks `type"),
            "{answer}"
        );
        assert!(answer.contains("/text: 5 is not of type"), "{answer}");
        assert!(!answer.contains("sekrit"), "{answer}");
        assert!(received.lock().unwrap().is_empty());
    });
}

#[test]
fn bind_rules_that_name_nothing_are_reported() {
    current_thread_runtime().block_on(async {
        let source = Source::hub()
            .server("crm", binding_server(Arc::default()))
            .bind(Binding::parse("crm/fiel:/tenant=a").unwrap())
            .bind(Binding::parse("crm/file:/tennant=a").unwrap())
            .build()
            .unwrap();
        let report = source.toolset().await.unwrap().report().clone();
        let unmatched: Vec<String> = report.unmatched_rules.iter().map(ToString::to_string).collect();
        assert_eq!(unmatched, ["the bind rule `crm/fiel` matches no listed tool"]);
        let undeclared: Vec<String> = report.bound_undeclared.iter().map(ToString::to_string).collect();
        assert_eq!(
            undeclared,
            ["the bind rule `crm/file:/tennant` names a property the input schema of `crm/file` does not declare"]
        );
        let unset = Source::hub()
            .server("crm", binding_server(Arc::default()))
            .bind(Binding::parse("crm/file:/tenant=env:MCP_ADAPTERS_SURELY_UNSET_VAR").unwrap())
            .build()
            .unwrap_err();
        assert!(unset.to_string().contains("`MCP_ADAPTERS_SURELY_UNSET_VAR` is not set"), "{unset}");
    });
}

/// What a model may write into a call: any arguments, bound ones among them.
fn model_arguments() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 12, 4, |inner| {
        prop::collection::btree_map(
            prop_oneof![Just("id".to_owned()), "[a-z]{1,3}"],
            inner,
            0..4,
        )
        .prop_map(|m| Value::Object(m.into_iter().collect()))
    });
    let key = prop_oneof![
        Just("tenant".to_owned()),
        Just("owner".to_owned()),
        Just("text".to_owned()),
        "[a-z]{1,5}",
    ];
    prop::collection::btree_map(key, value, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the model writes, a bound argument reaches the server with
    /// the application's value, or the call does not reach it at all.
    #[test]
    fn a_bound_argument_reaches_the_server_only_with_the_applications_value(
        calls in prop::collection::vec(model_arguments(), 1..6),
        validate in any::<bool>(),
    ) {
        current_thread_runtime().block_on(async {
            let received = Arc::new(Mutex::new(Vec::new()));
            let mut builder = Source::hub()
                .server("crm", binding_server(received.clone()))
                .bind(Binding::parse("crm/file:/tenant=acme").unwrap())
                .bind(Binding::new("file", "/owner/id", BoundValue::Supplied("user".into())).unwrap());
            if validate {
                builder = builder.validate_arguments();
            }
            let source = builder.build().unwrap();
            let p = provider("anthropic");
            let listing = hub_listing(&source, p).await;
            let named: Vec<(&str, Value)> = calls.iter().map(|a| ("crm__file", a.clone())).collect();
            let response = anthropic_response(&named);
            source
                .execute_tool_calls(p, &response, &listing, &options().bound_value("user", 7))
                .await
                .unwrap();
            let received = received.lock().unwrap();
            for sent in received.iter() {
                prop_assert_eq!(&sent["tenant"], &json!("acme"));
                prop_assert_eq!(&sent["owner"]["id"], &json!(7));
            }
            // The calls that wrote no bound argument (and left room for one) are sent.
            let clean = calls
                .iter()
                .filter(|a| {
                    a.get("tenant").is_none()
                        && a.get("owner").is_none_or(|o| o.as_object().is_some_and(|o| !o.contains_key("id")))
                })
                .count();
            if !validate {
                prop_assert_eq!(received.len(), clean);
            } else {
                prop_assert!(received.len() <= clean);
            }
            Ok(())
        })?;
    }
}
