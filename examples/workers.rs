//! N workers sharing one database of durable turns: a turn waits for a
//! person's approval of a refund; the person approves it from the command
//! line; whichever worker finds it ready first finishes it.
//!
//! Run: `cargo run --features postgres,sqlite --example workers -- URL [N]`
//! with URL `postgres://user@host/db` (or `sqlite:turns.db`), then, in
//! another terminal, the `mcp-adapters turns decide` line it prints.
//! (`turns list URL` shows what waits.)
//!
//! Each worker here is a future of this process, for brevity; in a fleet each
//! is a process of its own (`mcp-adapters run --resume URL`, or this loop),
//! on as many machines as share the database.

use std::sync::Arc;
use std::time::Duration;

use mcp_adapters::exec::TurnState;
use mcp_adapters::store::{self, Decision, TurnHold, TurnStore, Worker};
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Policy, Registry, Source, Status,
    Tool,
};
use serde_json::json;

/// The shop's tools: looking an order up is allowed, a refund needs a person.
fn shop() -> mcp_adapters::Result<Source> {
    let schema = json!({"type": "object", "properties": {"order": {"type": "string"}}});
    let server = InProcessServer::new()
        .tool(
            Tool::new("lookup", "Looks up an order.", schema.clone()),
            |_, _| async { Ok(CallToolResult::text("paid")) },
        )
        .tool(
            Tool::new("refund", "Refunds an order.", schema),
            |_, _| async { Ok(CallToolResult::text("refunded")) },
        );
    Source::client("shop", server)
        .policy(Policy::allow_all().ask("shop/refund")?)
        .build()
}

/// One worker: claims ready turns until it has finished one.
async fn worker(store: Arc<dyn TurnStore>, name: String) -> mcp_adapters::Result<()> {
    let worker = Worker::new(name.clone()).lease(Duration::from_secs(10));
    let provider = Registry::builtin()?.get("anthropic")?.clone();
    let source = shop()?;
    let listing = source.tools(&provider, &ListOptions::new()).await?;
    loop {
        let Some(claimed) = store.claim(&worker, None).await? else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let turn = claimed.lease.turn().to_owned();
        let state = TurnState::from_json(&claimed.document)?;
        let mut options = ExecOptions::new().suspend(true);
        for decided in &claimed.decisions {
            options = match &decided.decision {
                Decision::Approve => options.approve_call(&decided.call),
                Decision::Deny { reason } => options.deny_call(&decided.call, reason),
                Decision::Answer { .. } => options,
            };
        }
        let hold = TurnHold::claimed(store.clone(), &worker, claimed);
        let _renewing = hold.renewing();
        let run = source
            .resume_turn(&provider, state, &listing, &hold.options(options))
            .await?;
        hold.finish(&run).await?;
        if run.status == Status::Suspended {
            println!("{name}: turn {turn} waits again");
            continue;
        }
        println!("{name} finished turn {turn}: {}", json!(run.turn.results));
        return Ok(());
    }
}

#[tokio::main]
async fn main() -> mcp_adapters::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .unwrap_or_else(|| "sqlite:workers-example.db".to_owned());
    let workers: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(3);
    let store = store::open(&url).await?;

    // The model asked for a lookup and a refund: the turn runs until the
    // refund waits for a person, and is kept in the store.
    let provider = Registry::builtin()?.get("anthropic")?.clone();
    let source = shop()?;
    let listing = source.tools(&provider, &ListOptions::new()).await?;
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"order": "A-17"}},
        {"type": "tool_use", "id": "toolu_2", "name": "refund", "input": {"order": "A-17"}}]});
    let hold = TurnHold::new(store.clone(), &Worker::new("front"));
    let run = source
        .execute_tool_calls(
            &provider,
            &response,
            &listing,
            &hold.options(ExecOptions::new().suspend(true)),
        )
        .await?;
    let turn = hold
        .finish(&run)
        .await?
        .expect("the turn waits in the store");
    println!("turn {turn} waits for the refund's approval; approve it with:");
    println!("  mcp-adapters turns decide {url} --turn {turn} --approve-call toolu_2");

    // N workers look for ready turns; the first to find it finishes it.
    let workers = (1..=workers).map(|i| Box::pin(worker(store.clone(), format!("worker-{i}"))));
    let (done, _, _others) = futures_util::future::select_all(workers).await;
    done
}
