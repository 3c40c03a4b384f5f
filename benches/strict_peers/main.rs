//! Time per schema of the strict conversion over the public corpus.
//!
//! Run by `benches/strict_peers/peers.py` (see the README next to this file);
//! prints one JSON line: `{"schemas", "converted", "ns_per_schema"}`.

use std::path::Path;
use std::time::Instant;

use mcp_adapters::strict::{StrictRules, convert};
use serde_json::Value;

const ROUNDS: usize = 200;

fn corpus(dir: &Path) -> Vec<Value> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    let mut schemas = Vec::new();
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("read"))
            .expect("tools file is JSON");
        for tool in doc["tools"].as_array().into_iter().flatten() {
            schemas.push(tool["inputSchema"].clone());
        }
    }
    schemas
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules_text = std::fs::read_to_string(root.join("providers/rules/openai-strict.yaml"))
        .expect("rules file");
    let rules = StrictRules::from_yaml_str(&rules_text).expect("rules load");
    let schemas = corpus(&root.join("tests/fixtures/corpus"));
    let converted = schemas
        .iter()
        .filter(|s| convert(s, &rules).is_ok())
        .count();
    let start = Instant::now();
    for _ in 0..ROUNDS {
        for schema in &schemas {
            std::hint::black_box(convert(std::hint::black_box(schema), &rules).ok());
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / (ROUNDS * schemas.len()) as f64;
    println!(
        "{{\"schemas\": {}, \"converted\": {converted}, \"ns_per_schema\": {ns:.1}}}",
        schemas.len()
    );
}
