//! The spec format's typed front end: each former mistake is an error that
//! names its place, or a rule that applies; and the JSON Schema agrees with
//! what the loader accepts.

mod common;

use common::*;
use mcp_adapters::spec::SpecFile;
use mcp_adapters::{
    CallToolResult, ErrorKind, ListOptions, Outcome, Registry, ResultOptions, StrictMode, Tool,
    ToolSet,
};
use serde_json::{Value, json};

/// A minimal valid spec, with `extra` lines appended under `results:`.
fn spec(results_extra: &str, top_extra: &str) -> String {
    format!(
        "title: Test\n{top_extra}tools:\n  definition: {{name: \"${{name}}\", parameters: \"${{schema}}\"}}\ncalls:\n  locate: [items]\n  select: {{path: type, equals: call}}\n  id: id\n  name: name\n  arguments: {{path: args, format: object}}\nresults:\n  content: string\n  envelope: {{id: \"${{call_id}}\", content: \"${{content}}\"}}\n{results_extra}"
    )
}

fn load(text: &str) -> mcp_adapters::Result<Registry> {
    Registry::from_files(vec![
        SpecFile::provider("t", "t.yaml", text),
        SpecFile::rules(
            "openai-strict",
            "rules/openai-strict.yaml",
            include_str!("../providers/rules/openai-strict.yaml"),
        ),
    ])
}

/// A case: its name, the spec text, and either the error's path and a word
/// of its message, or `None` for a spec that loads.
type Case = (&'static str, String, Option<(&'static str, &'static str)>);

#[test]
fn former_mistakes_are_errors_naming_their_place() {
    let cases: &[Case] = &[
        (
            "unknown structured mode",
            spec("  structured_content: {use: preferred}\n", ""),
            Some(("/results/structured_content/use", "preferred")),
        ),
        (
            "unknown argument format",
            spec("", "").replace("format: object", "format: text"),
            Some(("/calls/arguments/format", "text")),
        ),
        (
            "unknown content form",
            spec("", "").replace("content: string", "content: text"),
            Some(("/results/content", "text")),
        ),
        (
            "a key of the former format",
            spec("  structured: auto\n", ""),
            Some(("/results", "structured")),
        ),
        (
            "a select of the former format",
            spec("", "").replace("{path: type, equals: call}", "{type: call}"),
            Some(("/calls/select", "type")),
        ),
        (
            "quoted strict default",
            spec("", "strict: {rules: openai-strict, default: \"true\"}\n"),
            Some(("/strict/default", "\"true\"")),
        ),
        (
            "unquoted strict default",
            spec("", "strict: {rules: openai-strict, default: true}\n"),
            None,
        ),
        (
            "unknown strict rules",
            spec("", "strict: {rules: nope}\n"),
            Some(("/strict/rules", "no rules file `nope`")),
        ),
        (
            "unknown template variable",
            spec("", "").replace("\"${content}\"", "\"${contnet}\""),
            Some(("/results/envelope/content", "unknown variable `contnet`")),
        ),
        (
            "a media rule with two actions",
            spec(
                "  media:\n    image:\n      - {as_text: \"x\", attach: {a: 1}}\n",
                "",
            ),
            Some(("/results/media/image/0", "")),
        ),
        (
            "an unknown media row",
            spec("  media:\n    video: placeholder\n", ""),
            Some(("/results/media", "video")),
        ),
        (
            "a block in a string content form",
            spec(
                "  media:\n    image:\n      - {block: {x: \"${data}\"}}\n",
                "",
            ),
            Some(("/results/media/image/0/block", "as_text")),
        ),
        (
            "render: value with blocks",
            spec(
                "  text_block: {t: \"${text}\"}\n  structured_content: {render: value}\n",
                "",
            )
            .replace("content: string", "content: blocks"),
            Some(("/results/structured_content/render", "content: string")),
        ),
    ];
    for (name, text, expected) in cases {
        match (load(text), expected) {
            (Ok(_), None) => {}
            (Ok(_), Some(_)) => panic!("{name}: loaded, expected an error"),
            (Err(err), None) => panic!("{name}: {err:#}"),
            (Err(err), Some((path, word))) => {
                assert_eq!(err.kind(), ErrorKind::Spec, "{name}: {err}");
                assert_eq!(err.location().path.as_deref(), Some(*path), "{name}: {err}");
                assert!(err.location().line.is_some(), "{name}: no line in {err}");
                assert!(err.to_string().contains(word), "{name}: {err}");
            }
        }
    }
}

/// `default: true` (a YAML boolean) makes every tool strict by default.
#[test]
fn a_boolean_strict_default_applies() {
    let registry = load(&spec("", "strict: {rules: openai-strict, default: true}\n")).unwrap();
    let provider = registry.get("t").unwrap();
    let tools = vec![
        Tool::new(
            "ok",
            "",
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        ),
        Tool::new(
            "open",
            "",
            json!({"type": "object", "additionalProperties": true}),
        ),
    ];
    let toolset = ToolSet::client().server("s", tools).build().unwrap();
    let listing = provider.list_tools(&toolset, &ListOptions::new()).unwrap();
    assert!(listing.is_strict("ok"));
    assert_eq!(
        listing.report.excluded.len(),
        1,
        "`true` excludes what cannot convert"
    );
    let auto = provider
        .list_tools(&toolset, &ListOptions::new().strict(StrictMode::Auto))
        .unwrap();
    assert_eq!(auto.report.fallbacks.len(), 1);
}

/// An optional variable in a media rule's text is the empty text when
/// absent: the rule applies to links with and without a title.
#[test]
fn an_optional_variable_in_a_media_text_rule_applies() {
    let text = spec(
        "  media:\n    resource_link:\n      - as_text: \"<${name}${title?}>\"\n",
        "",
    );
    let registry = load(&text).unwrap();
    let provider = registry.get("t").unwrap();
    let result: CallToolResult = serde_json::from_value(json!({"content": [
        {"type": "resource_link", "uri": "file:///a", "name": "a", "title": " (A)"},
        {"type": "resource_link", "uri": "file:///b", "name": "b"}
    ]}))
    .unwrap();
    let answer = provider
        .answer(
            Some("c"),
            "t",
            Outcome::Completed(&result),
            &ResultOptions::new(),
        )
        .unwrap();
    assert_eq!(answer, json!({"id": "c", "content": "<a (A)>\n<b>"}));
}

/// Every built-in spec validates against the schema as written (partial
/// documents with `extends` included), so editors show no false errors.
#[test]
fn every_built_in_spec_file_validates_against_the_schema() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema = read_json(&root.join("schemas/provider-spec.schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let rules_schema = read_json(&root.join("schemas/strict-rules.schema.json"));
    let rules_validator = jsonschema::validator_for(&rules_schema).unwrap();
    for (dir, validator, link) in [
        (
            "providers",
            &validator,
            "../schemas/provider-spec.schema.json",
        ),
        (
            "providers/rules",
            &rules_validator,
            "../../schemas/strict-rules.schema.json",
        ),
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with(&format!("# yaml-language-server: $schema={link}\n")),
                "{} names its schema on its first line",
                path.display()
            );
            let value: Value = serde_saphyr::from_str(&text).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        }
    }
}
