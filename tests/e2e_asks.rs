//! What a real server asks of the client: the pinned reference server
//! `@modelcontextprotocol/server-everything` (MCP 2025-11-25, official
//! TypeScript SDK) offers its elicitation, sampling and roots tools only to a
//! client that declares those capabilities, and asks for them during the
//! call; every answer comes from the handlers given once. Over stdio and over
//! streamable HTTP (where each request arrives on its call's own stream).
#![cfg(feature = "rmcp")]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::servers;
use mcp_adapters::client::*;
use mcp_adapters::exec::*;
use mcp_adapters::mcp::{
    CreateMessageResult, ElicitResult, Elicitation, InputRequest, InputResponses, Root,
};
use mcp_adapters::*;
use serde_json::{Value, json};

/// What the person does with the next form.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Person {
    Accepts,
    Declines,
    Dismisses,
    Closes,
}

struct Recorded {
    person: Mutex<Person>,
    questions: Mutex<Vec<InputQuestions>>,
    samplings: Mutex<Vec<SamplingRequest>>,
}

fn handlers(recorded: &Arc<Recorded>, root: Root) -> Handlers {
    let (asked, sampled) = (recorded.clone(), recorded.clone());
    Handlers::new()
        .input(move |questions| {
            asked.questions.lock().unwrap().push(questions.clone());
            let person = *asked.person.lock().unwrap();
            let mut answers = InputResponses::new();
            for (key, request) in &questions.requests {
                let answer = match (request, person) {
                    (InputRequest::Elicitation(Elicitation::Form(form)), Person::Accepts) => {
                        let mut content = form.defaults();
                        content.insert("name".into(), json!("Ada Lovelace"));
                        content.insert("check".into(), json!(true));
                        ElicitResult::accept(Value::Object(content))
                    }
                    (InputRequest::Elicitation(Elicitation::Url(_)), Person::Accepts) => {
                        ElicitResult::accept_without_content()
                    }
                    (_, Person::Declines) => ElicitResult::decline(),
                    (_, Person::Dismisses) => ElicitResult::cancel(),
                    (_, Person::Closes) => {
                        return Box::pin(async {
                            InputAnswer::Cancel("the window was closed".into())
                        });
                    }
                    _ => {
                        return Box::pin(async {
                            InputAnswer::Decline("not a question for a person".into())
                        });
                    }
                };
                answers.insert(key.clone(), answer.into());
            }
            Box::pin(async move { InputAnswer::Respond(answers) })
        })
        .sampling(Sampling::new(move |request| {
            sampled.samplings.lock().unwrap().push(request);
            Box::pin(async {
                SamplingAnswer::Respond(CreateMessageResult::text(
                    "test-model",
                    "Paris is the capital.",
                ))
            })
        }))
        .roots(Roots::new([root]))
}

fn call(name: &str, input: Value) -> Value {
    json!({"content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": input}]})
}

async fn one_call(
    source: &Source,
    listing: &Listing,
    name: &str,
    input: Value,
) -> (String, Status) {
    let provider = common::provider("anthropic");
    let run = source
        .execute_tool_calls(provider, &call(name, input), listing, &ExecOptions::new())
        .await
        .unwrap();
    let texts: Vec<&str> = run.turn.results[0]["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_default();
    (texts.join("\n"), run.status)
}

/// Every tool, and each of the server's questions answered; `client` is
/// started with `handlers`.
async fn plays_every_question(client: McpClient, recorded: Arc<Recorded>, root_uri: &str) {
    let source = Source::client("everything", client).build().unwrap();
    let listing = source
        .tools(common::provider("anthropic"), &ListOptions::new())
        .await
        .unwrap();
    let names = common::tool_names(&listing);
    for tool in [
        "trigger-elicitation-request",
        "trigger-url-elicitation",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        assert!(
            names.iter().any(|n| n == tool),
            "{tool} is not listed: {names:?}"
        );
    }

    let (text, status) =
        one_call(&source, &listing, "trigger-elicitation-request", json!({})).await;
    assert!(
        text.contains("User provided the requested information"),
        "{text}"
    );
    assert!(
        text.contains("- Name: Ada Lovelace") && text.contains("- Favorite Integer: 42"),
        "{text}"
    );
    assert_eq!(status, Status::Ok);
    {
        let questions = recorded.questions.lock().unwrap();
        let asked = questions.last().unwrap();
        assert_eq!(asked.asking, Asking::Request);
        let call = asked.call.call().expect("attributed to the call");
        assert_eq!(
            (call.call.tool.as_str(), call.call.call_id.as_deref()),
            ("trigger-elicitation-request", Some("toolu_1"))
        );
    }

    *recorded.person.lock().unwrap() = Person::Declines;
    let (text, _) = one_call(&source, &listing, "trigger-elicitation-request", json!({})).await;
    assert!(
        text.contains("User declined to provide the requested information"),
        "{text}"
    );

    *recorded.person.lock().unwrap() = Person::Dismisses;
    let (text, status) =
        one_call(&source, &listing, "trigger-elicitation-request", json!({})).await;
    assert!(
        text.contains("User cancelled the elicitation dialog"),
        "{text}"
    );
    assert_eq!(
        status,
        Status::Ok,
        "a dismissed form is the person's answer"
    );

    *recorded.person.lock().unwrap() = Person::Closes;
    let (text, status) =
        one_call(&source, &listing, "trigger-elicitation-request", json!({})).await;
    assert!(
        text.contains("User cancelled the elicitation dialog"),
        "{text}"
    );
    assert_eq!(status, Status::Halt, "the handler's cancel halts the turn");

    *recorded.person.lock().unwrap() = Person::Accepts;
    let (text, _) = one_call(
        &source,
        &listing,
        "trigger-url-elicitation",
        json!({"url": "https://example.com/sign-in"}),
    )
    .await;
    assert!(
        text.contains("User completed the URL elicitation flow"),
        "{text}"
    );

    let (text, _) = one_call(
        &source,
        &listing,
        "trigger-sampling-request",
        json!({"prompt": "The capital of France?"}),
    )
    .await;
    assert!(
        text.contains("LLM sampling result:") && text.contains("Paris is the capital."),
        "{text}"
    );
    {
        let samplings = recorded.samplings.lock().unwrap();
        let request = samplings.last().unwrap();
        assert!(
            request.params.messages[0]
                .text()
                .contains("The capital of France?")
        );
        assert_eq!(
            request.params.system_prompt.as_deref(),
            Some("You are a helpful test server.")
        );
        assert_eq!(
            request.call.call().unwrap().call.tool,
            "trigger-sampling-request"
        );
    }

    let (text, _) = one_call(&source, &listing, "get-roots-list", json!({})).await;
    assert!(
        text.contains("Current MCP Roots (1 total)") && text.contains(root_uri),
        "{text}"
    );

    // A tool that runs only as a task (2025-11-25 `taskSupport: required`),
    // asking for a clarification on the way; its statuses arrive as progress.
    let asked_before = recorded.questions.lock().unwrap().len();
    let progress: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = progress.clone();
    let options = ExecOptions::new().progress(move |p| {
        seen.lock().unwrap().push(p.message.unwrap_or_default());
    });
    let provider = common::provider("anthropic");
    let run = source
        .execute_tool_calls(
            provider,
            &call(
                "simulate-research-query",
                json!({"topic": "rust", "ambiguous": true}),
            ),
            &listing,
            &options,
        )
        .await
        .unwrap();
    let text = run.turn.results[0]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(text.contains("# Research Report: rust"), "{text}");
    assert!(text.contains("input_required"), "{text}");
    let questions = recorded.questions.lock().unwrap();
    assert_eq!(questions.len(), asked_before + 1, "the task asked once");
    let asked = questions.last().unwrap();
    assert_eq!(
        asked.call.call().unwrap().call.tool,
        "simulate-research-query"
    );
    let progress = progress.lock().unwrap();
    assert!(
        progress.iter().any(|m| m.contains(": working")),
        "{progress:?}"
    );
}

fn recorded() -> Arc<Recorded> {
    Arc::new(Recorded {
        person: Mutex::new(Person::Accepts),
        questions: Mutex::default(),
        samplings: Mutex::default(),
    })
}

#[test]
fn everything_over_stdio_asks_and_is_answered() {
    let (command, args) = servers::everything().unwrap_or_else(|e| panic!("{e}"));
    common::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::from_path(dir.path()).unwrap();
        let uri = root.uri.clone();
        let recorded = recorded();
        let options = ClientOptions::new()
            .lifecycle(Lifecycle::Legacy)
            .handlers(handlers(&recorded, root));
        let client = McpClient::spawn("everything", &command, &args, &BTreeMap::new(), &options)
            .await
            .unwrap();
        plays_every_question(client, recorded, &uri).await;
    });
}

#[test]
fn without_handlers_nothing_is_declared_and_nothing_asks() {
    let (command, args) = servers::everything().unwrap_or_else(|e| panic!("{e}"));
    common::runtime().block_on(async {
        let options = ClientOptions::new().lifecycle(Lifecycle::Legacy);
        let client = McpClient::spawn("everything", &command, &args, &BTreeMap::new(), &options)
            .await
            .unwrap();
        let source = Source::client("everything", client).build().unwrap();
        let listing = source
            .tools(common::provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        let names = common::tool_names(&listing);
        for tool in [
            "trigger-elicitation-request",
            "trigger-url-elicitation",
            "trigger-sampling-request",
            "get-roots-list",
        ] {
            assert!(
                !names.iter().any(|n| n == tool),
                "{tool} is listed: {names:?}"
            );
        }
    });
}

#[cfg(feature = "rmcp-http")]
#[test]
fn everything_over_http_asks_on_each_calls_stream() {
    let server = common::servers::everything_http().unwrap_or_else(|e| panic!("{e}"));
    common::runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::from_path(dir.path()).unwrap();
        let uri = root.uri.clone();
        let recorded = recorded();
        let options = ClientOptions::new()
            .lifecycle(Lifecycle::Legacy)
            .handlers(handlers(&recorded, root));
        let client = McpClient::connect_http("everything", &server.url, &BTreeMap::new(), &options)
            .await
            .unwrap();
        plays_every_question(client, recorded, &uri).await;
    });
}
