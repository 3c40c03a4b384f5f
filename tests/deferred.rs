//! Deferred loading and tool search: every provider's deferred listing, a
//! search call read from its responses and the answer, the pitfalls the
//! providers refuse (every tool deferred, `cache_control` on a deferred tool,
//! a namespaced call replayed without its namespace), found tools growing the
//! next listing, and searches that never reveal what the policy or filters hide.

mod common;

use common::*;
use mcp_adapters::listing::ToolSearch;
use mcp_adapters::search::SearchCall;
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Policy, Registry, Source, Tool,
    ToolSet,
};
use serde_json::{Value, json};

fn schema(params: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| ((*p).to_owned(), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "properties": props, "required": [params[0]]})
}

fn github_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "get_issue",
            "Reads an issue of a repository",
            schema(&["repo", "number"]),
        ),
        Tool::new(
            "create_issue",
            "Opens a new issue in a repository",
            schema(&["repo", "title"]),
        ),
        Tool::new(
            "merge_pull_request",
            "Merges a pull request",
            schema(&["repo", "number"]),
        ),
    ]
}

fn time_tools() -> Vec<Tool> {
    vec![Tool::new(
        "convert_time",
        "Converts a time between time zones",
        schema(&["time", "timezone"]),
    )]
}

fn hub() -> ToolSet {
    ToolSet::hub()
        .server("github", github_tools())
        .server("time", time_tools())
        .build()
        .unwrap()
}

/// Everything deferred but `github/get_issue`.
fn options() -> ListOptions {
    ListOptions::new().defer("*").load("github/get_issue")
}

fn all_providers() -> Vec<String> {
    let registry = Registry::builtin().unwrap();
    registry.providers().map(|p| p.id().to_owned()).collect()
}

#[test]
fn every_provider_lists_deferred_tools_and_answers_a_search() {
    for id in all_providers() {
        let provider = provider(&id);
        let listing = provider.list_tools(&hub(), &options()).unwrap();
        let search = SearchCall::new(Some("call_9".into()), "open an issue on github").limit(2);
        let answer = provider.answer_search(&search, &listing, |_| true).unwrap();
        assert_eq!(answer.found[0], "github__create_issue", "{id}");
        let next = provider
            .list_tools(&hub(), &options().found(answer.found.clone()))
            .unwrap();
        snapshot(
            Stage::Listing,
            Some(&id),
            "deferred",
            json!({
                "tool_search": listing.tool_search(),
                "deferred": listing.deferred().collect::<Vec<_>>(),
                "tools": listing.tools,
                "search answer": answer.answer,
                "found": answer.found,
                "next listing": next.tools.iter().map(tool_name).collect::<Vec<_>>(),
            }),
        );
    }
}

/// The name of a definition in any provider's shape (or a namespace's, or a search tool's type).
fn tool_name(def: &Value) -> String {
    for path in ["/name", "/function/name", "/toolSpec/name", "/type"] {
        if let Some(name) = def.pointer(path).and_then(Value::as_str) {
            return name.to_owned();
        }
    }
    def.to_string()
}

#[test]
fn search_calls_are_read_from_responses_and_answered_in_order() {
    // Every wire format whose searches go through the library's search tool (Responses'
    // client search items are their own test).
    for id in LISTING_PROVIDERS
        .iter()
        .copied()
        .filter(|id| *id != "openai-responses")
    {
        let provider = provider(id);
        let listing = provider
            .list_tools(&hub(), &options().search(ToolSearch::Library))
            .unwrap();
        let response = model_response(
            id,
            &[
                (
                    "github__get_issue".into(),
                    json!({"repo": "a/b", "number": "7"}),
                ),
                (
                    "search_tools".into(),
                    json!({"query": "convert a time zone", "limit": 1}),
                ),
            ],
        );
        let extracted = provider.extract_calls(&response, &listing).unwrap();
        assert_eq!(extracted.calls.len(), 1, "{id}");
        assert_eq!(extracted.searches.len(), 1, "{id}");
        let search = &extracted.searches[0];
        assert_eq!(
            (search.index, search.query.as_str(), search.limit),
            (1, "convert a time zone", 1)
        );
        let answer = provider.answer_search(search, &listing, |_| true).unwrap();
        assert_eq!(answer.found, ["time__convert_time"]);
        snapshot(
            Stage::Calls,
            Some(id),
            "search_tools",
            json!({"searches": extracted.searches, "answer": answer.answer}),
        );
    }
}

#[test]
fn responses_client_search_items_are_answered_with_tool_search_output() {
    let provider = provider("openai-responses");
    let listing = provider.list_tools(&hub(), &options()).unwrap();
    assert_eq!(listing.tool_search(), Some(&ToolSearch::Client));
    let response = json!({"output": [
        {"type": "tool_search_call", "id": "ts_1", "call_id": "call_s", "execution": "client",
         "status": "completed", "arguments": {"goal": "merge a pull request"}},
    ]});
    let extracted = provider.extract_calls(&response, &listing).unwrap();
    assert_eq!(extracted.searches[0].query, "merge a pull request");
    let answer = provider
        .answer_search(&extracted.searches[0], &listing, |_| true)
        .unwrap();
    assert_eq!(answer.answer["type"], "tool_search_output");
    assert_eq!(answer.answer["call_id"], "call_s");
    // The tools found come back loaded (no defer mark), in their server's namespace.
    let namespace = &answer.answer["tools"][0];
    assert_eq!(namespace["type"], "namespace");
    assert_eq!(namespace["name"], "github");
    assert_eq!(namespace["tools"][0]["name"], "github__merge_pull_request");
    assert!(namespace["tools"][0].get("defer_loading").is_none());
    snapshot(
        Stage::Calls,
        Some("openai-responses"),
        "tool_search_call",
        &answer.answer,
    );
}

#[test]
fn a_request_never_has_every_tool_deferred() {
    for id in all_providers() {
        let provider = provider(&id);
        let listing = provider
            .list_tools(&hub(), &ListOptions::new().defer("*"))
            .unwrap();
        assert_eq!(listing.deferred().count(), 4, "{id}");
        let loaded = listing
            .tools
            .iter()
            .filter(|t| t.get("defer_loading") != Some(&json!(true)))
            .filter(|t| t["type"] != "namespace" || !all_deferred(t))
            .count();
        assert!(
            loaded >= 1,
            "{id}: every tool deferred: {:?}",
            listing.tools
        );
    }
}

fn all_deferred(namespace: &Value) -> bool {
    namespace["tools"]
        .as_array()
        .is_some_and(|t| t.iter().all(|t| t["defer_loading"] == json!(true)))
}

#[test]
fn cache_control_marks_the_last_loaded_tool_never_a_deferred_one() {
    let provider = provider("anthropic");
    // The deferred tools come after the loaded one in the toolset's order.
    let options = ListOptions::new()
        .defer("github/create_*")
        .defer("time/*")
        .search(ToolSearch::Server("bm25".into()))
        .option("cache_control", "last");
    let listing = provider.list_tools(&hub(), &options).unwrap();
    for tool in &listing.tools {
        let deferred = tool.get("defer_loading") == Some(&json!(true));
        assert!(!(deferred && tool.get("cache_control").is_some()), "{tool}");
    }
    let marked: Vec<_> = listing
        .tools
        .iter()
        .filter(|t| t.get("cache_control").is_some())
        .collect();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0]["type"], "tool_search_tool_bm25_20251119");
    assert_eq!(
        listing.tools.last().unwrap()["name"],
        "tool_search_tool_bm25"
    );
}

#[test]
fn found_tools_grow_the_listing_in_a_stable_order() {
    let provider = provider("openai-chat");
    let first = provider.list_tools(&hub(), &options()).unwrap();
    assert_eq!(
        first.tools.iter().map(tool_name).collect::<Vec<_>>(),
        ["github__get_issue", "search_tools"]
    );
    let second = provider
        .list_tools(&hub(), &options().found(["time__convert_time"]))
        .unwrap();
    let third = provider
        .list_tools(
            &hub(),
            &options().found([
                "time__convert_time",
                "github__create_issue",
                "time__convert_time",
            ]),
        )
        .unwrap();
    assert_eq!(second.tools[..2], first.tools[..]);
    assert_eq!(third.tools[..3], second.tools[..]);
    assert_eq!(tool_name(&third.tools[3]), "github__create_issue");
    assert_eq!(
        third.found(),
        ["time__convert_time", "github__create_issue"]
    );
    // A found name the toolset no longer has, or that is not deferred, changes nothing.
    let stale = provider
        .list_tools(
            &hub(),
            &options().found(["gone__tool", "github__get_issue"]),
        )
        .unwrap();
    assert_eq!(stale.tools, first.tools);
}

#[test]
fn a_namespaced_call_is_replayed_with_its_namespace() {
    let provider = provider("openai-responses");
    let listing = provider.list_tools(&hub(), &options()).unwrap();
    let namespaces: Vec<_> = listing
        .tools
        .iter()
        .filter(|t| t["type"] == "namespace")
        .collect();
    assert_eq!(namespaces.len(), 2);
    assert_eq!(namespaces[0]["tools"][0]["name"], "github__get_issue");
    assert!(namespaces[0]["tools"][0].get("defer_loading").is_none());
    assert_eq!(namespaces[0]["tools"][1]["defer_loading"], true);
    // A streamed call to a namespaced function: the history keeps its namespace.
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "namespace": "github",
        "name": "github__create_issue", "arguments": "{\"repo\":\"a/b\",\"title\":\"x\"}", "status": "completed"});
    let events = [
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "namespace": "github",
                        "name": "github__create_issue", "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"repo\":\"a/b\",\"title\":\"x\"}"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {}}),
    ];
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let mut stream = provider.stream(&listing).unwrap();
    let mut calls = stream.push(body.as_bytes()).unwrap();
    let streamed = stream.finish().unwrap();
    calls.retain(|c| matches!(c, mcp_adapters::stream::StreamedCall::Ready(_)));
    assert_eq!(calls.len(), 1);
    assert_eq!(streamed.message, json!([item]));
    assert_eq!(streamed.extracted.calls[0].server_id, "github");
    assert_eq!(streamed.extracted.calls[0].tool, "create_issue");
    // The same call read from a whole response resolves too.
    let extracted = provider
        .extract_calls(&json!({"output": [item]}), &listing)
        .unwrap();
    assert_eq!(extracted.calls[0].tool, "create_issue");
}

#[test]
fn bad_deferral_options_are_clear_errors() {
    let chat = provider("openai-chat");
    let err = chat
        .list_tools(&hub(), &options().search(ToolSearch::Client))
        .unwrap_err();
    assert!(err.to_string().contains("search.client"), "{err}");
    let err = provider("anthropic")
        .list_tools(
            &hub(),
            &options().search(ToolSearch::Server("semantic".into())),
        )
        .unwrap_err();
    assert!(err.to_string().contains("bm25, regex"), "{err}");
    let err = chat
        .list_tools(&hub(), &ListOptions::new().defer("["))
        .unwrap_err();
    assert!(err.to_string().contains("invalid glob `[`"), "{err}");
    let taken = ToolSet::client()
        .server(
            "s",
            vec![
                Tool::new("search_tools", "x", schema(&["q"])),
                Tool::new("b", "y", schema(&["q"])),
            ],
        )
        .build()
        .unwrap();
    let err = chat
        .list_tools(&taken, &ListOptions::new().defer("s/b"))
        .unwrap_err();
    assert!(err.to_string().contains("`search_tools`"), "{err}");
    // A listing without deferred tools has nothing to search.
    let plain = chat.list_tools(&hub(), &ListOptions::new()).unwrap();
    let err = chat
        .answer_search(&SearchCall::new(None, "x"), &plain, |_| true)
        .unwrap_err();
    assert!(err.to_string().contains("defers no tool"), "{err}");
    // A defer glob that matches nothing lists everything, as without one.
    let none = chat
        .list_tools(&hub(), &ListOptions::new().defer("nope/*"))
        .unwrap();
    assert_eq!(none.tools, plain.tools);
    assert_eq!(none.tool_search(), None);
}

#[test]
fn a_search_that_finds_nothing_says_so() {
    let provider = provider("anthropic");
    let listing = provider.list_tools(&hub(), &options()).unwrap();
    let answer = provider
        .answer_search(
            &SearchCall::new(Some("toolu_1".into()), "zebra xylophone"),
            &listing,
            |_| true,
        )
        .unwrap();
    assert!(answer.found.is_empty());
    assert_eq!(answer.answer["type"], "tool_result");
    let text = answer.answer["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("No tool matches"), "{text}");
}

#[test]
fn a_search_without_a_query_is_answered_with_an_error_in_the_search_shape() {
    // The library's own tool: an error result, nothing found.
    let provider_ = provider("openai-chat");
    let listing = provider_.list_tools(&hub(), &options()).unwrap();
    let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "call_s", "type": "function",
         "function": {"name": "search_tools", "arguments": "{\"query\": 7}"}}]}}]});
    let extracted = provider_.extract_calls(&response, &listing).unwrap();
    assert_eq!(extracted.searches.len(), 1);
    let answer = provider_
        .answer_search(&extracted.searches[0], &listing, |_| true)
        .unwrap();
    assert!(answer.found.is_empty());
    assert_eq!(answer.answer["tool_call_id"], "call_s");
    let text = answer.answer["content"].as_str().unwrap();
    assert!(
        text.starts_with("Error: ") && text.contains("no query"),
        "{text}"
    );

    // A provider's own client search item keeps its answer shape.
    let responses = provider("openai-responses");
    let listing = responses.list_tools(&hub(), &options()).unwrap();
    let answer = responses
        .answer_search(
            &SearchCall::new(Some("call_s".into()), "  "),
            &listing,
            |_| true,
        )
        .unwrap();
    assert!(answer.found.is_empty());
    assert_eq!(
        answer.answer["type"], "tool_search_output",
        "{}",
        answer.answer
    );
    assert_eq!(answer.answer["tools"], json!([]));
}

fn server(tools: Vec<Tool>) -> InProcessServer {
    let mut server = InProcessServer::new();
    for tool in tools {
        let name = tool.name.clone();
        server = server.tool(tool, move |_args, _ctx| {
            let name = name.clone();
            async move { Ok(CallToolResult::text(format!("{name} ran"))) }
        });
    }
    server
}

#[test]
fn searches_never_reveal_what_the_policy_or_filters_hide() {
    let source = Source::hub()
        .server("github", server(github_tools()))
        .server("time", server(time_tools()))
        .deny_tools("github/merge_*")
        .policy(
            Policy::new()
                .allow("*")
                .unwrap()
                .deny("github/create_*")
                .unwrap(),
        )
        .build()
        .unwrap();
    let provider = provider("anthropic");
    runtime().block_on(async {
        let listing = source.tools(provider, &options()).await.unwrap();
        let response = model_response(
            "anthropic",
            &[
                (
                    "search_tools".into(),
                    json!({"query": "issue pull request merge create"}),
                ),
                ("github__get_issue".into(), json!({"repo": "a/b"})),
            ],
        );
        let run = source
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        // The denied tool and the filtered one are never found; the answers keep the model's order.
        assert!(
            run.found
                .iter()
                .all(|n| n != "github__create_issue" && n != "github__merge_pull_request"),
            "{:?}",
            run.found
        );
        assert_eq!(run.turn.results.len(), 2);
        assert_eq!(run.turn.results[0]["tool_use_id"], "call_0");
        assert_eq!(run.turn.results[1]["tool_use_id"], "call_1");
        assert_eq!(run.turn.results[1]["content"][0]["text"], "get_issue ran");
        let text = run.turn.results[0].to_string();
        assert!(
            !text.contains("create_issue") && !text.contains("merge_pull_request"),
            "{text}"
        );
        assert!(run.calls[0].ran && run.calls[0].server_id.is_none());
    });
}

#[test]
fn found_tools_run_through_the_governed_pipeline() {
    let source = Source::hub()
        .server("github", server(github_tools()))
        .server("time", server(time_tools()))
        .policy(
            Policy::new()
                .allow("time/*")
                .unwrap()
                .deny("github/*")
                .unwrap(),
        )
        .build()
        .unwrap();
    let provider = provider("openai-chat");
    runtime().block_on(async {
        let listing = source
            .tools(provider, &ListOptions::new().defer("time/*"))
            .await
            .unwrap();
        let response = model_response(
            "openai-chat",
            &[("search_tools".into(), json!({"query": "time zones"}))],
        );
        let run = source
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.found, ["time__convert_time"]);
        assert_eq!(run.turn.results[0]["role"], "tool");
        let next = source
            .tools(
                provider,
                &ListOptions::new().defer("time/*").found(run.found.clone()),
            )
            .await
            .unwrap();
        let names: Vec<_> = next.tools.iter().map(tool_name).collect();
        assert_eq!(names.last().unwrap(), "time__convert_time");
        let calls = model_response(
            "openai-chat",
            &[
                ("time__convert_time".into(), json!({"time": "10:00"})),
                ("github__get_issue".into(), json!({"repo": "a/b"})),
            ],
        );
        let run = source
            .execute_tool_calls(provider, &calls, &next, &ExecOptions::new())
            .await
            .unwrap();
        assert!(run.calls[0].ran);
        assert!(!run.calls[1].ran, "the policy still denies github");
    });
}

/// `defer` and `load` globs without `/` name a tool on any server.
#[test]
fn bare_defer_and_load_globs_name_a_tool_on_any_server() {
    let listing = provider("anthropic")
        .list_tools(&hub(), &ListOptions::new().defer("*").load("get_*"))
        .unwrap();
    let deferred: Vec<&str> = listing.deferred().collect();
    assert!(
        !deferred.iter().any(|n| n.starts_with("github__get_")),
        "{deferred:?}"
    );
    assert!(deferred.contains(&"time__convert_time"), "{deferred:?}");
    let bare = provider("anthropic")
        .list_tools(&hub(), &ListOptions::new().defer("convert_time"))
        .unwrap();
    assert_eq!(bare.deferred().collect::<Vec<_>>(), ["time__convert_time"]);
}
