//! A toolset keeps what its listings convert (schemas per set of rules,
//! cleaned descriptions): a listing of a toolset listed before must be the
//! listing of a toolset listed for the first time (which converts and keeps
//! nothing), whatever was listed in between, and two sets of rules must
//! never share what was kept.

mod common;

use std::path::Path;

use common::*;
use mcp_adapters::listing::ToolSearch;
use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::spec::SpecFile;
use mcp_adapters::toolset::sanitize_description;
use mcp_adapters::{ListOptions, Listing, Provider, Registry, ResultOptions, StrictMode, ToolSet};
use serde_json::{Value, json};

/// The whole corpus as one hub toolset, built anew at each call (so that
/// it shares nothing kept with another).
fn corpus() -> ToolSet {
    let mut builder = ToolSet::hub();
    for server in corpus_servers() {
        builder = builder.server(&server, corpus_tools(&server));
    }
    builder.build().unwrap()
}

/// Everything a listing says: its JSON (tools, null paths, report) and,
/// per exposed name, whether it is strict, rewritten, deferred.
fn seen(listing: &Listing) -> Value {
    let flags: Vec<Value> = listing
        .toolset()
        .tools()
        .iter()
        .map(|t| {
            let name = t.exposed_name.as_str();
            json!([
                name,
                listing.is_strict(name),
                listing.is_rewritten(name),
                listing.is_deferred(name)
            ])
        })
        .collect();
    json!({
        "listing": serde_json::to_value(listing).unwrap(),
        "flags": flags,
        "found": listing.found(),
        "search_tool": listing.search_tool_name(),
    })
}

/// The first place where `a` and `b` differ, as a JSON pointer with both values there.
fn difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            for key in keys {
                let here = format!("{at}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = difference(x, y, &here) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some(format!("{here}: {x:?} vs {y:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (x, y))| difference(x, y, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => {
            let cut = |v: &Value| v.to_string().chars().take(300).collect::<String>();
            Some(format!("{at}: {} vs {}", cut(a), cut(b)))
        }
    }
}

/// Asserts that two listings say the same, naming the first difference.
#[track_caller]
fn same(a: &Value, b: &Value, what: &str) {
    if let Some(d) = difference(a, b, "") {
        panic!("{what}: the listings differ at {d}");
    }
}

fn list(provider: &Provider, toolset: &ToolSet, options: &ListOptions) -> Value {
    let listing = provider
        .list_tools(toolset, options)
        .unwrap_or_else(|e| panic!("{}: {e:#}", provider.id()));
    seen(&listing)
}

/// The option sets each provider is listed with.
fn option_sets() -> Vec<(&'static str, ListOptions)> {
    let budget = ResultOptions::new().max_result_tokens(2000);
    vec![
        ("default", ListOptions::new()),
        ("strict on", ListOptions::new().strict(StrictMode::On)),
        ("strict auto", ListOptions::new().strict(StrictMode::Auto)),
        ("strict off", ListOptions::new().strict(StrictMode::Off)),
        ("read on", ListOptions::new().read_on(budget.budget())),
        (
            "deferred",
            ListOptions::new()
                .defer("github/*")
                .defer("notion/*")
                .search(ToolSearch::Library)
                .found(["github__get_issue", "notion__API-post-search"]),
        ),
    ]
}

const SPECS: &[&str] = &[
    "openai-chat",
    "openai-responses",
    "gemini",
    "gemini-openai",
    "xai",
    "anthropic",
    "anthropic-strict",
];

/// The corpus sees enough of every kind of outcome for the comparisons to
/// mean something: strict tools with null paths, fallbacks, exclusions,
/// rewritten and unsupported schemas.
#[test]
fn the_corpus_has_every_outcome() {
    let toolset = corpus();
    let chat = provider("openai-chat");
    let auto = chat.list_tools(&toolset, &ListOptions::new()).unwrap();
    assert!(!auto.null_paths.is_empty());
    assert!(!auto.report.fallbacks.is_empty());
    let on = chat
        .list_tools(&toolset, &ListOptions::new().strict(StrictMode::On))
        .unwrap();
    assert!(!on.report.excluded.is_empty());
    let gemini = provider("gemini-openai")
        .list_tools(&toolset, &ListOptions::new())
        .unwrap();
    assert!(!gemini.report.unsupported.is_empty() || !gemini.tools.is_empty());
    let rewritten = toolset
        .tools()
        .iter()
        .filter(|t| gemini.is_rewritten(&t.exposed_name))
        .count();
    assert!(
        rewritten > 0,
        "the subset rules rewrite some corpus schemas"
    );
}

/// The descriptions kept are those the toolset's own cleaning gives, cut
/// ones included, on the first listing and after.
#[test]
fn kept_descriptions_are_cleaned_and_capped() {
    let toolset = corpus();
    let anthropic = provider("anthropic");
    let mut cut = 0;
    for _ in 0..2 {
        let listing = anthropic.list_tools(&toolset, &ListOptions::new()).unwrap();
        for (def, tool) in listing.tools.iter().zip(toolset.tools()) {
            let expected = tool.tool.description.as_deref().map(sanitize_description);
            assert_eq!(
                def["description"].as_str(),
                expected.as_deref(),
                "{}",
                tool.exposed_name
            );
            cut += usize::from(
                expected.is_some_and(|d| d.len() < tool.tool.description.as_ref().unwrap().len()),
            );
        }
    }
    assert!(cut > 0, "some corpus descriptions are over the cap");
}

/// Each spec and option set: the second listing of one toolset, and a
/// listing after every other spec and option set listed it, equal the
/// listing of a toolset built anew.
#[test]
fn a_kept_listing_equals_a_first_listing() {
    let shared = corpus();
    let mut firsts = Vec::new();
    for (label, options) in option_sets() {
        for id in SPECS {
            let provider = provider(id);
            let first = list(provider, &corpus(), &options);
            // The first listing keeps nothing, the second converts and
            // keeps, the third copies.
            for round in ["first", "second", "third"] {
                same(
                    &first,
                    &list(provider, &shared, &options),
                    &format!("{id}, {label}: {round} listing of the shared toolset"),
                );
            }
            firsts.push(first);
        }
    }
    // Every spec and option set again, on the toolset that has kept them all.
    let mut firsts = firsts.into_iter();
    for (label, options) in option_sets() {
        for id in SPECS {
            same(
                &firsts.next().unwrap(),
                &list(provider(id), &shared, &options),
                &format!("{id}, {label}: after every other listing"),
            );
        }
    }
}

/// Searching a deferred listing renders the found tools from what was kept,
/// the same as on a toolset listed for the first time.
#[test]
fn found_tools_render_alike() {
    let shared = corpus();
    let options = ListOptions::new().defer("*").search(ToolSearch::Library);
    for id in ["openai-chat", "gemini"] {
        let provider = provider(id);
        // Every tool converted and kept by a full listing first.
        provider.list_tools(&shared, &ListOptions::new()).unwrap();
        let names: Vec<String> = shared
            .tools()
            .iter()
            .map(|t| t.exposed_name.clone())
            .step_by(7)
            .collect();
        let with_found = options.clone().found(names.clone());
        same(
            &list(provider, &corpus(), &with_found),
            &list(provider, &shared, &with_found),
            id,
        );
    }
}

fn read_builtin(dir: &Path, id: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{id}.yaml"))).unwrap()
}

/// A registry with `openai-chat`, whose strict rules are the bundled ones
/// with `optional_properties: keep` when `keep` (a user's own rules under the
/// bundled id), and `chat-subset`, a user's spec that puts schemas through
/// subset rules before the strict ones.
fn registry(keep: bool) -> Registry {
    let providers = Path::new(env!("CARGO_MANIFEST_DIR")).join("providers");
    let mut rules = read_builtin(&providers.join("rules"), "openai-strict");
    if keep {
        assert!(rules.contains("optional_properties: nullable"));
        rules = rules.replace("optional_properties: nullable", "optional_properties: keep");
    }
    Registry::from_files(vec![
        SpecFile::provider(
            "openai-chat",
            "openai-chat.yaml",
            read_builtin(&providers, "openai-chat"),
        ),
        SpecFile::provider(
            "chat-subset",
            "chat-subset.yaml",
            "extends: openai-chat\ntitle: Chat with a subset\nschema:\n  rules: qwen-inline-defs\n",
        ),
        SpecFile::rules("openai-strict", "rules/openai-strict.yaml", rules),
        SpecFile::rules(
            "qwen-inline-defs",
            "rules/qwen-inline-defs.yaml",
            read_builtin(&providers.join("rules"), "qwen-inline-defs"),
        ),
    ])
    .unwrap()
}

/// A spec with subset and strict rules: kept listings equal first ones, in
/// every strict mode, and differ from the spec without the subset.
#[test]
fn subset_then_strict_rules_are_kept_alike() {
    let registry = registry(false);
    let (chat, subset) = (
        registry.get("openai-chat").unwrap(),
        registry.get("chat-subset").unwrap(),
    );
    let shared = corpus();
    for (label, options) in option_sets() {
        let first = list(subset, &corpus(), &options);
        list(chat, &shared, &options);
        same(&list(subset, &shared, &options), &first, label);
        same(
            &list(subset, &shared, &options),
            &first,
            &format!("{label}, again"),
        );
    }
    let listing = subset.list_tools(&shared, &ListOptions::new()).unwrap();
    let rewritten = shared
        .tools()
        .iter()
        .filter(|t| listing.is_rewritten(&t.exposed_name))
        .count();
    assert!(
        rewritten > 0,
        "the subset rules rewrite some corpus schemas"
    );
    assert!(list(subset, &shared, &ListOptions::new()) != list(chat, &shared, &ListOptions::new()));
}

/// Two sets of rules under the same ids (a spec and its rules loaded twice,
/// the second time changed) share nothing on one toolset: each listing is
/// its own first listing, and the two differ.
#[test]
fn rules_of_the_same_name_share_nothing() {
    let (nullable, keep) = (registry(false), registry(true));
    let (nullable, keep) = (
        nullable.get("openai-chat").unwrap(),
        keep.get("openai-chat").unwrap(),
    );
    let shared = corpus();
    let options = ListOptions::new();
    let first_nullable = list(nullable, &corpus(), &options);
    let first_keep = list(keep, &corpus(), &options);
    assert!(first_nullable != first_keep);
    for _ in 0..2 {
        same(
            &list(nullable, &shared, &options),
            &first_nullable,
            "nullable",
        );
        same(&list(keep, &shared, &options), &first_keep, "keep");
    }
    let keep_listing = keep.list_tools(&shared, &options).unwrap();
    assert!(keep_listing.null_paths.is_empty());
}

/// Rules that are dropped (their registry with them) leave nothing behind
/// that a later set of rules could be mistaken for: a new registry's
/// listing of the same toolset is its own first listing.
#[test]
fn rules_dropped_and_made_again_share_nothing() {
    let shared = corpus();
    let options = ListOptions::new();
    for keep in [false, true, false, true] {
        let registry = registry(keep);
        let chat = registry.get("openai-chat").unwrap();
        same(
            &list(chat, &shared, &options),
            &list(chat, &corpus(), &options),
            &format!("optional properties kept: {keep}"),
        );
    }
}

/// A toolset listed from several threads at once lists alike in each.
#[test]
fn listings_from_several_threads_agree() {
    let shared = corpus();
    let expected = list(provider("openai-responses"), &corpus(), &ListOptions::new());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| list(provider("openai-responses"), &shared, &ListOptions::new()))
            })
            .collect();
        for handle in handles {
            same(&handle.join().unwrap(), &expected, "a thread's listing");
        }
    });
}

/// A tool added to a toolset (a toolset made anew) is listed with its own
/// schema, not one kept for the toolset it was made from.
#[test]
fn a_new_toolset_with_other_tools_keeps_its_own() {
    let tools = |schema: Value| {
        parse_tools_list(json!({"tools": [{"name": "t", "inputSchema": schema}]})).unwrap()
    };
    let a = ToolSet::client()
        .server(
            "s",
            tools(json!({"type": "object", "properties": {"x": {"type": "string"}}})),
        )
        .build()
        .unwrap();
    let b = ToolSet::client()
        .server(
            "s",
            tools(json!({"type": "object", "properties": {"y": {"type": "integer"}}})),
        )
        .build()
        .unwrap();
    let chat = provider("openai-chat");
    let la = chat.list_tools(&a, &ListOptions::new()).unwrap();
    let lb = chat.list_tools(&b, &ListOptions::new()).unwrap();
    assert_eq!(
        la.tools[0]["function"]["parameters"]["properties"]["x"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        lb.tools[0]["function"]["parameters"]["properties"]["y"]["type"],
        json!(["integer", "null"])
    );
}
