//! Properties of exposed names over arbitrary servers and tool names.

mod common;

use std::collections::HashSet;

use common::*;
use mcp_adapters::ListOptions;
use mcp_adapters::Tool;
use mcp_adapters::ToolSet;
use proptest::prelude::*;
use serde_json::json;

/// Tool names as servers send them: ASCII, dots, slashes, spaces, unicode,
/// leading digits, up to 200 characters, with repeats.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{1,12}",
        "[a-zA-Z0-9_.\\-/ ]{0,20}",
        "[0-9][a-z]{0,5}",
        "\\PC{1,10}",
        "[a-z]{60,200}",
        Just("search".to_owned()),
        Just("search.v2".to_owned()),
        Just("search_v2".to_owned()),
    ]
}

fn server_id() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z]{1,8}", "[a-z.\\-]{1,8}", "\\PC{1,6}"]
}

fn tools(names: Vec<String>) -> Vec<Tool> {
    names
        .into_iter()
        .map(|n| Tool::new(n, "d", json!({"type": "object"})))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every exposed name matches the rule, is unique, and resolves back to its
    /// server and MCP name; every tool is either exposed or reported dropped.
    #[test]
    fn names_are_valid_unique_and_reversible(
        servers in proptest::collection::vec((server_id(), proptest::collection::vec(name(), 0..12)), 1..5),
        prefix in prop_oneof![Just(String::new()), "[a-z]{1,4}_", "\\PC{1,3}"],
    ) {
        let mut seen_ids = HashSet::new();
        let servers: Vec<_> = servers.into_iter().filter(|(id, _)| seen_ids.insert(id.clone())).collect();
        let total: usize = servers.iter().map(|(_, t)| t.len()).sum();
        let mut builder = ToolSet::hub().prefix(prefix);
        for (id, names) in &servers {
            builder = builder.server(id, tools(names.clone()));
        }
        let set = builder.build().unwrap();
        let mut exposed = HashSet::new();
        for t in set.tools() {
            prop_assert!(is_valid_exposed_name(&t.exposed_name), "{:?}", t.exposed_name);
            prop_assert!(exposed.insert(t.exposed_name.clone()), "duplicate {:?}", t.exposed_name);
            let back = set.resolve(&t.exposed_name).unwrap();
            prop_assert_eq!(&back.tool.name, &t.tool.name);
            prop_assert_eq!(set.exposed_name(&t.server_id, &t.tool.name), Some(t.exposed_name.as_str()));
        }
        prop_assert_eq!(set.len() + set.report().dropped.len(), total);
    }

    /// Listing emits exactly the toolset's names, in order, for every provider;
    /// nothing else is ever listed.
    #[test]
    fn listings_hold_exactly_the_toolset(names in proptest::collection::vec(name(), 0..10), deny in "[a-z]{0,2}\\*") {
        let set = ToolSet::client().deny(format!("s/{deny}")).server("s", tools(names)).build().unwrap();
        let want: Vec<&str> = set.tools().iter().map(|t| t.exposed_name.as_str()).collect();
        for p in mcp_adapters::Registry::builtin().unwrap().providers() {
            let listing = p.list_tools(&set, &ListOptions::new()).unwrap();
            let got: Vec<String> = listing.tools.iter().map(|t| listed_name(t).unwrap_or_default()).collect();
            let excluded: HashSet<&str> = listing.report.excluded.iter().map(|e| e.exposed_name.as_str()).collect();
            let expected: Vec<&str> = want.iter().copied().filter(|w| !excluded.contains(w)).collect();
            prop_assert_eq!(got, expected, "provider {}", p.id());
        }
    }
}

/// The first `"name"` string in a tool definition, whatever the provider's nesting.
fn listed_name(tool: &serde_json::Value) -> Option<String> {
    let obj = tool.as_object()?;
    if let Some(name) = obj.get("name").and_then(|n| n.as_str()) {
        return Some(name.to_owned());
    }
    obj.values().find_map(listed_name)
}

#[test]
fn same_input_same_names() {
    let make = || {
        ToolSet::hub()
            .server(
                "a.b",
                tools(vec!["x.y".into(), "x_y".into(), "z".repeat(100)]),
            )
            .server("a_b", tools(vec!["x.y".into()]))
            .build()
            .unwrap()
    };
    let first: Vec<String> = make()
        .tools()
        .iter()
        .map(|t| t.exposed_name.clone())
        .collect();
    let second: Vec<String> = make()
        .tools()
        .iter()
        .map(|t| t.exposed_name.clone())
        .collect();
    assert_eq!(first, second);
    assert_eq!(first.len(), 4);
    let _ = provider("anthropic");
}
