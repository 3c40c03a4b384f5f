//! Tool listing for each core provider over the real corpus and naming edge cases.

mod common;

use common::*;
use mcp_adapters::ListOptions;
use mcp_adapters::ToolSet;
use mcp_adapters::mcp::parse_tools_list;
use serde_json::{Value, json};

#[test]
fn corpus_listings() {
    insta::glob!("fixtures/corpus/*.tools.json", |path| {
        let server = stem(path);
        let tools = parse_tools_list(read_json(path)).unwrap();
        let toolset = ToolSet::client().server(&server, tools).build().unwrap();
        for id in LISTING_PROVIDERS {
            let listing = provider(id)
                .list_tools(&toolset, &ListOptions::new())
                .unwrap();
            assert_eq!(
                listing.tools.len() + listing.report.excluded.len(),
                toolset.len()
            );
            snapshot(Stage::Listing, Some(id), &server, &listing);
        }
    });
}

/// Variants that convert schemas with their own strict rules, over the corpus.
#[test]
fn corpus_listings_of_strict_variants() {
    insta::glob!("fixtures/corpus/*.tools.json", |path| {
        let server = stem(path);
        let tools = parse_tools_list(read_json(path)).unwrap();
        let toolset = ToolSet::client().server(&server, tools).build().unwrap();
        let listing = provider("anthropic-strict")
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        snapshot(Stage::Listing, Some("anthropic-strict"), &server, &listing);
    });
}

/// The corpus's GitHub tools with `owner` and `repo` bound by the
/// application, and a tool whose bound argument is nested: the core
/// providers' listings show neither (the official SDKs' types check the
/// same listings in `tests/conformance.rs`).
#[test]
fn bound_arguments_leave_the_listed_schemas() {
    let toolset = bound_toolset();
    assert!(
        toolset.report().bound_undeclared.is_empty(),
        "{:?}",
        toolset.report()
    );
    for id in CORE_PROVIDERS {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        let text = serde_json::to_string(&listing.tools).unwrap();
        assert!(
            !text.contains("\"owner\"") && !text.contains("\"repo\""),
            "{id}: {text}"
        );
        snapshot(Stage::Listing, Some(id), "bound", &listing);
    }
}

/// A naming fixture: `{"mode": "hub"|"client", "prefix"?, "allow"?, "deny"?, "servers": [[id, [tools]]], "failed"?: [[id, error]]}`.
fn build(fixture: &Value) -> ToolSet {
    let mut b = if fixture["mode"] == "client" {
        ToolSet::client()
    } else {
        ToolSet::hub()
    };
    if let Some(p) = fixture["prefix"].as_str() {
        b = b.prefix(p);
    }
    for g in fixture["allow"].as_array().into_iter().flatten() {
        b = b.allow(g.as_str().unwrap());
    }
    for g in fixture["deny"].as_array().into_iter().flatten() {
        b = b.deny(g.as_str().unwrap());
    }
    for server in fixture["servers"].as_array().unwrap() {
        let tools = parse_tools_list(server[1].clone()).unwrap();
        b = b.server(server[0].as_str().unwrap(), tools);
    }
    for failed in fixture["failed"].as_array().into_iter().flatten() {
        b = b.failed_server(failed[0].as_str().unwrap(), failed[1].as_str().unwrap());
    }
    b.build().unwrap()
}

#[test]
fn naming_edge_cases() {
    insta::glob!("fixtures/naming/*.json", |path| {
        let toolset = build(&read_json(path));
        let names: Vec<Value> = toolset
            .tools()
            .iter()
            .map(|t| json!([t.exposed_name, t.server_id, t.tool.name]))
            .collect();
        let listing = provider("anthropic")
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        let listed: Vec<&Value> = listing.tools.iter().map(|t| &t["name"]).collect();
        assert_eq!(
            listed,
            names.iter().map(|n| &n[0]).collect::<Vec<_>>(),
            "listing follows the toolset"
        );
        snapshot(
            Stage::Toolset,
            None,
            &case_name(path),
            json!({"tools": names, "report": toolset.report()}),
        );
    });
}

#[test]
fn cache_control_marks_only_the_last_tool() {
    let toolset = ToolSet::client()
        .server("time", corpus_tools("time"))
        .build()
        .unwrap();
    let listing = provider("anthropic")
        .list_tools(
            &toolset,
            &ListOptions::new().option("cache_control", "last"),
        )
        .unwrap();
    let marks: Vec<bool> = listing
        .tools
        .iter()
        .map(|t| t.get("cache_control").is_some())
        .collect();
    assert_eq!(marks, [false, true]);
    assert_eq!(
        listing.tools[1]["cache_control"],
        json!({"type": "ephemeral"})
    );
}

#[test]
fn unknown_options_are_errors() {
    let toolset = ToolSet::client()
        .server("time", corpus_tools("time"))
        .build()
        .unwrap();
    let err = provider("gemini")
        .list_tools(
            &toolset,
            &ListOptions::new().option("cache_control", "last"),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("has no option `cache_control`"),
        "{err}"
    );
}

#[test]
fn no_spec_emits_a_tool_choice() {
    let toolset = ToolSet::client()
        .server("everything", corpus_tools("everything"))
        .build()
        .unwrap();
    for id in CORE_PROVIDERS {
        let listing = provider(id)
            .list_tools(&toolset, &ListOptions::new())
            .unwrap();
        let text = serde_json::to_string(&listing.tools).unwrap();
        assert!(!text.contains("tool_choice"), "{id}");
    }
}
