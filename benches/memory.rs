//! What a listing costs in memory: the peak heap of listing a live server
//! of 20,000 tools, as `mcp-adapters tools --server` does it (start the
//! server over stdio, list its tools, build the toolset, list them in the
//! provider's format, write the listing out as JSON), against the size of
//! the server's `tools/list` result and against `serde_json` parsing that
//! same text alone, measured in the same run. A counting global allocator
//! gives the peaks (the server runs in its own process and is not counted).
//!
//! The server is `tests/e2e/many_tools_server.py`, on the official Python
//! SDK's low-level server (pinned in `tests/e2e/requirements.txt`, installed
//! into `target/` on first run), listing in one page tools of about 260
//! bytes each: a name, a sentence, and a schema of two properties.
//!
//! Goal: the listing's peak ≤ 10x the `tools/list` JSON. Needs
//! `--features rmcp`:
//!
//!     cargo bench --bench memory --features rmcp

#[path = "support/counting.rs"]
mod counting;
#[path = "../tests/common/install.rs"]
#[allow(dead_code)]
mod install;
#[path = "../tests/common/servers.rs"]
mod servers;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use counting::{Counting, peak_of};
use mcp_adapters::{HubConfig, ListOptions, Registry, ServerConfig};
use serde_json::{Value, json};

/// The tools listed.
const TOOLS: usize = 20_000;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Counts the bytes written to it, and keeps none.
struct Counted(usize);

impl Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The tools: each a name, a sentence, and a schema of two properties.
fn tools_list() -> Value {
    let tools: Vec<Value> = (0..TOOLS)
        .map(|i| {
            json!({
                "name": format!("tool_{i:05}"),
                "description": format!("Reads the record {i} of the store and returns it as text."),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Where the record is."},
                        "limit": {"type": "integer", "minimum": 1}
                    },
                    "required": ["path"]
                }
            })
        })
        .collect();
    json!({ "tools": tools })
}

/// The server's own `tools/list` result, as it sends it: asked over a raw
/// stdio session.
fn served(python: &str, script: &str, file: &str) -> String {
    let mut child = Command::new(python)
        .args([script, file])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut result = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            result = Some(message["result"].to_string());
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    result.expect("the server answered tools/list")
}

fn main() {
    let python = match servers::python() {
        Ok(python) => python.display().to_string(),
        Err(e) => {
            eprintln!("memory bench skipped: {e}");
            std::process::exit(1);
        }
    };
    let script = install::manifest_dir()
        .join("tests/e2e/many_tools_server.py")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.json");
    std::fs::write(&file, tools_list().to_string()).unwrap();
    let file = file.display().to_string();
    let text = served(&python, &script, &file);
    let size = text.len() as f64;
    let mb = |bytes: usize| bytes as f64 / 1e6;

    let (parsed, _, _) = peak_of(|| serde_json::from_str::<Value>(&text).unwrap());
    println!(
        "memory: the tools/list result of {TOOLS} tools is {:.2} MB; serde_json alone peaks at {:.1} MB ({:.2}x)",
        mb(text.len()),
        mb(parsed),
        parsed as f64 / size
    );

    let registry = Registry::builtin().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = HubConfig::new().server(
        "many",
        ServerConfig::stdio(&python, vec![script.clone(), file.clone()]),
    );
    // Reading the list alone: the server started, its tools listed into
    // the toolset, no provider's definitions.
    let (read, _, _) = peak_of(|| {
        runtime.block_on(async {
            let source = config.connect().await.unwrap().build().unwrap();
            let toolset = source.toolset().await.unwrap();
            assert_eq!(toolset.len(), TOOLS);
            source.close().await;
        })
    });
    println!(
        "memory reading the list into the toolset: peak {:.1} MB = {:.2}x the tools/list JSON",
        mb(read),
        read as f64 / size
    );
    for provider in ["anthropic", "openai-chat"] {
        let provider = registry.get(provider).unwrap();
        let (peak, _, written) = peak_of(|| {
            let listing = runtime.block_on(async {
                let source = config.connect().await.unwrap().build().unwrap();
                // Listed once: whether the server started is read from the
                // listing's report.
                let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
                assert!(listing.report.toolset.failed_servers.is_empty());
                source.close().await;
                listing
            });
            assert_eq!(listing.tools.len(), TOOLS);
            // As `tools` prints it: written out as it is serialized.
            let mut out = Counted(0);
            serde_json::to_writer_pretty(&mut out, &listing).unwrap();
            out.0
        });
        let ratio = peak as f64 / size;
        println!(
            "memory listing {} ({:.2} MB written): peak {:.1} MB = {ratio:.2}x the tools/list JSON, {:.2}x serde_json's parse (goal <= 10x the JSON: {})",
            provider.id(),
            mb(written),
            mb(peak),
            peak as f64 / parsed as f64,
            if ratio <= 10.0 { "met" } else { "not met" }
        );
    }
}
