//! The README's first turn: one stdio server, one model response, the
//! answers printed. The tests run it against their pinned install of the
//! server and check that it is the README's code, whitespace aside.
//!
//! Run: `cargo run --features rmcp --example first_turn` (it starts
//! `npx -y @modelcontextprotocol/server-everything`).

use mcp_adapters::{ExecOptions, HubConfig, ListOptions, Policy, Registry, ServerConfig};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), mcp_adapters::Error> {
    // A server that does not start is an error that says why.
    let server = ServerConfig::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
    let source = HubConfig::new()
        .server("everything", server)
        .connect()
        .await?
        .policy(
            Policy::new()
                .allow("everything/echo")?
                .allow("everything/get-sum")?,
        )
        .build()?;
    let provider = Registry::builtin()?.get("anthropic")?;
    // The request's `tools`: the two tools the policy allows, nothing else.
    let listing = source.tools(provider, &ListOptions::new()).await?;
    let response = json!({"content": [
        {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"message": "hi"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get-sum", "input": {"a": 2, "b": 3}},
        {"type": "tool_use", "id": "toolu_3", "name": "delete_everything", "input": {}}]});
    let run = source
        .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
        .await?;
    // One `tool_result` per call, in the model's order: the next user message's content.
    for (call, answer) in run.calls.iter().zip(&run.turn.results) {
        println!("{:?}: {answer}", call.outcome);
    }
    source.close().await;
    Ok(())
}
