//! Calls that come from code: the recorded exchanges of OpenAI Responses'
//! and Anthropic's programmatic tool calling read back (every call with its
//! caller, every program, its output and its container; whole responses
//! and streams agree), listings that open tools to code (snapshots, checked
//! against the official SDKs' types), the callers rule enforced, and the
//! answers a program gets: its caller carried back, the structured result,
//! no budget, a byte cap, no media.

mod common;

use std::path::{Path, PathBuf};

use common::conformance::{Item, check};
use common::{Stage, provider, read_json, snapshot};
use mcp_adapters::callers::{Caller, Callers, CallersRule};
use mcp_adapters::stream::Framing;
use mcp_adapters::{
    CallToolResult, Content, Error, ErrorKind, ExecOptions, Extracted, InProcessServer,
    ListOptions, Listing, Outcome, Policy, ResultOptions, Source, Status, Tool, ToolSet,
};
use serde_json::{Value, json};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/programmatic")
        .join(path)
}

/// The tools of the recorded OpenAI exchange (their schemas as the
/// recording's request declared them), and one only the model calls.
fn inventory_tools() -> Vec<Tool> {
    let sku = json!({"type": "object", "properties": {"sku": {"type": "string"}},
        "required": ["sku"], "additionalProperties": false});
    let out = |field: &str| {
        json!({"type": "object", "properties": {"sku": {"type": "string"}, field: {"type": "number"}},
            "required": ["sku", field], "additionalProperties": false})
    };
    let mut inventory = Tool::new(
        "getInventory",
        "Get available inventory for a SKU.",
        sku.clone(),
    );
    inventory.output_schema = Some(out("availableUnits"));
    let mut demand = Tool::new("getDemand", "Get requested units for a SKU.", sku.clone());
    demand.output_schema = Some(out("requestedUnits"));
    let restock = Tool::new("restock", "Orders more units of a SKU.", sku);
    vec![inventory, demand, restock]
}

/// The tool of the recorded Anthropic exchange.
fn dice_tools() -> Vec<Tool> {
    vec![Tool::new(
        "rollDie",
        "Rolls a die for a player and returns the number.",
        json!({"type": "object", "properties": {"player": {"type": "string"}}, "required": ["player"]}),
    )]
}

fn toolset(server: &str, tools: Vec<Tool>) -> ToolSet {
    ToolSet::client().server(server, tools).build().unwrap()
}

/// The recorded exchanges' listings: the recordings open their tools to
/// programs only.
fn recorded_listing(id: &str) -> Listing {
    let (server, tools) = match id {
        "openai-responses" => ("inventory", inventory_tools()),
        _ => ("dice", dice_tools()),
    };
    let rule = CallersRule::new()
        .only(&format!("{server}/get*"))
        .unwrap()
        .only("dice/*")
        .unwrap()
        .open("inventory/restock")
        .unwrap();
    provider(id)
        .list_tools(&toolset(server, tools), &ListOptions::new().callers(rule))
        .unwrap()
}

/// `(tool, program id)` of each call.
fn callers(extracted: &Extracted) -> Vec<(&str, Option<&str>)> {
    extracted
        .calls
        .iter()
        .map(|c| (c.tool.as_str(), c.caller.program_id()))
        .collect()
}

/// The streamed messages of a recording: the Anthropic one holds 15
/// streams back to back, each ending at `message_stop`.
fn streams(file: &str) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        current.push_str(line);
        current.push('\n');
        if line.contains(r#""type":"message_stop""#) {
            out.push(std::mem::take(&mut current).into_bytes());
        }
    }
    if !current.trim().is_empty() {
        out.push(current.into_bytes());
    }
    out
}

/// A stream read whole: what it extracted, and what its assembled message
/// reads as when given as a whole response.
fn streamed(id: &str, bytes: &[u8], listing: &Listing) -> (Extracted, Extracted) {
    let mut stream = provider(id).stream(listing).unwrap().framing(Framing::Json);
    let mut early = stream.push(bytes).unwrap();
    let done = stream.finish().unwrap();
    early.retain(|c| matches!(c, mcp_adapters::stream::StreamedCall::Ready(_)));
    assert_eq!(
        early.len(),
        done.extracted.calls.len(),
        "calls handed out as completed"
    );
    let whole = provider(id).extract_calls(&done.message, listing).unwrap();
    (done.extracted, whole)
}

const OPENAI_PROGRAM: &str = "call_O2IvSLQcJ0bwIvJZ2ovGV69M";
const ANTHROPIC_PROGRAM: &str = "srvtoolu_01CberhXc9TgYXrCZU8bQoks";

#[test]
fn recorded_responses_read_every_call_with_its_caller_and_every_program() {
    let listing = recorded_listing("openai-responses");
    let read = |n: u8| {
        let response = read_json(&fixture(&format!(
            "openai-responses/vercel__programmatic-tool-calling.{n}.json"
        )));
        provider("openai-responses")
            .extract_calls(&response, &listing)
            .unwrap()
    };
    let first = read(1);
    assert!(first.rejected.is_empty(), "{:?}", first.rejected);
    assert_eq!(callers(&first), [("getInventory", Some(OPENAI_PROGRAM))]);
    assert_eq!(
        first.calls[0].call_id.as_deref(),
        Some("call_rj6LW6NEyodD5YVKeoexoLNz")
    );
    assert_eq!(
        first.calls[0].caller,
        Caller::program(
            OPENAI_PROGRAM,
            json!({"type": "program", "caller_id": OPENAI_PROGRAM})
        )
    );
    assert_eq!(first.programs.programs.len(), 1);
    let program = &first.programs.programs[0];
    assert_eq!(program.id, OPENAI_PROGRAM);
    assert!(
        program
            .code
            .as_deref()
            .unwrap()
            .contains("tools.getInventory")
    );
    // The item is kept whole for the replay: its fingerprint unchanged.
    assert!(
        program.item["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("gAAAAA")
    );
    assert!(first.programs.outputs.is_empty() && first.programs.container.is_none());

    // A later response holds only the program's next call.
    let second = read(2);
    assert_eq!(callers(&second), [("getDemand", Some(OPENAI_PROGRAM))]);
    assert!(second.programs.programs.is_empty());

    // The last one holds the program's output and the final message.
    let third = read(3);
    assert!(third.calls.is_empty() && third.rejected.is_empty());
    let output = third.programs.output_of(OPENAI_PROGRAM).unwrap();
    assert_eq!(output.status.as_deref(), Some("completed"));
    assert!(
        output
            .output
            .as_str()
            .unwrap()
            .contains(r#""availableUnits":42"#)
    );

    let listing = recorded_listing("anthropic");
    let response = read_json(&fixture(
        "anthropic/vercel__anthropic-programmatic-tool-calling.1.json",
    ));
    let read = provider("anthropic")
        .extract_calls(&response, &listing)
        .unwrap();
    assert!(read.rejected.is_empty(), "{:?}", read.rejected);
    assert_eq!(callers(&read), [("rollDie", Some(ANTHROPIC_PROGRAM)); 4]);
    assert_eq!(read.calls[0].arguments["player"], "player2");
    assert_eq!(read.programs.programs[0].id, ANTHROPIC_PROGRAM);
    assert!(
        read.programs.programs[0]
            .code
            .as_deref()
            .unwrap()
            .contains("rollDie(")
    );
    let output = read.programs.output_of(ANTHROPIC_PROGRAM).unwrap();
    assert_eq!(output.output["return_code"], 0);
    let container = read.programs.container.as_ref().unwrap();
    assert_eq!(container.id, "container_011CWHQB57xVregfCMPrKgew");
    assert_eq!(
        container.expires_at.as_deref(),
        Some("2025-12-20T05:43:56.821156Z")
    );
    // The next request names the container.
    assert_eq!(
        Value::Object(
            provider("anthropic")
                .program_request(&read.programs)
                .unwrap()
        ),
        json!({"container": "container_011CWHQB57xVregfCMPrKgew"})
    );
    assert!(
        provider("openai-responses")
            .program_request(&first.programs)
            .unwrap()
            .is_empty()
    );
    snapshot(Stage::Calls, Some("anthropic"), "programmatic", &read);
    snapshot(
        Stage::Calls,
        Some("openai-responses"),
        "programmatic",
        &first,
    );
}

#[test]
fn recorded_streams_read_as_their_assembled_messages() {
    let id = "openai-responses";
    let listing = recorded_listing(id);
    let expected: [(&[&str], usize, usize); 3] = [
        (&["getInventory"], 1, 0),
        (&["getDemand"], 0, 0),
        (&[], 0, 1),
    ];
    let mut program = None;
    for (n, (tools, programs, outputs)) in (1..=3).zip(expected) {
        let file = format!("openai-responses/vercel__programmatic-tool-calling.{n}.chunks.jsonl");
        let bytes = std::fs::read(fixture(&file)).unwrap();
        let (stream, whole) = streamed(id, &bytes, &listing);
        assert_eq!(
            serde_json::to_value(&stream).unwrap(),
            serde_json::to_value(&whole).unwrap(),
            "{file}: the stream and its message disagree"
        );
        let names: Vec<&str> = stream.calls.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(names, tools, "{file}");
        assert_eq!(stream.programs.programs.len(), programs, "{file}");
        assert_eq!(stream.programs.outputs.len(), outputs, "{file}");
        if let Some(p) = stream.programs.programs.first() {
            // Whole in output_item.done (added with empty code).
            assert!(
                p.code.as_deref().unwrap().contains("tools.getDemand"),
                "{file}"
            );
            program = Some(p.id.clone());
        }
        for call in &stream.calls {
            assert_eq!(call.caller.program_id(), program.as_deref(), "{file}");
        }
    }

    let id = "anthropic";
    let listing = recorded_listing(id);
    let messages = streams("anthropic/vercel__anthropic-programmatic-tool-calling.1.chunks.jsonl");
    assert_eq!(messages.len(), 15);
    let mut calls = 0;
    for (i, bytes) in messages.iter().enumerate() {
        let (stream, whole) = streamed(id, bytes, &listing);
        assert_eq!(
            serde_json::to_value(&stream).unwrap(),
            serde_json::to_value(&whole).unwrap(),
            "message {}: the stream and its message disagree",
            i + 1
        );
        assert!(stream.rejected.is_empty(), "{:?}", stream.rejected);
        calls += stream.calls.len();
        for call in &stream.calls {
            assert_eq!(
                call.caller.program_id(),
                Some("srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK")
            );
        }
        match i {
            0 => assert_eq!(stream.programs.programs.len(), 1),
            14 => assert_eq!(stream.programs.outputs.len(), 1),
            _ => assert!(stream.programs.programs.is_empty() && stream.programs.outputs.is_empty()),
        }
        // Every message but the last names the container the program waits in.
        assert_eq!(
            stream.programs.container.is_some(),
            i < 14,
            "message {}",
            i + 1
        );
    }
    assert_eq!(calls, 14);
}

/// A program item that a stream sends only whole, in
/// `response.output_item.done`, is kept as one that was opened first.
#[test]
fn a_program_sent_only_whole_in_a_stream_is_kept() {
    let id = "openai-responses";
    let listing = recorded_listing(id);
    let text = std::fs::read_to_string(fixture(
        "openai-responses/vercel__programmatic-tool-calling.1.chunks.jsonl",
    ))
    .unwrap();
    let without_added: String = text
        .lines()
        .filter(|l| {
            !(l.contains("response.output_item.added") && l.contains(r#""type":"program""#))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(without_added.len() < text.len());
    let (stream, whole) = streamed(id, without_added.as_bytes(), &listing);
    assert_eq!(stream.programs.programs.len(), 1, "{:?}", stream.programs);
    assert_eq!(
        serde_json::to_value(&stream).unwrap(),
        serde_json::to_value(&whole).unwrap()
    );
}

#[test]
fn the_callers_rule_is_enforced_on_what_a_listing_declared() {
    // Not open to code: a program's calls are refused, answered with the
    // caller carried back, and never sent.
    let model_only = provider("openai-responses")
        .list_tools(
            &toolset("inventory", inventory_tools()),
            &ListOptions::new(),
        )
        .unwrap();
    let response = read_json(&fixture(
        "openai-responses/vercel__programmatic-tool-calling.1.json",
    ));
    let read = provider("openai-responses")
        .extract_calls(&response, &model_only)
        .unwrap();
    assert!(read.calls.is_empty());
    let rejected = &read.rejected[0];
    assert_eq!(rejected.error.kind(), ErrorKind::Denied);
    assert!(
        rejected.error.message().contains("not open to code"),
        "{}",
        rejected.error
    );
    assert_eq!(
        rejected.answer["caller"],
        json!({"type": "program", "caller_id": OPENAI_PROGRAM})
    );
    assert_eq!(rejected.answer["call_id"], "call_rj6LW6NEyodD5YVKeoexoLNz");
    assert!(
        rejected.answer["output"]
            .as_str()
            .unwrap()
            .contains("not open to code")
    );
    // The programs are still reported.
    assert_eq!(read.programs.programs.len(), 1);

    // Open to code only: the model's own call is refused.
    let code_only = recorded_listing("openai-responses");
    assert_eq!(code_only.callers("getInventory"), Callers::Code);
    assert_eq!(code_only.callers("restock"), Callers::ModelAndCode);
    let direct = json!({"output": [{"type": "function_call", "call_id": "c1", "name": "getInventory",
        "arguments": "{\"sku\": \"a\"}"}, {"type": "function_call", "call_id": "c2", "name": "restock",
        "arguments": "{\"sku\": \"a\"}", "caller": {"type": "direct"}}]});
    let read = provider("openai-responses")
        .extract_calls(&direct, &code_only)
        .unwrap();
    assert_eq!(read.calls.len(), 1);
    assert_eq!(read.calls[0].tool, "restock");
    assert!(read.calls[0].caller.is_model());
    assert!(read.rejected[0].error.message().contains("only from code"));

    // A caller the spec knows neither as the model nor as a program.
    let odd = json!({"output": [{"type": "function_call", "call_id": "c1", "name": "restock",
        "arguments": "{}", "caller": {"type": "robot"}}]});
    let read = provider("openai-responses")
        .extract_calls(&odd, &code_only)
        .unwrap();
    assert!(read.calls.is_empty());
    assert!(
        read.rejected[0]
            .error
            .message()
            .contains("neither the model nor a program")
    );

    // Anthropic: a tool_result, as errors are, tied by its id.
    let dice = provider("anthropic")
        .list_tools(&toolset("dice", dice_tools()), &ListOptions::new())
        .unwrap();
    let response = read_json(&fixture(
        "anthropic/vercel__anthropic-programmatic-tool-calling.1.json",
    ));
    let read = provider("anthropic")
        .extract_calls(&response, &dice)
        .unwrap();
    assert_eq!(read.rejected.len(), 4);
    assert_eq!(read.rejected[0].answer["type"], "tool_result");
    assert_eq!(read.rejected[0].answer["is_error"], true);
}

#[test]
fn listings_open_tools_to_code_in_each_providers_shape() {
    let rule = || {
        CallersRule::new()
            .open("inventory/getInventory")
            .unwrap()
            .only("inventory/getDemand")
            .unwrap()
    };
    let mut items = Vec::new();
    for (id, code_check) in [
        ("openai-responses", "openai-responses/programmatic_tool"),
        ("anthropic", "anthropic/code_execution_tool"),
    ] {
        let listing = provider(id)
            .list_tools(
                &toolset("inventory", inventory_tools()),
                &ListOptions::new().callers(rule()),
            )
            .unwrap();
        assert!(listing.opens_code());
        snapshot(Stage::Listing, Some(id), "programmatic", &listing);
        let (code, tools) = listing.tools.split_last().unwrap();
        items.push(Item::new(
            format!("{id} code tool"),
            code_check,
            code.clone(),
        ));
        for tool in tools {
            items.push(Item::new(
                format!("{id} {}", tool["name"]),
                format!("{id}/tool"),
                tool.clone(),
            ));
        }
        // Only the model calls `restock`: listed as before.
        let before = provider(id)
            .list_tools(
                &toolset("inventory", inventory_tools()),
                &ListOptions::new(),
            )
            .unwrap();
        assert_eq!(tools[2], before.tools[2], "{id}");
        assert_eq!(before.tools.len(), 3);
        // The prompt-caching mark goes to the last tool, the code tool.
        if id == "anthropic" {
            let cached = provider(id)
                .list_tools(
                    &toolset("inventory", inventory_tools()),
                    &ListOptions::new()
                        .callers(rule())
                        .option("cache_control", "last"),
                )
                .unwrap();
            let last = cached.tools.last().unwrap();
            assert_eq!(last["cache_control"], json!({"type": "ephemeral"}));
            items.push(Item::new(
                "anthropic cached code tool",
                code_check,
                last.clone(),
            ));
        }
    }
    check(&items).unwrap_or_else(|e| panic!("{e}"));

    // An empty rule lists as without one; a rule that opens a tool where
    // the provider has no programmatic calling is refused.
    let plain = provider("openai-chat")
        .list_tools(
            &toolset("inventory", inventory_tools()),
            &ListOptions::new().callers(CallersRule::new()),
        )
        .unwrap();
    assert!(!plain.opens_code());
    for id in [
        "openai-chat",
        "gemini",
        "bedrock-converse",
        "anthropic-strict",
        "mistral",
    ] {
        let error = provider(id)
            .list_tools(
                &toolset("inventory", inventory_tools()),
                &ListOptions::new().callers(rule()),
            )
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Input, "{id}");
        assert!(
            error.message().contains("has no programmatic tool calling"),
            "{id}: {error}"
        );
    }

    // Every tool annotated read-only, with the switch.
    let mut read_only = Tool::new("peek", "Reads", json!({"type": "object"}));
    read_only.annotations = Some(serde_json::from_value(json!({"readOnlyHint": true})).unwrap());
    let listing = provider("anthropic")
        .list_tools(
            &toolset(
                "x",
                vec![
                    read_only,
                    Tool::new("poke", "Writes", json!({"type": "object"})),
                ],
            ),
            &ListOptions::new().callers(CallersRule::new().read_only(true)),
        )
        .unwrap();
    assert_eq!(
        listing.tools[0]["allowed_callers"],
        json!(["direct", "code_execution_20260120"])
    );
    assert!(listing.tools[1].get("allowed_callers").is_none());
}

/// What a rule decides is kept with the toolset for that rule alone: one
/// toolset listed again and again under different rules is declared as a
/// toolset built anew for each is.
#[test]
fn a_toolset_listed_again_under_another_rule_is_decided_by_that_rule() {
    let rules = [
        CallersRule::new().open("inventory/get*").unwrap(),
        CallersRule::new().only("inventory/getDemand").unwrap(),
        CallersRule::new()
            .open("inventory/get*")
            .unwrap()
            .only("*/restock")
            .unwrap(),
        CallersRule::new().open("inventory/get*").unwrap(),
    ];
    for id in ["openai-responses", "anthropic"] {
        let kept = toolset("inventory", inventory_tools());
        for round in 0..3 {
            for rule in &rules {
                let options = ListOptions::new().callers(rule.clone());
                let listing = provider(id).list_tools(&kept, &options).unwrap();
                let fresh = provider(id)
                    .list_tools(&toolset("inventory", inventory_tools()), &options)
                    .unwrap();
                assert_eq!(listing.tools, fresh.tools, "{id}, round {round}, {rule:?}");
                for name in ["getInventory", "getDemand", "restock"] {
                    assert_eq!(listing.callers(name), fresh.callers(name), "{id}: {name}");
                }
            }
            let plain = provider(id).list_tools(&kept, &ListOptions::new()).unwrap();
            assert!(!plain.opens_code());
            assert_eq!(plain.callers("getDemand"), Callers::Model);
        }
    }
    // The rules decide differently: the kept decisions are not one rule's.
    let listing = |rule: &CallersRule| {
        provider("anthropic")
            .list_tools(
                &toolset("inventory", inventory_tools()),
                &ListOptions::new().callers(rule.clone()),
            )
            .unwrap()
    };
    assert_eq!(
        listing(&rules[0]).callers("getDemand"),
        Callers::ModelAndCode
    );
    assert_eq!(listing(&rules[1]).callers("getDemand"), Callers::Code);
    assert_eq!(listing(&rules[2]).callers("restock"), Callers::Code);
}

/// The call `index` of the recorded OpenAI exchange, as read.
fn openai_call(n: u8) -> (mcp_adapters::ToolCall, Listing) {
    let listing = recorded_listing("openai-responses");
    let response = read_json(&fixture(&format!(
        "openai-responses/vercel__programmatic-tool-calling.{n}.json"
    )));
    let call = provider("openai-responses")
        .extract_calls(&response, &listing)
        .unwrap()
        .calls
        .remove(0);
    (call, listing)
}

#[test]
fn a_program_is_answered_with_its_caller_and_the_structured_result() {
    let (call, listing) = openai_call(1);
    let openai = provider("openai-responses");
    let mut result = CallToolResult::text("42 units of sku_123");
    result.structured_content = Some(json!({"sku": "sku_123", "availableUnits": 42}));
    // No budget applies: the model never reads it.
    let options = ResultOptions::new().max_result_tokens(1);
    let answer = openai
        .answer_program(&call, &listing, Outcome::Completed(&result), &options)
        .unwrap();
    assert_eq!(
        answer,
        json!({"type": "function_call_output", "call_id": "call_rj6LW6NEyodD5YVKeoexoLNz",
            "output": "{\"sku\":\"sku_123\",\"availableUnits\":42}",
            "caller": {"type": "program", "caller_id": OPENAI_PROGRAM}})
    );
    let mut items = vec![Item::new(
        "structured",
        "openai-responses/result",
        answer.clone(),
    )];
    snapshot(Stage::Results, Some("openai-responses"), "program", &answer);

    // A tool listed with its output schema has its answer parsed as JSON:
    // a text goes as a JSON string, an error too.
    let text = openai
        .answer_program(
            &call,
            &listing,
            Outcome::Completed(&CallToolResult::text("a \"b\"")),
            &options,
        )
        .unwrap();
    assert_eq!(text["output"], r#""a \"b\"""#);
    let failure = Error::new(ErrorKind::Denied, "not today");
    let denied = openai
        .answer_program(&call, &listing, Outcome::Failed(&failure), &options)
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(denied["output"].as_str().unwrap()).unwrap(),
        "Error: not today"
    );
    items.push(Item::new("text", "openai-responses/result", text));
    items.push(Item::new("error", "openai-responses/result", denied));

    // A medium is an error naming it; a result over the cap too.
    let mut image = CallToolResult::text("the chart");
    image.content.push(Content::from_value(
        json!({"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}),
    ));
    let refused = openai
        .answer_program(&call, &listing, Outcome::Completed(&image), &options)
        .unwrap();
    let said: String = serde_json::from_str(refused["output"].as_str().unwrap()).unwrap();
    assert!(said.starts_with("Error: "), "{said}");
    assert!(
        said.contains("image: image/png") && said.contains("a program cannot take"),
        "{said}"
    );
    let big = CallToolResult::text("x".repeat(100));
    let capped = openai
        .answer_program(
            &call,
            &listing,
            Outcome::Completed(&big),
            &options.clone().max_program_result_bytes(50),
        )
        .unwrap();
    let said: String = serde_json::from_str(capped["output"].as_str().unwrap()).unwrap();
    assert!(
        said.contains("102 bytes, over the cap of 50 bytes"),
        "{said}"
    );
    items.push(Item::new(
        "media refused",
        "openai-responses/result",
        refused,
    ));

    // A tool listed without an output schema gets its text as it is.
    let restock = {
        let mut c = call.clone();
        c.exposed_name = "restock".into();
        c.tool = "restock".into();
        c
    };
    let plain = openai
        .answer_program(
            &restock,
            &listing,
            Outcome::Completed(&CallToolResult::text("ordered")),
            &options,
        )
        .unwrap();
    assert_eq!(plain["output"], "ordered");

    // The model's own call is answered with `answer`.
    let mut direct = call.clone();
    direct.caller = Caller::Model;
    assert!(
        openai
            .answer_program(&direct, &listing, Outcome::Completed(&result), &options)
            .is_err()
    );

    // Anthropic: a tool_result, the result as a string.
    let listing = recorded_listing("anthropic");
    let response = read_json(&fixture(
        "anthropic/vercel__anthropic-programmatic-tool-calling.1.json",
    ));
    let call = provider("anthropic")
        .extract_calls(&response, &listing)
        .unwrap()
        .calls
        .remove(0);
    let roll = provider("anthropic")
        .answer_program(
            &call,
            &listing,
            Outcome::Completed(&CallToolResult::text("6")),
            &options,
        )
        .unwrap();
    assert_eq!(
        roll,
        json!({"type": "tool_result", "tool_use_id": "toolu_01PMcE1JBKCeLjn83cgUCvR5", "content": "6"})
    );
    let failed = provider("anthropic")
        .answer_program(&call, &listing, Outcome::Failed(&failure), &options)
        .unwrap();
    assert_eq!(failed["is_error"], true);
    snapshot(
        Stage::Results,
        Some("anthropic"),
        "program",
        json!([roll, failed]),
    );
    items.push(Item::new("anthropic roll", "anthropic/result", roll));
    items.push(Item::new("anthropic failed", "anthropic/result", failed));
    check(&items).unwrap_or_else(|e| panic!("{e}"));
}

/// A server with the recorded exchange's tools, their results structured.
fn inventory_server(log: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> InProcessServer {
    let mut server = InProcessServer::new();
    for tool in inventory_tools() {
        let name = tool.name.clone();
        let log = log.clone();
        server = server.tool(tool, move |args, ctx| {
            log.lock().unwrap().push(format!(
                "{name} {} key={}",
                args["sku"],
                ctx.idempotency_key.is_some()
            ));
            let name = name.clone();
            async move {
                let (field, units) = match name.as_str() {
                    "getInventory" => ("availableUnits", 42),
                    "getDemand" => ("requestedUnits", 31),
                    _ => {
                        return Ok(CallToolResult::text(
                            "a long text that a budget would cut ".repeat(20),
                        ));
                    }
                };
                let mut result = CallToolResult::text(format!("{units}"));
                result.structured_content = Some(json!({"sku": "sku_123", field: units}));
                Ok(result)
            }
        });
    }
    server
}

#[test]
fn execution_answers_programs_under_the_policy_and_reports_them() {
    common::current_thread_runtime().block_on(async {
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let policy = Policy::new()
            .allow("inventory/*")
            .unwrap()
            .programmatic_only("inventory/get*")
            .unwrap()
            .programmatic("inventory/restock")
            .unwrap();
        let source = Source::client("inventory", inventory_server(log.clone()))
            .policy(policy)
            .build()
            .unwrap();
        let openai = provider("openai-responses");
        // The source lists with its policy's callers rule.
        let listing = source.tools(openai, &ListOptions::new()).await.unwrap();
        assert_eq!(listing.callers("getDemand"), Callers::Code);
        assert_eq!(listing.tools.last().unwrap(), &json!({"type": "programmatic_tool_calling"}));
        let options = ExecOptions::new().results(ResultOptions::new().max_result_tokens(5));
        let mut outputs = Vec::new();
        for n in 1..=3 {
            let response = read_json(&fixture(&format!(
                "openai-responses/vercel__programmatic-tool-calling.{n}.json"
            )));
            let run = source
                .execute_tool_calls(openai, &response, &listing, &options)
                .await
                .unwrap();
            assert_eq!(run.status, Status::Ok);
            for (record, answer) in run.calls.iter().zip(&run.turn.results) {
                assert!(record.ran, "{record:?}");
                assert_eq!(record.caller.program_id(), Some(OPENAI_PROGRAM));
                assert!(record.warnings.is_empty(), "{:?}", record.warnings);
                assert_eq!(answer["caller"]["caller_id"], OPENAI_PROGRAM);
                outputs.push(answer["output"].as_str().unwrap().to_owned());
            }
            assert_eq!(run.programs.programs.len(), usize::from(n == 1));
            assert_eq!(run.programs.outputs.len(), usize::from(n == 3));
            assert!(!run.results_only);
        }
        // The structured results, whole, though the model's budget is 5 tokens.
        assert_eq!(
            outputs,
            [
                r#"{"sku":"sku_123","availableUnits":42}"#,
                r#"{"sku":"sku_123","requestedUnits":31}"#
            ]
        );
        // Each call sent once, with its idempotency key.
        assert_eq!(
            *log.lock().unwrap(),
            ["getInventory \"sku_123\" key=true", "getDemand \"sku_123\" key=true"]
        );

        // A turn with a program's call and the model's own: only the
        // model's answer is cut to its budget.
        let mixed = json!({"output": [
            {"type": "function_call", "call_id": "p1", "name": "getDemand", "arguments": "{\"sku\":\"sku_123\"}",
             "caller": {"type": "program", "caller_id": "prog"}},
            {"type": "function_call", "call_id": "m1", "name": "restock", "arguments": "{\"sku\":\"sku_123\"}"}]});
        let run = source
            .execute_tool_calls(openai, &mixed, &listing, &options)
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["output"], r#"{"sku":"sku_123","requestedUnits":31}"#);
        assert!(run.calls[1].warnings[0].contains("cut to its budget"), "{:?}", run.calls[1]);
        assert!(run.turn.results[1].get("caller").is_none());
    });
}

#[test]
fn a_programs_call_waits_for_approval_with_its_containers_expiry() {
    common::current_thread_runtime().block_on(async {
        let server = InProcessServer::new().tool(dice_tools().remove(0), |_args, _ctx| async {
            Ok(CallToolResult::text("6"))
        });
        let policy = Policy::new()
            .ask("dice/*")
            .unwrap()
            .programmatic_only("dice/*")
            .unwrap();
        let source = Source::client("dice", server)
            .policy(policy)
            .approver(|request| {
                // The approver sees who made the call.
                assert!(!request.call.caller.is_model());
                Box::pin(async { mcp_adapters::exec::Approval::Later })
            })
            .build()
            .unwrap();
        let anthropic = provider("anthropic");
        let listing = source.tools(anthropic, &ListOptions::new()).await.unwrap();
        let response = read_json(&fixture(
            "anthropic/vercel__anthropic-programmatic-tool-calling.1.json",
        ));
        let suspended = source
            .execute_tool_calls(
                anthropic,
                &response,
                &listing,
                &ExecOptions::new().suspend(true),
            )
            .await
            .unwrap();
        assert_eq!(suspended.status, Status::Suspended);
        assert_eq!(suspended.waiting.len(), 4);
        for waiting in &suspended.waiting {
            assert_eq!(waiting.caller.program_id(), Some(ANTHROPIC_PROGRAM));
            assert_eq!(
                waiting.expires_at.as_deref(),
                Some("2025-12-20T05:43:56.821156Z")
            );
        }
        let state = suspended.suspended.unwrap();
        let bytes = state.to_json().unwrap();
        let state = mcp_adapters::exec::TurnState::from_json(&bytes).unwrap();
        assert_eq!(
            state.waiting()[0].expires_at,
            suspended.waiting[0].expires_at
        );
        // Approved, the calls run and are answered as a program's: a
        // message of tool results only.
        let mut options = ExecOptions::new();
        for waiting in &suspended.waiting {
            options = options.approve_call(waiting.call_id.as_deref().unwrap());
        }
        let resumed = source
            .resume_turn(anthropic, state, &listing, &options)
            .await
            .unwrap();
        assert_eq!(resumed.status, Status::Ok);
        assert!(resumed.results_only);
        assert_eq!(resumed.turn.results.len(), 4);
        assert!(
            resumed
                .turn
                .results
                .iter()
                .all(|r| r["content"] == "6" && r["type"] == "tool_result")
        );
        assert_eq!(
            resumed.programs.container.as_ref().unwrap().id,
            "container_011CWHQB57xVregfCMPrKgew"
        );
    });
}

/// A program's call is traced as any, its span naming its caller and
/// program.
#[cfg(feature = "otel")]
#[test]
fn a_programs_call_is_traced_with_its_caller() {
    let traced = common::traces::traced();
    common::current_thread_runtime().block_on(async {
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let policy = Policy::allow_all().programmatic("inventory/*").unwrap();
        let source = Source::client("inventory", inventory_server(log))
            .policy(policy)
            .build()
            .unwrap();
        let openai = provider("openai-responses");
        let listing = source.tools(openai, &ListOptions::new()).await.unwrap();
        let response = read_json(&fixture(
            "openai-responses/vercel__programmatic-tool-calling.1.json",
        ));
        let direct = json!({"output": [{"type": "function_call", "call_id": "m1", "name": "restock",
            "arguments": "{\"sku\":\"a\"}"}]});
        for response in [response, direct] {
            source
                .execute_tool_calls(openai, &response, &listing, &ExecOptions::new())
                .await
                .unwrap();
        }
    });
    let spans = traced.spans();
    let attr = |span: &opentelemetry_sdk::trace::SpanData, key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    let execute: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool"))
        .collect();
    assert_eq!(execute.len(), 2, "{spans:?}");
    let program = execute
        .iter()
        .find(|s| s.name == "execute_tool getInventory")
        .unwrap();
    assert_eq!(
        attr(program, "mcp_adapters.caller").as_deref(),
        Some("program")
    );
    assert_eq!(
        attr(program, "mcp_adapters.program_id").as_deref(),
        Some(OPENAI_PROGRAM)
    );
    let model = execute
        .iter()
        .find(|s| s.name == "execute_tool restock")
        .unwrap();
    assert_eq!(attr(model, "mcp_adapters.caller"), None);
}
