//! The hand-over: a turn suspended by one worker, kept as a row in a store,
//! approved by a person later, and finished by another worker.
//!
//! A worker fleet never holds a process while a person decides: the turn's
//! state (a versioned JSON document) goes wherever the application keeps
//! work. Here the store is a directory of JSON rows; a database row, a queue
//! message or a durable-execution engine's step carries it the same way.
//!
//! Run: `cargo run --example hand_over`.

use std::path::{Path, PathBuf};

use mcp_adapters::exec::TurnState;
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Policy, Registry, Source, Status,
    Tool,
};
use serde_json::{Value, json};

/// The same servers and policy in every worker: here an in-process
/// payments server; in production, the same `mcpServers` configuration.
fn source() -> mcp_adapters::Result<Source> {
    let schema = json!({"type": "object", "properties": {
        "order": {"type": "string"}, "amount": {"type": "number"}}, "required": ["order"]});
    let payments = InProcessServer::new()
        .tool(
            Tool::new("lookup_order", "Looks up an order.", schema.clone()),
            |args, _ctx| async move {
                Ok(CallToolResult::text(format!(
                    "order {} paid 42.00 EUR",
                    args["order"]
                )))
            },
        )
        .tool(
            Tool::new("refund", "Refunds an order.", schema),
            |args, ctx| async move {
                // A server may use the key to refuse a refund it already made.
                let key = ctx
                    .idempotency_key
                    .map(|key| key.to_string())
                    .unwrap_or_default();
                Ok(CallToolResult::text(format!(
                    "refunded {} EUR on order {} (key {key})",
                    args["amount"], args["order"]
                )))
            },
        );
    Source::client("payments", payments)
        .policy(Policy::allow_all().ask("payments/refund")?)
        .build()
}

/// A row of the store: the suspended turn, and the decisions taken since.
fn row(store: &Path, turn: &str) -> PathBuf {
    store.join(format!("{turn}.json"))
}

/// Worker A: runs the model's turn; a refund needs a person, so the turn is
/// suspended into the store and the worker moves on.
async fn worker_a(store: &Path, response: &Value) -> mcp_adapters::Result<String> {
    let registry = Registry::builtin()?;
    let provider = registry.get("anthropic")?;
    let source = source()?;
    let listing = source.tools(provider, &ListOptions::new()).await?;
    let run = source
        .execute_tool_calls(
            provider,
            response,
            &listing,
            &ExecOptions::new().suspend(true),
        )
        .await?;
    assert_eq!(run.status, Status::Suspended);
    for waiting in &run.waiting {
        println!(
            "worker A: `{}` ({:?}) waits for a person; suspending",
            waiting.exposed_name, waiting.call_id
        );
    }
    let state = run.suspended.expect("a suspended turn has its state");
    let turn = state.turn_id().to_owned();
    let document: Value = serde_json::from_slice(&state.to_json()?).unwrap_or_default();
    let row_value = json!({"state": document, "approved": [], "denied": []});
    std::fs::write(row(store, &turn), row_value.to_string()).map_err(|e| {
        mcp_adapters::Error::new(mcp_adapters::ErrorKind::Io, "cannot write the row").with_source(e)
    })?;
    Ok(turn)
}

/// The person, in the application's interface: approves the refund.
fn approve(store: &Path, turn: &str, call_id: &str) -> std::io::Result<()> {
    let path = row(store, turn);
    let mut row: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    row["approved"]
        .as_array_mut()
        .expect("a row has its decisions")
        .push(json!(call_id));
    std::fs::write(path, row.to_string())
}

/// Worker B, perhaps another machine: takes the row up and finishes the
/// turn. The call already sent (the lookup) is not sent again.
async fn worker_b(store: &Path, turn: &str) -> mcp_adapters::Result<Vec<Value>> {
    let text = std::fs::read_to_string(row(store, turn)).map_err(|e| {
        mcp_adapters::Error::new(mcp_adapters::ErrorKind::Io, "cannot read the row").with_source(e)
    })?;
    let row: Value = serde_json::from_str(&text).unwrap_or_default();
    let state = TurnState::from_json(row["state"].to_string().as_bytes())?;
    let mut options = ExecOptions::new().suspend(true);
    for id in row["approved"].as_array().into_iter().flatten() {
        options = options.approve_call(id.as_str().unwrap_or_default());
    }
    let registry = Registry::builtin()?;
    let provider = registry.get(state.provider())?;
    let source = source()?;
    let listing = source.tools(provider, &ListOptions::new()).await?;
    let run = source
        .resume_turn(provider, state, &listing, &options)
        .await?;
    assert_eq!(run.status, Status::Ok);
    Ok(run.turn.results)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = tempfile::tempdir()?;
    // The model's response, as the application's HTTP client received it.
    let response = json!({"role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order": "A-17"}},
        {"type": "tool_use", "id": "toolu_2", "name": "refund", "input": {"order": "A-17", "amount": 42.0}}
    ]});
    let turn = worker_a(store.path(), &response).await?;
    approve(store.path(), &turn, "toolu_2")?;
    let results = worker_b(store.path(), &turn).await?;
    println!("worker B: the turn's answers, for the next request to the model:");
    println!("{}", serde_json::to_string_pretty(&results)?);
    Ok(())
}
