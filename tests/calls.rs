//! Call extraction for each core provider: snapshots of every accepted form and
//! every rejection, and properties over random responses.

mod common;

use std::collections::HashSet;

use common::*;
use mcp_adapters::{ErrorKind, ListOptions, Listing, ToolSet};
use proptest::prelude::*;
use serde_json::{Value, json};

fn hub() -> ToolSet {
    ToolSet::hub()
        .server("everything", corpus_tools("everything"))
        .server("time", corpus_tools("time"))
        .build()
        .unwrap()
}

fn listing(id: &str, toolset: &ToolSet) -> Listing {
    provider(id)
        .list_tools(toolset, &ListOptions::new())
        .unwrap()
}

#[test]
fn responses() {
    let toolset = hub();
    insta::glob!("fixtures/responses/*/*.json", |path| {
        let id = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let listing = listing(id, &toolset);
        let extracted = provider(id)
            .extract_calls(&read_json(path), &listing)
            .unwrap();
        snapshot(Stage::Calls, Some(id), &case_name(path), extracted);
    });
}

/// A call to a tool of a server that did not start is answered "unknown
/// tool", as any name no listed tool has: why the server did not start (its
/// command line, its stderr) is the application's to read, in the toolset's
/// report, and never the model's.
#[test]
fn a_call_to_a_server_that_did_not_start_is_an_unknown_tool() {
    let why =
        "server `git` is down: `uvx mcp-server-git --token K1` exited; its stderr ended with:\nK2";
    let hub = ToolSet::hub()
        .server("time", corpus_tools("time"))
        .failed_server("git", why)
        .build()
        .unwrap();
    let client = ToolSet::client()
        .prefix("my_")
        .failed_server("git", why)
        .build()
        .unwrap();
    let provider = provider("anthropic");
    let response = |name: &str| json!({"content": [{"type": "tool_use", "id": "t1", "name": name, "input": {}}]});
    let rejected = |toolset: &ToolSet, name: &str| {
        let extracted = provider
            .extract_calls(&response(name), &listing("anthropic", toolset))
            .unwrap();
        extracted.rejected[0].clone()
    };
    for (toolset, name) in [
        (&hub, "git__git_status"),
        (&client, "my_git_status"),
        (&hub, "gitx__status"),
        (&hub, "status"),
        (&client, "status"),
    ] {
        let rejected = rejected(toolset, name);
        assert_eq!(rejected.error.kind(), ErrorKind::UnknownTool, "{name}");
        assert_eq!(
            rejected.error.to_string(),
            format!("unknown tool `{name}`: call one of the tools offered")
        );
        let answer = rejected.answer.to_string();
        assert!(!answer.contains("K1") && !answer.contains("K2"), "{answer}");
    }
    assert_eq!(hub.report().failed_servers[0].error, why);
}

#[test]
fn foreign_or_malformed_input_is_an_error() {
    let toolset = hub();
    let anthropic_response = fixture("responses/anthropic/response.json");
    // (A Chat assistant message has the same `role` as an Anthropic one, so Chat reads it as a message without calls.)
    for id in ["openai-responses", "gemini"] {
        let err = provider(id)
            .extract_calls(&anthropic_response, &listing(id, &toolset))
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input, "{id}: {err}");
        assert!(err.to_string().contains(id), "{err}");
    }
    let anthropic = listing("anthropic", &toolset);
    for bad in [json!("text"), json!(42), json!(null)] {
        let err = provider("anthropic")
            .extract_calls(&bad, &anthropic)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input);
    }
    let err = provider("anthropic")
        .extract_calls(&json!({"content": "not a list"}), &anthropic)
        .unwrap_err();
    assert!(err.to_string().contains("not an array"), "{err}");
    // A listing answers for the provider that made it.
    let err = provider("openai-chat")
        .extract_calls(&json!({"tool_calls": []}), &anthropic)
        .unwrap_err();
    assert!(err.to_string().contains("`anthropic`"), "{err}");
}

/// One call as a test case: which name, which arguments, which id.
#[derive(Debug, Clone)]
struct Case {
    name: u8, // 0..3: a tool in the toolset; 3: unknown; 4: missing
    args: u8, // 0: object; 1: list; 2: invalid JSON text; 3: string
    id: u8,   // 0..200: an id, 255: none
}

fn case() -> impl Strategy<Value = Case> {
    (0u8..5, 0u8..4, prop_oneof![0u8..200, Just(255u8)]).prop_map(|(name, args, id)| Case {
        name,
        args,
        id,
    })
}

const NAMES: [&str; 3] = [
    "everything__echo",
    "time__get_current_time",
    "everything__get-sum",
];

fn item(provider: &str, c: &Case) -> Value {
    let name = match c.name {
        0..3 => json!(NAMES[c.name as usize]),
        3 => json!("nope__missing"),
        _ => Value::Null,
    };
    let object = json!({"x": 1});
    let (as_object, as_string) = match c.args {
        0 => (object.clone(), json!(object.to_string())),
        1 => (json!([1]), json!("[1]")),
        2 => (json!("{oops"), json!("{oops")),
        _ => (json!("plain"), json!(17)),
    };
    let id = (c.id != 255).then(|| json!(format!("id{}", c.id)));
    let mut v = match provider {
        "anthropic" => json!({"type": "tool_use", "name": name, "input": as_object}),
        "openai-chat" => {
            json!({"type": "function", "function": {"name": name, "arguments": as_string}})
        }
        "openai-responses" => {
            json!({"type": "function_call", "name": name, "arguments": as_string})
        }
        _ => json!({"functionCall": {"name": name, "args": as_object}}),
    };
    let (obj, key) = match provider {
        "gemini" => (v["functionCall"].as_object_mut().unwrap(), "id"),
        "openai-responses" => (v.as_object_mut().unwrap(), "call_id"),
        _ => (v.as_object_mut().unwrap(), "id"),
    };
    obj.retain(|_, val| !val.is_null());
    if let Some(id) = id {
        obj.insert(key.into(), id);
    }
    v
}

fn expected_ok(provider: &str, c: &Case, seen: &mut HashSet<u8>) -> bool {
    let id_ok = c.id != 255 || provider == "gemini";
    let args_ok = c.args == 0;
    let ok_before_dup = c.name < 3 && id_ok;
    // A repeated id is rejected whatever else the call is, once the name and id are readable.
    let fresh = c.id == 255 || c.name == 4 || !id_ok || seen.insert(c.id);
    ok_before_dup && fresh && args_ok
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every call is either a ToolCall or a rejection, never both, never lost,
    /// in the model's order; only toolset tools with object arguments are accepted.
    #[test]
    fn every_call_is_accounted_for(cases in proptest::collection::vec(case(), 0..12), pid in 0usize..4) {
        let id = CORE_PROVIDERS[pid];
        let listing = listing(id, &hub());
        let toolset = listing.toolset();
        let noise = match id {
            "anthropic" => json!({"type": "text", "text": "noise"}),
            "gemini" => json!({"text": "noise"}),
            _ => json!({"type": "message"}),
        };
        let mut items = vec![noise.clone()];
        for c in &cases {
            items.push(item(id, c));
            items.push(noise.clone());
        }
        let extracted = provider(id).extract_calls(&Value::Array(items), &listing).unwrap();
        prop_assert_eq!(extracted.len(), cases.len());
        let mut order: Vec<usize> = extracted.calls.iter().map(|c| c.index).chain(extracted.rejected.iter().map(|r| r.index)).collect();
        order.sort_unstable();
        prop_assert_eq!(order, (0..cases.len()).collect::<Vec<_>>());
        let mut seen = HashSet::new();
        for (i, c) in cases.iter().enumerate() {
            let accepted = extracted.calls.iter().find(|call| call.index == i);
            let rejected = extracted.rejected.iter().find(|r| r.index == i);
            prop_assert!(accepted.is_some() != rejected.is_some());
            prop_assert_eq!(accepted.is_some(), expected_ok(id, c, &mut seen), "case {} {:?}", i, c);
            if let Some(call) = accepted {
                prop_assert!(toolset.resolve(&call.exposed_name).is_some());
                prop_assert_eq!(&call.exposed_name, NAMES[c.name as usize]);
            }
        }
        prop_assert!(extracted.calls.windows(2).all(|w| w[0].index < w[1].index));
    }
}
