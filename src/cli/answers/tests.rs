//! The answers file: reading, errors, rule matching, form defaults.

use super::*;
use mcp_adapters::mcp::{ElicitAction, InputRequest};
use serde_json::json;

fn read(text: &str) -> Result<Answers> {
    parse_answers(Path::new("answers.yaml"), text)
}

fn error(text: &str) -> String {
    format!("{}", read(text).unwrap_err())
}

fn form(schema: Value) -> Elicitation {
    match InputRequest::form("Who?", schema) {
        InputRequest::Elicitation(e) => e,
        _ => unreachable!(),
    }
}

fn page() -> Elicitation {
    match InputRequest::url("Sign in", "https://example.com/in") {
        InputRequest::Elicitation(e) => e,
        _ => unreachable!(),
    }
}

/// The reference server's form (server-everything's
/// `trigger-elicitation-request`), cut down: a required field without a
/// default and fields with defaults of each kind.
fn reference_form() -> Elicitation {
    form(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "check": {"type": "boolean"},
            "firstLine": {"type": "string", "default": "It was a dark and stormy night."},
            "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "untitledMultipleSelectEnum": {"type": "array", "items": {"type": "string", "enum": ["Guitar", "Piano"]}, "default": ["Guitar"]}
        },
        "required": ["name"]
    }))
}

fn content(answer: &ElicitResult) -> Value {
    serde_json::to_value(answer).unwrap()
}

#[test]
fn either_section_alone_is_a_file() {
    let only_sampling = read(
        "sampling:\n  - result: {role: assistant, content: {type: text, text: hi}, model: canned}\n",
    )
    .unwrap();
    assert!(only_sampling.has_sampling() && !only_sampling.has_answers());
    let only_answers = read(r#"{"answers": [{"action": "decline"}]}"#).unwrap();
    assert!(only_answers.has_answers() && !only_answers.has_sampling());
}

#[test]
fn a_file_without_rules_or_with_unknown_keys_is_an_error() {
    let none = error("answers: []\n");
    assert!(none.starts_with("answers.yaml: "), "{none}");
    assert!(none.contains("has no rule"), "{none}");
    let unknown = error("answers: []\nsamplings: []\n");
    assert!(unknown.starts_with("answers.yaml:2: "), "{unknown}");
    let unknown_in_rule = format!(
        "{:#}",
        read("answers:\n  - {tool: a/b, contents: {x: 1}}\n").unwrap_err()
    );
    assert!(unknown_in_rule.contains("contents"), "{unknown_in_rule}");
}

#[test]
fn rule_errors_name_the_file_the_line_and_the_path() {
    assert_eq!(
        error("answers:\n  - {key: confirm}\n  - {key: code, content: 3}\n"),
        "answers.yaml:3: at answers/1/content: `content` must be an object (the form's fields), not a number"
    );
    assert_eq!(
        error("answers:\n  - {action: decline, content: {x: 1}}\n"),
        "answers.yaml:2: at answers/0/content: `content` goes only with `action: accept`"
    );
    assert!(
        error("answers:\n  - {tool: \"a/[b\"}\n")
            .starts_with("answers.yaml:2: at answers/0/tool: invalid glob `a/[b`")
    );
    assert!(
        error("sampling:\n  - {tool: \"{x\", action: decline}\n").contains("at sampling/0/tool")
    );
}

#[test]
fn an_invalid_sampling_result_names_its_path() {
    let cases = [
        (
            "{role: user, content: {type: text, text: hi}, model: m}",
            "at sampling/1/result/role: `role` must be `assistant`",
        ),
        (
            "{role: assistant, content: {type: text, text: hi}}",
            "at sampling/1/result: `model` is missing",
        ),
        (
            "{role: assistant, content: {type: text, text: hi}, model: \" \"}",
            "at sampling/1/result/model: ",
        ),
        (
            "{role: assistant, model: m}",
            "at sampling/1/result: `content` is missing",
        ),
        (
            "{role: assistant, content: [], model: m}",
            "at sampling/1/result/content: `content` has no block",
        ),
        (
            "{role: assistant, content: [{type: text, text: a}, {type: text}], model: m}",
            "at sampling/1/result/content/1: a `text` block needs `text`",
        ),
        (
            "{role: assistant, content: {type: image, data: \"not base64!\", mimeType: image/png}, model: m}",
            "at sampling/1/result/content: the `image` block's `data` is not base64",
        ),
        (
            "{role: assistant, content: {type: tool_use, id: t, name: n, input: {}}, model: m}",
            "at sampling/1/result/content: a block of type `tool_use`",
        ),
        (
            "{role: assistant, content: {type: text, text: hi}, model: m, stop_reason: endTurn}",
            "at sampling/1/result/stop_reason: unknown field `stop_reason`",
        ),
        (
            "{role: assistant, content: {type: text, text: hi}, model: m, stopReason: 1}",
            "at sampling/1/result/stopReason: ",
        ),
        (
            "\"hi\"",
            "at sampling/1/result: `result` must be a CreateMessageResult object",
        ),
    ];
    for (result, expected) in cases {
        let text = format!(
            "sampling:\n  - {{action: decline}}\n  - tool: \"a/*\"\n    result: {result}\n"
        );
        let message = error(&text);
        assert!(
            message.starts_with("answers.yaml:4: "),
            "{result}: {message}"
        );
        assert!(message.contains(expected), "{result}: {message}");
    }
    assert_eq!(
        error("sampling:\n  - {tool: a/b}\n"),
        "answers.yaml:2: at sampling/0: a sampling rule needs a `result` (the model's message) or `action: decline` or `action: cancel`"
    );
    assert!(
        error("sampling:\n  - action: cancel\n    result: {role: assistant, content: {type: text, text: hi}, model: m}\n")
            .contains("at sampling/0/result: `result` goes only with `action: respond`, not `cancel`")
    );
}

#[test]
fn a_valid_result_is_the_message_sent() {
    let answers = read(
        "sampling:\n  - result:\n      role: assistant\n      content: [{type: text, text: Paris.}, {type: image, data: iVBORw0K, mimeType: image/png}]\n      model: canned\n      stopReason: endTurn\n",
    )
    .unwrap();
    let Some(SamplingAnswer::Respond(result)) = answers.sampling(None) else {
        panic!("no answer");
    };
    assert_eq!(
        serde_json::to_value(result).unwrap(),
        json!({"role": "assistant", "model": "canned", "stopReason": "endTurn", "content": [
            {"type": "text", "text": "Paris."},
            {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}
        ]})
    );
}

#[test]
fn sampling_rules_match_in_order_and_an_unattributed_request_only_without_tool() {
    let answers = read(
        "sampling:\n  - {tool: \"docs/secret_*\", action: decline}\n  - tool: \"docs/*\"\n    result: {role: assistant, content: {type: text, text: docs}, model: m}\n  - {action: cancel}\n",
    )
    .unwrap();
    assert!(matches!(
        answers.sampling(Some("docs/secret_plan")),
        Some(SamplingAnswer::Decline(_))
    ));
    assert!(matches!(
        answers.sampling(Some("docs/summarize")),
        Some(SamplingAnswer::Respond(r)) if r.text_content() == "docs"
    ));
    assert!(matches!(
        answers.sampling(Some("other/x")),
        Some(SamplingAnswer::Cancel(_))
    ));
    assert!(matches!(
        answers.sampling(None),
        Some(SamplingAnswer::Cancel(_))
    ));
    let only_globs = read(
        "sampling:\n  - tool: \"*\"\n    result: {role: assistant, content: {type: text, text: x}, model: m}\n",
    )
    .unwrap();
    assert!(only_globs.sampling(Some("a/b")).is_some());
    assert!(
        only_globs.sampling(None).is_none(),
        "no call: only a rule without tool"
    );
}

#[test]
fn elicitation_rules_match_tool_and_key() {
    let answers = read(
        "answers:\n  - {tool: \"bank/*\", key: code, content: {code: \"0042\"}}\n  - {key: confirm, content: {confirm: true}}\n  - {tool: \"notes/*\", action: cancel}\n",
    )
    .unwrap();
    let code = form(json!({"type": "object", "properties": {"code": {"type": "string"}}}));
    let answer = answers
        .elicitation(Some("bank/transfer"), Some("code"), &code)
        .unwrap()
        .unwrap();
    assert_eq!(
        content(&answer),
        json!({"action": "accept", "content": {"code": "0042"}})
    );
    assert!(
        answers
            .elicitation(Some("shop/pay"), Some("code"), &code)
            .is_none()
    );
    // A question that belongs to no single call: only rules without `tool`.
    assert!(answers.elicitation(None, Some("code"), &code).is_none());
    assert!(answers.elicitation(None, Some("confirm"), &code).is_some());
    // A request sent during a call (keyed by its JSON-RPC id): only rules without `key`.
    assert!(
        answers
            .elicitation(Some("bank/transfer"), None, &code)
            .is_none()
    );
    let answer = answers
        .elicitation(Some("notes/delete"), None, &code)
        .unwrap()
        .unwrap();
    assert_eq!(answer.action, ElicitAction::Cancel);
}

#[test]
fn a_form_gets_its_defaults_for_the_fields_content_leaves_out() {
    let answers = read(
        "answers:\n  - {tool: \"a/override\", content: {name: Ada, integer: 7}}\n  - {tool: \"a/name\", content: {name: Ada, check: true}}\n  - {tool: \"a/bare\"}\n  - {tool: \"a/no\", action: decline}\n",
    )
    .unwrap();
    let answer = |tool: &str, e: &Elicitation| answers.elicitation(Some(tool), None, e).unwrap();
    assert_eq!(
        content(&answer("a/name", &reference_form()).unwrap()),
        json!({"action": "accept", "content": {
            "firstLine": "It was a dark and stormy night.", "integer": 42,
            "untitledMultipleSelectEnum": ["Guitar"], "name": "Ada", "check": true
        }})
    );
    assert_eq!(
        content(&answer("a/override", &reference_form()).unwrap())["content"]["integer"],
        7
    );
    // Accepting as it stands sends the defaults, and needs every required field.
    assert_eq!(
        answer("a/bare", &reference_form()).unwrap_err(),
        "the answer leaves out `name`, which the form requires and gives no default for"
    );
    let defaulted = form(
        json!({"type": "object", "properties": {"size": {"type": "integer", "default": 3}}, "required": ["size"]}),
    );
    assert_eq!(
        content(&answer("a/bare", &defaulted).unwrap()),
        json!({"action": "accept", "content": {"size": 3}})
    );
    // A page is accepted without content; declining sends no content either.
    assert_eq!(
        content(&answer("a/name", &page()).unwrap()),
        json!({"action": "accept"})
    );
    assert_eq!(
        content(&answer("a/no", &reference_form()).unwrap()),
        json!({"action": "decline"})
    );
}

#[test]
fn yaml_scalars_keep_their_characters() {
    let answers =
        read("answers:\n  - {content: {code: 0042, ok: yes, big: 1_000, on: true}}\n").unwrap();
    let e = form(json!({"type": "object", "properties": {}}));
    assert_eq!(
        content(&answers.elicitation(None, None, &e).unwrap().unwrap())["content"],
        json!({"code": "0042", "ok": "yes", "big": "1_000", "on": true})
    );
}
