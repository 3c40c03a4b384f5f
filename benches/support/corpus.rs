//! The public corpus (`tests/fixtures/corpus/*.tools.json`, 19 servers) as
//! the benches that list it read it.

use std::path::{Path, PathBuf};

use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::{Tool, ToolSet};
use serde_json::Value;

/// The whole corpus as one hub toolset, servers in file-name order.
pub fn corpus_toolset() -> ToolSet {
    hub_of(&corpus_servers())
}

/// The corpus servers' tools, servers in file-name order.
pub fn corpus_servers() -> Vec<(String, Vec<Tool>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus folder")
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".tools.json")))
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).expect("corpus file");
            let value: Value = serde_json::from_str(&text).expect("corpus JSON");
            let server = file
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".tools.json"))
                .expect("server id");
            (
                server.to_owned(),
                parse_tools_list(value).expect("corpus tools"),
            )
        })
        .collect()
}

/// A hub toolset of `servers`, built anew: it shares nothing with another,
/// not even what listings keep with a toolset.
pub fn hub_of(servers: &[(String, Vec<Tool>)]) -> ToolSet {
    let mut builder = ToolSet::hub();
    for (server, tools) in servers {
        builder = builder.server(server, tools.clone());
    }
    builder.build().expect("corpus toolset")
}
