//! Questions a server asks during calls are answered only by a rule that
//! names the call that asked: over a transport that cannot say which call a
//! request belongs to (stdio, MCP up to 2025-11-25), the calls whose tools
//! the rules name run alone on their server
//! ([`SourceBuilder::run_alone`](mcp_adapters::exec::SourceBuilder::run_alone)),
//! and a question from several calls in flight reaches the handler as
//! [`Attribution::Ambiguous`], which no rule for a named tool answers.
//!
//! The server here is a pipe as stdio is: it attributes a request to the one
//! call in flight, or to all of them (ambiguous), as the MCP client does.

mod common;

use std::sync::{Arc, Mutex};

use common::current_thread_runtime;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{
    CallToolResponse, CallToolResult, ElicitAction, ElicitResult, Elicitation, InputRequest,
    InputResponses, Tool,
};
use mcp_adapters::*;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const TOOLS: usize = 5;

/// A question asked: the tool that asked, and the rule that answered it.
type Asked = (String, Option<String>);

/// A server over one pipe: every call in flight is on it, and a request
/// says nothing of the call it belongs to.
#[derive(Default)]
struct Pipe {
    in_flight: Mutex<Vec<(u64, Answerer)>>,
    next: Mutex<u64>,
    /// Each question asked: the tool that asked, and the rule that answered.
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl Server for Pipe {
    fn list_tools(&self, _cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        let tools = (0..TOOLS)
            .map(|i| {
                Tool::new(
                    format!("t{i}"),
                    "A tool",
                    json!({"type": "object", "properties": {}}),
                )
            })
            .collect();
        Box::pin(async move { Ok(ToolsPage::new(tools)) })
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        let name = name.to_owned();
        Box::pin(async move {
            let me = {
                let mut next = self.next.lock().unwrap();
                *next += 1;
                *next
            };
            let answerer = context.answerer.clone().expect("every call has one");
            self.in_flight.lock().unwrap().push((me, answerer));
            let count = |key: &str| arguments.get(key).and_then(Value::as_u64).unwrap_or(0);
            for _ in 0..count("before") {
                tokio::task::yield_now().await;
            }
            if arguments.get("asks") == Some(&Value::Bool(true)) {
                // As the MCP client over stdio: the one call in flight, or any.
                let asker = {
                    let in_flight = self.in_flight.lock().unwrap();
                    let calls: Vec<Answerer> = in_flight.iter().map(|(_, a)| a.clone()).collect();
                    calls[0].ambiguous(&calls)
                };
                let answered = asker.elicit("1", Elicitation::Form(form(&name))).await;
                let rule = match answered {
                    Ok(ElicitResult {
                        action: ElicitAction::Accept,
                        content: Some(content),
                        ..
                    }) => content["rule"].as_str().map(str::to_owned),
                    _ => None,
                };
                self.asked.lock().unwrap().push((name.clone(), rule));
            }
            for _ in 0..count("after") {
                tokio::task::yield_now().await;
            }
            self.in_flight.lock().unwrap().retain(|(key, _)| *key != me);
            Ok(CallToolResult::text(format!("{name} ran")).into())
        })
    }
}

fn form(message: &str) -> mcp_adapters::mcp::FormElicitation {
    let InputRequest::Elicitation(Elicitation::Form(form)) = InputRequest::form(
        message,
        json!({"type": "object", "properties": {"rule": {"type": "string"}}}),
    ) else {
        unreachable!()
    };
    form
}

/// One rule per named tool, as a user writes it: a bare name or `pipe/tN`.
fn rule_glob(tool: usize, bare: bool) -> String {
    match bare {
        true => format!("t{tool}"),
        false => format!("pipe/t{tool}"),
    }
}

#[derive(Debug, Clone)]
struct Call {
    tool: usize,
    asks: bool,
    before: u8,
    after: u8,
}

fn calls() -> impl Strategy<Value = Vec<Call>> {
    prop::collection::vec(
        (0..TOOLS, any::<bool>(), 0u8..6, 0u8..6).prop_map(|(tool, asks, before, after)| Call {
            tool,
            asks,
            before,
            after,
        }),
        1..12,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_rule_answers_a_question_from_a_call_it_does_not_name(
        calls in calls(),
        named in prop::collection::btree_set(0..TOOLS, 0..=TOOLS),
        bare in any::<bool>(),
        concurrency in 1usize..16,
    ) {
        let pipe = Pipe::default();
        let asked = pipe.asked.clone();
        let rules: Vec<(usize, String)> = named.iter().map(|&t| (t, rule_glob(t, bare))).collect();
        let handler_rules = rules.clone();
        let mut builder = Source::hub().server("pipe", pipe).input_handler(move |questions| {
            // Only a question of exactly one call is answered by a rule naming its tool.
            let rule = questions.call.call().and_then(|info| {
                handler_rules
                    .iter()
                    .find(|(tool, _)| info.call.tool == format!("t{tool}"))
                    .map(|(_, glob)| glob.clone())
            });
            let answer = match rule {
                Some(glob) => {
                    let mut responses = InputResponses::new();
                    for key in questions.requests.keys() {
                        responses.insert(key.clone(), ElicitResult::accept(json!({"rule": glob})).into());
                    }
                    InputAnswer::Respond(responses)
                }
                None => InputAnswer::Decline("no rule names this call".into()),
            };
            Box::pin(async move { answer })
        });
        for (_, glob) in &rules {
            builder = builder.run_alone(glob);
        }
        let source = builder.build().unwrap();
        let response = json!({"content": calls.iter().enumerate().map(|(i, c)| json!({
            "type": "tool_use",
            "id": format!("toolu_{i}"),
            "name": format!("pipe__t{}", c.tool),
            "input": {"asks": c.asks, "before": c.before, "after": c.after},
        })).collect::<Vec<_>>()});
        let run = current_thread_runtime().block_on(async {
            let provider = common::provider("anthropic");
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            source
                .execute_tool_calls(
                    provider,
                    &response,
                    &listing,
                    &ExecOptions::new().max_concurrency(concurrency),
                )
                .await
                .unwrap()
        });
        prop_assert!(run.calls.iter().all(|c| c.error.is_none()), "{:?}", run.calls);
        let asked = asked.lock().unwrap().clone();
        prop_assert_eq!(asked.len(), calls.iter().filter(|c| c.asks).count());
        for (tool, rule) in &asked {
            let names = rules.iter().find(|(t, _)| *tool == format!("t{t}"));
            match (rule, names) {
                // Answered: by the rule that names the tool that asked.
                (Some(rule), Some((_, glob))) => prop_assert_eq!(rule, glob),
                (Some(rule), None) => prop_assert!(false, "`{}` answered by `{}`, which does not name it", tool, rule),
                // A named call runs alone: its question is always its own.
                (None, Some((_, glob))) => prop_assert!(false, "`{}` named by `{}` was not answered", tool, glob),
                (None, None) => {}
            }
        }
    }
}
