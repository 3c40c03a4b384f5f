//! Input rounds (MCP 2026-07-28 `input_required`) with in-process servers:
//! answered, declined, cancelled, over the round bound, a slow handler, a slow
//! second round, questions that change between rounds, and a turn that mixes
//! them with other calls; and a property over random mixes.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{
    CallToolResponse, ElicitResult, Elicitation, InputRequest, InputRequiredResult, InputResponse,
    InputResponses,
};
use mcp_adapters::*;
use proptest::prelude::*;
use serde_json::{Value, json};

fn form(message: &str, field: &str, kind: &str) -> InputRequest {
    InputRequest::form(
        message,
        json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]}),
    )
}

/// What a server received: tool, answers, request state.
type Log = Arc<Mutex<Vec<(String, Option<InputResponses>, Option<String>)>>>;

fn accepted<'a>(ctx: &'a CallContext, key: &str) -> Option<&'a Value> {
    ctx.input_response(key)
        .and_then(InputResponse::accepted_content)
}

/// Tools that ask as their names say.
fn server(log: Log, dropped: Arc<AtomicBool>) -> InProcessServer {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let tool = |name: &str| Tool::new(name, name, schema.clone());
    let logged = move |name: &'static str, log: &Log, ctx: &CallContext| {
        log.lock().unwrap().push((
            name.to_owned(),
            ctx.input_responses.clone(),
            ctx.request_state.clone(),
        ));
    };
    let (l1, l2, l3, l4, l5, l6, l7) = (
        log.clone(),
        log.clone(),
        log.clone(),
        log.clone(),
        log.clone(),
        log.clone(),
        log,
    );
    InProcessServer::new()
        .tool_with_input(tool("confirm"), move |args, ctx| {
            logged("confirm", &l1, &ctx);
            async move {
                if ctx.input_responses.is_none() {
                    ctx.report_progress(1.0, Some(2.0), Some("asking".into()));
                    return Ok(InputRequiredResult::new()
                        .ask("confirm", form("Delete note 7?", "confirm", "boolean"))
                        .into());
                }
                ctx.report_progress(2.0, Some(2.0), Some("deleting".into()));
                Ok(match accepted(&ctx, "confirm") {
                    Some(c) if c["confirm"] == true => {
                        CallToolResult::text(format!("deleted n={}", args["n"]))
                    }
                    _ => CallToolResult::text("kept"),
                }
                .into())
            }
        })
        .tool_with_input(tool("twice"), move |_args, ctx| {
            logged("twice", &l2, &ctx);
            async move {
                Ok(match ctx.request_state.as_deref() {
                    None => InputRequiredResult::new()
                        .ask("confirm", form("Send 5 to bob?", "confirm", "boolean"))
                        .with_request_state("step1")
                        .into(),
                    Some("step1") => match accepted(&ctx, "confirm") {
                        Some(c) if c["confirm"] == true => InputRequiredResult::new()
                            .ask("code", form("The 4-digit code?", "code", "string"))
                            .with_request_state("step2")
                            .into(),
                        _ => CallToolResult::text("cancelled").into(),
                    },
                    Some("step2") => match accepted(&ctx, "code") {
                        Some(c) => {
                            CallToolResult::text(format!("sent with code {}", c["code"])).into()
                        }
                        None => CallToolResult::text("no code").into(),
                    },
                    Some(other) => CallToolResult::error(format!("bad state {other}")).into(),
                })
            }
        })
        .tool_with_input(tool("always"), move |_args, ctx| {
            logged("always", &l3, &ctx);
            async move {
                Ok(InputRequiredResult::new()
                    .ask("again", form("Once more?", "again", "boolean"))
                    .into())
            }
        })
        .tool_with_input(tool("shed"), move |_args, ctx| {
            logged("shed", &l4, &ctx);
            async move {
                Ok(match ctx.request_state.as_deref() {
                    None => InputRequiredResult::new().with_request_state("busy").into(),
                    Some(_) => CallToolResult::text("done after a pause").into(),
                })
            }
        })
        .tool_with_input(tool("slow_second"), move |_args, ctx| {
            logged("slow_second", &l5, &ctx);
            let dropped = dropped.clone();
            async move {
                if ctx.input_responses.is_none() {
                    return Ok(InputRequiredResult::new()
                        .ask("go", form("Go?", "go", "boolean"))
                        .into());
                }
                struct Flag(Arc<AtomicBool>);
                impl Drop for Flag {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::SeqCst);
                    }
                }
                let _flag = Flag(dropped);
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(CallToolResult::text("too late").into())
            }
        })
        .tool_with_input(tool("odd"), move |_args, ctx| {
            logged("odd", &l6, &ctx);
            async move {
                Ok(CallToolResponse::from_value(
                    json!({"resultType": "task", "taskId": "t-1", "status": "working"}),
                )
                .unwrap())
            }
        })
        .tool(tool("plain"), move |args, ctx| {
            logged("plain", &l7, &ctx);
            async move { Ok(CallToolResult::text(format!("plain n={}", args["n"]))) }
        })
        .tool(tool("fail"), |_args, _ctx| async {
            Err(Error::new(ErrorKind::Server, "disk full"))
        })
}

/// Accepts every form: `confirm` true, `code` 1234, anything else true.
fn yes(questions: &InputQuestions) -> InputAnswer {
    let mut responses = InputResponses::new();
    for (key, request) in &questions.requests {
        let InputRequest::Elicitation(Elicitation::Form(form)) = request else {
            return InputAnswer::Decline(format!("cannot answer {key}"));
        };
        let content = match form.fields().first().copied() {
            Some("code") => json!({"code": "1234"}),
            Some(field) => json!({field: true}),
            None => json!({}),
        };
        responses.insert(key.clone(), ElicitResult::accept(content).into());
    }
    InputAnswer::Respond(responses)
}

/// A test's input handler: how long it takes and what it answers.
type Answerer = Arc<dyn Fn(&InputQuestions) -> (Duration, InputAnswer) + Send + Sync>;

struct Setup {
    source: Source,
    log: Log,
    asked: Arc<Mutex<Vec<InputQuestions>>>,
    dropped: Arc<AtomicBool>,
}

fn setup(handler: Option<Answerer>) -> Setup {
    let log: Log = Arc::default();
    let dropped = Arc::new(AtomicBool::new(false));
    let asked: Arc<Mutex<Vec<InputQuestions>>> = Arc::default();
    let mut builder = Source::hub().server("s", server(log.clone(), dropped.clone()));
    if let Some(handler) = handler {
        let seen = asked.clone();
        builder = builder.input_handler(move |questions| {
            seen.lock().unwrap().push(questions.clone());
            let (delay, answer) = handler(&questions);
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                answer
            })
        });
    }
    Setup {
        source: builder.build().unwrap(),
        log,
        asked,
        dropped,
    }
}

fn answering_yes() -> Option<Answerer> {
    Some(Arc::new(|q| (Duration::ZERO, yes(q))))
}

async fn turn(
    setup: &Setup,
    provider_id: &str,
    calls: &[(&str, Value)],
    options: &ExecOptions,
) -> Execution {
    let p = provider(provider_id);
    let listing = setup.source.tools(p, &ListOptions::new()).await.unwrap();
    let calls: Vec<(String, Value)> = calls
        .iter()
        .map(|(n, a)| (n.to_string(), a.clone()))
        .collect();
    setup
        .source
        .execute_tool_calls(p, &model_response(provider_id, &calls), &listing, options)
        .await
        .unwrap()
}

fn text(answer: &Value) -> String {
    answer["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn answered_in_one_and_in_two_rounds() {
    current_thread_runtime().block_on(async {
        let s = setup(answering_yes());
        let progress = Arc::new(Mutex::new(Vec::new()));
        let sink = progress.clone();
        let options = ExecOptions::new()
            .principal("user-1")
            .progress(move |p| sink.lock().unwrap().push((p.call_id.clone(), p.progress)));
        let run = turn(
            &s,
            "anthropic",
            &[("s__confirm", json!({"n": 7})), ("s__twice", json!({}))],
            &options,
        )
        .await;
        assert_eq!(text(&run.turn.results[0]), "deleted n=7");
        assert_eq!(text(&run.turn.results[1]), "sent with code \"1234\"");
        assert!(run.calls.iter().all(|c| c.ran && c.error.is_none()));
        let asked = s.asked.lock().unwrap();
        let mut rounds: Vec<(String, usize, Vec<String>)> = asked
            .iter()
            .map(|q| {
                (
                    q.tool().unwrap().to_owned(),
                    q.round,
                    q.requests.keys().cloned().collect(),
                )
            })
            .collect();
        rounds.sort();
        assert_eq!(
            rounds,
            [
                ("confirm".into(), 1, vec!["confirm".into()]),
                ("twice".into(), 1, vec!["confirm".into()]),
                ("twice".into(), 2, vec!["code".into()]),
            ]
        );
        let first = asked.iter().find(|q| q.tool() == Some("confirm")).unwrap();
        assert_eq!(first.server_id, "s");
        assert_eq!(first.asking, Asking::InputRequired);
        let call = first.call.call().unwrap();
        assert_eq!(call.call.exposed_name, "s__confirm");
        assert_eq!(call.call.call_id.as_deref(), Some("call_0"));
        assert_eq!(call.principal.as_deref(), Some("user-1"));
        assert_eq!(call.call.arguments, *json!({"n": 7}).as_object().unwrap());
        // The retries carried this round's answers and the state exactly as sent.
        let log = s.log.lock().unwrap();
        let twice: Vec<(Option<String>, Vec<String>)> = log
            .iter()
            .filter(|(t, _, _)| t == "twice")
            .map(|(_, r, st)| {
                (
                    st.clone(),
                    r.iter().flat_map(|r| r.keys().cloned()).collect(),
                )
            })
            .collect();
        assert_eq!(
            twice,
            [
                (None, vec![]),
                (Some("step1".into()), vec!["confirm".into()]),
                (Some("step2".into()), vec!["code".into()]),
            ]
        );
        // Progress of both rounds reached the caller, for the same call.
        let progress = progress.lock().unwrap();
        assert_eq!(
            *progress,
            [(Some("call_0".into()), 1.0), (Some("call_0".into()), 2.0)]
        );
    });
}

#[test]
fn without_a_handler_the_model_is_told_what_the_tool_asked() {
    current_thread_runtime().block_on(async {
        let s = setup(None);
        for &p in CORE_PROVIDERS {
            let run = turn(
                &s,
                p,
                &[("s__confirm", json!({"n": 1}))],
                &ExecOptions::new(),
            )
            .await;
            let error = run.calls[0].error.as_ref().expect("not completed");
            assert_eq!(error.kind(), ErrorKind::InputRequired);
            assert_eq!(
                error.message(),
                "the tool asked for input and the call did not complete: no input handler is \
                 configured. It asked: confirm: \"Delete note 7?\" (a form with confirm)."
            );
            assert!(!run.calls[0].ran);
            // The question is the server's text: it is in the model's context now.
            assert!(run.ran_servers.contains("s"));
            let answer = run.turn.results[0].to_string();
            assert!(answer.contains("Delete note 7?"), "{p}: {answer}");
        }
        assert_eq!(
            s.log.lock().unwrap().len(),
            CORE_PROVIDERS.len(),
            "asked once per turn, never retried"
        );
    });
}

#[test]
fn declined_and_cancelled() {
    current_thread_runtime().block_on(async {
        let s = setup(Some(Arc::new(|q| {
            let answer = match q.tool().unwrap() {
                "confirm" => InputAnswer::Decline("the user is away".into()),
                _ => InputAnswer::Cancel("the user closed the dialog".into()),
            };
            (Duration::ZERO, answer)
        })));
        let options = ExecOptions::new().max_concurrency(1);
        let run = turn(
            &s,
            "openai-chat",
            &[
                ("s__confirm", json!({"n": 1})),
                ("s__twice", json!({})),
                ("s__plain", json!({"n": 3})),
            ],
            &options,
        )
        .await;
        let content: Vec<&str> = run
            .turn
            .results
            .iter()
            .map(|r| r["content"].as_str().unwrap())
            .collect();
        assert!(
            content[0].starts_with(
                "Error: the tool asked for input and the call did not complete: the input \
                 handler declined: the user is away. It asked: confirm:"
            ),
            "{}",
            content[0]
        );
        assert!(
            content[1].contains("the input handler cancelled it: the user closed the dialog"),
            "{}",
            content[1]
        );
        assert_eq!(
            content[2],
            "Error: not run: this turn was halted (by an approver or an input handler)"
        );
        assert_eq!(run.status, Status::Halt);
        let sent: Vec<String> = s.log.lock().unwrap().iter().map(|e| e.0.clone()).collect();
        assert_eq!(
            sent,
            ["confirm", "twice"],
            "nothing retried, nothing sent after the halt"
        );
    });
}

#[test]
fn the_round_bound_ends_a_tool_that_keeps_asking() {
    current_thread_runtime().block_on(async {
        let s = setup(answering_yes());
        let run = turn(
            &s,
            "gemini",
            &[("s__always", json!({}))],
            &ExecOptions::new().max_input_rounds(3),
        )
        .await;
        let error = run.calls[0].error.as_ref().unwrap();
        assert_eq!(error.kind(), ErrorKind::InputRequired);
        assert!(
            error
                .message()
                .contains("it asked for input more than 3 times"),
            "{error}"
        );
        assert_eq!(s.asked.lock().unwrap().len(), 3);
        assert_eq!(
            s.log.lock().unwrap().len(),
            4,
            "the first request and 3 retries"
        );
        // With no rounds allowed the handler is never asked.
        let s = setup(answering_yes());
        let run = turn(
            &s,
            "gemini",
            &[("s__confirm", json!({}))],
            &ExecOptions::new().max_input_rounds(0),
        )
        .await;
        assert_eq!(
            run.calls[0].error.as_ref().unwrap().kind(),
            ErrorKind::InputRequired
        );
        assert!(s.asked.lock().unwrap().is_empty());
        // The default bound is the SDKs' 10.
        let s = setup(answering_yes());
        turn(
            &s,
            "gemini",
            &[("s__always", json!({}))],
            &ExecOptions::new(),
        )
        .await;
        assert_eq!(s.asked.lock().unwrap().len(), DEFAULT_MAX_INPUT_ROUNDS);
    });
}

#[test]
fn the_handler_has_its_own_time_bound() {
    current_thread_runtime().block_on(async {
        // A person takes longer than the call timeout: the call still completes.
        let s = setup(Some(Arc::new(|q| (Duration::from_millis(400), yes(q)))));
        let options = ExecOptions::new()
            .call_timeout(Duration::from_millis(150))
            .input_timeout(Duration::from_secs(5));
        let run = turn(&s, "anthropic", &[("s__twice", json!({}))], &options).await;
        assert_eq!(text(&run.turn.results[0]), "sent with code \"1234\"");
        // Over the input timeout, the call ends.
        let s = setup(Some(Arc::new(|q| (Duration::from_secs(30), yes(q)))));
        let options = ExecOptions::new().input_timeout(Duration::from_millis(100));
        let run = turn(&s, "anthropic", &[("s__confirm", json!({}))], &options).await;
        let error = run.calls[0].error.as_ref().unwrap();
        assert_eq!(error.kind(), ErrorKind::InputRequired);
        assert!(
            error
                .message()
                .contains("the input handler did not answer within 100 ms"),
            "{error}"
        );
        assert_eq!(s.log.lock().unwrap().len(), 1);
    });
}

#[test]
fn a_slow_second_round_times_out_and_is_cancelled() {
    current_thread_runtime().block_on(async {
        let s = setup(answering_yes());
        let options = ExecOptions::new().call_timeout(Duration::from_millis(200));
        let run = turn(
            &s,
            "openai-responses",
            &[("s__slow_second", json!({}))],
            &options,
        )
        .await;
        let error = run.calls[0].error.as_ref().unwrap();
        assert_eq!(error.kind(), ErrorKind::Timeout);
        assert_eq!(
            error.message(),
            "round 2 of the call took longer than 200 ms and was cancelled"
        );
        assert!(
            s.dropped.load(Ordering::SeqCst),
            "the second round was dropped"
        );
    });
}

#[test]
fn a_request_state_alone_is_retried_without_asking() {
    current_thread_runtime().block_on(async {
        let s = setup(None);
        let run = turn(
            &s,
            "anthropic",
            &[("s__shed", json!({}))],
            &ExecOptions::new(),
        )
        .await;
        assert_eq!(text(&run.turn.results[0]), "done after a pause");
        let log = s.log.lock().unwrap();
        assert_eq!(
            log[1].1, None,
            "no inputResponses on a retry without questions"
        );
        assert_eq!(log[1].2.as_deref(), Some("busy"));
    });
}

#[test]
fn tasks_and_unknown_result_types_are_errors() {
    current_thread_runtime().block_on(async {
        let s = setup(answering_yes());
        let run = turn(
            &s,
            "anthropic",
            &[("s__odd", json!({}))],
            &ExecOptions::new(),
        )
        .await;
        let error = run.calls[0].error.as_ref().unwrap();
        assert!(
            error.message().contains(
                "handed back a task (`t-1`, working) instead of following it to a result"
            ),
            "{error}"
        );
        assert_eq!(run.turn.results[0]["is_error"], true);
    });
}

#[test]
fn the_policy_decides_once_and_hooks_run_once() {
    struct Count(Arc<AtomicUsize>, Arc<AtomicUsize>);
    impl Hooks for Count {
        fn before<'a>(
            &'a self,
            _call: &'a mut ToolCall,
            _ctx: &'a CallContext,
        ) -> BoxFuture<'a, mcp_adapters::Result<()>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Ok(()) })
        }
        fn after<'a>(
            &'a self,
            _call: &'a ToolCall,
            result: &'a mut CallToolResult,
            _ctx: &'a CallContext,
        ) -> BoxFuture<'a, mcp_adapters::Result<()>> {
            self.1.fetch_add(1, Ordering::SeqCst);
            result.content.push(Content::text("(checked)"));
            Box::pin(async { Ok(()) })
        }
    }
    current_thread_runtime().block_on(async {
        let approvals = Arc::new(AtomicUsize::new(0));
        let (before, after) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let counted = approvals.clone();
        let log: Log = Arc::default();
        let source = Source::hub()
            .server("s", server(log, Arc::default()))
            .policy(Policy::new().ask("s/*").unwrap())
            .approver(move |_req| {
                counted.fetch_add(1, Ordering::SeqCst);
                Box::pin(async { Approval::Allow })
            })
            .hooks(Count(before.clone(), after.clone()))
            .input_handler(|q| Box::pin(async move { yes(&q) }))
            .build()
            .unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = model_response("anthropic", &[("s__twice".into(), json!({}))]);
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["content"][1]["text"], "(checked)");
        assert_eq!(approvals.load(Ordering::SeqCst), 1);
        assert_eq!(before.load(Ordering::SeqCst), 1);
        assert_eq!(after.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_mixed_turn_is_answered_in_the_models_order() {
    current_thread_runtime().block_on(async {
        let s = setup(answering_yes());
        let run = turn(
            &s,
            "anthropic",
            &[
                ("s__twice", json!({})),
                ("s__plain", json!({"n": 1})),
                ("s__always", json!({})),
                ("s__fail", json!({})),
                ("s__nope", json!({})),
                ("s__confirm", json!({"n": 5})),
            ],
            &ExecOptions::new().max_input_rounds(2),
        )
        .await;
        let ids = answer_ids(&run.turn.results, "tool_use_id");
        assert_eq!(
            ids,
            ["call_0", "call_1", "call_2", "call_3", "call_4", "call_5"]
        );
        assert_eq!(text(&run.turn.results[0]), "sent with code \"1234\"");
        assert_eq!(text(&run.turn.results[1]), "plain n=1");
        assert!(text(&run.turn.results[2]).contains("more than 2 times"));
        assert_eq!(text(&run.turn.results[3]), "disk full");
        assert!(text(&run.turn.results[4]).contains("unknown tool"));
        assert_eq!(text(&run.turn.results[5]), "deleted n=5");
        let errors: Vec<bool> = run
            .turn
            .results
            .iter()
            .map(|r| r["is_error"] == true)
            .collect();
        assert_eq!(errors, [false, false, true, true, true, false]);
    });
}

/// What a call in the property test does.
#[derive(Debug, Clone)]
enum Kind {
    /// Completes at once.
    Complete,
    /// Asks `rounds` times, then completes; the handler answers or declines.
    Asks { rounds: u8, declined: bool },
    /// Fails.
    Fails,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Complete),
        (1u8..5, any::<bool>()).prop_map(|(rounds, declined)| Kind::Asks { rounds, declined }),
        Just(Kind::Fails),
    ]
}

/// One tool: `n` says which call it is; it asks `rounds` times (the round
/// is counted in the request state) and completes with `done n=N` only once
/// every round was answered.
fn property_server(log: Arc<Mutex<Vec<(u64, u8)>>>) -> InProcessServer {
    let schema = json!({"type": "object"});
    InProcessServer::new().tool_with_input(
        Tool::new("work", "", schema.clone()),
        move |args, ctx| {
            let n = args["n"].as_u64().unwrap();
            let rounds = args["rounds"].as_u64().unwrap() as u8;
            let fails = args["fails"] == true;
            let done: u8 = ctx
                .request_state
                .as_deref()
                .map_or(0, |s| s.parse().unwrap());
            log.lock().unwrap().push((n, done));
            let answered = done == 0 || ctx.input_response(&format!("q{done}")).is_some();
            async move {
                if fails {
                    return Err(Error::new(ErrorKind::Server, format!("failed n={n}")));
                }
                if !answered {
                    return Ok(CallToolResult::error(format!("unanswered n={n}")).into());
                }
                if done < rounds {
                    let next = done + 1;
                    return Ok(InputRequiredResult::new()
                        .ask(
                            format!("q{next}"),
                            form(&format!("question {next}"), "ok", "boolean"),
                        )
                        .with_request_state(next.to_string())
                        .into());
                }
                Ok(CallToolResult::text(format!("done n={n}")).into())
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every call is answered exactly once, in order, and none is answered as
    /// complete while its server still required input.
    #[test]
    fn every_call_answered_once_and_never_half_done(
        mix in proptest::collection::vec(kind(), 1..8),
        max_rounds in 0usize..5,
        concurrency in 1usize..4,
    ) {
        current_thread_runtime().block_on(async {
            let log: Arc<Mutex<Vec<(u64, u8)>>> = Arc::default();
            let declines: Vec<bool> = mix.iter().map(|k| matches!(k, Kind::Asks { declined: true, .. })).collect();
            let declines = Arc::new(declines);
            let source = Source::hub()
                .server("s", property_server(log.clone()))
                .input_handler(move |q| {
                    let n = q.call.call().unwrap().call.arguments["n"].as_u64().unwrap() as usize;
                    let answer = if declines[n] {
                        InputAnswer::Decline("no".into())
                    } else {
                        InputAnswer::Respond(q.requests.keys()
                            .map(|k| (k.clone(), ElicitResult::accept(json!({"ok": true})).into()))
                            .collect())
                    };
                    Box::pin(async move { answer })
                })
                .build()
                .unwrap();
            let p = provider("anthropic");
            let listing = source.tools(p, &ListOptions::new()).await.unwrap();
            let calls: Vec<(String, Value)> = mix.iter().enumerate().map(|(n, k)| {
                let (rounds, fails) = match k {
                    Kind::Complete => (0, false),
                    Kind::Asks { rounds, .. } => (*rounds, false),
                    Kind::Fails => (0, true),
                };
                ("s__work".to_owned(), json!({"n": n, "rounds": rounds, "fails": fails}))
            }).collect();
            let options = ExecOptions::new().max_input_rounds(max_rounds).max_concurrency(concurrency);
            let run = source
                .execute_tool_calls(p, &model_response("anthropic", &calls), &listing, &options)
                .await
                .unwrap();
            assert_eq!(run.turn.results.len(), mix.len());
            for (n, (kind, answer)) in mix.iter().zip(&run.turn.results).enumerate() {
                assert_eq!(answer["tool_use_id"], format!("call_{n}"));
                let completes = match kind {
                    Kind::Complete => true,
                    Kind::Asks { rounds, declined } => !declined && (*rounds as usize) <= max_rounds,
                    Kind::Fails => false,
                };
                let text = answer["content"][0]["text"].as_str().unwrap_or("");
                if completes {
                    assert_eq!(text, format!("done n={n}"));
                    assert!(answer.get("is_error").is_none());
                } else {
                    assert_eq!(answer["is_error"], true, "{kind:?}: {answer}");
                    assert!(!text.starts_with("done"), "{kind:?}: {answer}");
                    if let Kind::Asks { .. } = kind {
                        assert_eq!(run.calls[n].error.as_ref().unwrap().kind(), ErrorKind::InputRequired);
                    }
                }
                // The server saw each round once, in order.
                let seen: Vec<u8> = log.lock().unwrap().iter().filter(|(c, _)| *c == n as u64).map(|(_, r)| *r).collect();
                let expected_requests = match kind {
                    Kind::Complete | Kind::Fails => 1,
                    Kind::Asks { declined: true, .. } => 1,
                    Kind::Asks { rounds, .. } => (*rounds as usize).min(max_rounds) + 1,
                };
                assert_eq!(seen, (0..expected_requests as u8).collect::<Vec<_>>(), "{kind:?}");
            }
        });
    }
}

/// A streamed response's calls get their input rounds too, and their answers
/// equal those of the whole response.
#[test]
fn streamed_calls_get_their_input_rounds() {
    current_thread_runtime().block_on(async {
        let s = setup(answering_yes());
        let p = provider("anthropic");
        let listing = s.source.tools(p, &ListOptions::new()).await.unwrap();
        let events = [
            json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "call_0", "name": "s__twice", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_stop"}),
        ];
        let body: String = events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect();
        let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(body.into_bytes())]);
        let options = ExecOptions::new();
        let run = s
            .source
            .execute_stream(p, chunks, &listing, &options)
            .await
            .unwrap();
        assert!(run.error.is_none(), "{:?}", run.error);
        assert_eq!(text(&run.execution.turn.results[0]), "sent with code \"1234\"");
        assert_eq!(s.asked.lock().unwrap().len(), 2);
        let whole = s
            .source
            .execute_tool_calls(p, &run.message, &listing, &options)
            .await
            .unwrap();
        assert_eq!(whole.turn.results, run.execution.turn.results);
    });
}
