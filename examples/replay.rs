//! An agent loop, offline: recorded model responses (one per core provider)
//! replayed against a real MCP server, mcp-server-time. No API key needed.
//!
//! Run: `cargo run --features rmcp --example replay` (starts `uvx mcp-server-time`; set
//! `MCP_TIME_COMMAND` to another command line to start it differently). The
//! end-to-end tests run the same replay against their pinned install.

use mcp_adapters::ListOptions;
use mcp_adapters::Registry;
use mcp_adapters::{ExecOptions, Status};
use mcp_adapters::{HubConfig, ServerConfig};
use serde_json::{Value, json};

/// The model's recorded turns: (provider, response calling the time server's tools).
pub fn recorded() -> Vec<(&'static str, Value)> {
    let args = json!({"source_timezone": "Asia/Kolkata", "time": "09:30", "target_timezone": "Asia/Tokyo"});
    vec![
        (
            "anthropic",
            json!({"role": "assistant", "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Converting."},
            {"type": "tool_use", "id": "toolu_01", "name": "convert_time", "input": args}]}),
        ),
        (
            "openai-chat",
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_01", "type": "function", "function": {"name": "convert_time", "arguments": args.to_string()}}]}}]}),
        ),
        (
            "openai-responses",
            json!({"object": "response", "status": "completed", "output": [
            {"type": "function_call", "id": "fc_01", "call_id": "call_01", "name": "convert_time", "arguments": args.to_string(), "status": "completed"}]}),
        ),
        (
            "gemini",
            json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [
            {"functionCall": {"id": "fc-01", "name": "convert_time", "args": args}}]}}]}),
        ),
    ]
}

/// Replays every recorded turn against the server `command args`; returns each provider's answers.
pub async fn replay(
    command: String,
    args: Vec<String>,
) -> Result<Vec<(String, Vec<Value>)>, Box<dyn std::error::Error>> {
    // A server that does not start fails `connect`, saying why.
    let source = HubConfig::new()
        .server("time", ServerConfig::stdio(command, args))
        .connect()
        .await
        .map_err(|e| {
            format!("{e} (set MCP_TIME_COMMAND to the command line that starts mcp-server-time)")
        })?
        .build()?;
    let registry = Registry::builtin()?;
    let mut out = Vec::new();
    for (id, response) in recorded() {
        let provider = registry.get(id)?;
        let listing = source.tools(provider, &ListOptions::new()).await?;
        let run = source
            .execute_tool_calls(provider, &response, &listing, &ExecOptions::new())
            .await?;
        if run.status != Status::Ok || run.calls.iter().any(|c| !c.ran) {
            return Err(format!("{id}: a call did not run: {:?}", run.calls).into());
        }
        out.push((id.to_owned(), run.turn.results));
    }
    Ok(out)
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let line = std::env::var("MCP_TIME_COMMAND").unwrap_or_else(|_| "uvx mcp-server-time".into());
    let mut words = line.split_whitespace().map(str::to_owned);
    let command = words.next().ok_or("MCP_TIME_COMMAND is empty")?;
    for (provider, results) in replay(command, words.collect()).await? {
        println!("{provider}: {}", serde_json::to_string(&results)?);
    }
    Ok(())
}
