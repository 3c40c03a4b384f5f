//! `McpClient` against a scripted MCP server of revision 2025-11-25 over an
//! in-memory stdio-like pipe: the capabilities declared at `initialize`, and
//! the requests the server sends during (and outside) calls, each attributed
//! to its call, to several (ambiguous), or to none, and answered through the
//! source's handlers.
#![cfg(feature = "rmcp")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::scripted::{self, Server};
use mcp_adapters::client::Lifecycle;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{CreateMessageResult, ElicitResult, InputResponses, Root};
use mcp_adapters::*;
use serde_json::{Value, json};

fn legacy(handlers: Handlers) -> ClientOptions {
    ClientOptions::new()
        .lifecycle(Lifecycle::Legacy)
        .handlers(handlers)
}

fn form(message: &str) -> Value {
    json!({"mode": "form", "message": message,
           "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}})
}

type Asked = Arc<Mutex<Vec<InputQuestions>>>;

/// An input handler that records the questions and accepts each with `{"ok": true}`.
fn accepting(asked: &Asked) -> Handlers {
    let asked = asked.clone();
    Handlers::new().input(move |questions| {
        asked.lock().unwrap().push(questions.clone());
        let answers: InputResponses = questions
            .requests
            .keys()
            .map(|k| (k.clone(), ElicitResult::accept(json!({"ok": true})).into()))
            .collect();
        Box::pin(async move { InputAnswer::Respond(answers) })
    })
}

fn response(calls: &[&str]) -> Value {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, name)| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": {}}))
        .collect();
    json!({"content": blocks})
}

async fn run(source: &Source, calls: &[&str]) -> Execution {
    let provider = common::provider("anthropic");
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    source
        .execute_tool_calls(provider, &response(calls), &listing, &ExecOptions::new())
        .await
        .unwrap()
}

fn texts(run: &Execution) -> Vec<String> {
    run.turn
        .results
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn initialize_declares_exactly_what_the_handlers_answer() {
    common::current_thread_runtime().block_on(async {
        let sampling = Sampling::new(|_| Box::pin(async { SamplingAnswer::Decline("no".into()) }))
            .with_tools();
        for (handlers, declared) in [
            (Handlers::new(), json!({})),
            (
                accepting(&Asked::default())
                    .sampling(sampling)
                    .roots(Roots::new([])),
                json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}},
                       "roots": {"listChanged": true}}),
            ),
        ] {
            let script = scripted::calls(|_, _| Box::pin(async { String::new() }));
            let (transport, server) = scripted::start(Server::legacy(&[], script));
            let client = McpClient::from_transport("s", transport, &legacy(handlers))
                .await
                .unwrap();
            let init = &server.seen("initialize")[0];
            assert_eq!(init["params"]["capabilities"], declared);
            assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
            client.close().await;
        }
    });
}

#[test]
fn a_request_during_the_one_call_in_flight_belongs_to_it() {
    common::current_thread_runtime().block_on(async {
        let asked = Asked::default();
        let script = scripted::calls(|_, peer| {
            Box::pin(async move {
                let answer = peer.ask("elicitation/create", form("Delete it?")).await;
                format!("answered {}", answer["result"])
            })
        });
        let (transport, _server) = scripted::start(Server::legacy(&["delete"], script));
        let client = McpClient::from_transport("notes", transport, &legacy(accepting(&asked)))
            .await
            .unwrap();
        // The source takes the client's handlers.
        let source = Source::client("notes", client).build().unwrap();
        let run = run(&source, &["delete"]).await;
        assert_eq!(
            texts(&run),
            [r#"answered {"action":"accept","content":{"ok":true}}"#]
        );
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].asking, Asking::Request);
        assert_eq!(asked[0].round, 1);
        let call = asked[0].call.call().expect("attributed to the call");
        assert_eq!(
            (call.call.tool.as_str(), call.call.call_id.as_deref()),
            ("delete", Some("toolu_0"))
        );
    });
}

#[test]
fn a_request_while_several_calls_run_is_ambiguous_never_guessed() {
    common::current_thread_runtime().block_on(async {
        let asked = Asked::default();
        let script = scripted::calls(|name, peer| {
            Box::pin(async move {
                peer.calls_arrived(2).await;
                if name == "first" {
                    let answer = peer.ask("elicitation/create", form("Which?")).await;
                    return format!("answered {}", answer["result"]["action"]);
                }
                "done".to_owned()
            })
        });
        let (transport, _server) = scripted::start(Server::legacy(&["first", "second"], script));
        let client = McpClient::from_transport("notes", transport, &legacy(accepting(&asked)))
            .await
            .unwrap();
        let source = Source::client("notes", client).build().unwrap();
        let run = run(&source, &["first", "second"]).await;
        assert_eq!(texts(&run), [r#"answered "accept""#, "done"]);
        let asked = asked.lock().unwrap();
        let Attribution::Ambiguous(calls) = &asked[0].call else {
            panic!("not ambiguous: {:?}", asked[0].call);
        };
        let mut tools: Vec<&str> = calls.iter().map(|c| c.call.tool.as_str()).collect();
        tools.sort_unstable();
        assert_eq!(tools, ["first", "second"]);
    });
}

#[test]
fn requests_outside_any_call_reach_the_handlers_with_no_call() {
    common::current_thread_runtime().block_on(async {
        let asked = Asked::default();
        let outside: Arc<Mutex<Vec<Value>>> = Arc::default();
        let got = outside.clone();
        let at_start: scripted::OnStart = Arc::new(move |peer| {
            let got = got.clone();
            Box::pin(async move {
                let roots = peer.ask("roots/list", json!({})).await;
                got.lock().unwrap().push(roots);
                let elicited = peer.ask("elicitation/create", form("Hello?")).await;
                got.lock().unwrap().push(elicited);
                let sampled = peer
                    .ask(
                        "sampling/createMessage",
                        json!({"messages": [], "maxTokens": 5}),
                    )
                    .await;
                got.lock().unwrap().push(sampled);
            })
        });
        let script = scripted::calls(|_, _| Box::pin(async { String::new() }));
        let (transport, server) = scripted::start(Server {
            at_start: Some(at_start),
            ..Server::legacy(&[], script)
        });
        let roots = Roots::new([Root::new("file:///work").unwrap()]);
        let handlers = accepting(&asked).roots(roots.clone());
        let client = McpClient::from_transport("notes", transport, &legacy(handlers))
            .await
            .unwrap();
        let _source = Source::client("notes", client).build().unwrap();
        for _ in 0..200 {
            if outside.lock().unwrap().len() == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let outside = outside.lock().unwrap().clone();
        assert_eq!(
            outside[0]["result"],
            json!({"roots": [{"uri": "file:///work"}]})
        );
        assert_eq!(outside[1]["result"]["action"], "accept");
        // No sampling handler: the method is not one this client answers.
        assert_eq!(outside[2]["error"]["code"], -32601, "{}", outside[2]);
        assert_eq!(asked.lock().unwrap()[0].call, Attribution::NoCall);
        // A change of the roots is announced.
        roots.set([Root::new("file:///elsewhere").unwrap()]);
        for _ in 0..200 {
            if !server.seen("notifications/roots/list_changed").is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no notifications/roots/list_changed");
    });
}

#[test]
fn sampling_refused_by_the_rules_is_an_mcp_rejection() {
    common::current_thread_runtime().block_on(async {
        let script = scripted::calls(|_, peer| {
            Box::pin(async move {
                let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                                    "maxTokens": 20});
                let first = peer.ask("sampling/createMessage", params.clone()).await;
                let second = peer.ask("sampling/createMessage", params).await;
                format!("{} / {}", first["result"]["content"]["text"], second["error"])
            })
        });
        let (transport, _server) = scripted::start(Server::legacy(&["summarize"], script));
        let sampling = Sampling::new(|request| {
            Box::pin(async move {
                SamplingAnswer::Respond(CreateMessageResult::text(
                    "m",
                    format!("{} tokens", request.params.max_tokens),
                ))
            })
        })
        .max_tokens(10)
        .max_requests_per_call(1);
        let client =
            McpClient::from_transport("notes", transport, &legacy(Handlers::new().sampling(sampling)))
                .await
                .unwrap();
        let source = Source::client("notes", client).build().unwrap();
        let run = run(&source, &["summarize"]).await;
        let text = &texts(&run)[0];
        assert!(text.starts_with(r#""10 tokens" / {"code":-1,"#), "{text}");
        assert!(text.contains("more than 1 completions during this call"), "{text}");
    });
}
