//! Keeping a checkpoint of a ten-call turn in a store, against a bare
//! `INSERT` of the same bytes into the same database in the same run: in
//! SQLite (a file in a temporary folder, as the store opens it: write-ahead
//! log, full sync) and in PostgreSQL (a server the bench starts, as the
//! tests do; skipped with a message when no PostgreSQL binaries are found).
//! Goal: at most 2x the bare insert.

#[path = "../tests/common/postgres.rs"]
#[allow(dead_code)]
mod postgres;
mod support;

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_adapters::store::{self, Checkpoint, Lease, TurnStatus, TurnStore, Worker};
use mcp_adapters::{
    CallToolResult, ExecOptions, InProcessServer, ListOptions, Policy, Registry, Source, Status,
    Tool,
};
use serde_json::json;
use sqlx::{AnyPool, Executor};

/// A ten-call turn's checkpoint: ten calls to a tool the policy asks
/// about, all waiting.
fn ten_call_checkpoint(rt: &tokio::runtime::Runtime) -> Checkpoint {
    rt.block_on(async {
        let schema = json!({"type": "object", "properties": {"order": {"type": "string"}}});
        let server = InProcessServer::new().tool(
            Tool::new("refund", "Refunds an order.", schema),
            |_, _| async { Ok(CallToolResult::text("refunded")) },
        );
        let source = Source::client("shop", server)
            .policy(Policy::allow_all().ask("shop/refund").unwrap())
            .build()
            .unwrap();
        let provider = Registry::builtin().unwrap().get("anthropic").unwrap().clone();
        let listing = source.tools(&provider, &ListOptions::new()).await.unwrap();
        let calls: Vec<_> = (0..10)
            .map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "refund", "input": {"order": format!("A-{i}")}}))
            .collect();
        let response = json!({"role": "assistant", "content": calls});
        let run = source
            .execute_tool_calls(&provider, &response, &listing, &ExecOptions::new().suspend(true))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        let state = run.suspended.unwrap();
        Checkpoint::of(&state, state.to_json().unwrap(), TurnStatus::Waiting)
    })
}

/// The store and a pool of the same database for the bare insert, set up
/// as the store sets up its own connections.
struct Target {
    name: &'static str,
    store: Arc<dyn TurnStore>,
    lease: Lease,
    bare: AnyPool,
}

async fn target(name: &'static str, url: &str, checkpoint: &Checkpoint) -> Target {
    let store = store::open(url).await.unwrap();
    let worker = Worker::new("bench").lease(Duration::from_secs(3600));
    let lease = store.put(&worker, checkpoint).await.unwrap();
    // `store::open` installed the drivers.
    let sqlite = url.starts_with("sqlite:");
    let bare = sqlx::any::AnyPoolOptions::new()
        .max_connections(1)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if sqlite {
                    conn.execute("PRAGMA journal_mode = WAL").await?;
                    conn.execute("PRAGMA busy_timeout = 30000").await?;
                }
                Ok(())
            })
        })
        .connect(url)
        .await
        .unwrap();
    let blob = if sqlite { "BLOB" } else { "BYTEA" };
    bare.execute(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE IF NOT EXISTS bench_bare (document {blob} NOT NULL)"
    )))
    .await
    .unwrap();
    Target {
        name,
        store,
        lease,
        bare,
    }
}

impl Target {
    async fn keep(&self, checkpoint: &Checkpoint) {
        self.store.keep(&self.lease, checkpoint).await.unwrap();
    }

    async fn insert(&self, document: &[u8]) {
        sqlx::query("INSERT INTO bench_bare (document) VALUES ($1)")
            .bind(document.to_vec())
            .execute(&self.bare)
            .await
            .unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let checkpoint = ten_call_checkpoint(&rt);
    let dir = tempfile::tempdir().unwrap();
    let sqlite_url = format!("sqlite:{}", dir.path().join("bench.db").display());
    let server = match postgres::start() {
        Ok(server) => Some(server),
        Err(e) => {
            println!("the PostgreSQL bench is skipped: {e}");
            None
        }
    };
    let mut targets = vec![rt.block_on(target("sqlite", &sqlite_url, &checkpoint))];
    if let Some(server) = &server {
        targets.push(rt.block_on(target("postgres", &server.url, &checkpoint)));
    }
    let mut group = c.benchmark_group("store");
    for t in &targets {
        group.bench_function(format!("{} checkpoint of a ten-call turn", t.name), |b| {
            b.iter(|| rt.block_on(t.keep(&checkpoint)));
        });
        group.bench_function(format!("{} bare INSERT of the same bytes", t.name), |b| {
            b.iter(|| rt.block_on(t.insert(&checkpoint.document)));
        });
    }
    group.finish();
    println!(
        "the checkpoint: {} bytes, {} waits",
        checkpoint.document.len(),
        checkpoint.waits.len()
    );
    for t in &targets {
        let ratio = support::median_ratio_batched(
            support::rounds(),
            Duration::from_millis(100),
            || rt.block_on(t.keep(&checkpoint)),
            || rt.block_on(t.insert(&checkpoint.document)),
        );
        support::report(
            &format!(
                "{} checkpoint of a ten-call turn / bare INSERT of the same bytes",
                t.name
            ),
            ratio,
            Some(2.0),
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
