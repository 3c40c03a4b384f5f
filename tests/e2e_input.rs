//! End to end against a real MCP 2026-07-28 server on the official Python
//! SDK (`tests/e2e/input_server.py`, `mcp` pinned in
//! `tests/e2e/requirements.txt`): tools that ask for input over one and two
//! rounds, answered through an input handler, for the four core providers;
//! the same calls without a handler; and a tool list that changes while the
//! session runs.
#![cfg(feature = "rmcp")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::conformance::{Item, check};
use common::*;
use mcp_adapters::client::Lifecycle;
use mcp_adapters::exec::{InputAnswer, InputQuestions};
use mcp_adapters::mcp::{ElicitResult, Elicitation, InputRequest, InputResponses};
use mcp_adapters::{
    ClientOptions, ErrorKind, ExecOptions, ListOptions, Listing, McpClient, Server, ServerConfig,
    Source, Status,
};
use serde_json::{Value, json};

fn config() -> ServerConfig {
    let (command, args) = common::servers::input().unwrap_or_else(|e| panic!("{e}"));
    ServerConfig::stdio(command, args)
}

async fn connect(lifecycle: Lifecycle) -> Arc<McpClient> {
    let options = ClientOptions::new().lifecycle(lifecycle);
    Arc::new(
        McpClient::connect("input", &config(), &options)
            .await
            .unwrap_or_else(|e| panic!("{e:#}")),
    )
}

/// Says yes to every confirmation and gives the code 1234; records what it was asked.
fn answer_yes(
    asked: Arc<Mutex<Vec<Value>>>,
) -> impl Fn(InputQuestions) -> mcp_adapters::exec::BoxFuture<'static, InputAnswer> + Send + Sync {
    move |questions| {
        let mut responses = InputResponses::new();
        for (key, request) in &questions.requests {
            let InputRequest::Elicitation(Elicitation::Form(form)) = request else {
                panic!("not a form: {request:?}");
            };
            asked.lock().unwrap().push(json!({
                "tool": questions.tool(), "round": questions.round, "key": key,
                "message": form.message, "fields": form.fields(),
            }));
            let content = match key.as_str() {
                "code" => json!({"code": "1234"}),
                _ => json!({"confirm": true}),
            };
            responses.insert(key.clone(), ElicitResult::accept(content).into());
        }
        Box::pin(async move { InputAnswer::Respond(responses) })
    }
}

fn exposed(listing: &Listing, tool: &str) -> String {
    listing
        .toolset()
        .exposed_name("input", tool)
        .unwrap_or_else(|| panic!("{tool} not offered"))
        .to_owned()
}

#[test]
fn tools_that_ask_for_input_for_the_core_providers() {
    runtime().block_on(async {
        let client = connect(Lifecycle::Auto).await;
        let info = client.server_info().unwrap();
        assert_eq!(info["protocolVersion"], "2026-07-28", "{info}");
        let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
        let answering = Source::client("input", client.clone())
            .input_handler(answer_yes(asked.clone()))
            .build()
            .unwrap();
        let unanswered = Source::client("input", client.clone()).build().unwrap();
        let mut items = Vec::new();
        for &p in CORE_PROVIDERS {
            asked.lock().unwrap().clear();
            let provider = provider(p);
            let listing = answering
                .tools(provider, &ListOptions::new())
                .await
                .unwrap();
            let calls = vec![
                (exposed(&listing, "delete_note"), json!({"name": "todo"})),
                (
                    exposed(&listing, "transfer"),
                    json!({"amount": 5, "to": "bob"}),
                ),
            ];
            let response = model_response(p, &calls);
            let run = answering
                .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                .await
                .unwrap();
            assert_eq!(run.status, Status::Ok);
            assert!(run.calls.iter().all(|c| c.ran), "{p}: {:?}", run.calls);
            let without = unanswered
                .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
                .await
                .unwrap();
            for call in &without.calls {
                assert_eq!(
                    call.error.as_ref().map(|e| e.kind()),
                    Some(ErrorKind::InputRequired),
                    "{p}: {call:?}"
                );
            }
            let mut asked = asked.lock().unwrap().clone();
            asked.sort_by_key(|a| (a["tool"].to_string(), a["round"].as_u64()));
            for (i, result) in run
                .turn
                .results
                .iter()
                .chain(&without.turn.results)
                .enumerate()
            {
                items.push(Item::new(
                    format!("{p} input e2e answer {i}"),
                    format!("{p}/result"),
                    result.clone(),
                ));
            }
            snapshot(
                Stage::Exec,
                Some(p),
                "input_rounds",
                json!({
                    "answered": {"results": run.turn.results, "calls": run.calls, "asked": asked},
                    "without_a_handler": {"results": without.turn.results, "calls": without.calls,
                        "ran_servers": without.ran_servers},
                }),
            );
        }
        check(&items).unwrap_or_else(|e| panic!("{e}"));
    });
}

/// Waits until the client has seen a tool-list change after `since`.
async fn changed(client: &McpClient, since: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.tools_version() == since {
        assert!(
            Instant::now() < deadline,
            "no notifications/tools/list_changed arrived"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn toggled_tools(lifecycle: Lifecycle) {
    let client = connect(lifecycle).await;
    let source = Source::client("input", client.clone()).build().unwrap();
    let p = provider("anthropic");
    let before = source.tools(p, &ListOptions::new()).await.unwrap();
    assert!(!tool_names(&before).contains(&"extra_tool".to_owned()));
    let toggle = |on: bool| {
        model_response(
            "anthropic",
            &[("toggle_extra".into(), json!({"enable": on}))],
        )
    };

    // The server adds a tool: the next listing offers it, without a refresh.
    let version = client.tools_version();
    let run = source
        .execute_tool_calls(p, &toggle(true), &before, &ExecOptions::new())
        .await
        .unwrap();
    assert!(run.calls[0].ran, "{:?}", run.calls);
    changed(&client, version).await;
    let with_extra = source.tools(p, &ListOptions::new()).await.unwrap();
    assert!(
        tool_names(&with_extra).contains(&"extra_tool".to_owned()),
        "{:?}",
        tool_names(&with_extra)
    );
    let call = model_response("anthropic", &[("extra_tool".into(), json!({"text": "hi"}))]);
    let run = source
        .execute_tool_calls(p, &call, &with_extra, &ExecOptions::new())
        .await
        .unwrap();
    assert_eq!(run.turn.results[0]["content"][0]["text"], "HI");

    // The server removes it: a call made from the listing that offered it is
    // answered with an error, not sent.
    let version = client.tools_version();
    source
        .execute_tool_calls(p, &toggle(false), &with_extra, &ExecOptions::new())
        .await
        .unwrap();
    changed(&client, version).await;
    let run = source
        .execute_tool_calls(p, &call, &with_extra, &ExecOptions::new())
        .await
        .unwrap();
    let error = run.calls[0].error.as_ref().expect("the tool is gone");
    assert_eq!(error.kind(), ErrorKind::UnknownTool, "{error}");
    assert!(error.message().contains("no longer offered"), "{error}");
    let after = source.tools(p, &ListOptions::new()).await.unwrap();
    assert_eq!(tool_names(&after), tool_names(&before));
}

#[test]
fn a_tool_list_that_changes_mid_session() {
    runtime().block_on(async {
        // 2026-07-28: the change arrives on a subscriptions/listen stream.
        toggled_tools(Lifecycle::Auto).await;
        // An earlier revision: the server sends it unsolicited.
        toggled_tools(Lifecycle::Legacy).await;
    });
}

#[test]
fn the_legacy_lifecycle_gets_no_input_rounds() {
    runtime().block_on(async {
        let client = connect(Lifecycle::Legacy).await;
        assert_eq!(
            client.server_info().unwrap()["protocolVersion"],
            "2025-11-25"
        );
        let source = Source::client("input", client)
            .input_handler(answer_yes(Arc::default()))
            .build()
            .unwrap();
        let p = provider("openai-chat");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let response = model_response(
            "openai-chat",
            &[("delete_note".into(), json!({"name": "todo"}))],
        );
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        // The SDK refuses to send an input_required result on a legacy session.
        let error = run.calls[0]
            .error
            .as_ref()
            .expect("a legacy session cannot ask");
        assert_eq!(error.kind(), ErrorKind::Server, "{error}");
    });
}

/// The official SDK's resolvers ask for a completion and the roots in the
/// session's own way: one `input_required` round on 2026-07-28, requests
/// sent during the call on 2025-11-25. The same handlers answer both.
#[test]
fn sampling_and_roots_reach_the_same_handlers_in_both_generations() {
    use mcp_adapters::exec::{Handlers, Roots, Sampling, SamplingAnswer};
    use mcp_adapters::mcp::{CreateMessageResult, Root, StopReason};
    runtime().block_on(async {
        for lifecycle in [Lifecycle::Modern, Lifecycle::Legacy] {
            let seen: Arc<Mutex<Vec<mcp_adapters::exec::SamplingRequest>>> = Arc::default();
            let record = seen.clone();
            let handlers = Handlers::new()
                .sampling(Sampling::new(move |request| {
                    record.lock().unwrap().push(request);
                    Box::pin(async {
                        SamplingAnswer::Respond(
                            CreateMessageResult::text("test-model", "Three notes on tides")
                                .with_stop_reason(StopReason::EndTurn),
                        )
                    })
                }))
                .roots(Roots::new([Root::new("file:///home/me/notes").unwrap()]));
            let options = ClientOptions::new().lifecycle(lifecycle).handlers(handlers);
            let client = McpClient::connect("input", &config(), &options)
                .await
                .unwrap_or_else(|e| panic!("{e:#}"));
            let source = Source::client("input", client).build().unwrap();
            let p = provider("anthropic");
            let listing = source.tools(p, &ListOptions::new()).await.unwrap();
            let response = model_response(
                "anthropic",
                &[(
                    exposed(&listing, "summarize_notes"),
                    json!({"topic": "tides"}),
                )],
            );
            let run = source
                .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
                .await
                .unwrap();
            assert_eq!(
                run.turn.results[0]["content"][0]["text"],
                "Three notes on tides (by test-model, endTurn); roots: file:///home/me/notes",
                "{lifecycle:?}: {}",
                run.turn.results[0]
            );
            let seen = seen.lock().unwrap();
            assert_eq!(seen.len(), 1, "{lifecycle:?}");
            let request = &seen[0];
            assert_eq!(
                request.params.messages[0].text(),
                "Summarize the notes about tides"
            );
            assert_eq!(
                request.params.system_prompt.as_deref(),
                Some("You summarize notes.")
            );
            assert_eq!(
                request.call.call().unwrap().call.tool,
                "summarize_notes",
                "{lifecycle:?}"
            );
        }
    });
}
