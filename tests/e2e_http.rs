//! The streamable HTTP transport (`rmcp-http`) against a real server: the
//! pinned `@modelcontextprotocol/server-everything` in its `streamableHttp`
//! mode, on a free loopback port.
#![cfg(feature = "rmcp-http")]

mod common;

use common::provider;
use mcp_adapters::ListOptions;
use mcp_adapters::ServerConfig;
use mcp_adapters::{ClientOptions, McpClient};
use mcp_adapters::{ExecOptions, Source};
use serde_json::json;

#[test]
fn lists_and_calls_over_streamable_http() {
    let server = common::servers::everything_http().unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let config = ServerConfig::http(server.url.clone());
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
        let run = source
            .execute_tool_calls(p, &response, &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(run.turn.results[0]["call_id"], "call_1");
        assert_eq!(run.turn.results[0]["output"], "Echo: over http");
    });
}
