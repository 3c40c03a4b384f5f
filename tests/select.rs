//! Result selection ([`ListOptions::select`]): the argument in every core
//! provider's listing (snapshots; strict schemas keep it nullable and
//! required), the argument never reaching a server (a property test), and
//! hostile filters (endless recursion, huge outputs, deep nesting of the
//! filter and of the result, values built past the memory limit), each
//! answered with an error within its limits.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_adapters::select::SELECT_ARGUMENT;
use mcp_adapters::*;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The input schema of a listing's definition, wherever the provider's
/// format puts it.
fn schema_of(definition: &Value) -> &Value {
    for pointer in [
        "/input_schema",
        "/function/parameters",
        "/parameters",
        "/toolSpec/inputSchema/json",
        "/parameter_definitions",
    ] {
        if let Some(schema) = definition.pointer(pointer) {
            return schema;
        }
    }
    panic!("no schema in {definition:#}")
}

#[test]
fn listings_with_the_selection_argument() {
    let tools = corpus_tools("memory");
    let toolset = ToolSet::client().server("memory", tools).build().unwrap();
    for id in LISTING_PROVIDERS {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new().select(SELECT_ARGUMENT))
            .unwrap();
        assert_eq!(listing.tools.len(), toolset.len(), "{id}");
        snapshot(Stage::Listing, Some(id), "memory_select", &listing);
    }
    // Strict: the argument is nullable and required, and its null is stripped.
    for id in ["openai-chat", "openai-responses"] {
        let listing = provider(id)
            .list_tools(
                &toolset,
                &ListOptions::new()
                    .strict(StrictMode::On)
                    .select(SELECT_ARGUMENT),
            )
            .unwrap();
        snapshot(Stage::Listing, Some(id), "memory_select_strict", &listing);
        for def in &listing.tools {
            let schema = schema_of(def);
            let required: Vec<&str> = schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert!(required.contains(&SELECT_ARGUMENT), "{id}: {def:#}");
            let property = &schema["properties"][SELECT_ARGUMENT];
            assert!(property.to_string().contains("null"), "{id}: {property}");
        }
    }
}

#[test]
fn a_tool_with_a_property_of_that_name_keeps_its_own() {
    let own = json!({"type": "object", "properties": {"jq_filter": {"type": "integer", "description": "the server's own"}}});
    let tools = vec![
        Tool::new("mine", "Has the name already", own.clone()),
        Tool::new("plain", "Has none", json!({"type": "object"})),
    ];
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let listing = provider("anthropic")
        .list_tools(&toolset, &ListOptions::new().select(SELECT_ARGUMENT))
        .unwrap();
    assert_eq!(listing.tools[0]["input_schema"], own);
    let added = &listing.tools[1]["input_schema"]["properties"][SELECT_ARGUMENT];
    assert_eq!(added["type"], "string");
    assert!(
        added["description"].as_str().unwrap().contains("jq"),
        "{added}"
    );
    // The application may name the argument.
    let listing = provider("anthropic")
        .list_tools(&toolset, &ListOptions::new().select("_select"))
        .unwrap();
    assert!(listing.tools[0]["input_schema"]["properties"]["_select"].is_object());
}

/// A server that records the arguments of each call, and answers with a
/// structured result.
fn recording_server(sent: Arc<Mutex<Vec<Map<String, Value>>>>, own: bool) -> InProcessServer {
    let schema = match own {
        true => {
            json!({"type": "object", "properties": {"q": {"type": "string"}, "jq_filter": {"type": "string"}}})
        }
        false => {
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false})
        }
    };
    InProcessServer::new().tool(
        Tool::new("find", "Finds things", schema),
        move |arguments, _context| {
            sent.lock().unwrap().push(arguments);
            async {
                Ok(serde_json::from_value(json!({
                    "content": [{"type": "text", "text": "{\"items\":[{\"name\":\"a\",\"id\":1},{\"name\":\"b\",\"id\":2}]}"}],
                    "structuredContent": {"items": [{"name": "a", "id": 1}, {"name": "b", "id": 2}]}
                }))
                .unwrap())
            }
        },
    )
}

fn filter_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(".items[0].name")),
        Just(json!("[.items[] | .id]")),
        Just(json!("def f: f; f")),
        Just(json!("not a filter ((")),
        Just(json!("")),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the model writes in the selection argument, whichever
    /// provider and strict mode, the server receives the other arguments
    /// as written and never the selection argument; a tool that has a
    /// property of that name receives its own.
    #[test]
    fn the_selection_argument_never_reaches_a_server(
        q in proptest::option::of("[a-z]{0,6}"),
        filter in proptest::option::of(filter_value()),
        own in any::<bool>(),
        which in 0usize..2,
        strict in any::<bool>(),
    ) {
        let id = ["anthropic", "openai-chat"][which];
        let p = provider(id);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let source = Source::client("s", recording_server(sent.clone(), own))
            .policy(Policy::allow_all())
            .build()
            .unwrap();
        let mut arguments = Map::new();
        if let Some(q) = &q {
            arguments.insert("q".into(), json!(q));
        }
        if let Some(filter) = &filter {
            arguments.insert(SELECT_ARGUMENT.into(), filter.clone());
        }
        let mode = if strict { StrictMode::On } else { StrictMode::Off };
        let run = current_thread_runtime().block_on(async {
            let listing = source
                .tools(p, &ListOptions::new().strict(mode).select(SELECT_ARGUMENT))
                .await
                .unwrap();
            let response = model_response(id, &[("find".into(), Value::Object(arguments.clone()))]);
            source
                .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
                .await
                .unwrap()
        });
        let sent = sent.lock().unwrap().clone();
        prop_assert_eq!(run.turn.results.len(), 1);
        let mut expected = arguments.clone();
        // The spec of openai-chat has strict rules; anthropic's has none.
        let stripped = strict && id == "openai-chat";
        if !own || (filter == Some(Value::Null) && stripped) {
            // Taken out; or, for the tool's own property, strict mode's
            // null stripped as every null path is.
            expected.remove(SELECT_ARGUMENT);
        }
        let not_a_string = filter.as_ref().is_some_and(|f| !f.is_null() && !f.is_string());
        if !own && not_a_string {
            // Refused with why: a filter is a string. Never sent.
            prop_assert!(sent.is_empty(), "{:?}", sent);
            prop_assert!(run.calls[0].error.is_some());
        } else if !own {
            prop_assert_eq!(sent.len(), 1, "{:?}", run.calls[0].error);
        }
        for arguments in &sent {
            // The server's own property reaches it as the model wrote it;
            // ours never does.
            prop_assert_eq!(arguments, &expected);
        }
    }
}

/// Runs one call to `find` with `filter` and gives the answer's text and
/// whether the record holds the whole result.
fn select_through_source(filter: &str, result: Value, limits: SelectLimits) -> (String, bool) {
    let result: CallToolResult = serde_json::from_value(result).unwrap();
    let server = InProcessServer::new().tool(
        Tool::new("find", "Finds things", json!({"type": "object"})),
        move |_arguments, _context| {
            let result = result.clone();
            async move { Ok(result) }
        },
    );
    let source = Source::client("s", server)
        .policy(Policy::allow_all())
        .build()
        .unwrap();
    let p = provider("anthropic");
    let runtime = runtime();
    let run = runtime.block_on(async {
        // A hang guard only: every filter here ends far sooner.
        tokio::time::timeout(Duration::from_secs(300), async {
            let listing = source
                .tools(p, &ListOptions::new().select(SELECT_ARGUMENT))
                .await
                .unwrap();
            let response = model_response(
                "anthropic",
                &[("find".into(), json!({"jq_filter": filter}))],
            );
            let options = ExecOptions::new().results(ResultOptions::new().select_limits(limits));
            source
                .execute_tool_calls(p, &response, &listing, &options)
                .await
                .unwrap()
        })
        .await
        .expect("the filter's turn ends")
    });
    let whole = run.calls[0].result.is_some();
    let content = &run.turn.results[0]["content"];
    let text = match content {
        Value::String(text) => text.clone(),
        _ => content
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    (text, whole)
}

#[test]
fn a_filter_selects_from_the_structured_result() {
    let result = json!({
        "content": [{"type": "text", "text": "ignored when structured"}],
        "structuredContent": {"items": [{"name": "a", "id": 1, "big": "x"}, {"name": "b", "id": 2}]}
    });
    let (text, whole) =
        select_through_source("[.items[] | .name]", result, SelectLimits::default());
    assert_eq!(text, r#"["a","b"]"#);
    assert!(whole, "the record keeps the whole result");
}

#[test]
fn hostile_filters_end_with_an_error_within_the_limits() {
    let result = json!({"content": [{"type": "text", "text": "[1, 2, 3]"}]});
    let limits = SelectLimits::default()
        .steps(200_000)
        .output_bytes(64 << 10);
    // Under the 4 KiB a filter may have, nested far past the 64 allowed.
    let deep_filter = format!("{}1{}", "[".repeat(2000), "]".repeat(2000));
    let deep_parens = format!("{}.{}", "(".repeat(2000), ")".repeat(2000));
    let cases: Vec<(&str, String, &str)> = vec![
        ("endless recursion", "def f: f; f".into(), "steps"),
        ("endless non-tail recursion", "def f: 1 + f; f".into(), ""),
        ("endless output", "repeat(.)".into(), ""),
        ("a long reduction", "[range(1e12)] | length".into(), "steps"),
        (
            "a reduction over a huge range",
            "reduce range(1e12) as $i (0; . + $i)".into(),
            "steps",
        ),
        ("a huge output", "[range(1e6)]".into(), ""),
        (
            "a string repeated past the output",
            "\"x\" * 100000".into(),
            "bytes",
        ),
        ("deep nesting", deep_filter, "nests"),
        ("deep parentheses", deep_parens, "nests"),
        (
            "a deep value built",
            "reduce range(1e6) as $i (0; [.])".into(),
            "",
        ),
        ("a parse error", ".[".into(), "does not parse"),
        ("a failure", "error(\"no\")".into(), "no"),
        ("the environment", "env".into(), "not available"),
        ("halting", "halt_error".into(), "not available"),
    ];
    for (what, filter, says) in cases {
        let (text, whole) = select_through_source(&filter, result.clone(), limits);
        assert!(whole, "{what}: the call ran once and its result is kept");
        assert!(
            text.contains("jq filter") || text.contains("jaq"),
            "{what}: {text}"
        );
        assert!(text.contains(says), "{what}: {text}");
    }
}

#[test]
fn deeply_nested_results_are_refused_not_crashed_on() {
    // Nested deeper than serde_json reads text (128): built as a value.
    let mut deep = json!(1);
    for _ in 0..600 {
        deep = json!([deep]);
    }
    let result =
        json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"v": deep}});
    let (text, _) = select_through_source(".", result, SelectLimits::default());
    assert!(text.contains("nests deeper"), "{text}");
}

#[test]
fn a_result_that_is_not_json_is_answered_with_why() {
    let result = json!({"content": [{"type": "text", "text": "plain words"}]});
    let (text, whole) = select_through_source(".", result, SelectLimits::default());
    assert!(text.contains("not JSON"), "{text}");
    assert!(whole);
}

/// Each filter here would take the process down if it were allowed to build
/// what it asks for (a terabyte at once, or a value doubled past the
/// machine): each ends with an error naming the memory limit, nothing of it
/// allocated, and the call's result is kept.
#[test]
fn filters_that_build_past_the_memory_limit_end_with_an_error_naming_it() {
    let result =
        json!({"content": [{"type": "text", "text": "{\"items\": [1, 2, 3], \"s\": \"ab\"}"}]});
    let limits = SelectLimits::default().memory(1 << 20);
    let doubled = "reduce range(40) as $i (0; [., .])";
    let cases: Vec<(&str, String)> = vec![
        (
            "a string repeated a trillion times",
            "\"x\" * 1000000000000".into(),
        ),
        (
            "a string repeated by a number made whole",
            "\"x\" * (1e12 | floor)".into(),
        ),
        (
            "a string repeated by a big integer",
            "\"x\" * 100000000000000000000000".into(),
        ),
        (
            "a string doubled",
            "reduce range(64) as $i (.s; . + .)".into(),
        ),
        (
            "a string doubled in place",
            "reduce range(64) as $i (.; .s += .s)".into(),
        ),
        (
            "an array doubled",
            "reduce range(64) as $i (.items; . + .)".into(),
        ),
        (
            "a shared value written by tojson",
            format!("{doubled} | tojson"),
        ),
        (
            "a shared value written by tostring",
            format!("{doubled} | tostring"),
        ),
        (
            "a shared value interpolated",
            format!("{doubled} | \"v: \\(.)\""),
        ),
        (
            "a shared value written by @json",
            format!("{doubled} | @json"),
        ),
        (
            "a shared value written by @html",
            format!("{doubled} | @html"),
        ),
        (
            "a shared object merged with itself",
            "reduce range(40) as $i ({}; {a: ., b: .}) | . * .".into(),
        ),
        ("a large string exploded", "\"x\" * 100000 | explode".into()),
        ("a large string escaped", "\"<\" * 200000 | @html".into()),
        (
            "many large strings",
            "[limit(100; repeat(\"x\" * 1000000))]".into(),
        ),
        (
            "each of an iteration repeated",
            ".s as $s | .items[] | $s * 300000 | length".into(),
        ),
        (
            "a large array sorted many times",
            "[range(10000)] as $a | [range(100) | $a | sort | length]".into(),
        ),
        (
            "a large string split",
            "\"a,\" * 400000 | split(\",\") | length".into(),
        ),
    ];
    for (what, filter) in cases {
        let (text, whole) = select_through_source(&filter, result.clone(), limits);
        assert!(whole, "{what}: the call ran once and its result is kept");
        assert!(
            text.contains("memory limit of 1048576 bytes"),
            "{what}: {filter}: {text}"
        );
    }
}

/// An integer squared until it would take more than 64 KiB (each product
/// slower than the last) ends with an error saying so.
#[test]
fn a_huge_integer_ends_the_filter() {
    let result = json!({"content": [{"type": "text", "text": "3"}]});
    let (text, _) = select_through_source(
        "reduce range(64) as $i (.; . * .)",
        result,
        SelectLimits::default(),
    );
    assert!(
        text.contains("an integer of more than 65536 bytes"),
        "{text}"
    );
}

/// Filters that build what they need, well under the limit, are not
/// refused; the operators keep jq's meaning.
#[test]
fn filters_within_the_memory_limit_run_as_jq_says() {
    let result = json!({
        "content": [{"type": "text", "text": "x"}],
        "structuredContent": {"items": [{"name": "a", "n": 1}, {"name": "b", "n": 2}], "s": "ab"}
    });
    let limits = SelectLimits::default().memory(1 << 20);
    for (filter, expected) in [
        ("[.items[].name] | join(\",\")", r#""a,b""#),
        (".s * 3", r#""ababab""#),
        ("[(1, 2) + (10, 20)]", "[11,21,12,22]"),
        ("[.items[] | .n *= 10 | .n += 1 | .n]", "[11,21]"),
        (
            "{a: 1} * {b: {c: 2}} * {b: {d: 3}}",
            r#"{"a":1,"b":{"c":2,"d":3}}"#,
        ),
        ("\"\\(.s)-\\(.items | length)\"", r#""ab-2""#),
        ("@json \"v=\\(.s)\"", r#""v=\"ab\"""#),
        (".items | tojson | fromjson | length", "2"),
        (".s | explode | implode", r#""ab""#),
        ("[.items[] | .name] | sort | reverse", r#"["b","a"]"#),
        (".s / \"\"", r#"["a","b"]"#),
        ("null + {a: 1}", r#"{"a":1}"#),
        ("4611686018427387904 * 4", "18446744073709551616"),
    ] {
        let (text, _) = select_through_source(filter, result.clone(), limits);
        assert_eq!(text, expected, "{filter}");
    }
}
