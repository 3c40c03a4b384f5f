//! Turns that outlive a process: suspended where a call waits, written out,
//! read back by a new source (as another process would) and resumed, with
//! the servers' own record of the calls they received showing each call
//! exactly once.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{
    ElicitResult, Elicitation, InputRequest, InputRequiredResult, InputResponse, InputResponses,
};
use mcp_adapters::*;
use serde_json::{Value, json};

/// What the server received: tool, request state, idempotency key.
type Log = Arc<Mutex<Vec<(String, Option<String>, Option<String>)>>>;

fn form(message: &str, field: &str, kind: &str) -> InputRequest {
    InputRequest::form(
        message,
        json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]}),
    )
}

/// The same server in every "process": it records each request it gets.
fn server(log: Log) -> InProcessServer {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let tool = |name: &str| Tool::new(name, name, schema.clone());
    let record = |name: &'static str, log: &Log, ctx: &CallContext| {
        log.lock().unwrap().push((
            name.to_owned(),
            ctx.request_state.clone(),
            ctx.idempotency_key.as_ref().map(ToString::to_string),
        ));
    };
    let (l1, l2, l3, l4) = (log.clone(), log.clone(), log.clone(), log);
    InProcessServer::new()
        .tool(tool("read"), move |args, ctx| {
            record("read", &l1, &ctx);
            async move { Ok(CallToolResult::text(format!("read n={}", args["n"]))) }
        })
        .tool(tool("delete"), move |args, ctx| {
            record("delete", &l2, &ctx);
            async move { Ok(CallToolResult::text(format!("deleted n={}", args["n"]))) }
        })
        .tool_with_input(tool("transfer"), move |_args, ctx| {
            record("transfer", &l3, &ctx);
            async move {
                let answer = |key: &str| {
                    ctx.input_response(key)
                        .and_then(InputResponse::accepted_content)
                        .cloned()
                };
                Ok(match ctx.request_state.as_deref() {
                    None => InputRequiredResult::new()
                        .ask("confirm", form("Send 5 to bob?", "confirm", "boolean"))
                        .with_request_state("step1")
                        .into(),
                    Some("step1") => match answer("confirm") {
                        Some(c) if c["confirm"] == true => InputRequiredResult::new()
                            .ask("code", form("The 4-digit code?", "code", "string"))
                            .with_request_state("step2")
                            .into(),
                        _ => CallToolResult::text("cancelled").into(),
                    },
                    Some("step2") => match answer("code") {
                        Some(c) => CallToolResult::text(format!("sent, code {}", c["code"])).into(),
                        None => CallToolResult::text("no code").into(),
                    },
                    Some(other) => CallToolResult::error(format!("bad state {other}")).into(),
                })
            }
        })
        .tool(tool("hang"), move |_args, ctx| {
            record("hang", &l4, &ctx);
            async move {
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        })
}

fn policy() -> Policy {
    Policy::new().ask("s/delete").unwrap().allow("s/*").unwrap()
}

/// A source as a fresh process would build it: the same server and policy.
fn source(log: &Log, input: Option<InputHandlerFn>) -> Source {
    let mut builder = Source::hub()
        .server("s", server(log.clone()))
        .policy(policy());
    if let Some(handler) = input {
        builder = builder.input_handler(move |q| {
            let answer = handler(&q);
            Box::pin(async move { answer })
        });
    }
    builder.build().unwrap()
}

type InputHandlerFn = Arc<dyn Fn(&InputQuestions) -> InputAnswer + Send + Sync>;

/// Accepts every form: `confirm` true, `code` 1234; `Later` for the
/// questions named in `later`.
fn answering(later: &'static [&'static str]) -> InputHandlerFn {
    Arc::new(move |questions| {
        let mut responses = InputResponses::new();
        for (key, request) in &questions.requests {
            if later.contains(&key.as_str()) {
                return InputAnswer::Later;
            }
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
    })
}

fn response(calls: &[(&str, Value)]) -> Value {
    let calls: Vec<(String, Value)> = calls
        .iter()
        .map(|(n, a)| (n.to_string(), a.clone()))
        .collect();
    model_response("anthropic", &calls)
}

fn text(answer: &Value) -> String {
    answer["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn received(log: &Log) -> Vec<(String, Option<String>)> {
    log.lock()
        .unwrap()
        .iter()
        .map(|(tool, state, _)| (tool.clone(), state.clone()))
        .collect()
}

/// Writes the state out and reads it back, as the hand-over between
/// processes does.
fn handed_over(run: &Execution) -> TurnState {
    let state = run.suspended.as_ref().expect("the turn is suspended");
    TurnState::from_json(&state.to_json().unwrap()).unwrap()
}

#[test]
fn an_approval_suspends_the_turn_and_resuming_sends_each_call_once() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[
            ("s__read", json!({"n": 1})),
            ("s__delete", json!({"n": 2})),
            ("s__read", json!({"n": 3})),
        ]);
        let run = first
            .execute_tool_calls(p, &calls, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        assert!(
            run.turn.results.is_empty(),
            "no answers while the turn waits"
        );
        assert_eq!(run.waiting.len(), 1);
        let waiting = &run.waiting[0];
        assert_eq!(
            (
                waiting.index,
                waiting.call_id.as_deref(),
                waiting.tool.as_str()
            ),
            (1, Some("call_1"), "delete")
        );
        assert_eq!(waiting.what, Wait::Approval);
        assert_eq!(
            run.calls
                .iter()
                .map(|c| (c.index, c.outcome))
                .collect::<Vec<_>>(),
            [
                (0, CallOutcome::Ran),
                (1, CallOutcome::Waiting),
                (2, CallOutcome::Ran)
            ],
            "a record for every call, the one that waits included"
        );
        assert_eq!(
            received(&log),
            [("read".into(), None), ("read".into(), None)],
            "the call that waits is not sent"
        );
        let state = handed_over(&run);

        // Another process: the same server, a new source, the decision given.
        let second = source(&log, None);
        let listing = second.tools(p, &ListOptions::new()).await.unwrap();
        let run = second
            .resume_turn(
                p,
                state.clone(),
                &listing,
                &ExecOptions::new().approve_call("call_1"),
            )
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        let answers: Vec<String> = run.turn.results.iter().map(text).collect();
        assert_eq!(answers, ["read n=1", "deleted n=2", "read n=3"]);
        assert_eq!(
            answer_ids(&run.turn.results, "tool_use_id"),
            ["call_0", "call_1", "call_2"]
        );
        assert!(run.calls.iter().all(|c| c.ran && c.error.is_none()));
        assert_eq!(run.ran_servers.iter().collect::<Vec<_>>(), ["s"]);
        let tools: Vec<String> = received(&log).into_iter().map(|(t, _)| t).collect();
        assert_eq!(tools, ["read", "read", "delete"], "each call exactly once");

        // Resumed again from the same document with a denial: nothing sent.
        log.lock().unwrap().clear();
        let run = second
            .resume_turn(
                p,
                state,
                &listing,
                &ExecOptions::new().deny_call("call_1", "not today"),
            )
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        assert!(
            text(&run.turn.results[1]).contains("not today"),
            "{}",
            run.turn.results[1]
        );
        assert_eq!(text(&run.turn.results[0]), "read n=1");
        assert!(received(&log).is_empty(), "{:?}", received(&log));
    });
}

#[test]
fn a_resumed_turn_with_no_answer_yet_is_suspended_again() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[("s__delete", json!({"n": 2}))]);
        let options = ExecOptions::new().suspend(true);
        let run = first
            .execute_tool_calls(p, &calls, &listing, &options)
            .await
            .unwrap();
        let state = handed_over(&run);
        let run = first
            .resume_turn(p, state.clone(), &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        assert_eq!(handed_over(&run).turn_id(), state.turn_id());
        assert!(received(&log).is_empty());
        // Without `suspend`, a call no one approves is denied.
        let run = first
            .resume_turn(p, state, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        assert!(
            text(&run.turn.results[0]).contains("approv"),
            "{}",
            run.turn.results[0]
        );
        assert!(received(&log).is_empty());
    });
}

#[test]
fn an_approver_that_answers_later_suspends_or_denies() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let later = Source::hub()
            .server("s", server(log.clone()))
            .policy(policy())
            .approver(|_| Box::pin(async { Approval::Later }))
            .build()
            .unwrap();
        let listing = later.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[("s__delete", json!({"n": 2}))]);
        let run = later
            .execute_tool_calls(p, &calls, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        let run = later
            .execute_tool_calls(p, &calls, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        let error = run.calls[0].error.as_ref().unwrap();
        assert_eq!(error.kind(), ErrorKind::Denied);
        assert!(error.message().contains("cannot be suspended"), "{error}");
        assert!(received(&log).is_empty());
    });
}

#[test]
fn questions_wait_and_the_call_goes_on_with_the_servers_request_state() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let calls = response(&[("s__transfer", json!({})), ("s__read", json!({"n": 1}))]);
        let options = ExecOptions::new().suspend(true);

        // No input handler here: the first round's question waits.
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let run = first
            .execute_tool_calls(p, &calls, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        let Wait::Input { requests } = &run.waiting[0].what else {
            panic!("{:?}", run.waiting[0].what);
        };
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["confirm"]);
        let state = handed_over(&run);

        // A handler that answers the first round and not yet the second.
        let second = source(&log, Some(answering(&["code"])));
        let run = second
            .resume_turn(p, state, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        let Wait::Input { requests } = &run.waiting[0].what else {
            panic!("{:?}", run.waiting[0].what);
        };
        assert_eq!(requests.keys().collect::<Vec<_>>(), ["code"]);
        let state = handed_over(&run);

        // A third process answers the rest.
        let third = source(&log, Some(answering(&[])));
        let run = third
            .resume_turn(p, state, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        let answers: Vec<String> = run.turn.results.iter().map(text).collect();
        assert_eq!(answers, ["sent, code \"1234\"", "read n=1"]);
        assert_eq!(
            received(&log),
            [
                ("transfer".into(), None),
                ("read".into(), None),
                ("transfer".into(), Some("step1".into())),
                ("transfer".into(), Some("step2".into())),
            ],
            "every request once, each round with the state the server gave"
        );
        // One call, one key, whichever process sent its rounds.
        let keys: Vec<Option<String>> = log
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _, _)| t == "transfer")
            .map(|(_, _, key)| key.clone())
            .collect();
        assert!(keys[0].is_some());
        assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
        let read_key = log.lock().unwrap()[1].2.clone();
        assert_ne!(read_key, keys[0], "each call has its own key");
    });
}

#[test]
fn a_call_in_flight_when_its_process_ended_is_answered_as_interrupted() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[
            ("s__read", json!({"n": 1})),
            ("s__hang", json!({})),
            ("s__delete", json!({"n": 2})),
        ]);
        let checkpoints: Arc<Mutex<Vec<TurnState>>> = Arc::default();
        let kept = checkpoints.clone();
        let (sent, mut hang_sent) = tokio::sync::mpsc::unbounded_channel::<()>();
        let options = ExecOptions::new()
            .max_concurrency(1)
            .checkpoint(move |state| {
                let json: Value = serde_json::from_slice(&state.to_json().unwrap()).unwrap();
                if json["calls"][1]["stage"] == "sent" {
                    let _ = sent.send(());
                }
                kept.lock().unwrap().push(state);
                Box::pin(async { Ok(()) })
            });
        // The process "ends" once the hanging call is on the wire.
        tokio::select! {
            _ = first.execute_tool_calls(p, &calls, &listing, &options) => {
                panic!("the turn cannot end: a call hangs")
            }
            _ = hang_sent.recv() => {}
        }
        let last = checkpoints.lock().unwrap().last().cloned().unwrap();
        let json: Value = serde_json::from_slice(&last.to_json().unwrap()).unwrap();
        let stages: Vec<&str> = json["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| match &c["stage"] {
                Value::String(stage) => stage.as_str(),
                Value::Object(stage) => stage.keys().next().unwrap().as_str(),
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(stages, ["ended", "sent", "pending"]);

        let second = source(&log, None);
        let run = second
            .resume_turn(
                p,
                TurnState::from_json(&last.to_json().unwrap()).unwrap(),
                &listing,
                &ExecOptions::new().approve_call("call_2"),
            )
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        assert_eq!(text(&run.turn.results[0]), "read n=1");
        assert_eq!(
            run.calls[1].error.as_ref().map(Error::kind),
            Some(ErrorKind::Interrupted)
        );
        assert!(
            text(&run.turn.results[1]).contains("not sent again"),
            "{}",
            run.turn.results[1]
        );
        assert_eq!(text(&run.turn.results[2]), "deleted n=2");
        let tools: Vec<String> = received(&log).into_iter().map(|(t, _)| t).collect();
        assert_eq!(tools, ["read", "hang", "delete"], "nothing sent twice");
    });
}

#[test]
fn a_state_from_another_version_or_provider_is_refused() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[("s__delete", json!({"n": 2}))]);
        let run = first
            .execute_tool_calls(p, &calls, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        let bytes = run.suspended.as_ref().unwrap().to_json().unwrap();
        let mut old: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(old["format"], TURN_STATE_FORMAT);
        assert_eq!(old["version"], TURN_STATE_VERSION);
        // A document of version 1 (no programs' journals) reads as this one.
        let mut v1 = old.clone();
        v1["version"] = json!(1);
        let read = TurnState::from_json(&serde_json::to_vec(&v1).unwrap()).unwrap();
        assert_eq!(TurnState::from_json(&bytes).unwrap(), read);
        old["version"] = json!(0);
        let err = TurnState::from_json(&serde_json::to_vec(&old).unwrap()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input);
        assert!(err.message().contains("version 0"), "{err}");
        assert!(
            err.message()
                .contains(&format!("to {TURN_STATE_VERSION} only")),
            "{err}"
        );
        let err = serde_json::from_value::<TurnState>(old).unwrap_err();
        assert!(err.to_string().contains("version 0"), "{err}");

        let state = TurnState::from_json(&bytes).unwrap();
        let other = provider("openai-chat");
        let listing = first.tools(other, &ListOptions::new()).await.unwrap();
        let err = first
            .resume_turn(other, state, &listing, &ExecOptions::new())
            .await
            .unwrap_err();
        assert!(err.message().contains("`anthropic`"), "{err}");
        assert!(received(&log).is_empty());
    });
}

#[test]
fn a_streamed_turn_is_suspended_and_resumed_as_a_whole_one() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let tool_use = |i: usize, name: &str, input: &str| {
            [
                json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("call_{i}"), "name": name, "input": {}}}),
                json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": input}}),
                json!({"type": "content_block_stop", "index": i}),
            ]
        };
        let mut events =
            vec![json!({"type": "message_start", "message": {"role": "assistant", "content": []}})];
        events.extend(tool_use(0, "s__delete", r#"{"n": 1}"#));
        events.extend(tool_use(1, "s__read", r#"{"n": 2}"#));
        events.push(json!({"type": "message_stop"}));
        let body: String = events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect();
        let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(body.into_bytes())]);
        let run = first
            .execute_stream(p, chunks, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert!(run.error.is_none(), "{:?}", run.error);
        assert_eq!(run.execution.status, Status::Suspended);
        assert_eq!(run.execution.waiting[0].call_id.as_deref(), Some("call_0"));
        let state = handed_over(&run.execution);
        let second = source(&log, None);
        let resumed = second
            .resume_turn(p, state, &listing, &ExecOptions::new().approve_call("call_0"))
            .await
            .unwrap();
        let answers: Vec<String> = resumed.turn.results.iter().map(text).collect();
        assert_eq!(answers, ["deleted n=1", "read n=2"]);
        let tools: Vec<String> = received(&log).into_iter().map(|(t, _)| t).collect();
        assert_eq!(tools, ["read", "delete"]);
        // The same turn whole, approved at once, answers the same.
        let whole = second
            .execute_tool_calls(
                p,
                &run.message,
                &listing,
                &ExecOptions::new().approve_call("call_0"),
            )
            .await
            .unwrap();
        assert_eq!(whole.turn.results, resumed.turn.results);
    });
}

/// The provider's approval request for a hosted call waits like a local
/// call's approval, and is answered in its shape once decided.
#[test]
fn a_hosted_calls_approval_request_waits_and_is_answered_when_resumed() {
    current_thread_runtime().block_on(async {
        let response = read_json(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/hosted/openai-responses/vercel__openai-mcp-tool-approval.1.json",
        ));
        let p = provider("openai-responses");
        let hub = || {
            Source::hub()
                .server("other", InProcessServer::new())
                .policy(Policy::new().ask("zip1/*").unwrap())
                .build()
                .unwrap()
        };
        let first = hub();
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let run = first
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        assert!(run.approvals.is_empty());
        let waiting = &run.waiting[0];
        assert_eq!(waiting.what, Wait::HostedApproval);
        assert_eq!(
            (waiting.server_id.as_str(), waiting.tool.as_str()),
            ("zip1", "create_short_url")
        );
        let id = waiting.call_id.clone().unwrap();
        let state = handed_over(&run);
        let second = hub();
        let run = second
            .resume_turn(p, state, &listing, &ExecOptions::new().approve_call(&id))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        assert_eq!(run.approvals.len(), 1);
        assert!(run.approvals[0].approved);
        assert_eq!(run.approvals[0].item["type"], "mcp_approval_response");
        assert_eq!(run.approvals[0].item["approval_request_id"], id.as_str());
        assert_eq!(run.approvals[0].item["approve"], true);
    });
}

/// A turn halted while calls wait is answered, not suspended: a call never
/// sent as not run, one sent as stopped where it was; the checkpoint says
/// the turn was halted, so resuming it sends nothing.
#[test]
fn a_halt_answers_the_calls_that_wait() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let halting = Source::hub()
            .server("s", server(log.clone()))
            .policy(
                Policy::new()
                    .ask("s/delete")
                    .unwrap()
                    .ask("s/read")
                    .unwrap()
                    .allow("s/*")
                    .unwrap(),
            )
            .approver(|request| {
                Box::pin(async move {
                    match request.call.tool.as_str() {
                        "read" => Approval::DenyAndHalt("stop here".into()),
                        _ => Approval::Later,
                    }
                })
            })
            .build()
            .unwrap();
        let listing = halting.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[
            ("s__delete", json!({"n": 1})),
            ("s__transfer", json!({})),
            ("s__read", json!({"n": 3})),
            ("s__delete", json!({"n": 4})),
        ]);
        let last: Arc<Mutex<Option<TurnState>>> = Arc::default();
        let kept = last.clone();
        let options = ExecOptions::new()
            .suspend(true)
            .max_concurrency(1)
            .checkpoint(move |state| {
                *kept.lock().unwrap() = Some(state);
                Box::pin(async { Ok(()) })
            });
        let run = halting
            .execute_tool_calls(p, &calls, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Halt);
        assert!(run.suspended.is_none() && run.waiting.is_empty());
        let kinds: Vec<Option<ErrorKind>> = run
            .calls
            .iter()
            .map(|c| c.error.as_ref().map(Error::kind))
            .collect();
        assert_eq!(
            kinds,
            [
                Some(ErrorKind::Denied),
                Some(ErrorKind::InputRequired),
                Some(ErrorKind::Denied),
                Some(ErrorKind::Denied),
            ]
        );
        assert!(
            text(&run.turn.results[0]).contains("halted"),
            "{}",
            run.turn.results[0]
        );
        assert!(
            text(&run.turn.results[1]).contains("halted"),
            "{}",
            run.turn.results[1]
        );
        assert!(
            text(&run.turn.results[2]).contains("stop here"),
            "{}",
            run.turn.results[2]
        );
        assert_eq!(received(&log), [("transfer".into(), None)]);

        let state = last.lock().unwrap().clone().unwrap();
        let json: Value = serde_json::from_slice(&state.to_json().unwrap()).unwrap();
        assert_eq!(json["halted"], true);
        let resumed = source(&log, Some(answering(&[])))
            .resume_turn(
                p,
                state,
                &listing,
                &ExecOptions::new().approve_call("call_0"),
            )
            .await
            .unwrap();
        assert_eq!(resumed.status, Status::Halt);
        assert_eq!(received(&log), [("transfer".into(), None)], "nothing sent");
    });
}

/// What the provider's hosted calls put in the model's context is in every
/// checkpoint, and a decision by `#INDEX` names one of the model's calls,
/// never a hosted call's approval request.
#[test]
fn checkpoints_keep_the_hosted_taint_and_indexes_name_only_the_models_calls() {
    current_thread_runtime().block_on(async {
        let p = provider("openai-responses");
        let log: Log = Arc::default();
        let hub = Source::hub()
            .server("s", server(log.clone()))
            .policy(
                Policy::new()
                    .ask("zip1/*")
                    .unwrap()
                    .allow("s/*")
                    .unwrap(),
            )
            .build()
            .unwrap();
        let listing = hub.tools(p, &ListOptions::new()).await.unwrap();
        let response = json!({"output": [
            {"type": "mcp_call", "id": "mcp_1", "server_label": "web", "name": "fetch",
             "arguments": "{}", "output": "the page"},
            {"type": "mcp_approval_request", "id": "mcpr_1", "server_label": "zip1",
             "name": "create_short_url", "arguments": "{\"url\": \"https://example.com\"}"},
            {"type": "function_call", "call_id": "call_a", "name": "s__read", "arguments": "{\"n\": 1}"}
        ]});
        let states: Arc<Mutex<Vec<TurnState>>> = Arc::default();
        let kept = states.clone();
        let options = ExecOptions::new()
            .suspend(true)
            .approve_call("#0")
            .checkpoint(move |state| {
                kept.lock().unwrap().push(state);
                Box::pin(async { Ok(()) })
            });
        let run = hub
            .execute_tool_calls(p, &response, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended, "{:?}", run.approvals);
        assert_eq!(run.waiting.len(), 1);
        assert_eq!(run.waiting[0].what, Wait::HostedApproval);
        assert_eq!(run.waiting[0].call_id.as_deref(), Some("mcpr_1"));
        for state in states.lock().unwrap().iter() {
            let json: Value = serde_json::from_slice(&state.to_json().unwrap()).unwrap();
            assert_eq!(json["taint"], json!(["web"]), "{json}");
        }
        assert_eq!(received(&log), [("read".into(), None)]);
    });
}

/// A request goes out only once the state that says it is sent is kept: a
/// checkpoint that fails keeps the call from being sent, and says why.
#[test]
fn a_call_is_not_sent_when_its_checkpoint_fails() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let first = source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let kept: Arc<Mutex<Vec<TurnState>>> = Arc::default();
        let seen = kept.clone();
        // The store takes the turn's first state, then fails.
        let options = ExecOptions::new().checkpoint(move |state| {
            let mut seen = seen.lock().unwrap();
            let full = !seen.is_empty();
            seen.push(state);
            Box::pin(async move {
                if full {
                    Err(Error::new(ErrorKind::Io, "the store is full"))
                } else {
                    Ok(())
                }
            })
        });
        let run = first
            .execute_tool_calls(
                p,
                &response(&[("s__read", json!({"n": 1}))]),
                &listing,
                &options,
            )
            .await
            .unwrap();
        let error = run.calls[0].error.as_ref().expect("not sent");
        assert_eq!(error.kind(), ErrorKind::Unavailable);
        assert_eq!(
            error.message(),
            "not sent: the turn's state could not be kept",
            "the store's own error stays out of the model's answer"
        );
        assert!(received(&log).is_empty());
        // The first state it kept says the call was not sent.
        let first_kept: Value =
            serde_json::from_slice(&kept.lock().unwrap()[0].to_json().unwrap()).unwrap();
        assert_eq!(first_kept["calls"][0]["stage"], "pending");
    });
}

/// A checkpoint that takes its time: each request arrives only once a kept
/// state says its call is sent, whichever call's flush kept it; one that
/// panics keeps its call from being sent, and the turn goes on.
#[test]
fn requests_wait_for_their_state_to_be_kept() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let kept: Arc<Mutex<Option<Value>>> = Arc::default();
        let at_server = kept.clone();
        let violations: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = violations.clone();
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let probe = InProcessServer::new().tool(Tool::new("read", "", schema), move |_, ctx| {
            let sent = at_server.lock().unwrap().clone().is_some_and(|state| {
                state["calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["call_id"] == json!(ctx.call_id()) && c["stage"] == "sent")
            });
            if !sent {
                seen.lock()
                    .unwrap()
                    .push(format!("{:?} arrived unkept", ctx.call_id()));
            }
            async { Ok(CallToolResult::text("ok")) }
        });
        let source = Source::hub().server("s", probe).build().unwrap();
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let writes = Arc::new(Mutex::new(0usize));
        let counted = writes.clone();
        let options = ExecOptions::new()
            .max_concurrency(4)
            .checkpoint(move |state| {
                let (kept, counted) = (kept.clone(), counted.clone());
                Box::pin(async move {
                    for _ in 0..3 {
                        tokio::task::yield_now().await;
                    }
                    *kept.lock().unwrap() =
                        Some(serde_json::from_slice(&state.to_json().unwrap()).unwrap());
                    *counted.lock().unwrap() += 1;
                    Ok(())
                })
            });
        let calls = response(&[
            ("s__read", json!({"n": 1})),
            ("s__read", json!({"n": 2})),
            ("s__read", json!({"n": 3})),
            ("s__read", json!({"n": 4})),
        ]);
        let run = source
            .execute_tool_calls(p, &calls, &listing, &options)
            .await
            .unwrap();
        assert!(run.calls.iter().all(|c| c.ran), "{:?}", run.calls);
        assert!(
            violations.lock().unwrap().is_empty(),
            "{:?}",
            violations.lock().unwrap()
        );
        // The calls' changes are kept together: fewer writes than changes.
        assert!(
            *writes.lock().unwrap() < 1 + 4 * 2,
            "{}",
            writes.lock().unwrap()
        );

        let log: Log = Arc::default();
        let panicking = source_with(&log, |_| panic!("the store's driver panicked"));
        let listing = panicking.0.tools(p, &ListOptions::new()).await.unwrap();
        let run = panicking
            .0
            .execute_tool_calls(
                p,
                &response(&[("s__read", json!({"n": 1}))]),
                &listing,
                &panicking.1,
            )
            .await
            .unwrap();
        let error = run.calls[0].error.as_ref().expect("not sent");
        assert_eq!(error.kind(), ErrorKind::Unavailable);
        assert!(error.message().contains("panicked"), "{error}");
        assert!(received(&log).is_empty());
    });
}

/// The probe server with checkpoint options.
fn source_with(
    log: &Log,
    checkpoint: impl Fn(TurnState) -> BoxFuture<'static, mcp_adapters::Result<()>>
    + Send
    + Sync
    + 'static,
) -> (Source, ExecOptions) {
    (source(log, None), ExecOptions::new().checkpoint(checkpoint))
}

/// A failure to keep the state of an input round's request keeps that
/// request from going out: the server saw the first round only.
#[test]
fn a_rounds_request_is_not_sent_when_its_state_cannot_be_kept() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: Log = Arc::default();
        let source = source(&log, Some(answering(&[])));
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let asked = Arc::new(Mutex::new(false));
        let options = ExecOptions::new().checkpoint(move |state| {
            let json: Value = serde_json::from_slice(&state.to_json().unwrap()).unwrap();
            let stage = json["calls"][0]["stage"].clone();
            let mut asked = asked.lock().unwrap();
            *asked |= stage.get("waiting_for_input").is_some();
            let refuse = *asked && stage == "sent";
            Box::pin(async move {
                if refuse {
                    Err(Error::new(ErrorKind::Io, "the store is gone"))
                } else {
                    Ok(())
                }
            })
        });
        let run = source
            .execute_tool_calls(
                p,
                &response(&[("s__transfer", json!({}))]),
                &listing,
                &options,
            )
            .await
            .unwrap();
        let error = run.calls[0].error.as_ref().expect("not sent");
        assert!(error.message().starts_with("not sent"), "{error}");
        assert_eq!(received(&log), [("transfer".into(), None)]);
    });
}

/// Two servers of one turn receive idempotency keys that share nothing
/// (each server's part is derived from the turn's secret id and the
/// server's own id; the index counts that server's calls only), and a
/// resumed turn sends a call the key it would have had: derived from what
/// the state keeps.
#[test]
fn each_server_gets_keys_of_its_own_and_a_resumed_call_keeps_its_key() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let (log_a, log_b): (Log, Log) = (Arc::default(), Arc::default());
        let hub = |a: &Log, b: &Log| {
            Source::hub()
                .server("a", server(a.clone()))
                .server("b", server(b.clone()))
                .policy(Policy::allow_all().ask("a/delete").unwrap())
                .build()
                .unwrap()
        };
        let first = hub(&log_a, &log_b);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[
            ("a__read", json!({"n": 1})),
            ("b__read", json!({"n": 2})),
            ("b__read", json!({"n": 3})),
            ("a__delete", json!({"n": 4})),
            ("a__read", json!({"n": 5})),
        ]);
        let run = first
            .execute_tool_calls(p, &calls, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        let keys = |log: &Log| -> Vec<String> {
            log.lock()
                .unwrap()
                .iter()
                .map(|(_, _, key)| key.clone().expect("every call has a key"))
                .collect()
        };
        let split = |key: &str| -> (String, usize) {
            let (server, index) = key.split_once('#').expect("`{server}#{index}`");
            (server.to_owned(), index.parse().unwrap())
        };
        let (a, b) = (keys(&log_a), keys(&log_b));
        assert_eq!(a.len(), 2, "{a:?}");
        assert_eq!(b.len(), 2, "{b:?}");
        let (a0, a2) = (split(&a[0]), split(&a[1]));
        let (b0, b1) = (split(&b[0]), split(&b[1]));
        // Each server's calls counted on their own, in the model's order.
        assert_eq!((a0.1, a2.1, b0.1, b1.1), (0, 2, 0, 1));
        assert_eq!(a0.0, a2.0);
        assert_eq!(b0.0, b1.0);
        // Nothing shared: neither the server part, nor any run of eight
        // characters, nor the turn's id (which only the state holds).
        assert_eq!(a0.0.len(), 32);
        assert_ne!(a0.0, b0.0);
        let shares = |x: &str, y: &str| {
            x.as_bytes()
                .windows(8)
                .any(|w| y.as_bytes().windows(8).any(|v| v == w))
        };
        assert!(!shares(&a0.0, &b0.0), "{a0:?} {b0:?}");
        let state = handed_over(&run);
        for key in a.iter().chain(&b) {
            assert!(!key.contains(state.turn_id()), "{key}");
            assert!(!key.contains(&state.turn_id()[..8]), "{key}");
        }

        // Another process takes the turn up: the call that waited is sent
        // now, under its server's key and its place among that server's calls.
        let second = hub(&log_a, &log_b);
        let listing = second.tools(p, &ListOptions::new()).await.unwrap();
        let run = second
            .resume_turn(
                p,
                state,
                &listing,
                &ExecOptions::new().approve_call("call_3"),
            )
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        let a = keys(&log_a);
        assert_eq!(a.len(), 3, "{a:?}");
        assert_eq!(split(&a[2]), (a0.0.clone(), 1));
        assert_eq!(keys(&log_b).len(), 2, "nothing sent twice");

        // Another turn: other keys for the same servers.
        let other = first
            .execute_tool_calls(
                p,
                &response(&[("b__read", json!({"n": 6}))]),
                &listing,
                &ExecOptions::new(),
            )
            .await
            .unwrap();
        assert!(other.calls[0].error.is_none());
        let b = keys(&log_b);
        assert_ne!(split(&b[2]).0, b0.0);
        assert_eq!(split(&b[2]).1, 0);
    });
}

/// The arguments each request carried, in the order received.
type ArgLog = Arc<Mutex<Vec<(String, Value)>>>;

/// A source of one server whose every tool's `tenant` the application binds
/// (`acme`): `delete` (asked about) and `transfer` (asks for input).
fn bound_source(log: &ArgLog, input: Option<InputHandlerFn>) -> Source {
    let schema = json!({"type": "object",
        "properties": {"n": {"type": "integer"}, "tenant": {"type": "string"}}, "required": ["tenant"]});
    let (l1, l2) = (log.clone(), log.clone());
    let server = InProcessServer::new()
        .tool(Tool::new("delete", "", schema.clone()), move |args, _| {
            l1.lock()
                .unwrap()
                .push(("delete".into(), Value::Object(args)));
            async move { Ok(CallToolResult::text("deleted")) }
        })
        .tool_with_input(Tool::new("transfer", "", schema), move |args, ctx| {
            l2.lock()
                .unwrap()
                .push(("transfer".into(), Value::Object(args)));
            async move {
                Ok(match ctx.request_state.as_deref() {
                    None => InputRequiredResult::new()
                        .ask("confirm", form("Send?", "confirm", "boolean"))
                        .with_request_state("step1")
                        .into(),
                    Some(_) => CallToolResult::text("sent").into(),
                })
            }
        });
    let mut builder = Source::hub()
        .server("s", server)
        .policy(policy())
        .validate_arguments()
        .bind(mcp_adapters::toolset::Binding::parse("s/*:/tenant=acme").unwrap());
    if let Some(handler) = input {
        builder = builder.input_handler(move |q| {
            let answer = handler(&q);
            Box::pin(async move { answer })
        });
    }
    builder.build().unwrap()
}

#[test]
fn a_resumed_document_cannot_write_a_bound_argument_and_holds_none() {
    current_thread_runtime().block_on(async {
        let p = provider("anthropic");
        let log: ArgLog = Arc::default();
        let first = bound_source(&log, None);
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let calls = response(&[
            ("s__delete", json!({"n": 2})),
            ("s__transfer", json!({"n": 5})),
        ]);
        let options = ExecOptions::new().suspend(true);
        let run = first
            .execute_tool_calls(p, &calls, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        assert_eq!(run.waiting.len(), 2);
        assert_eq!(
            *log.lock().unwrap(),
            [("transfer".to_owned(), json!({"n": 5, "tenant": "acme"}))]
        );
        let bytes = run.suspended.as_ref().unwrap().to_json().unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("acme"),
            "the document holds what the model wrote, not the bound value"
        );

        // A document that writes the bound argument into each call.
        let mut edited: Value = serde_json::from_slice(&bytes).unwrap();
        for call in edited["calls"].as_array_mut().unwrap() {
            call["arguments"]["tenant"] = json!("globex");
        }
        let edited = TurnState::from_json(&serde_json::to_vec(&edited).unwrap()).unwrap();
        let second = bound_source(&log, Some(answering(&[])));
        let resumed = options.clone().approve_call("call_0");
        let run = second
            .resume_turn(p, edited, &listing, &resumed)
            .await
            .unwrap();
        for answer in &run.turn.results {
            assert!(
                text(answer).contains("`/tenant` is the application's to write"),
                "{answer}"
            );
        }
        assert_eq!(log.lock().unwrap().len(), 1, "nothing more is sent");

        // The document as it was: both calls go on with the bound value.
        let state = TurnState::from_json(&bytes).unwrap();
        let run = second
            .resume_turn(p, state, &listing, &resumed)
            .await
            .unwrap();
        let answers: Vec<String> = run.turn.results.iter().map(text).collect();
        assert_eq!(answers, ["deleted", "sent"]);
        let mut sent = log.lock().unwrap()[1..].to_vec();
        sent.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            sent,
            [
                ("delete".to_owned(), json!({"n": 2, "tenant": "acme"})),
                ("transfer".to_owned(), json!({"n": 5, "tenant": "acme"})),
            ]
        );
    });
}
