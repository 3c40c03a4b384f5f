//! The callers rule holds whatever the model and its programs send: over
//! generated rules, tools and responses (calls from the model and from
//! programs, to tools open to code, to code only, or to neither; read whole
//! and streamed), a call reaches its server only when the listing opened
//! its tool to its caller, and every call the rule refuses is answered,
//! never sent.

mod common;

use std::sync::{Arc, Mutex};

use common::{current_thread_runtime, provider};
use mcp_adapters::callers::{Callers, CallersRule};
use mcp_adapters::*;
use proptest::prelude::*;
use serde_json::{Value, json};

const TOOLS: usize = 6;

/// Who may call tool `i`: 0 the model only, 1 both, 2 code only.
fn rule_of(access: &[u8]) -> CallersRule {
    let mut rule = CallersRule::new();
    for (i, a) in access.iter().enumerate() {
        rule = match a % 3 {
            1 => rule.open(&format!("srv/t{i}")).unwrap(),
            2 => rule.only(&format!("t{i}")).unwrap(),
            _ => rule,
        };
    }
    rule
}

/// A server that records each call it receives.
fn server(sent: Arc<Mutex<Vec<String>>>) -> InProcessServer {
    let mut server = InProcessServer::new();
    for i in 0..TOOLS {
        let sent = sent.clone();
        let name = format!("t{i}");
        server = server.tool(
            Tool::new(&name, "A tool", json!({"type": "object"})),
            move |_args, _ctx| {
                sent.lock().unwrap().push(name.clone());
                async { Ok(CallToolResult::text("done")) }
            },
        );
    }
    server
}

/// A call: tool index, and the program that made it (none: the model).
type GenCall = (usize, Option<u8>);

/// The response in `id`'s shape.
fn response(id: &str, calls: &[GenCall]) -> Value {
    match id {
        "openai-responses" => json!({"output": calls.iter().enumerate().map(|(n, (t, p))| {
            let mut item = json!({"type": "function_call", "call_id": format!("c{n}"), "name": format!("t{t}"), "arguments": "{}"});
            if let Some(p) = p {
                item["caller"] = json!({"type": "program", "caller_id": format!("prog{p}")});
            } else if n % 2 == 0 {
                item["caller"] = json!({"type": "direct"});
            }
            item
        }).collect::<Vec<_>>()}),
        _ => json!({"role": "assistant", "content": calls.iter().enumerate().map(|(n, (t, p))| {
            let mut block = json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": format!("t{t}"), "input": {}});
            if let Some(p) = p {
                block["caller"] = json!({"type": "code_execution_20260120", "tool_id": format!("srvtoolu_{p}")});
            }
            block
        }).collect::<Vec<_>>()}),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_call_reaches_its_server_only_when_its_tool_is_open_to_its_caller(
        access in proptest::collection::vec(0u8..3, TOOLS),
        calls in proptest::collection::vec((0..TOOLS, proptest::option::of(0u8..3)), 1..10),
        anthropic in any::<bool>(),
    ) {
        let id = if anthropic { "anthropic" } else { "openai-responses" };
        let p = provider(id);
        let rule = rule_of(&access);
        let body = response(id, &calls);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let source = Source::client("srv", server(sent.clone()))
            .policy(Policy::allow_all())
            .build()
            .unwrap();
        let run = current_thread_runtime().block_on(async {
            let listing = source
                .tools(p, &ListOptions::new().callers(rule.clone()))
                .await
                .unwrap();
            source
                .execute_tool_calls(p, &body, &listing, &ExecOptions::new())
                .await
                .unwrap()
        });
        // What the rule admits, call by call.
        let admitted: Vec<String> = calls
            .iter()
            .filter(|(t, program)| {
                let callers = match access[*t] % 3 {
                    1 => Callers::ModelAndCode,
                    2 => Callers::Code,
                    _ => Callers::Model,
                };
                match program {
                    Some(_) => callers.code(),
                    None => callers.model(),
                }
            })
            .map(|(t, _)| format!("t{t}"))
            .collect();
        let mut got = sent.lock().unwrap().clone();
        got.sort();
        let mut want = admitted.clone();
        want.sort();
        prop_assert_eq!(got, want.clone(), "sent vs admitted");
        // Every call is answered, in the model's order; the refused ones say why.
        prop_assert_eq!(run.turn.results.len(), calls.len());
        for (record, (t, program)) in run.calls.iter().zip(&calls) {
            prop_assert_eq!(record.caller.program_id().is_some(), program.is_some());
            if !record.ran {
                let error = record.error.as_ref().unwrap();
                prop_assert_eq!(error.kind(), ErrorKind::Denied, "t{}: {}", t, error);
            }
        }

        // The same response streamed: the same calls sent.
        sent.lock().unwrap().clear();
        let bytes = stream_of(id, &body);
        let streamed = current_thread_runtime().block_on(async {
            let listing = source
                .tools(p, &ListOptions::new().callers(rule.clone()))
                .await
                .unwrap();
            let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes)]);
            let options = ExecOptions::new().framing(mcp_adapters::stream::Framing::Json);
            source.execute_stream(p, chunks, &listing, &options).await.unwrap()
        });
        prop_assert!(streamed.error.is_none(), "{:?}", streamed.error);
        let mut got = sent.lock().unwrap().clone();
        got.sort();
        prop_assert_eq!(got, want, "streamed: sent vs admitted");
        prop_assert_eq!(streamed.execution.turn.results.len(), calls.len());
    }
}

/// The response as a stream of the provider's events (JSON values).
fn stream_of(id: &str, body: &Value) -> Vec<u8> {
    let events: Vec<Value> = match id {
        "openai-responses" => {
            let items = body["output"].as_array().unwrap();
            let mut events = Vec::new();
            for (n, item) in items.iter().enumerate() {
                events.push(
                    json!({"type": "response.output_item.added", "output_index": n, "item": item}),
                );
                events.push(
                    json!({"type": "response.output_item.done", "output_index": n, "item": item}),
                );
            }
            events.push(json!({"type": "response.completed", "response": {"output": items}}));
            events
        }
        _ => vec![
            json!({"type": "message_start", "message": body}),
            json!({"type": "message_stop"}),
        ],
    };
    events
        .iter()
        .map(|e| format!("{e}\n"))
        .collect::<String>()
        .into_bytes()
}
