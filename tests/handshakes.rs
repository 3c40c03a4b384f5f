//! Handshakes as servers really answer them, against
//! `tests/e2e/raw_handshake_server.py` (raw JSON-RPC over stdio, no SDK): a
//! `server/discover` result without the fields the official SDKs default is
//! read with those defaults and noted once; an unreadable one is followed by
//! `initialize`; a server that answers nothing is down with an error that
//! says so; a failed start names the refused answers before what the
//! process did; and an optional listing the server has not got (-32601) is
//! an empty one, with nothing about it in the model's answer.
#![cfg(feature = "cli")]

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use common::*;
use mcp_adapters::client::Lifecycle;
use mcp_adapters::{ClientOptions, ErrorKind, ExecOptions, ListOptions, McpClient, Source};
use serde_json::{Value, json};

fn script() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/raw_handshake_server.py")
        .display()
        .to_string()
}

/// The raw server in `mode`, started by the library.
async fn raw(mode: &str, options: &ClientOptions) -> mcp_adapters::Result<McpClient> {
    let args = vec![script(), mode.to_owned()];
    McpClient::spawn("raw", "python3", &args, &BTreeMap::new(), options).await
}

/// `provider`'s answer to a model calling `tool` with `arguments`, as JSON text.
async fn answer(source: &Source, provider_id: &str, tool: &str, arguments: Value) -> String {
    let provider = provider(provider_id);
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let response = model_response(provider_id, &[(tool.to_owned(), arguments)]);
    let run = source
        .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
        .await
        .unwrap();
    run.turn.results[0].to_string()
}

/// Asserts that `message` holds each of `words`.
#[track_caller]
fn assert_says(message: &str, words: &[&str]) {
    for word in words {
        assert!(message.contains(word), "no `{word}` in: {message}");
    }
}

fn options() -> ClientOptions {
    ClientOptions::new().init_timeout(Duration::from_secs(30))
}

#[test]
fn a_discovery_result_without_cache_hints_is_read_with_the_defaults_and_noted_once() {
    runtime().block_on(async {
        let client = raw("no-cache-hints", &options()).await.unwrap();
        let info = client.server_info().unwrap();
        assert_eq!(info["protocolVersion"], "2026-07-28", "{info}");
        let source = Source::client("raw", client).build().unwrap();
        for _ in 0..2 {
            let listing = source.tools(provider("anthropic"), &ListOptions::new()).await.unwrap();
            assert_eq!(tool_names(&listing), ["echo"]);
            let report = serde_json::to_value(&listing.report).unwrap();
            assert_eq!(
                report["defaulted"],
                json!([
                    {"server_id": "raw", "field": "cacheScope", "methods": ["server/discover"], "read_as": "private"},
                    {"server_id": "raw", "field": "ttlMs", "methods": ["server/discover"], "read_as": 0},
                ]),
                "{report:#}"
            );
        }
    });
}

#[test]
fn a_stdio_servers_tools_are_read_as_it_sent_them() {
    runtime().block_on(async {
        let client = raw("no-cache-hints", &options()).await.unwrap();
        let source = Source::client("raw", client).build().unwrap();
        let listing = source
            .tools(provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        let tools = listing.toolset().tools();
        assert_eq!(tools.len(), 1);
        let tool = &tools[0].tool;
        // Read from the answer's bytes by the library itself: a field the
        // SDK's tool type has no place for is kept, as the model type says.
        assert_eq!(
            tool.extra["x-origin"],
            json!({"listedBy": "raw"}),
            "{tool:?}"
        );
        assert_eq!(tool.input_schema["required"], json!(["text"]));
        assert_eq!(tool.description.as_deref(), Some("Echoes its text"));
    });
}

#[test]
fn the_command_line_notes_each_defaulted_field_once_on_stderr() {
    let server = format!("raw=python3 {} no-cache-hints", script());
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args(["tools", "--provider", "openai-chat", "--server", &server])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["tools"][0]["function"]["name"], "echo", "{listed}");
    assert_eq!(listed["report"]["defaulted"].as_array().unwrap().len(), 2);
    for field in ["ttlMs", "cacheScope"] {
        let notes: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("note: ") && l.contains(&format!("`{field}`")))
            .collect();
        assert_eq!(notes.len(), 1, "{field}: {stderr}");
        assert!(notes[0].contains("server `raw`"), "{stderr}");
        assert!(notes[0].contains("`server/discover`"), "{stderr}");
    }
}

#[test]
fn an_unreadable_discovery_answer_is_followed_by_initialize() {
    runtime().block_on(async {
        let client = raw("unreadable-discover", &options()).await.unwrap();
        let info = client.server_info().unwrap();
        assert_eq!(info["protocolVersion"], "2025-11-25", "{info}");
        let source = Source::client("raw", client).build().unwrap();
        let listing = source
            .tools(provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        assert_eq!(tool_names(&listing), ["echo"]);
        assert!(listing.report.defaulted.is_empty(), "{:?}", listing.report);
        // Without the fall-back, the start fails and says which fields were missing.
        let modern = options().lifecycle(Lifecycle::Modern);
        let err = raw("unreadable-discover", &modern).await.err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        let said = [
            "its answer to `server/discover` could not be read",
            "supportedVersions",
        ];
        assert_says(err.message(), &said);
    });
}

/// A server slow to start answers `server/discover` only after the client
/// gave up waiting (10 s) and sent `initialize`, which it then refuses: the
/// late discovery answer starts the session at 2026-07-28.
#[test]
fn a_discovery_answer_after_initialize_was_sent_starts_the_session() {
    runtime().block_on(async {
        let client = raw("late-discover", &options()).await.unwrap();
        let info = client.server_info().unwrap();
        assert_eq!(info["protocolVersion"], "2026-07-28", "{info}");
        let source = Source::client("raw", client).build().unwrap();
        let listing = source
            .tools(provider("anthropic"), &ListOptions::new())
            .await
            .unwrap();
        assert_eq!(tool_names(&listing), ["echo"]);
        let said = answer(&source, "anthropic", "echo", json!({"text": "hi"})).await;
        assert!(said.contains("echo: hi"), "{said}");
    });
}

/// Both answers refused: each is named, then what the process did after the
/// client closed the connection; never that it exited before answering.
#[test]
fn a_failed_start_names_the_refused_answers_before_what_the_process_did() {
    runtime().block_on(async {
        let err = raw("unreadable", &options()).await.err().unwrap();
        let message = err.message();
        let discover = message.find("its answer to `server/discover` could not be read");
        let initialize = message.find("its answer to `initialize` could not be read");
        let closed = message.find("the connection was closed, and `python3");
        let exited = message.find("then exited with status 0");
        assert!(
            discover < initialize && initialize < closed && closed < exited && discover.is_some(),
            "{message}"
        );
        assert!(message.contains("capabilities"), "{message}");
        assert!(!message.contains("before answering"), "{message}");
    });
}

/// The server exits when its input closes: after it was asked, not before.
#[test]
fn a_server_that_answers_nothing_is_down_and_said_to_have_answered_nothing() {
    runtime().block_on(async {
        let quick = ClientOptions::new().init_timeout(Duration::from_secs(2));
        let err = raw("silent", &quick).await.err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        let said = [
            "answered nothing within 2000 ms (it was sent `server/discover`)",
            "the connection was closed, and `python3",
            "then exited with status 0",
        ];
        assert_says(err.message(), &said);
    });
}

/// -32601 to `resources/templates/list` lists no template: the model's
/// `list_resources` answer is the server's (empty) catalogue, not a failure.
#[test]
fn a_missing_optional_listing_is_empty_and_not_in_the_answer() {
    runtime().block_on(async {
        let client = raw("no-cache-hints", &options()).await.unwrap();
        let source = Source::client("raw", client)
            .resources("*")
            .build()
            .unwrap();
        let templates = source
            .list_catalog("raw", mcp_adapters::mcp::Catalog::ResourceTemplates)
            .await
            .unwrap();
        assert!(templates.is_empty());
        // The cache hints `resources/list` left out join the discovery's notes.
        source
            .list_catalog("raw", mcp_adapters::mcp::Catalog::Resources)
            .await
            .unwrap();
        let noted: Vec<(String, Vec<String>)> = source
            .defaulted()
            .into_iter()
            .map(|d| (d.field, d.methods))
            .collect();
        let both = vec!["server/discover".to_owned(), "resources/list".to_owned()];
        assert_eq!(
            noted,
            [
                ("cacheScope".to_owned(), both.clone()),
                ("ttlMs".to_owned(), both)
            ]
        );
        for &p in CORE_PROVIDERS {
            let answer = answer(&source, p, "list_resources", json!({})).await;
            assert!(answer.contains("server `raw`"), "{p}: {answer}");
            for word in ["failed", "-32601", "Method not found", "error"] {
                assert!(!answer.contains(word), "{p}: `{word}` in {answer}");
            }
        }
    });
}

/// A server's error text is said once in the answer to a call that failed.
#[test]
fn a_servers_error_is_said_once() {
    runtime().block_on(async {
        let client = raw("no-cache-hints", &options()).await.unwrap();
        let source = Source::client("raw", client)
            .resources("*")
            .build()
            .unwrap();
        let uri = json!({"server": "raw", "uri": "file:///nope"});
        let answer = answer(&source, "anthropic", "read_resource", uri).await;
        assert_eq!(answer.matches("Method not found").count(), 1, "{answer}");
    });
}
