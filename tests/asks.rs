//! What servers ask of the client, answered through one set of handlers:
//! sampling and roots inside `input_required` rounds (MCP 2026-07-28), and
//! requests a server makes during a call (as an MCP client routes those of
//! revisions up to 2025-11-25), with the sampling rules, the bounds and the
//! call's clock stopped while the application answers.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::current_thread_runtime;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::CallToolResponse;
use mcp_adapters::mcp::{
    CreateMessageParams, CreateMessageResult, ElicitResult, IncludeContext, InputRequest,
    InputRequiredResult, InputResponse, Root, SamplingMessage, StopReason, ToolChoiceMode,
};
use mcp_adapters::toolset::DropReason;
use mcp_adapters::*;
use serde_json::{Value, json};

fn schema() -> Value {
    json!({"type": "object", "properties": {"n": {"type": "integer"}}})
}

fn anthropic() -> &'static Provider {
    common::provider("anthropic")
}

fn call(name: &str) -> Value {
    json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {"n": 1}}]})
}

fn text(answer: &Value) -> String {
    answer["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn question(text: &str, max_tokens: u64) -> CreateMessageParams {
    CreateMessageParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
}

/// A tool that, in one `input_required` round, asks for a completion and the
/// roots, then answers with what it got.
fn asking_server() -> InProcessServer {
    InProcessServer::new().tool_with_input(
        Tool::new("summarize", "Summarizes", schema()),
        |_args, ctx| async move {
            let (Some(summary), Some(roots)) =
                (ctx.input_response("summary"), ctx.input_response("where"))
            else {
                return Ok(InputRequiredResult::new()
                    .ask(
                        "summary",
                        InputRequest::sampling(question("Sum up the notes", 500)),
                    )
                    .ask("where", InputRequest::list_roots())
                    .into());
            };
            let (InputResponse::Sampling(summary), InputResponse::Roots(roots)) = (summary, roots)
            else {
                return Ok(
                    CallToolResult::error(format!("odd answers: {summary:?} {roots:?}")).into(),
                );
            };
            Ok(CallToolResult::text(format!(
                "{} by {} ({:?}); roots: {}",
                summary.text_content(),
                summary.model,
                summary.stop_reason,
                roots
                    .roots
                    .iter()
                    .map(|r| r.uri.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into())
        },
    )
}

type Seen = Arc<Mutex<Vec<SamplingRequest>>>;

/// A sampling handler that records what it is asked and answers `reply`.
fn model(seen: &Seen, reply: SamplingAnswer) -> Sampling {
    let seen = seen.clone();
    Sampling::new(move |request| {
        seen.lock().unwrap().push(request);
        let reply = reply.clone();
        Box::pin(async move { reply })
    })
}

fn short_answer() -> SamplingAnswer {
    SamplingAnswer::Respond(
        CreateMessageResult::text("test-model", "Two notes").with_stop_reason(StopReason::EndTurn),
    )
}

#[test]
fn an_input_round_asking_for_sampling_and_roots_is_answered_by_the_library() {
    current_thread_runtime().block_on(async {
        let seen = Seen::default();
        let handlers = Handlers::new()
            .sampling(model(&seen, short_answer()).max_tokens(100))
            .roots(Roots::new([Root::new("file:///work/notes").unwrap()]));
        let source = Source::client("notes", asking_server())
            .policy(Policy::new().allow("notes/*").unwrap())
            .handlers(handlers)
            .build()
            .unwrap();
        let listing = source
            .tools(anthropic(), &ListOptions::new())
            .await
            .unwrap();
        let options = ExecOptions::new().principal("user-1");
        let run = source
            .execute_tool_calls(anthropic(), &call("summarize"), &listing, &options)
            .await
            .unwrap();
        assert_eq!(
            text(&run.turn.results[0]),
            "Two notes by test-model (Some(EndTurn)); roots: file:///work/notes"
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        let request = &seen[0];
        assert_eq!(request.server_id, "notes");
        assert_eq!(
            request.params.max_tokens, 100,
            "capped by the sampling rules"
        );
        let call = request.call.call().expect("the call is known");
        assert_eq!(
            (call.call.tool.as_str(), call.call.call_id.as_deref()),
            ("summarize", Some("toolu_1"))
        );
        assert_eq!(call.principal.as_deref(), Some("user-1"));
    });
}

/// One row of the sampling rules' table: the handlers, and what the call's
/// answer says.
struct Case {
    name: &'static str,
    sampling: Option<Sampling>,
    roots: bool,
    approver: Option<Approval>,
    expect: &'static str,
    halts: bool,
}

#[test]
fn sampling_rules_decide_before_the_handler_is_asked() {
    let seen = Seen::default();
    let deny_notes = Policy::allow_all().deny("notes/*").unwrap();
    let ask = Policy::new().ask("notes/summarize").unwrap();
    let cases = vec![
        Case {
            name: "no sampling handler",
            sampling: None,
            roots: true,
            approver: None,
            expect: "for `summary`: this client has no sampling handler",
            halts: false,
        },
        Case {
            name: "no roots",
            sampling: Some(model(&seen, short_answer())),
            roots: false,
            approver: None,
            expect: "for `where`: this client offers no roots",
            halts: false,
        },
        Case {
            name: "denied by the policy",
            sampling: Some(model(&seen, short_answer()).policy(deny_notes)),
            roots: true,
            approver: None,
            expect: "sampling denied by the sampling policy (rule `notes/*`)",
            halts: false,
        },
        Case {
            name: "asked, without an approver",
            sampling: Some(model(&seen, short_answer()).policy(ask.clone())),
            roots: true,
            approver: None,
            expect: "needs approval, and no approver is configured",
            halts: false,
        },
        Case {
            name: "asked, and the approver says no and halts",
            sampling: Some(model(&seen, short_answer()).policy(ask.clone())),
            roots: true,
            approver: Some(Approval::DenyAndHalt("too expensive".into())),
            expect: "sampling denied by the approver: too expensive",
            halts: true,
        },
        Case {
            name: "asked, and the approver agrees",
            sampling: Some(model(&seen, short_answer()).policy(ask)),
            roots: true,
            approver: Some(Approval::Allow),
            expect: "Two notes by test-model",
            halts: false,
        },
        Case {
            name: "the handler declines",
            sampling: Some(model(
                &seen,
                SamplingAnswer::Decline("no budget left".into()),
            )),
            roots: true,
            approver: None,
            expect: "the sampling handler declined: no budget left",
            halts: false,
        },
        Case {
            name: "the handler cancels",
            sampling: Some(model(
                &seen,
                SamplingAnswer::Cancel("the user closed it".into()),
            )),
            roots: true,
            approver: None,
            expect: "the sampling handler cancelled it: the user closed it",
            halts: true,
        },
        Case {
            name: "no sampling request per call",
            sampling: Some(model(&seen, short_answer()).max_requests_per_call(0)),
            roots: true,
            approver: None,
            expect: "more than 0 completions during this call",
            halts: false,
        },
    ];
    current_thread_runtime().block_on(async {
        for case in cases {
            let approvals: Arc<Mutex<Vec<ApprovalRequest>>> = Arc::default();
            let mut handlers = Handlers::new();
            if let Some(sampling) = case.sampling {
                handlers = handlers.sampling(sampling);
            }
            if case.roots {
                handlers = handlers.roots(Roots::new([Root::new("file:///work").unwrap()]));
            }
            let mut builder = Source::client("notes", asking_server())
                .policy(Policy::new().allow("notes/*").unwrap())
                .handlers(handlers);
            if let Some(approval) = case.approver {
                let approvals = approvals.clone();
                builder = builder.approver(move |request| {
                    approvals.lock().unwrap().push(request);
                    let approval = approval.clone();
                    Box::pin(async move { approval })
                });
            }
            let source = builder.build().unwrap();
            let listing = source
                .tools(anthropic(), &ListOptions::new())
                .await
                .unwrap();
            let run = source
                .execute_tool_calls(
                    anthropic(),
                    &call("summarize"),
                    &listing,
                    &ExecOptions::new(),
                )
                .await
                .unwrap();
            let answer = text(&run.turn.results[0]);
            assert!(answer.contains(case.expect), "{}: {answer}", case.name);
            assert_eq!(
                run.status == Status::Halt,
                case.halts,
                "{}: {:?}",
                case.name,
                run.status
            );
            for request in approvals.lock().unwrap().iter() {
                let sampling = request
                    .sampling
                    .as_deref()
                    .expect("the approver sees the request");
                assert_eq!(
                    sampling.messages[0].text(),
                    "Sum up the notes",
                    "{}",
                    case.name
                );
                assert_eq!(request.call.tool, "summarize");
            }
        }
    });
}

/// A tool that asks, during its call, through the call's answerer, as an MCP
/// client does for a server of a revision up to 2025-11-25.
fn mid_call_server(params: CreateMessageParams, wait: Duration) -> InProcessServer {
    InProcessServer::new().tool(
        Tool::new("ask", "Asks mid-call", schema()),
        move |_args, ctx| {
            let params = params.clone();
            async move {
                tokio::time::sleep(wait).await;
                let answerer = ctx
                    .answerer
                    .clone()
                    .expect("a source gives every call an answerer");
                let sampled = answerer.sample(params).await;
                let confirmed = answerer
                    .elicit("7", mcp_adapters::mcp::Elicitation::Form(form("Go on?")))
                    .await;
                let roots = answerer.list_roots();
                Ok(CallToolResult::text(format!(
                    "{} | {} | {}",
                    match sampled {
                        Ok(r) => format!("sampled {}", r.text_content()),
                        Err(e) => format!("sampling failed: {}", e.message()),
                    },
                    match confirmed {
                        Ok(r) => format!("elicited {:?}", r.action),
                        Err(e) => format!("elicitation failed: {}", e.message()),
                    },
                    match roots {
                        Ok(r) => format!("{} roots", r.roots.len()),
                        Err(e) => format!("roots failed: {}", e.message()),
                    }
                )))
            }
        },
    )
}

fn form(message: &str) -> mcp_adapters::mcp::FormElicitation {
    let InputRequest::Elicitation(mcp_adapters::mcp::Elicitation::Form(form)) = InputRequest::form(
        message,
        json!({"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}}),
    ) else {
        unreachable!()
    };
    form
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn requests_during_a_call_reach_the_same_handlers_with_the_call() {
    paused_runtime().block_on(async {
        let seen = Seen::default();
        let questions: Arc<Mutex<Vec<InputQuestions>>> = Arc::default();
        let recorded = questions.clone();
        let mut params =
            question("What now?", 4000).with_tools(Vec::new(), Some(ToolChoiceMode::Auto));
        params.include_context = Some(IncludeContext::AllServers);
        let handlers = Handlers::new()
            .input(move |q| {
                recorded.lock().unwrap().push(q.clone());
                Box::pin(async move {
                    // A person who takes a minute to answer.
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    let key = q.requests.keys().next().unwrap().clone();
                    let mut answers = mcp_adapters::mcp::InputResponses::new();
                    answers.insert(key, ElicitResult::accept(json!({"ok": true})).into());
                    InputAnswer::Respond(answers)
                })
            })
            .sampling(model(&seen, short_answer()).with_tools().max_tokens(1000))
            .roots(Roots::new([
                Root::new("file:///a").unwrap(),
                Root::new("file:///b").unwrap(),
            ]));
        let source = Source::hub()
            .server("notes", mid_call_server(params, Duration::from_secs(5)))
            .handlers(handlers)
            .build()
            .unwrap();
        let listing = source
            .tools(anthropic(), &ListOptions::new())
            .await
            .unwrap();
        // The server works 5 s of a 10 s budget; the person's minute does not count.
        let options = ExecOptions::new()
            .call_timeout(Duration::from_secs(10))
            .taint(["web"]);
        let run = source
            .execute_tool_calls(anthropic(), &call("notes__ask"), &listing, &options)
            .await
            .unwrap();
        assert_eq!(
            text(&run.turn.results[0]),
            "sampled Two notes | elicited Accept | 2 roots"
        );
        let questions = questions.lock().unwrap();
        assert_eq!(questions.len(), 1);
        let asked = &questions[0];
        assert_eq!(asked.asking, Asking::Request);
        assert_eq!(asked.requests.keys().collect::<Vec<_>>(), ["7"]);
        let call = asked.call.call().unwrap();
        assert_eq!(call.call.exposed_name, "notes__ask");
        assert!(call.taint.contains("web"));
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].params.max_tokens, 1000);
        assert_eq!(
            seen[0].params.include_context, None,
            "includeContext is none unless opted in"
        );
        assert!(seen[0].params.tools.is_some(), "the handler takes tools");
    });
}

#[test]
fn requests_during_a_call_are_bounded() {
    paused_runtime().block_on(async {
        // A handler slower than the input timeout, a request that offers
        // tools to a handler that takes none, and no input handler.
        let slow = Sampling::new(|_| {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                short_answer()
            })
        });
        let with_tools = question("What now?", 10).with_tools(Vec::new(), None);
        for (params, sampling, expect) in [
            (
                question("What now?", 10),
                slow,
                "sampling failed: the sampling handler did not answer within 5000 ms",
            ),
            (
                with_tools,
                model(&Seen::default(), short_answer()),
                "sampling failed: the sampling request offers tools",
            ),
        ] {
            let source = Source::client("notes", mid_call_server(params, Duration::ZERO))
                .handlers(Handlers::new().sampling(sampling))
                .build()
                .unwrap();
            let listing = source
                .tools(anthropic(), &ListOptions::new())
                .await
                .unwrap();
            let options = ExecOptions::new().input_timeout(Duration::from_secs(5));
            let run = source
                .execute_tool_calls(anthropic(), &call("ask"), &listing, &options)
                .await
                .unwrap();
            let answer = text(&run.turn.results[0]);
            assert!(answer.starts_with(expect), "{answer}");
            assert!(
                answer.contains("elicitation failed: this client has no input handler"),
                "{answer}"
            );
            assert!(
                answer.ends_with("roots failed: this client offers no roots"),
                "{answer}"
            );
        }
    });
}

#[test]
fn a_call_that_runs_past_its_timeout_while_nobody_answers_still_times_out() {
    paused_runtime().block_on(async {
        let source = Source::client(
            "notes",
            mid_call_server(question("?", 1), Duration::from_secs(20)),
        )
        .handlers(Handlers::new().sampling(model(&Seen::default(), short_answer())))
        .build()
        .unwrap();
        let listing = source
            .tools(anthropic(), &ListOptions::new())
            .await
            .unwrap();
        let options = ExecOptions::new().call_timeout(Duration::from_secs(10));
        let run = source
            .execute_tool_calls(anthropic(), &call("ask"), &listing, &options)
            .await
            .unwrap();
        assert!(
            text(&run.turn.results[0]).contains("took longer than 10000 ms"),
            "{:?}",
            run.turn.results
        );
    });
}

#[test]
fn handlers_declare_exactly_what_they_answer() {
    let none = Handlers::new().features();
    assert_eq!(none, ClientFeatures::default());
    let all = Handlers::new()
        .input(|_| Box::pin(async { InputAnswer::Decline("no".into()) }))
        .sampling(
            model(&Seen::default(), short_answer())
                .with_tools()
                .include_context(),
        )
        .roots(Roots::new([]))
        .features();
    assert!(all.elicitation_form && all.elicitation_url);
    assert!(all.sampling && all.sampling_tools && all.sampling_context && all.roots);
    // The input handler of a source builder joins its handlers.
    let source = Source::client("notes", asking_server())
        .handlers(Handlers::new().roots(Roots::new([])))
        .input_handler(|_| Box::pin(async { InputAnswer::Decline("no".into()) }))
        .build()
        .unwrap();
    let features = source.handlers().features();
    assert!(features.roots && features.elicitation_form && !features.sampling);
}

#[test]
fn roots_change_for_every_holder() {
    let roots = Roots::new([Root::new("file:///a").unwrap()]);
    let handlers = Handlers::new().roots(roots.clone());
    roots.set([Root::from_path("/tmp/b").unwrap()]);
    let listed = handlers.roots_list().unwrap().get();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].uri, "file:///tmp/b");
    assert_eq!(listed[0].name.as_deref(), Some("b"));
}

/// A `Server` that hands calls on as they come, and cannot follow tasks.
struct Plain(Vec<Tool>);

impl Server for Plain {
    fn list_tools(&self, _cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        let page = ToolsPage::new(self.0.clone());
        Box::pin(async move { Ok(page) })
    }

    fn call_tool(
        &self,
        _name: &str,
        _arguments: serde_json::Map<String, Value>,
        _context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        Box::pin(async { Ok(CallToolResult::text("ran").into()) })
    }
}

#[test]
fn tools_that_run_only_as_tasks_are_listed_only_where_tasks_run() {
    let mut research = Tool::new("research", "Runs long", schema());
    research
        .extra
        .insert("execution".into(), json!({"taskSupport": "required"}));
    let mut optional = Tool::new("maybe", "Runs long or not", schema());
    optional
        .extra
        .insert("execution".into(), json!({"taskSupport": "optional"}));
    let tools = vec![
        research.clone(),
        optional.clone(),
        Tool::new("quick", "Runs now", schema()),
    ];
    current_thread_runtime().block_on(async {
        let in_process = tools
            .iter()
            .cloned()
            .fold(InProcessServer::new(), |server, tool| {
                server.tool(tool, |_args, _ctx| async {
                    Ok(CallToolResult::text("ran"))
                })
            });
        let source = Source::hub()
            .server("plain", Plain(tools.clone()))
            .server("local", in_process)
            .build()
            .unwrap();
        let listing = source
            .tools(anthropic(), &ListOptions::new())
            .await
            .unwrap();
        assert_eq!(
            common::tool_names(&listing),
            [
                "plain__maybe",
                "plain__quick",
                "local__research",
                "local__maybe",
                "local__quick"
            ]
        );
        let dropped = &listing.report.toolset.dropped;
        assert_eq!(dropped.len(), 1);
        assert_eq!(
            (dropped[0].server_id.as_str(), dropped[0].tool.as_str()),
            ("plain", "research")
        );
        assert_eq!(dropped[0].reason, DropReason::NeedsTasks);
        assert_eq!(research.task_support(), Some("required"));
    });
}

/// A server whose session declared what `handlers` answer.
struct Declaring(Handlers);

impl Server for Declaring {
    fn list_tools(&self, _cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        Box::pin(async { Ok(ToolsPage::new(Vec::new())) })
    }

    fn call_tool(
        &self,
        _name: &str,
        _arguments: serde_json::Map<String, Value>,
        _context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        Box::pin(async { Ok(CallToolResult::text("ran").into()) })
    }

    fn handlers(&self) -> Option<Handlers> {
        Some(self.0.clone())
    }
}

#[test]
fn a_source_without_handlers_answers_with_the_first_server_that_declares_some() {
    let roots = Handlers::new().roots(Roots::new([Root::new("file:///a").unwrap()]));
    let source = Source::hub()
        .server("quiet", Declaring(Handlers::new()))
        .server("asking", Declaring(roots.clone()))
        .build()
        .unwrap();
    assert!(source.handlers().features().roots);
    // Its own handlers win.
    let source = Source::hub()
        .server("asking", Declaring(roots))
        .handlers(Handlers::new())
        .build()
        .unwrap();
    assert_eq!(source.handlers().features(), ClientFeatures::default());
}
