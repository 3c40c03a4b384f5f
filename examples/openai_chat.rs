//! An agent loop against the real API: MCP tools offered, tool calls run,
//! answers sent back until the model stops calling tools. Needs `OPENAI_API_KEY`.
//! Run: `OPENAI_API_KEY=... cargo run --features rmcp --example openai_chat -- "What time is it in Tokyo?"`

#[path = "common/mod.rs"]
mod common;

use mcp_adapters::{ExecOptions, ListOptions, Registry, ResultOptions, Status};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key = common::env("OPENAI_API_KEY")?;
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What time is it in Tokyo?".into());
    let source = common::source().await?;
    let provider = Registry::builtin()?.get("openai-chat")?;
    let listing = source.tools(provider, &ListOptions::new()).await?;
    let mut taint = std::collections::BTreeSet::new();
    // Every medium the API takes (documents, and follow-ups where a tool result cannot carry one).
    let options = ExecOptions::new().results(ResultOptions::new().option("media", "full"));
    let mut messages = vec![json!({"role": "user", "content": question})];
    for _turn in 0..10 {
        let body = json!({"model": "gpt-4.1", "tools": listing.tools, "messages": messages});
        let response: Value = common::post(
            "https://api.openai.com/v1/chat/completions",
            &[("authorization", format!("Bearer {key}"))],
            &body,
        )
        .await?;
        let run = source
            .execute_tool_calls(
                provider,
                &response,
                &listing,
                &options.clone().taint(&taint),
            )
            .await?;
        if run.turn.results.is_empty() {
            println!("{}", serde_json::to_string_pretty(&response)?);
            return Ok(());
        }
        taint.extend(run.ran_servers.iter().cloned());
        messages.push(response["choices"][0]["message"].clone());
        messages.extend(run.turn.results); // the tool messages,
        messages.extend(run.turn.follow_ups); // then one user message with the media they cannot carry
        if run.status == Status::Halt {
            return Ok(());
        }
    }
    Ok(())
}
