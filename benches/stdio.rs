//! The figure users feel: the same calls made through the library and made
//! directly with rmcp, against the same real MCP server over stdio
//! (`@modelcontextprotocol/server-everything`, pinned as in the end-to-end
//! tests and installed into `target/` on first run; Node.js and npm are
//! needed). Each side runs its own server process; a round is 50 `echo` calls
//! at concurrency 8:
//!
//! * through the library: a model response of 50 calls, read, run through the
//!   governed pipeline (`Source::execute_tool_calls`) and answered in the
//!   Anthropic shape;
//! * directly: 50 `tools/call` requests on an rmcp client session, 8 at once.
//!
//! Goal: ≤ 1.05x. Ratios are printed at the end of the run.

mod support;

#[path = "../tests/common/install.rs"]
#[allow(dead_code)]
mod install;
#[path = "../tests/common/servers.rs"]
mod servers;

use std::hint::black_box;

use futures_util::StreamExt;
use mcp_adapters::{ExecOptions, ListOptions, McpClient, Registry, ServerConfig, Source};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

const CALLS: usize = 50;
const CONCURRENCY: usize = 8;

fn main() {
    let (command, args) = match servers::everything() {
        Ok(found) => found,
        Err(e) => {
            eprintln!("stdio bench skipped: {e}");
            std::process::exit(1);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let provider = Registry::builtin().unwrap().get("anthropic").unwrap();
    let config = ServerConfig::Stdio {
        command: command.clone(),
        args: args.clone(),
        env: Default::default(),
    };
    let (source, listing) = rt.block_on(async {
        let client = McpClient::connect("everything", &config, &Default::default())
            .await
            .unwrap();
        let source = Source::client("everything", client).build().unwrap();
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        (source, listing)
    });
    let direct = rt.block_on(async {
        let mut child = tokio::process::Command::new(&command);
        child.args(&args);
        ().serve(rmcp::transport::TokioChildProcess::new(child).unwrap())
            .await
            .unwrap()
    });
    let blocks: Vec<Value> = (0..CALLS)
        .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "echo", "input": {"message": format!("hello {i}")}}))
        .collect();
    let response = json!({"content": blocks});
    let options = ExecOptions::new().max_concurrency(CONCURRENCY);

    let through_library = || {
        let run = rt
            .block_on(source.execute_tool_calls(provider, &response, &listing, &options))
            .unwrap();
        assert!(run.calls.iter().all(|c| c.error.is_none()));
        run
    };
    let with_rmcp = || {
        rt.block_on(async {
            futures_util::stream::iter(0..CALLS)
                .map(|i| {
                    let arguments = json!({"message": format!("hello {i}")});
                    let Value::Object(arguments) = arguments else {
                        unreachable!()
                    };
                    direct.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
                })
                .buffer_unordered(CONCURRENCY)
                .map(|result| black_box(result.unwrap()))
                .collect::<Vec<_>>()
                .await
        })
    };
    // Batches of about 250 ms (a dozen turns or more): a 20 ms batch is a
    // few turns, and one garbage collection in either server process moves
    // its ratio by a third.
    let batch = if support::full_run() {
        std::time::Duration::from_millis(250)
    } else {
        std::time::Duration::from_millis(20)
    };
    let ratio = support::median_ratio_batched(support::rounds(), batch, through_library, with_rmcp);
    support::report(
        &format!(
            "{CALLS} echo calls over stdio at concurrency {CONCURRENCY}, library / rmcp directly"
        ),
        ratio,
        Some(1.05),
    );
}
