//! Turns that outlive a process, against the pinned reference server
//! `@modelcontextprotocol/server-everything` (MCP 2025-11-25): a call its
//! server runs as a task is handed back while the task works, the turn is
//! suspended with the task's id, and resuming it follows the task to its
//! end instead of sending the call again; a server that restarted and lost
//! the task answers the call as interrupted.
#![cfg(feature = "rmcp")]

mod common;

use std::collections::BTreeMap;

use common::servers;
use mcp_adapters::client::*;
use mcp_adapters::exec::*;
use mcp_adapters::*;
use serde_json::json;

async fn everything() -> Source {
    let (command, args) = servers::everything().unwrap_or_else(|e| panic!("{e}"));
    let options = ClientOptions::new().lifecycle(Lifecycle::Legacy);
    let client = McpClient::spawn("everything", &command, &args, &BTreeMap::new(), &options)
        .await
        .unwrap();
    Source::client("everything", client).build().unwrap()
}

#[test]
fn a_working_task_is_handed_back_and_followed_when_the_turn_resumes() {
    common::runtime().block_on(async {
        let p = common::provider("anthropic");
        let source = everything().await;
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_research", "name": "simulate-research-query", "input": {"topic": "rust"}},
            {"type": "tool_use", "id": "toolu_echo", "name": "echo", "input": {"message": "hi"}}
        ]});
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended, "{:?}", run.calls);
        assert_eq!(run.waiting.len(), 1);
        let Wait::Task { task_id, status, .. } = &run.waiting[0].what else {
            panic!("{:?}", run.waiting[0].what);
        };
        assert!(!task_id.is_empty());
        assert_eq!(status, "working");
        assert_eq!(run.calls.len(), 1, "the echo ended");
        let state = TurnState::from_json(&run.suspended.unwrap().to_json().unwrap()).unwrap();

        // A server process that never saw the task: the call is answered as
        // interrupted, and nothing is sent again.
        let restarted = everything().await;
        let relisted = restarted.tools(p, &ListOptions::new()).await.unwrap();
        let lost = restarted
            .resume_turn(p, state.clone(), &relisted, &ExecOptions::new())
            .await
            .unwrap();
        let error = lost.calls[0].error.as_ref().expect("the task is lost");
        assert_eq!(error.kind(), ErrorKind::Interrupted, "{error}");
        assert!(error.message().contains("no longer has task"), "{error}");

        // The server that runs it: the task is followed to its end.
        let resumed = source
            .resume_turn(p, state, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(resumed.status, Status::Ok);
        let report = resumed.results[0]["content"][0]["text"].as_str().unwrap();
        assert!(report.contains("Research Report: rust"), "{report}");
        assert_eq!(resumed.results[1]["content"][0]["text"], "Echo: hi");
        assert!(resumed.calls.iter().all(|c| c.ran), "{:?}", resumed.calls);
    });
}
