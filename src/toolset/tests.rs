use serde_json::json;

use super::*;

fn tool(name: &str) -> Tool {
    Tool::new(name, "", json!({"type": "object"}))
}

fn names(set: &ToolSet) -> Vec<&str> {
    set.tools()
        .iter()
        .map(|t| t.exposed_name.as_str())
        .collect()
}

#[test]
fn client_mode_keeps_names_and_sanitizes() {
    let set = ToolSet::client()
        .server(
            "fs",
            vec![
                tool("read"),
                tool("files.write"),
                tool("9lives"),
                tool("a/b c"),
            ],
        )
        .build()
        .unwrap();
    assert_eq!(names(&set), ["read", "files_write", "_9lives", "a_b_c"]);
    assert_eq!(set.report().renamed.len(), 3);
    assert_eq!(
        set.report().renamed[1].reasons,
        [RenameReason::LeadingCharacter]
    );
}

#[test]
fn hub_mode_joins_server_and_tool() {
    let set = ToolSet::hub()
        .prefix("mcp_")
        .server("git-hub", vec![tool("create_issue")])
        .server("web", vec![tool("fetch")])
        .build()
        .unwrap();
    assert_eq!(names(&set), ["mcp_git-hub__create_issue", "mcp_web__fetch"]);
    assert!(set.report().renamed.is_empty());
}

#[test]
fn long_names_are_cut_with_a_stable_hash() {
    let long = "x".repeat(200);
    let set = ToolSet::client()
        .server("s", vec![tool(&long)])
        .build()
        .unwrap();
    let name = &set.tools()[0].exposed_name;
    assert_eq!(name.len(), 64);
    assert!(is_valid_exposed_name(name));
    assert_eq!(
        name,
        &format!(
            "{}_{:08x}",
            "x".repeat(55),
            fnv1a32(format!("s\0{long}").as_bytes())
        )
    );
    assert_eq!(set.resolve(name).unwrap().tool.name, long);
}

#[test]
fn collisions_get_a_hash_suffix_in_listing_order() {
    let set = ToolSet::client()
        .server("s", vec![tool("a.b"), tool("a_b"), tool("a-b")])
        .build()
        .unwrap();
    let got = names(&set);
    assert_eq!(got[0], "a_b");
    assert!(got[1].starts_with("a_b_") && got[1].len() == 12, "{got:?}");
    assert_eq!(got[2], "a-b");
    let collision = &set.report().renamed[1];
    assert_eq!(collision.tool, "a_b");
    assert!(
        matches!(&collision.reasons[0], RenameReason::Collision { with_tool, .. } if with_tool == "a.b")
    );
}

#[test]
fn duplicates_and_empty_names_are_dropped() {
    let set = ToolSet::client()
        .server("s", vec![tool("a"), tool("a"), tool("")])
        .build()
        .unwrap();
    assert_eq!(names(&set), ["a"]);
    let reasons: Vec<_> = set
        .report()
        .dropped
        .iter()
        .map(|d| d.reason.clone())
        .collect();
    assert_eq!(reasons, [DropReason::DuplicateName, DropReason::EmptyName]);
}

#[test]
fn filters_allow_then_deny() {
    let set = ToolSet::hub()
        .allow("github/*")
        .allow("web/fetch")
        .deny("github/delete_*")
        .server("github", vec![tool("get_issue"), tool("delete_repo")])
        .server("web", vec![tool("fetch"), tool("crawl")])
        .build()
        .unwrap();
    assert_eq!(names(&set), ["github__get_issue", "web__fetch"]);
    let dropped: Vec<_> = set
        .report()
        .dropped
        .iter()
        .map(|d| (d.tool.as_str(), d.reason.clone()))
        .collect();
    assert_eq!(
        dropped,
        [
            (
                "delete_repo",
                DropReason::Denied {
                    pattern: "github/delete_*".into()
                }
            ),
            ("crawl", DropReason::NotAllowed)
        ]
    );
}

#[test]
fn failed_servers_are_reported_and_contribute_nothing() {
    let set = ToolSet::hub()
        .server("a", vec![tool("t")])
        .failed_server("b", "connection refused")
        .build()
        .unwrap();
    assert_eq!(names(&set), ["a__t"]);
    assert_eq!(set.report().failed_servers[0].server_id, "b");
}

#[test]
fn bad_builders_are_errors() {
    assert!(ToolSet::hub().allow("[").build().is_err());
    assert!(
        ToolSet::hub()
            .server("a", vec![])
            .server("a", vec![])
            .build()
            .is_err()
    );
    assert!(ToolSet::hub().server("", vec![]).build().is_err());
    assert!(
        ToolSet::client()
            .server("a", vec![])
            .server("b", vec![])
            .build()
            .is_err()
    );
}

#[test]
fn exposed_name_rule() {
    for ok in ["a", "_", "A-b_9", &"a".repeat(64)] {
        assert!(is_valid_exposed_name(ok), "{ok}");
    }
    for bad in ["", "9a", "-a", "a.b", "ä", &"a".repeat(65)] {
        assert!(!is_valid_exposed_name(bad), "{bad}");
    }
}

#[test]
fn a_glob_without_a_slash_names_a_tool_on_any_server() {
    let set = ToolSet::hub()
        .server("a", vec![tool("read_file"), tool("delete_file")])
        .server("b", vec![tool("read_file"), tool("list")])
        .allow("read_*")
        .allow("b/*")
        .deny("delete_*")
        .build()
        .unwrap();
    assert_eq!(names(&set), ["a__read_file", "b__read_file", "b__list"]);
    // Taint and other globs written in full keep their meaning.
    assert!(
        compile_tool_glob("a/read_*")
            .unwrap()
            .is_match("a/read_file")
    );
    assert!(
        !compile_tool_glob("a/read_*")
            .unwrap()
            .is_match("b/read_file")
    );
    assert!(!compile_glob("read_*").unwrap().is_match("a/read_file"));
    let err = compile_tool_glob("read_[").unwrap_err();
    assert_eq!(err.to_string(), "invalid glob `read_[`", "{err:#}");
}
