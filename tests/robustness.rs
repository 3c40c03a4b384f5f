//! "Never panics, always answers": property tests over the four entry points
//! that take untrusted input, with arbitrary nested JSON and with structured
//! generators for plausible specs, schemas, responses and results (built-in
//! fixtures with random parts replaced). The always-on counterparts of the
//! fuzz targets under `fuzz/`.

mod common;

use std::path::Path;

use mcp_adapters::CallToolResult;
use mcp_adapters::ErrorKind;
use mcp_adapters::ListOptions;
use mcp_adapters::Registry;
use mcp_adapters::ToolSet;
use mcp_adapters::results::{Shape, StructuredMode};
use mcp_adapters::spec::SpecFile;
use mcp_adapters::strict::convert;
use mcp_adapters::{Outcome, ResultOptions};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Keys the entry points look at, so that generated objects often hit real paths.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "anyOf",
    "allOf",
    "oneOf",
    "$ref",
    "$defs",
    "enum",
    "const",
    "format",
    "additionalProperties",
    "description",
    "content",
    "tool_calls",
    "function",
    "name",
    "arguments",
    "id",
    "input",
    "args",
    "functionCall",
    "toolUse",
    "toolUseId",
    "call_id",
    "output",
    "candidates",
    "parts",
    "message",
    "choices",
    "text",
    "data",
    "mimeType",
    "uri",
    "resource",
    "blob",
    "structuredContent",
    "isError",
    "_meta",
    "title",
    "tools",
    "definition",
    "calls",
    "results",
    "locate",
    "select",
    "envelope",
    "media",
    "strict",
    "keywords",
    "keep",
    "drop",
    "limits",
    "extends",
];

const WORDS: &[&str] = &[
    "object",
    "string",
    "array",
    "integer",
    "null",
    "tool_use",
    "function",
    "function_call",
    "image",
    "audio",
    "resource",
    "resource_link",
    "text",
    "image/png",
    "audio/wav",
    "everything__echo",
    "time__get_current_time",
    "unknown_tool",
    "#",
    "#/$defs/a",
    "QUJD",
    "!!",
    "{}",
    "{\"message\": \"hi\"}",
    "{not json",
    "[1]",
    "",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-z$_]{0,6}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        proptest::sample::select(WORDS).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ]
}

/// Arbitrary nested JSON.
fn json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 96, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Every JSON pointer in `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let token = k.replace('~', "~0").replace('/', "~1");
                pointers(v, format!("{at}/{token}"), out);
            }
        }
        _ => {}
    }
}

/// `base` with up to three random places replaced by random JSON.
fn mutated(bases: Vec<Value>) -> impl Strategy<Value = Value> {
    let edits = proptest::collection::vec((any::<prop::sample::Index>(), json()), 1..4);
    (proptest::sample::select(bases), edits).prop_map(|(mut base, edits)| {
        for (index, replacement) in edits {
            let mut all = Vec::new();
            pointers(&base, String::new(), &mut all);
            let at = &all[index.index(all.len())];
            if let Some(slot) = base.pointer_mut(at) {
                *slot = replacement;
            }
        }
        base
    })
}

fn fixture_dir(rel: &str) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let mut files: Vec<_> = walk(&dir);
    files.sort();
    files.iter().map(|p| common::read_json(p)).collect()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out
}

/// The bundled specs and rules as JSON values (JSON is YAML, so they load back).
fn spec_values(under: &str) -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(under);
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| serde_saphyr::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

fn corpus_schemas() -> Vec<Value> {
    let mut out = Vec::new();
    for server in ["everything", "time", "github", "memory"] {
        for tool in common::corpus_tools(server) {
            out.push(tool.input_schema);
        }
    }
    out
}

/// Every provider's listing of a corpus hub.
fn listings() -> &'static [mcp_adapters::Listing] {
    static SET: std::sync::OnceLock<Vec<mcp_adapters::Listing>> = std::sync::OnceLock::new();
    SET.get_or_init(|| {
        let toolset = ToolSet::hub()
            .server("everything", common::corpus_tools("everything"))
            .server("time", common::corpus_tools("time"))
            .build()
            .unwrap();
        Registry::builtin()
            .unwrap()
            .providers()
            .map(|p| p.list_tools(&toolset, &ListOptions::new()).unwrap())
            .collect()
    })
}

fn check_spec(text: String) {
    for source in [
        SpecFile::provider("gen", "gen.yaml", text.clone()),
        SpecFile::rules("gen", "rules/gen.yaml", text),
    ] {
        // Ok or an error; a panic fails the test.
        let _ = Registry::from_files(vec![source]);
    }
}

fn check_schema(schema: &Value) {
    let registry = Registry::builtin().unwrap();
    for id in registry.rules_ids() {
        let _ = convert(schema, registry.rules(id).unwrap());
    }
}

fn check_extraction(response: &Value) -> Result<(), TestCaseError> {
    for (provider, listing) in Registry::builtin().unwrap().providers().zip(listings()) {
        let toolset = listing.toolset();
        match provider.extract_calls(response, listing) {
            Ok(extracted) => {
                let mut indexes: Vec<usize> = extracted
                    .calls
                    .iter()
                    .map(|c| c.index)
                    .chain(extracted.rejected.iter().map(|r| r.index))
                    .collect();
                indexes.sort_unstable();
                // Every call item is exactly one of: a call, a rejection.
                prop_assert_eq!(indexes, (0..extracted.len()).collect::<Vec<_>>());
                for call in &extracted.calls {
                    let tool = toolset.resolve(&call.exposed_name);
                    prop_assert!(tool.is_some(), "{} not in the toolset", call.exposed_name);
                }
                for rejected in &extracted.rejected {
                    prop_assert!(!rejected.answer.is_null());
                }
            }
            Err(err) => prop_assert_eq!(err.kind(), ErrorKind::Input, "{}", err),
        }
    }
    Ok(())
}

fn check_answers(value: Value) -> Result<(), TestCaseError> {
    let Ok(result) = serde_json::from_value::<CallToolResult>(value) else {
        return Ok(());
    };
    for provider in Registry::builtin().unwrap().providers() {
        for structured in [
            StructuredMode::Auto,
            StructuredMode::Prefer,
            StructuredMode::Append,
            StructuredMode::Ignore,
        ] {
            for shape in [Shape::Llm, Shape::None] {
                let options = ResultOptions::new().structured(structured).shape(shape);
                let answer =
                    provider.answer(Some("c1"), "t", Outcome::Completed(&result), &options);
                prop_assert!(answer.is_ok(), "{}: {:?}", provider.id(), answer);
                let media = provider.options().filter(|(name, _)| *name == "media");
                for value in media.flat_map(|(_, values)| values) {
                    let options = options.clone().option("media", value);
                    let turn = provider
                        .answer_all([(Some("c1"), "t", Outcome::Completed(&result))], &options);
                    prop_assert!(turn.is_ok(), "{} media={value}: {:?}", provider.id(), turn);
                }
            }
        }
    }
    Ok(())
}

fn result_shape() -> impl Strategy<Value = Value> {
    let block = (
        proptest::sample::select(&["text", "image", "audio", "resource_link", "resource", "x"][..]),
        proptest::sample::select(
            &[
                "image/png",
                "image/svg+xml",
                "audio/wav",
                "audio/aac",
                "application/pdf",
                "application/octet-stream",
                "text/plain",
                "video/mp4",
                "",
            ][..],
        ),
        proptest::sample::select(&["QUJD", "QQ==", "!!", "Q", "", "JVBERi0x", "/w=="][..]),
        proptest::sample::select(
            &[
                "file:///r",
                "file:///a%20b/%E2%80%AE.pdf",
                "",
                "%",
                "x:../..",
                "file:///.",
                "https://h/p?q=1#f",
            ][..],
        ),
        json(),
    )
        .prop_map(|(ty, mime, data, uri, extra)| {
            serde_json::json!({"type": ty, "text": "t", "mimeType": mime, "data": data,
                "uri": uri, "name": "x",
                "resource": {"uri": uri, "mimeType": mime, "blob": data},
                "annotations": extra})
        });
    (
        proptest::collection::vec(block, 0..5),
        proptest::option::of(json()),
        any::<bool>(),
    )
        .prop_map(|(content, structured, is_error)| {
            let mut map = Map::new();
            map.insert("content".into(), Value::Array(content));
            if let Some(s) = structured {
                map.insert("structuredContent".into(), s);
            }
            map.insert("isError".into(), Value::Bool(is_error));
            Value::Object(map)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn spec_loading_never_panics_on_json(value in json()) {
        check_spec(value.to_string());
    }

    #[test]
    fn spec_loading_never_panics_on_text(text in ".{0,200}") {
        check_spec(text);
    }

    #[test]
    fn spec_loading_never_panics_on_mutated_specs(value in mutated(spec_values("providers"))) {
        check_spec(value.to_string());
    }

    #[test]
    fn spec_loading_never_panics_on_mutated_rules(value in mutated(spec_values("providers/rules"))) {
        check_spec(value.to_string());
    }

    #[test]
    fn strict_conversion_never_panics_on_json(value in json()) {
        check_schema(&value);
    }

    #[test]
    fn strict_conversion_never_panics_on_mutated_schemas(value in mutated(corpus_schemas())) {
        check_schema(&value);
    }

    #[test]
    fn extraction_answers_every_call_on_json(value in json()) {
        check_extraction(&value)?;
    }

    #[test]
    fn extraction_answers_every_call_on_mutated_responses(value in mutated(fixture_dir("tests/fixtures/responses"))) {
        check_extraction(&value)?;
    }

    #[test]
    fn answering_never_fails_on_json(value in json()) {
        check_answers(value)?;
    }

    #[test]
    fn answering_never_fails_on_plausible_results(value in result_shape()) {
        check_answers(value)?;
    }

    #[test]
    fn answering_never_fails_on_mutated_results(value in mutated(fixture_dir("tests/fixtures/results"))) {
        check_answers(value)?;
    }
}
