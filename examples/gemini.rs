//! An agent loop against the real API: MCP tools offered, tool calls run,
//! answers sent back until the model stops calling tools. Needs `GEMINI_API_KEY`.
//! Run: `GEMINI_API_KEY=... cargo run --features rmcp --example gemini -- "What time is it in Tokyo?"`

#[path = "common/mod.rs"]
mod common;

use mcp_adapters::{ExecOptions, ListOptions, Registry, ResultOptions, Status};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key = common::env("GEMINI_API_KEY")?;
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What time is it in Tokyo?".into());
    let source = common::source().await?;
    let provider = Registry::builtin()?.get("gemini")?;
    let listing = source.tools(provider, &ListOptions::new()).await?;
    let mut taint = std::collections::BTreeSet::new();
    // Every medium the API takes (documents, and follow-ups where a tool result cannot carry one).
    let options = ExecOptions::new().results(ResultOptions::new().option("media", "full"));
    let mut contents = vec![json!({"role": "user", "parts": [{"text": question}]})];
    for _turn in 0..10 {
        let body =
            json!({"tools": [{"functionDeclarations": listing.tools}], "contents": contents});
        let response: Value = common::post("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent", &[("x-goog-api-key", key.clone())], &body).await?;
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
        contents.push(response["candidates"][0]["content"].clone());
        // The functionResponse parts in one user turn, then the media they cannot carry in
        // one more (a turn mixing both is rejected by some models and by Vertex AI).
        contents.push(json!({"role": "user", "parts": run.turn.results}));
        contents.extend(run.turn.follow_ups);
        if run.status == Status::Halt {
            return Ok(());
        }
    }
    Ok(())
}
