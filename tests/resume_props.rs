//! A suspended turn's state document cannot widen the policy: for any edit
//! of the document (a call's tool, arguments or stage changed, a call added
//! or removed), resuming it sends no request that the policy and the
//! approvals given at resume would not send for the original turn.
//!
//! The server counts every request it receives (tool, call id, arguments);
//! the approver given at resume approves only what it approves of the
//! original turn (the same call id, tool and arguments), and the input
//! handler answers every question (as an `--answers` rule matching every
//! question would).

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{ElicitResult, InputRequest, InputRequiredResult, InputResponses};
use mcp_adapters::*;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Every request the server received: tool, call id, arguments.
type Log = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// The tools, as the policy judges them: `read` and `transfer` allowed,
/// `delete` and `publish` asked about, `wipe` denied; `transfer` and
/// `publish` ask a question before they complete.
const TOOLS: [&str; 5] = ["read", "delete", "wipe", "transfer", "publish"];

fn policy() -> Policy {
    Policy::new()
        .deny("s/wipe")
        .unwrap()
        .ask("s/delete")
        .unwrap()
        .ask("s/publish")
        .unwrap()
        .allow("s/*")
        .unwrap()
}

fn server(log: &Log) -> InProcessServer {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let mut server = InProcessServer::new();
    for name in TOOLS {
        let log = log.clone();
        let tool = Tool::new(name, name, schema.clone());
        let asks = matches!(name, "transfer" | "publish");
        server = server.tool_with_input(tool, move |args, ctx| {
            log.lock().unwrap().push((
                name.to_owned(),
                ctx.call_id().map(str::to_owned),
                Value::Object(args.clone()),
            ));
            async move {
                Ok(if asks && ctx.input_responses.is_none() {
                    let form = InputRequest::form(
                        "Go on?",
                        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                    );
                    InputRequiredResult::new()
                        .ask("ok", form)
                        .with_request_state("asked")
                        .into()
                } else {
                    CallToolResult::text(format!("{name} n={}", args["n"])).into()
                })
            }
        });
    }
    server
}

/// The call the approver given at resume approves: its id, tool, arguments.
type Approved = Vec<(String, String, Value)>;

/// A source as the resuming process builds it: an approver that approves
/// what `approved` names (and otherwise denies, or answers later), and an
/// input handler that answers every question.
fn resuming(log: &Log, approved: Approved, later: bool) -> Source {
    Source::hub()
        .server("s", server(log))
        .policy(policy())
        .approver(move |request| {
            let call = &request.call;
            let asked = (
                call.call_id.clone().unwrap_or_default(),
                call.tool.clone(),
                Value::Object(call.arguments.clone()),
            );
            let approval = if approved.contains(&asked) {
                Approval::Allow
            } else if later {
                Approval::Later
            } else {
                Approval::Deny("not this one".into())
            };
            Box::pin(async move { approval })
        })
        .input_handler(|questions| {
            let mut responses = InputResponses::new();
            for key in questions.requests.keys() {
                responses.insert(
                    key.clone(),
                    ElicitResult::accept(json!({"ok": true})).into(),
                );
            }
            Box::pin(async move { InputAnswer::Respond(responses) })
        })
        .build()
        .unwrap()
}

/// The original turn, suspended: `read` ended, `delete` waits for approval,
/// `transfer` and `publish` (approved in the first process) wait for the
/// answers to their questions. Its document, and the calls the policy asks
/// about (id, tool, arguments).
fn original() -> (Value, Approved) {
    let p = provider("anthropic");
    let log: Log = Arc::default();
    let first = Source::hub()
        .server("s", server(&log))
        .policy(policy())
        .build()
        .unwrap();
    let calls: Vec<(String, Value)> = [("read", 0), ("delete", 1), ("transfer", 2), ("publish", 3)]
        .iter()
        .map(|(t, n)| (format!("s__{t}"), json!({"n": n})))
        .collect();
    let response = model_response("anthropic", &calls);
    current_thread_runtime().block_on(async {
        let listing = first.tools(p, &ListOptions::new()).await.unwrap();
        let options = ExecOptions::new().suspend(true).approve_call("call_3");
        let run = first
            .execute_tool_calls(p, &response, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        assert_eq!(run.waiting.len(), 3, "{:?}", run.waiting);
        let state = run.suspended.as_ref().unwrap().to_json().unwrap();
        let asked = vec![
            ("call_1".into(), "delete".into(), json!({"n": 1})),
            ("call_3".into(), "publish".into(), json!({"n": 3})),
        ];
        (serde_json::from_slice(&state).unwrap(), asked)
    })
}

/// A stage a call's entry can be given.
#[derive(Debug, Clone)]
enum StageEdit {
    Pending,
    WaitingForApproval,
    WaitingForInput,
    WaitingForTask,
    Sent,
}

impl StageEdit {
    /// The stage as the document writes it; a waiting for input takes the
    /// questions and request state of a call that really waits for input.
    fn value(&self, asked: &Value) -> Value {
        match self {
            StageEdit::Pending => json!("pending"),
            StageEdit::WaitingForApproval => json!("waiting_for_approval"),
            StageEdit::WaitingForInput => asked.clone(),
            StageEdit::WaitingForTask => {
                json!({"waiting_for_task": {"task_id": "task-1", "status": "working"}})
            }
            StageEdit::Sent => json!("sent"),
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Arguments {
        call: usize,
        n: i64,
    },
    Tool {
        call: usize,
        tool: usize,
    },
    Stage {
        call: usize,
        stage: StageEdit,
    },
    Add {
        tool: usize,
        n: i64,
        id: u8,
        stage: StageEdit,
    },
    Remove {
        call: usize,
    },
}

fn stage_edit() -> impl Strategy<Value = StageEdit> {
    prop_oneof![
        Just(StageEdit::Pending),
        Just(StageEdit::WaitingForApproval),
        Just(StageEdit::WaitingForInput),
        Just(StageEdit::WaitingForTask),
        Just(StageEdit::Sent),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..8usize, 0..5i64).prop_map(|(call, n)| Edit::Arguments { call, n }),
        (0..8usize, 0..TOOLS.len()).prop_map(|(call, tool)| Edit::Tool { call, tool }),
        (0..8usize, stage_edit()).prop_map(|(call, stage)| Edit::Stage { call, stage }),
        (0..TOOLS.len(), 0..5i64, 0..8u8, stage_edit())
            .prop_map(|(tool, n, id, stage)| Edit::Add { tool, n, id, stage }),
        (0..8usize).prop_map(|call| Edit::Remove { call }),
    ]
}

/// The document with `edit` applied.
fn apply(document: &mut Value, edit: &Edit, asked: &Value) {
    let calls = document["calls"].as_array_mut().unwrap();
    let len = calls.len();
    let set_tool = |call: &mut Value, tool: &str| {
        call["tool"] = json!(tool);
        call["exposed_name"] = json!(format!("s__{tool}"));
    };
    match edit {
        Edit::Add { tool, n, id, stage } => {
            let mut call = calls.first().cloned().unwrap_or_else(|| {
                json!({"index": 0, "call_id": "call_0", "exposed_name": "s__read",
                    "server_id": "s", "tool": "read", "arguments": {}, "stage": "pending"})
            });
            let index = calls
                .iter()
                .filter_map(|c| c["index"].as_u64())
                .max()
                .map_or(0, |i| i + 1);
            call["index"] = json!(index);
            call["call_id"] = json!(format!("call_{id}"));
            set_tool(&mut call, TOOLS[*tool]);
            call["arguments"] = json!({"n": n});
            call["stage"] = stage.value(asked);
            calls.push(call);
        }
        _ if len == 0 => {}
        Edit::Arguments { call, n } => calls[call % len]["arguments"] = json!({"n": n}),
        Edit::Tool { call, tool } => set_tool(&mut calls[call % len], TOOLS[*tool]),
        Edit::Stage { call, stage } => calls[call % len]["stage"] = stage.value(asked),
        Edit::Remove { call } => {
            calls.remove(call % len);
        }
    }
}

/// Resumes `document` with the approver approving `approved`: what the
/// server received, or `None` when the document was refused.
fn resume(
    document: &Value,
    approved: &Approved,
    later: bool,
    suspend: bool,
) -> Option<Vec<(String, Option<String>, Value)>> {
    let p = provider("anthropic");
    let log: Log = Arc::default();
    let source = resuming(&log, approved.clone(), later);
    let state = TurnState::from_json(&serde_json::to_vec(document).unwrap()).ok()?;
    current_thread_runtime().block_on(async {
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let options = ExecOptions::new().suspend(suspend);
        // Refused (an unknown tool, say) or answered: what was sent is in
        // the log either way.
        let _ = source.resume_turn(p, state, &listing, &options).await;
    });
    let received = log.lock().unwrap().clone();
    Some(received)
}

/// Whether the policy, with the approvals given at resume for the original
/// turn, lets a request for this call go out.
fn allowed(request: &(String, Option<String>, Value), approved: &Approved) -> bool {
    let (tool, id, arguments) = request;
    match tool.as_str() {
        "wipe" => false,
        "delete" | "publish" => approved
            .iter()
            .any(|(i, t, a)| Some(i) == id.as_ref() && t == tool && a == arguments),
        _ => true,
    }
}

/// The stage of the call that waits for its questions' answers in the
/// original document.
fn asked_stage(document: &Value) -> Value {
    document["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool"] == "transfer")
        .map(|c| c["stage"].clone())
        .unwrap()
}

#[test]
fn resuming_the_original_sends_what_is_approved_now_and_no_more() {
    let (document, asked) = original();
    assert!(
        asked_stage(&document)["waiting_for_input"].is_object(),
        "{document:#}"
    );
    // Nothing approved at resume: `publish`, approved in the first process
    // and waiting for its answers, is not sent again; `transfer` is.
    let sent = resume(&document, &Vec::new(), true, true).unwrap();
    let tools: Vec<&str> = sent.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(tools, ["transfer"], "{sent:?}");
    // Both approved now: each goes out once.
    let sent = resume(&document, &asked, false, false).unwrap();
    let mut tools: Vec<&str> = sent.iter().map(|(t, _, _)| t.as_str()).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["delete", "publish", "transfer"], "{sent:?}");
    // `publish`'s arguments changed: it is not sent, though every question
    // is answered.
    let mut edited = document.clone();
    let stage = asked_stage(&document);
    apply(&mut edited, &Edit::Arguments { call: 3, n: 4 }, &stage);
    let sent = resume(&edited, &asked, false, false).unwrap();
    let mut tools: Vec<&str> = sent.iter().map(|(t, _, _)| t.as_str()).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["delete", "transfer"], "{sent:?}");
    // A `wipe` added as waiting for its answers: the policy never offers
    // `wipe`, so the document is refused and nothing at all is sent.
    apply(
        &mut edited,
        &Edit::Add {
            tool: 2,
            n: 9,
            id: 7,
            stage: StageEdit::WaitingForInput,
        },
        &stage,
    );
    let sent = resume(&edited, &asked, false, false).unwrap();
    assert!(sent.is_empty(), "{sent:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn no_edit_of_a_state_document_widens_the_policy(
        edits in prop::collection::vec(edit(), 1..5),
        approve in prop::collection::vec(any::<bool>(), 2),
        later in any::<bool>(),
        suspend in any::<bool>(),
    ) {
        let (original, asked) = original();
        let approved: Approved = asked
            .into_iter()
            .zip(&approve)
            .filter(|(_, a)| **a)
            .map(|(c, _)| c)
            .collect();
        let stage = asked_stage(&original);
        let mut document = original.clone();
        for edit in &edits {
            apply(&mut document, edit, &stage);
        }
        if let Some(sent) = resume(&document, &approved, later, suspend) {
            for request in &sent {
                prop_assert!(
                    allowed(request, &approved),
                    "sent {request:?}, approved {approved:?}, document {document:#}"
                );
            }
        }
    }
}
