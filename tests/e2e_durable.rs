//! Turns that outlive a process, against the pinned reference server
//! `@modelcontextprotocol/server-everything` (MCP 2025-11-25), whose
//! `simulate-research-query` runs only as a task. Over streamable HTTP the
//! server outlives the process that called it: a working task is handed back,
//! the turn is suspended with the task's id, and resuming it follows the task
//! to its end instead of sending the call again; a connection the server does
//! not know the task on (it keeps tasks per session) answers the call as
//! interrupted.
//! Over stdio the server ends with the process, so its task is followed to
//! its end before the turn is answered.
#![cfg(feature = "rmcp")]

mod common;

use std::collections::BTreeMap;

use common::servers;
use mcp_adapters::client::*;
use mcp_adapters::exec::*;
use mcp_adapters::*;
use serde_json::{Value, json};

fn response() -> Value {
    json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_research", "name": "simulate-research-query", "input": {"topic": "rust"}},
        {"type": "tool_use", "id": "toolu_echo", "name": "echo", "input": {"message": "hi"}}
    ]})
}

fn text(answer: &Value) -> &str {
    answer["content"][0]["text"].as_str().unwrap_or("")
}

#[test]
fn over_stdio_a_task_is_followed_to_its_end_even_in_a_turn_that_may_be_suspended() {
    let (command, args) = servers::everything().unwrap_or_else(|e| panic!("{e}"));
    common::runtime().block_on(async {
        let p = common::provider("anthropic");
        let options = ClientOptions::new().lifecycle(Lifecycle::Legacy);
        let client = McpClient::spawn("everything", &command, &args, &BTreeMap::new(), &options)
            .await
            .unwrap();
        let source = Source::client("everything", client).build().unwrap();
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let run = source
            .execute_tool_calls(p, &response(), &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok, "{:?}", run.waiting);
        assert!(
            text(&run.turn.results[0]).contains("Research Report: rust"),
            "{}",
            run.turn.results[0]
        );
        assert_eq!(text(&run.turn.results[1]), "Echo: hi");
    });
}

#[cfg(feature = "rmcp-http")]
#[test]
fn over_http_a_working_task_is_handed_back_and_followed_when_the_turn_resumes() {
    let server = servers::everything_http().unwrap_or_else(|e| panic!("{e}"));
    let url = server.url.clone();
    let runtime = common::runtime();
    let p = common::provider("anthropic");
    let connect = |url: String| async move {
        let options = ClientOptions::new().lifecycle(Lifecycle::Legacy);
        let client = McpClient::connect_http("everything", &url, &BTreeMap::new(), &options)
            .await
            .unwrap();
        let source = Source::client("everything", client).build().unwrap();
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        (source, listing)
    };
    runtime.block_on(async {
        let (source, listing) = connect(url.clone()).await;
        let run = source
            .execute_tool_calls(p, &response(), &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended, "{:?}", run.calls);
        assert_eq!(run.waiting.len(), 1);
        let Wait::Task {
            task_id, status, ..
        } = &run.waiting[0].what
        else {
            panic!("{:?}", run.waiting[0].what);
        };
        assert!(!task_id.is_empty());
        assert_eq!(status, "working");
        assert_eq!(
            run.calls.iter().map(|c| c.outcome).collect::<Vec<_>>(),
            [CallOutcome::Waiting, CallOutcome::Ran],
            "the echo ended: {:?}",
            run.calls
        );
        let state = TurnState::from_json(&run.suspended.unwrap().to_json().unwrap()).unwrap();

        // Another connection: this server keeps its tasks per session, so it
        // does not know the task there, and the call is answered as
        // interrupted, not sent again.
        let (elsewhere, relisted) = connect(url.clone()).await;
        let lost = elsewhere
            .resume_turn(p, state.clone(), &relisted, &ExecOptions::new())
            .await
            .unwrap();
        let error = lost.calls[0]
            .error
            .as_ref()
            .expect("the task is not known there");
        assert_eq!(error.kind(), ErrorKind::Interrupted, "{error}");
        assert!(error.message().contains("no longer has task"), "{error}");
        assert_eq!(text(&lost.turn.results[1]), "Echo: hi");

        // The connection that started it takes the task up, to its end.
        let resumed = source
            .resume_turn(p, state, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(resumed.status, Status::Ok);
        assert!(
            text(&resumed.turn.results[0]).contains("Research Report: rust"),
            "{}",
            resumed.turn.results[0]
        );
        assert_eq!(text(&resumed.turn.results[1]), "Echo: hi");
        assert!(resumed.calls.iter().all(|c| c.ran), "{:?}", resumed.calls);
    });
    drop(server);
}
