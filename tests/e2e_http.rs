//! The streamable HTTP transport (`rmcp-http`) against a real server: the
//! pinned `@modelcontextprotocol/server-everything` in its `streamableHttp`
//! mode, on a free loopback port.
#![cfg(feature = "rmcp-http")]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::provider;
use mcp_adapters::ListOptions;
use mcp_adapters::ServerConfig;
use mcp_adapters::{ClientOptions, McpClient};
use mcp_adapters::{ExecOptions, Source};
use serde_json::json;

/// The server process, killed when the test ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the everything server over HTTP and waits until it says it listens.
fn start(port: u16) -> Running {
    let (node, mut args) = common::servers::everything().unwrap_or_else(|e| panic!("{e}"));
    args.pop(); // the "stdio" mode argument
    args.push("streamableHttp".into());
    let mut child = Command::new(node)
        .args(args)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the HTTP server starts listening");
    Running(child)
}

#[test]
fn lists_and_calls_over_streamable_http() {
    let port = free_port();
    let _server = start(port);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let config = ServerConfig::http(url);
        let client = McpClient::connect("everything", &config, &ClientOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let source = Source::client("everything", client).build().unwrap();
        let p = provider("openai-responses");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        assert!(listing.tools.iter().any(|t| t["name"] == "echo"), "{:?}", listing.tools);
        let response = json!({"output": [
            {"type": "function_call", "call_id": "call_1", "name": "echo", "arguments": "{\"message\": \"over http\"}"}
        ]});
        let started = Instant::now();
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(run.results[0]["call_id"], "call_1");
        assert_eq!(run.results[0]["output"], "Echo: over http");
    });
}
