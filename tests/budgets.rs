//! Result budgets: per call and per turn, counted as each spec says; text cut
//! to its head and tail with a notice; media replaced whole; structured
//! content cut as its JSON text; the library's read tool, which reads on
//! from the kept text through the governed pipeline; and the property that
//! what reaches the model never passes its budget but for the notices.

mod common;

use base64::Engine as _;
use common::*;
use mcp_adapters::exec::ExecOptions;
use mcp_adapters::{
    CallToolResult, Content, InProcessServer, ListOptions, Outcome, Policy, ResultOptions, Source,
    Tool,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// `lines` lines of a server log, numbered so that any cut shows.
fn log(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "2026-12-04T12:{:02}:{:02}.{:03}Z INFO request {i:06} served in {} ms\n",
                i / 3600 % 60,
                i / 60 % 60,
                i % 1000,
                i % 97
            )
        })
        .collect()
}

#[test]
fn a_large_text_keeps_its_head_and_tail_within_the_budget() {
    let whole = log(6_000);
    assert!(whole.len() > 400 * 1024 - 64 * 1024, "{}", whole.len());
    let result = CallToolResult::text(whole.clone());
    for id in ANSWER_PROVIDERS {
        let provider = provider(id);
        let options = ResultOptions::new().max_result_tokens(2_000);
        let answer = provider
            .answer(
                Some("call_1"),
                "logs__tail",
                Outcome::Completed(&result),
                &options,
            )
            .unwrap();
        let text = cut_text(&answer);
        let (head, notice, tail) = split_notice(&text);
        assert!(whole.starts_with(head) && !head.is_empty(), "{id}");
        assert!(whole.ends_with(tail) && !tail.is_empty(), "{id}");
        // Whole lines, head and tail.
        assert!(
            head.ends_with('\n') && tail.starts_with("2026-"),
            "{id}: {tail:.40}"
        );
        let kept = provider.count_tokens(head) + provider.count_tokens(tail);
        assert!(kept <= 2_000, "{id}: {kept} tokens kept");
        assert!(kept >= 1_500, "{id}: only {kept} of 2,000 tokens used");
        // The notice says what was left out, where, and that the
        // application has it (no read tool here).
        let from = number_after(notice, "here: bytes ");
        let to = number_after(notice, " to ");
        assert_eq!(from, head.len(), "{id}: {notice}");
        assert_eq!(whole.len() - to, tail.len(), "{id}: {notice}");
        assert!(notice.contains(&format!("of {}", whole.len())), "{notice}");
        assert!(
            notice.contains("The application has the whole result"),
            "{notice}"
        );
        assert!(answer.to_string().len() < 20_000, "{id}");
    }
}

#[test]
fn a_result_within_its_budget_is_answered_as_it_is() {
    let result = CallToolResult::text(log(20));
    for id in ANSWER_PROVIDERS {
        let provider = provider(id);
        let plain = provider
            .answer(
                Some("call_1"),
                "t",
                Outcome::Completed(&result),
                &ResultOptions::new(),
            )
            .unwrap();
        let budgeted = provider
            .answer(
                Some("call_1"),
                "t",
                Outcome::Completed(&result),
                &ResultOptions::new()
                    .max_result_tokens(10_000)
                    .max_turn_tokens(10_000),
            )
            .unwrap();
        assert_eq!(plain, budgeted, "{id}");
    }
}

#[test]
fn a_turn_budget_is_shared_fairly() {
    let provider = provider("openai-chat");
    let small = CallToolResult::text("The build passed: 412 tests, 0 failures.");
    let large_a = CallToolResult::text(log(5_000));
    let large_b = CallToolResult::text(log(3_000));
    let options = ResultOptions::new().max_turn_tokens(3_000);
    let turn = provider
        .answer_all(
            [
                (Some("a"), "logs__a", Outcome::Completed(&large_a)),
                (Some("s"), "ci__status", Outcome::Completed(&small)),
                (Some("b"), "logs__b", Outcome::Completed(&large_b)),
            ],
            &options,
        )
        .unwrap();
    // The small one is whole; the large ones share the rest equally.
    assert_eq!(
        turn.results[1]["content"],
        json!("The build passed: 412 tests, 0 failures.")
    );
    let kept = |answer: &Value| {
        let text = cut_text(answer);
        let (head, _, tail) = split_notice(&text);
        provider.count_tokens(head) + provider.count_tokens(tail)
    };
    let (a, b) = (kept(&turn.results[0]), kept(&turn.results[2]));
    let small_tokens = provider.count_tokens("The build passed: 412 tests, 0 failures.");
    assert!(a + b + small_tokens <= 3_000, "{a} + {b} + {small_tokens}");
    let share = (3_000 - small_tokens) / 2;
    for kept in [a, b] {
        assert!(
            kept <= share && kept + 200 >= share,
            "{kept} of a share of {share}"
        );
    }
    // The call's own limit still holds within the turn's.
    let turn = provider
        .answer_all(
            [(Some("a"), "logs__a", Outcome::Completed(&large_a))],
            &options.clone().max_result_tokens(500),
        )
        .unwrap();
    assert!(kept(&turn.results[0]) <= 500);
}

/// A PNG of `width` x `height`: its signature and header, which is all a
/// size is read from.
fn png(width: u32, height: u32) -> String {
    let mut bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn image(width: u32, height: u32) -> Content {
    Content::from_value(
        json!({"type": "image", "mimeType": "image/png", "data": png(width, height)}),
    )
}

#[test]
fn media_over_the_budget_are_replaced_whole() {
    // Anthropic: 28 px patches, at most 4,784. A 4000 x 3000 image is
    // scaled to the patch limit; a 280 x 280 one costs 100.
    let mut result = CallToolResult::text("Two charts:");
    result.content.push(image(4_000, 3_000));
    result.content.push(image(280, 280));
    let options = ResultOptions::new().max_result_tokens(1_000);
    let answer = provider("anthropic")
        .answer(
            Some("toolu_1"),
            "charts",
            Outcome::Completed(&result),
            &options,
        )
        .unwrap();
    let content = answer["content"].as_array().unwrap();
    assert_eq!(content[0]["text"], "Two charts:");
    let placeholder = content[1]["text"].as_str().unwrap();
    assert!(
        placeholder.starts_with("[image: image/png, ")
            && placeholder.contains("left out: over the result's budget of 1000 tokens"),
        "{placeholder}"
    );
    assert_eq!(
        content[2]["type"], "image",
        "the small image fits and is kept"
    );
    // With room for both, both go.
    let answer = provider("anthropic")
        .answer(
            Some("toolu_1"),
            "charts",
            Outcome::Completed(&result),
            &ResultOptions::new().max_result_tokens(10_000),
        )
        .unwrap();
    let types: Vec<&Value> = answer["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["type"])
        .collect();
    assert_eq!(types, [&json!("text"), &json!("image"), &json!("image")]);
}

#[test]
fn structured_content_is_cut_as_its_json_text() {
    let rows: Vec<Value> = (0..3_000)
        .map(|i| json!({"id": i, "name": format!("item {i}"), "price": i as f64 / 4.0}))
        .collect();
    let result = CallToolResult {
        structured_content: Some(json!({"rows": rows})),
        ..Default::default()
    };
    for id in ANSWER_PROVIDERS {
        let provider = provider(id);
        let answer = provider
            .answer(
                Some("call_1"),
                "db__query",
                Outcome::Completed(&result),
                &ResultOptions::new().max_result_tokens(300),
            )
            .unwrap();
        let text = cut_text(&answer);
        let (head, _, tail) = split_notice(&text);
        assert!(
            head.starts_with("{\"rows\":[{\"id\":0,"),
            "{id}: {head:.40}"
        );
        assert!(tail.ends_with("]}"), "{id}");
        assert!(
            provider.count_tokens(head) + provider.count_tokens(tail) <= 300,
            "{id}"
        );
    }
}

#[test]
fn budgeted_answers() {
    let mut result = CallToolResult::text(log(40));
    result.content.push(image(1_024, 768));
    let answers: Map<String, Value> = ANSWER_PROVIDERS
        .iter()
        .map(|id| {
            let answer = provider(id)
                .answer(
                    Some("call_1"),
                    "logs__tail",
                    Outcome::Completed(&result),
                    &ResultOptions::new().max_result_tokens(120),
                )
                .unwrap();
            (id.to_string(), answer)
        })
        .collect();
    snapshot(Stage::Results, None, "budgeted", answers);
}

/// A hub with a `logs` server whose `tail` tool returns `text`.
fn logs_source(text: String, policy: Option<Policy>) -> Source {
    let server = InProcessServer::new().tool(
        Tool::new("tail", "The server's log", json!({"type": "object"})),
        move |_, _| {
            let text = text.clone();
            async move { Ok(CallToolResult::text(text)) }
        },
    );
    let mut builder = Source::hub().server("logs", server);
    if let Some(policy) = policy {
        builder = builder.policy(policy);
    }
    builder.build().unwrap()
}

#[test]
fn the_model_reads_on_with_the_library_tool_until_it_has_every_byte() {
    let whole = log(4_000);
    let source = logs_source(whole.clone(), None);
    let id = "openai-chat";
    let provider = provider(id);
    let results = ResultOptions::new().max_result_tokens(3_000);
    let options = ExecOptions::new().results(results.clone());
    current_thread_runtime().block_on(async {
        let names = |listing: &mcp_adapters::Listing| -> Vec<String> {
            listing
                .toolset()
                .tools()
                .iter()
                .map(|t| t.exposed_name.clone())
                .collect()
        };
        let plain = source.tools(provider, &ListOptions::new()).await.unwrap();
        assert_eq!(names(&plain), ["logs__tail"]);
        // Offered only while a budget is set.
        let unbudgeted = ListOptions::new().read_on(ResultOptions::new().budget());
        let plain = source.tools(provider, &unbudgeted).await.unwrap();
        assert_eq!(names(&plain), ["logs__tail"]);
        let listing = source
            .tools(provider, &ListOptions::new().read_on(results.budget()))
            .await
            .unwrap();
        assert_eq!(names(&listing), ["logs__tail", "read_result"]);
        assert_eq!(listing.tools[1]["function"]["name"], "read_result");

        let response = model_response(id, &[("logs__tail".into(), json!({}))]);
        let turn = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        assert_eq!(
            turn.calls[0].result.as_ref().unwrap().content[0],
            Content::text(whole.clone())
        );
        assert!(turn.calls[0].warnings[0].contains("cut to its budget of 3000 tokens"));
        let text = turn.turn.results[0]["content"].as_str().unwrap().to_owned();
        let (head, notice, tail) = split_notice(&text);
        assert!(
            notice.contains("call `read_result` with {\"handle\": \"r1\", \"offset\": "),
            "{notice}"
        );
        let mut read = head.to_owned();
        let mut offset = number_after(notice, "\"offset\":");
        assert_eq!(offset, head.len());
        let mut reads = 0;
        loop {
            reads += 1;
            assert!(reads < 50, "the reads never end");
            let args = json!({"handle": "r1", "offset": offset});
            let response = model_response(id, &[("read_result".into(), args)]);
            let turn = source
                .execute_tool_calls(provider, &response, &listing, &options)
                .await
                .unwrap();
            assert!(turn.calls[0].error.is_none(), "{:?}", turn.calls[0].error);
            assert!(
                turn.ran_servers.contains("logs"),
                "what it read came from `logs`"
            );
            let text = turn.turn.results[0]["content"].as_str().unwrap().to_owned();
            let (piece, notice, _) = split_notice(&text);
            assert!(provider.count_tokens(piece) <= 3_000);
            read.push_str(piece);
            if notice.contains("nothing more to read") {
                break;
            }
            assert!(
                notice.contains("To read on, call `read_result`"),
                "{notice}"
            );
            offset = number_after(notice, "\"offset\":");
            assert_eq!(offset, read.len());
        }
        assert!(reads > 1);
        assert_eq!(read, whole, "head and every read give the whole text back");
        assert!(whole.ends_with(tail));

        // A handle never given, and an offset past the end, are told so.
        let response = model_response(
            id,
            &[("read_result".into(), json!({"handle": "r9", "offset": 0}))],
        );
        let turn = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        let text = turn.turn.results[0]["content"].as_str().unwrap();
        assert!(
            text.contains("no result is kept under the handle `r9`"),
            "{text}"
        );
        assert!(
            !text.contains("nothing more to read"),
            "an error is not a read: {text}"
        );
        let args = json!({"handle": "r1", "offset": whole.len() + 5});
        let response = model_response(id, &[("read_result".into(), args)]);
        let turn = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        assert!(
            turn.turn.results[0]["content"]
                .as_str()
                .unwrap()
                .contains("past the end of the result under `r1`")
        );
    });
}

#[test]
fn the_read_tool_is_governed_like_any_tool() {
    let policy = Policy::allow_all()
        .deny("mcp-adapters/read_result")
        .unwrap();
    let source = logs_source(log(4_000), Some(policy));
    let id = "anthropic";
    let provider = provider(id);
    let results = ResultOptions::new().max_result_tokens(500);
    let options = ExecOptions::new().results(results.clone());
    current_thread_runtime().block_on(async {
        let listing = source
            .tools(provider, &ListOptions::new().read_on(results.budget()))
            .await
            .unwrap();
        let response = model_response(id, &[("logs__tail".into(), json!({}))]);
        let turn = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        assert!(cut_text(&turn.turn.results[0]).contains("\"handle\": \"r1\""));
        let response = model_response(
            id,
            &[("read_result".into(), json!({"handle": "r1", "offset": 10}))],
        );
        let turn = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await
            .unwrap();
        let error = turn.calls[0].error.as_ref().expect("denied");
        assert_eq!(error.kind(), mcp_adapters::ErrorKind::Denied, "{error}");
    });
    // No server may take the library's id.
    let server = InProcessServer::new();
    let err = Source::hub()
        .server("mcp-adapters", server)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("the library's own"), "{err}");
}

/// Lines of words, numbers, JSON, CJK and emoji: what tools return.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,12}( [a-z]{1,12}){0,12}",
        "[0-9]{1,9}(,[0-9]{1,9}){0,8}",
        "\\{\"[a-z]{1,8}\": [0-9]{1,6}(, \"[a-z]{1,8}\": \"[a-z ]{0,20}\"){0,4}\\}",
        "[一-龥]{1,30}",
        "[😀-🙏 ]{1,10}",
        " {0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// What reaches the model never passes the budget by more than the
    /// notice: the head and the tail together fit, and they are the text's
    /// own head and tail.
    #[test]
    fn the_text_sent_never_passes_the_budget_but_for_the_notice(
        lines in proptest::collection::vec(line(), 1..400),
        budget in 0u64..1_500,
        exact in any::<bool>(),
    ) {
        let text = lines.join("\n");
        let id = if exact { "openai-chat" } else { "anthropic" };
        let provider = provider(id);
        let result = CallToolResult::text(text.clone());
        let answer = provider
            .answer(Some("call_1"), "t", Outcome::Completed(&result), &ResultOptions::new().max_result_tokens(budget))
            .unwrap();
        let all = strings(&answer);
        match all.iter().find(|s| s.contains("\n[… ") && !text.contains("\n[… ")) {
            None => prop_assert!(provider.count_tokens(&text) <= budget, "not cut, though over"),
            Some(sent) => {
                let (head, _, tail) = split_notice(sent);
                prop_assert!(text.starts_with(head));
                prop_assert!(text.ends_with(tail));
                prop_assert!(head.len() + tail.len() < text.len());
                let kept = provider.count_tokens(head) + provider.count_tokens(tail);
                prop_assert!(kept <= budget, "{} tokens kept of {}", kept, budget);
            }
        }
    }
}

/// The texts of the corpus: every text and structured result of the
/// recorded `tools/call` results, and every tool definition, of 200 bytes
/// or more.
fn corpus_texts() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut texts = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".calls.json") {
            for call in read_json(&path).as_array().unwrap() {
                let Ok(result) = serde_json::from_value::<CallToolResult>(call["result"].clone())
                else {
                    continue;
                };
                for content in &result.content {
                    if let Content::Text(t) = content {
                        texts.push(t.text.clone());
                    }
                }
                texts.extend(result.structured_content.map(|s| s.to_string()));
            }
        } else if name.ends_with(".tools.json") {
            let server = name.trim_end_matches(".tools.json");
            texts.extend(
                corpus_tools(server)
                    .iter()
                    .map(|t| serde_json::to_string(t).unwrap()),
            );
        }
    }
    texts.retain(|t| t.len() >= 200);
    texts
}

/// The figures the guide gives for how far an estimate can be off, measured
/// against a public tokenizer (o200k_base) on the corpus: 3 bytes a token
/// counts more tokens for nearly every text, and at worst about a quarter
/// fewer.
#[cfg(feature = "tokenizers")]
#[test]
fn the_estimate_errs_on_the_side_of_more_tokens_on_the_corpus() {
    let exact = provider("openai-chat");
    assert!(exact.counts_tokens_exactly());
    let estimate = provider("gemini");
    assert!(!estimate.counts_tokens_exactly());
    let texts = corpus_texts();
    assert!(texts.len() > 500, "{}", texts.len());
    let ratios: Vec<f64> = texts
        .iter()
        .map(|t| estimate.count_tokens(t) as f64 / exact.count_tokens(t) as f64)
        .collect();
    let under = ratios.iter().filter(|r| **r < 1.0).count();
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        under * 100 <= texts.len(),
        "{under} of {} counted fewer",
        texts.len()
    );
    assert!(worst >= 0.75, "at worst {worst:.2} of the real count");
}

/// What the review of the budgets found, held: image data that is not
/// base64 (nor ASCII) is counted, not a panic; a read under a budget of
/// nothing still moves on; deferring every tool leaves the read tool
/// loaded; and a text cut for one principal is not read for another.
#[test]
fn budgets_hold_at_their_edges() {
    // Image data from a server that is not ASCII.
    let mut result = CallToolResult::text("A chart:");
    result.content.push(Content::from_value(
        json!({"type": "image", "mimeType": "image/png", "data": "abcé€€€€"}),
    ));
    for id in ANSWER_PROVIDERS {
        provider(id)
            .answer(
                Some("call_1"),
                "t",
                Outcome::Completed(&result),
                &ResultOptions::new().max_result_tokens(10),
            )
            .unwrap();
    }

    let whole = log(200);
    let source = logs_source(whole.clone(), None);
    let id = "anthropic";
    let provider = provider(id);
    current_thread_runtime().block_on(async {
        let results = ResultOptions::new().max_result_tokens(50);
        let everything_deferred = ListOptions::new().read_on(results.budget()).defer("*");
        let listing = source.tools(provider, &everything_deferred).await.unwrap();
        let def = |name: &str| {
            listing
                .tools
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{name} not listed"))
                .clone()
        };
        assert_eq!(def("logs__tail")["defer_loading"], true);
        assert!(def("read_result").get("defer_loading").is_none());

        let listing = source
            .tools(provider, &ListOptions::new().read_on(results.budget()))
            .await
            .unwrap();
        let alice = ExecOptions::new()
            .results(results.clone())
            .principal("alice");
        let response = model_response(id, &[("logs__tail".into(), json!({}))]);
        let run = source
            .execute_tool_calls(provider, &response, &listing, &alice)
            .await
            .unwrap();
        let cut = cut_text(&run.turn.results[0]);
        let (_, notice, _) = split_notice(&cut);
        assert!(notice.contains("\"handle\": \"r1\""), "{notice}");
        let read = json!({"handle": "r1", "offset": 100});
        let response = model_response(id, &[("read_result".into(), read)]);
        let bob = ExecOptions::new().results(results.clone()).principal("bob");
        let run = source
            .execute_tool_calls(provider, &response, &listing, &bob)
            .await
            .unwrap();
        let text = run.turn.results[0].to_string();
        assert!(
            text.contains("no result is kept under the handle `r1`"),
            "{text}"
        );

        // A budget of nothing: each read still moves on.
        let nothing = ExecOptions::new()
            .results(ResultOptions::new().max_result_tokens(0))
            .principal("alice");
        let run = source
            .execute_tool_calls(provider, &response, &listing, &nothing)
            .await
            .unwrap();
        let cut = cut_text(&run.turn.results[0]);
        let (piece, notice, _) = split_notice(&cut);
        assert_eq!(piece, &whole[100..101]);
        assert!(notice.contains("\"offset\": 101"), "{notice}");
    });
}
