//! Result shaping for each provider: every media row with the `media` option
//! off and on, follow-ups over whole turns, documented limits, errors,
//! structured modes, and every `tools/call` result in the public corpus.

mod common;

use common::*;
use mcp_adapters::results::{Shape, StructuredMode};
use mcp_adapters::{CallToolResult, Content, Error, ErrorKind, Outcome, ResultOptions, Turn};
use serde_json::{Map, Value, json};

fn answer(id: &str, call_id: &str, result: &CallToolResult, options: &ResultOptions) -> Value {
    provider(id)
        .answer(
            Some(call_id),
            "srv__tool",
            Outcome::Completed(result),
            options,
        )
        .unwrap()
}

fn parse(value: Value) -> CallToolResult {
    serde_json::from_value(value).expect("a CallToolResult")
}

fn media(value: &str) -> ResultOptions {
    ResultOptions::new().option("media", value)
}

/// A whole turn's answers and follow-ups, as a snapshot value.
fn turn(id: &str, calls: &[(&str, &str, &CallToolResult)], options: &ResultOptions) -> Turn {
    provider(id)
        .answer_all(
            calls
                .iter()
                .map(|(call_id, name, result)| (Some(*call_id), *name, Outcome::Completed(result))),
            options,
        )
        .unwrap_or_else(|e| panic!("{id}: {e:#}"))
}

fn turn_value(turn: &Turn) -> Value {
    json!({"results": turn.results, "follow_ups": turn.follow_ups})
}

/// Every fixture under `fixtures/results/`, answered by each provider, with
/// the `media` option off (the original table) and on (everything the API takes).
#[test]
fn media_rows() {
    insta::glob!("fixtures/results/*.json", |path| {
        let result = parse(read_json(path));
        let answers: Map<String, Value> = ANSWER_PROVIDERS
            .iter()
            .map(|id| {
                (
                    id.to_string(),
                    answer(id, "call_1", &result, &ResultOptions::default()),
                )
            })
            .collect();
        snapshot(Stage::Results, None, &case_name(path), answers);
        let full: Map<String, Value> = MEDIA_OPTIONS
            .iter()
            .map(|(id, value)| {
                let turn = turn(id, &[("call_1", "srv__tool", &result)], &media(value));
                (media_label(id, value), turn_value(&turn))
            })
            .collect();
        snapshot(
            Stage::Results,
            None,
            &format!("media_full-{}", case_name(path)),
            full,
        );
    });
}

/// Several calls with media in one turn: the follow-ups come after all the
/// answers, in the model's order, each introduced by a text naming its call.
#[test]
fn follow_ups_of_a_turn_keep_the_model_order_and_name_their_calls() {
    let [mixed, pdf, text, several] = [
        "mixed_text_image_text",
        "resource_blob_octet_pdf",
        "text",
        "several_images",
    ]
    .map(|name| parse(fixture(&format!("results/{name}.json"))));
    let calls = [
        ("call_1", "charts__plot", &mixed),
        ("call_2", "files__read", &pdf),
        ("call_3", "notes__read", &text),
        ("call_4", "charts__frames", &several),
    ];
    let mut all = Map::new();
    for (id, value) in MEDIA_OPTIONS {
        let turn = turn(id, &calls, &media(value));
        assert_eq!(turn.results.len(), calls.len(), "{id}");
        // Each introducing text names its call; the calls appear in the model's order.
        let texts: Vec<String> = serde_json::to_string(&turn.follow_ups)
            .unwrap()
            .match_indices("of the result of ")
            .map(|(at, _)| {
                let rest = &serde_json::to_string(&turn.follow_ups).unwrap()[at..];
                rest.split(':').next().unwrap().to_owned()
            })
            .collect();
        let mut order: Vec<&str> = texts
            .iter()
            .filter_map(|t| t.split("(call ").nth(1)?.split(')').next())
            .collect();
        let seen = order.clone();
        order.sort();
        assert_eq!(seen, order, "{id}: follow-ups out of the model's order");
        all.insert(media_label(id, value), turn_value(&turn));
    }
    // OpenAI Chat: the tool messages, then one user message with every medium of the turn.
    let chat = turn("openai-chat", &calls, &media("full"));
    assert_eq!(chat.follow_ups.len(), 1);
    let parts = chat.follow_ups[0]["content"].as_array().unwrap();
    let kinds: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "text",
            "image_url",
            "text",
            "file",
            "text",
            "image_url",
            "text",
            "image_url",
            "text",
            "image_url"
        ]
    );
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("charts__plot (call call_1)")
    );
    assert!(
        parts[2]["text"]
            .as_str()
            .unwrap()
            .contains("files__read (call call_2)")
    );
    assert!(parts[4]["text"].as_str().unwrap().starts_with("Item 2 "));
    assert!(parts[8]["text"].as_str().unwrap().starts_with("Item 4 "));
    // The text, image, text result keeps its order, the image a note in its place.
    assert_eq!(
        chat.results[0]["content"],
        "Before the chart.\n[image/png, 70 bytes: item 2 of this result, sent after the tool results]\nAfter the chart."
    );
    snapshot(Stage::Results, None, "media_full-turn", all);
}

/// `answer` answers one call alone: follow-up rules do not apply there, and
/// those media get their placeholder; an option the spec lacks is an error.
#[test]
fn single_answers_apply_no_follow_up_rule() {
    let result = parse(fixture("results/image_png.json"));
    let alone = answer("openai-chat", "c", &result, &media("full"));
    assert_eq!(
        alone["content"],
        "Here it is:\n[image: image/png, 4033 bytes]"
    );
    for (id, options, needle) in [
        ("ollama", media("full"), "has no option `media`"),
        ("gemini", media("all"), "has no value `all`"),
        (
            "anthropic",
            ResultOptions::new().option("colour", "red"),
            "has no option `colour`",
        ),
    ] {
        let err = provider(id)
            .answer(Some("c"), "t", Outcome::Completed(&result), &options)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Input, "{id}");
        assert!(err.to_string().contains(needle), "{id}: {err}");
    }
    // A listing option changes nothing here.
    let listing_option = ResultOptions::new().option("cache_control", "last");
    assert_eq!(
        answer("anthropic", "c", &result, &listing_option),
        answer("anthropic", "c", &result, &ResultOptions::new())
    );
}

/// A payload of `decoded` bytes, as base64 text.
fn payload(decoded: usize) -> String {
    let mut out = "AAAA".repeat(decoded / 3);
    out.push_str(match decoded % 3 {
        0 => "",
        1 => "AA",
        _ => "AAA",
    });
    out
}

fn image_of(decoded: usize) -> Content {
    Content::from_value(json!({"type": "image", "mimeType": "image/png", "data": payload(decoded)}))
}

fn pdf_of(decoded: usize, uri: &str) -> Content {
    Content::from_value(
        json!({"type": "resource", "resource": {"uri": uri, "mimeType": "application/pdf", "blob": format!("JVBERi0x{}", payload(decoded - 6))}}),
    )
}

fn texts_of(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.starts_with('[') => out.push(s.clone()),
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => stack.extend(map.values().rev()),
            _ => {}
        }
    }
    out
}

/// The documented limits: a medium over one becomes its placeholder, which says which.
#[test]
fn media_over_a_documented_limit_become_placeholders_that_say_why() {
    // Per item: Anthropic's 5 MB of base64 per image.
    let result = CallToolResult {
        content: vec![image_of(3_932_160), image_of(3_932_161)],
        ..Default::default()
    };
    let anthropic = answer("anthropic", "c", &result, &media("full"));
    assert_eq!(anthropic["content"][0]["type"], "image");
    assert_eq!(
        anthropic["content"][1]["text"],
        "[image: image/png, 3932161 bytes; over the provider's limit of 3932160 bytes for one item]"
    );
    // Per request, over the turn: two PDFs of 13 MB pass Anthropic's 32 MB request together.
    let first = CallToolResult {
        content: vec![pdf_of(13_000_000, "file:///a.pdf")],
        ..Default::default()
    };
    let second = CallToolResult {
        content: vec![pdf_of(13_000_000, "file:///b.pdf")],
        ..Default::default()
    };
    let both = turn(
        "anthropic",
        &[("c1", "t", &first), ("c2", "t", &second)],
        &media("full"),
    );
    assert_eq!(both.results[0]["content"][0]["type"], "document");
    assert_eq!(
        both.results[1]["content"][0]["text"],
        "[resource: file:///b.pdf, application/pdf, 13000000 bytes; with the turn's other media, over the provider's limit of 24000000 bytes of media per request]"
    );
    // Alone, each call fits.
    assert_eq!(
        answer("anthropic", "c2", &second, &media("full"))["content"][0]["type"],
        "document"
    );
    // Counts per request: Mistral's 8 images, Bedrock's 5 documents, across the turn's calls.
    let five = CallToolResult {
        content: (0..5).map(|_| image_of(10)).collect(),
        ..Default::default()
    };
    let four = CallToolResult {
        content: (0..4).map(|_| image_of(10)).collect(),
        ..Default::default()
    };
    let mistral = turn(
        "mistral",
        &[("c1", "t", &five), ("c2", "t", &four)],
        &media("full"),
    );
    let followed = mistral.follow_ups[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "image_url")
        .count();
    assert_eq!(followed, 8);
    let content = mistral.results[1]["content"].as_str().unwrap();
    assert!(
        content.ends_with("item 3 of this result, sent after the tool results]\n[image: image/png, 10 bytes; over the provider's limit of 8 media items of type image/* per request]"),
        "{content}"
    );
    let six = CallToolResult {
        content: (0..6)
            .map(|i| pdf_of(100, &format!("file:///{i}.pdf")))
            .collect(),
        ..Default::default()
    };
    let bedrock = turn("bedrock-converse", &[("c1", "t", &six)], &media("full"));
    let documents = bedrock
        .follow_ups
        .iter()
        .filter(|b| b.get("document").is_some())
        .count();
    assert_eq!(documents, 5);
    let last = &bedrock.results[0]["toolResult"]["content"][5]["text"];
    assert_eq!(
        last,
        "[resource: file:///5.pdf, application/pdf, 100 bytes; over the provider's limit of 5 media items of type application/pdf, text/plain per request]"
    );
    // Bedrock's 4.5 MB per document.
    let big = CallToolResult {
        content: vec![pdf_of(4_500_001, "file:///big.pdf")],
        ..Default::default()
    };
    let refused = turn("bedrock-converse", &[("c1", "t", &big)], &media("full"));
    assert!(refused.follow_ups.is_empty());
    assert!(
        texts_of(&refused.results[0])[0]
            .ends_with("over the provider's limit of 4500000 bytes for one item]"),
        "{:?}",
        texts_of(&refused.results[0])
    );
}

/// Bedrock's naming rule for documents, which its SDK types do not check:
/// letters, digits, single spaces, hyphens, parentheses and brackets, 1-200
/// characters, and no two alike in a request.
#[test]
fn bedrock_document_names_follow_the_naming_rule_and_are_unique() {
    let rule = |name: &str| {
        (1..=200).contains(&name.len())
            && !name.contains("  ")
            && name.trim() == name
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " -()[]".contains(c))
    };
    let results: Vec<CallToolResult> = [
        "resource_blob_pdf",
        "resource_blob_octet_pdf",
        "resource_blob_text",
        "resource_blob_pdf",
    ]
    .iter()
    .map(|name| parse(fixture(&format!("results/{name}.json"))))
    .collect();
    let ids = ["tooluse_a.b:1", "tooluse_a.b:2", "tooluse_c", "tooluse_d"];
    let calls: Vec<(&str, &str, &CallToolResult)> = ids
        .iter()
        .zip(&results)
        .map(|(id, r)| (*id, "srv__tool", r))
        .collect();
    let turn = turn("bedrock-converse", &calls, &media("nova"));
    let names: Vec<&str> = turn
        .follow_ups
        .iter()
        .filter_map(|b| b["document"]["name"].as_str())
        .collect();
    assert_eq!(names.len(), 4, "{:?}", turn.follow_ups);
    for name in &names {
        assert!(rule(name), "{name:?}");
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert_eq!(names[1], "Quarterly Report (pdf) [tooluse-a-b-2 item 1]");
}

/// Without shaping for a model, unsupported media reach the provider mapping,
/// which still only places the types its table accepts.
#[test]
fn shape_none_keeps_content_for_the_media_table() {
    let result = parse(fixture("results/audio_wav.json"));
    let none = ResultOptions::new().shape(Shape::None);
    let llm = ResultOptions::default();
    for id in ANSWER_PROVIDERS {
        assert_eq!(
            answer(id, "c", &result, &none),
            answer(id, "c", &result, &llm),
            "{id}"
        );
    }
    let svg = parse(fixture("results/image_svg.json"));
    let shaped = answer("anthropic", "c", &svg, &none);
    assert_eq!(
        shaped["content"][0]["type"], "text",
        "SVG is never an image block: {shaped}"
    );
}

#[test]
fn structured_modes() {
    let results = [
        "structured_only",
        "structured_and_text",
        "structured_list",
        "structured_mirror",
        "structured_base64",
    ];
    let modes = [
        StructuredMode::Auto,
        StructuredMode::Prefer,
        StructuredMode::Append,
        StructuredMode::Ignore,
    ];
    let mut all = Map::new();
    for name in results {
        let result = parse(fixture(&format!("results/{name}.json")));
        for id in ANSWER_PROVIDERS {
            let per_mode: Map<String, Value> = modes
                .iter()
                .map(|&m| {
                    let options = ResultOptions::new().structured(m);
                    (
                        serde_json::to_value(m)
                            .unwrap()
                            .as_str()
                            .unwrap()
                            .to_owned(),
                        answer(id, "c", &result, &options),
                    )
                })
                .collect();
            all.insert(format!("{name} {id}"), Value::Object(per_mode));
        }
    }
    snapshot(Stage::Results, None, "structured_modes", all);
}

const MODES: [StructuredMode; 4] = [
    StructuredMode::Auto,
    StructuredMode::Prefer,
    StructuredMode::Append,
    StructuredMode::Ignore,
];

fn mode_name(mode: StructuredMode) -> String {
    serde_json::to_value(mode)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

/// structuredContent never carries media as text, in any mode, for any
/// provider, with the media option off or on: a mirror of the content blocks is
/// left out, base64 payloads inside structured content become placeholders.
#[test]
fn structured_content_never_carries_media_as_text() {
    let mirror = parse(fixture("results/structured_mirror.json"));
    let Content::Image(image) = &mirror.content[0] else {
        panic!("an image block")
    };
    let image_data = image.data.clone();
    let with_base64 = parse(fixture("results/structured_base64.json"));
    let payloads: Vec<String> = {
        let s = &with_base64.structured_content.as_ref().unwrap();
        vec![
            s["screenshot"]["data"].as_str().unwrap().to_owned(),
            s["thumbnail"].as_str().unwrap().to_owned(),
        ]
    };
    let mut on = Map::new();
    let settings: Vec<(String, &str, ResultOptions)> = ANSWER_PROVIDERS
        .iter()
        .map(|id| (id.to_string(), *id, ResultOptions::new()))
        .chain(
            MEDIA_OPTIONS
                .iter()
                .map(|(id, v)| (format!("{} media={v}", id), *id, media(v))),
        )
        .collect();
    for (label, id, base) in &settings {
        for mode in MODES {
            let options = base.clone().structured(mode);
            let turn = turn(id, &[("c", "srv__tool", &mirror)], &options);
            let text = serde_json::to_string(&turn_value(&turn)).unwrap();
            // The image once at most (as the image), never a second time as text.
            assert!(
                text.matches(&image_data).count() <= 1,
                "{label} {mode:?}: {text}"
            );
            for t in texts_of(&turn_value(&turn)) {
                assert!(!t.contains(&image_data), "{label} {mode:?}: {t}");
            }
            let turn_b64 = turn_with(id, &with_base64, &options);
            let text = serde_json::to_string(&turn_b64).unwrap();
            for p in &payloads {
                let bare = p.trim_start_matches("data:image/png;base64,");
                assert!(!text.contains(bare), "{label} {mode:?}: {text}");
            }
            if label.contains("media=") {
                on.insert(
                    format!("{label} {}", mode_name(mode)),
                    json!({"structured_mirror": turn_value(&turn), "structured_base64": turn_b64}),
                );
            }
        }
    }
    // Gemini's default `prefer` now sends the filesystem server's image as an
    // image (with the option) instead of its base64 as JSON text.
    let gemini = turn("gemini", &[("c", "srv__tool", &mirror)], &media("full"));
    assert_eq!(
        gemini.follow_ups[0]["parts"][1]["inlineData"]["data"],
        image_data
    );
    // Without shaping for a model, structured values go as the server sent them (the mirror still does not).
    let raw = answer(
        "gemini",
        "c",
        &with_base64,
        &ResultOptions::new().shape(Shape::None),
    );
    assert!(
        raw.to_string().contains(&payloads[0]),
        "Shape::None keeps the value"
    );
    snapshot(Stage::Results, None, "media_full-structured_modes", on);
}

fn turn_with(id: &str, result: &CallToolResult, options: &ResultOptions) -> Value {
    turn_value(&turn(id, &[("c", "srv__tool", result)], options))
}

#[test]
fn failures_and_error_prefix() {
    let err = Error::new(ErrorKind::Timeout, "the call took longer than 300000 ms");
    let mut all = Map::new();
    for id in ANSWER_PROVIDERS {
        let default = provider(id)
            .answer(
                Some("c"),
                "srv__tool",
                Outcome::Failed(&err),
                &ResultOptions::default(),
            )
            .unwrap();
        let custom = ResultOptions::new().error_prefix("TOOL FAILED: ");
        let prefixed = provider(id)
            .answer(Some("c"), "srv__tool", Outcome::Failed(&err), &custom)
            .unwrap();
        all.insert(
            id.to_string(),
            json!({"default": default, "custom_prefix": prefixed}),
        );
    }
    snapshot(Stage::Results, None, "failures", all);
}

#[test]
fn gemini_answers_without_an_id_carry_only_the_name() {
    let result = CallToolResult::text("ok");
    let answer = provider("gemini")
        .answer(
            None,
            "srv__tool",
            Outcome::Completed(&result),
            &ResultOptions::default(),
        )
        .unwrap();
    assert_eq!(
        answer,
        json!({"functionResponse": {"name": "srv__tool", "response": {"output": "ok"}}})
    );
    let err = provider("anthropic")
        .answer(
            None,
            "t",
            Outcome::Completed(&result),
            &ResultOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Input);
}

/// Every `tools/call` result of the public corpus, answered by each provider.
#[test]
fn corpus_results() {
    insta::glob!("fixtures/corpus/*.calls.json", |path| {
        let calls = read_json(path);
        for id in ANSWER_PROVIDERS {
            let answers: Vec<Value> = calls
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(i, call)| {
                    let result = parse(call["result"].clone());
                    json!({"tool": call["tool"], "answer": answer(id, &format!("call_{i}"), &result, &ResultOptions::default())})
                })
                .collect();
            snapshot(Stage::Results, Some(id), &case_name(path), answers);
        }
    });
}
