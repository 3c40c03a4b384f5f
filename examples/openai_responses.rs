//! An agent loop against the real API: MCP tools offered, tool calls run,
//! answers sent back until the model stops calling tools. Needs `OPENAI_API_KEY`.
//! Run: `OPENAI_API_KEY=... cargo run --features rmcp --example openai_responses -- "What time is it in Tokyo?"`

#[path = "common/mod.rs"]
mod common;

use mcp_adapters::{ExecOptions, ListOptions, Registry, Status};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key = std::env::var("OPENAI_API_KEY")?;
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What time is it in Tokyo?".into());
    let source = common::source().await?;
    let provider = Registry::builtin()?.get("openai-responses")?;
    let listing = source.tools(provider, &ListOptions::new()).await?;
    let mut taint = std::collections::BTreeSet::new();
    let mut input = vec![json!({"role": "user", "content": question})];
    for _turn in 0..10 {
        let body = json!({"model": "gpt-4.1", "tools": listing.tools, "input": input});
        let response: Value = common::post(
            "https://api.openai.com/v1/responses",
            &[("authorization", format!("Bearer {key}"))],
            &body,
        )
        .await?;
        let run = source
            .execute_tool_calls(
                provider,
                &response,
                &listing,
                &ExecOptions::new().taint(&taint),
            )
            .await?;
        if run.results.is_empty() {
            println!("{}", serde_json::to_string_pretty(&response)?);
            return Ok(());
        }
        taint.extend(run.ran_servers.iter().cloned());
        input.extend(response["output"].as_array().cloned().unwrap_or_default());
        input.extend(run.results);
        if run.status == Status::Halt {
            return Ok(());
        }
    }
    Ok(())
}
