//! The turn stores' one contract, held against SQLite (a file in a
//! temporary folder) and a real PostgreSQL server the test starts
//! (`common::postgres`): puts, claims and leases, compare-and-set
//! checkpoints, decisions, and what a worker whose lease ran out may no
//! longer do. No lease is compared with a clock of the test's: a lease of
//! zero has run out by the database's clock as soon as it is taken.
#![cfg(all(feature = "sqlite", feature = "postgres"))]

mod common;

use std::sync::Arc;
use std::time::Duration;

use mcp_adapters::exec::TurnState;
use mcp_adapters::store::{
    self, Checkpoint, Decision, TurnHold, TurnStatus, TurnStore, WaitEntry, Worker,
};
use mcp_adapters::{
    CallToolResult, ErrorKind, ExecOptions, InProcessServer, ListOptions, Policy, Registry, Source,
    Status, Tool,
};
use serde_json::json;

fn wait(call: &str, waits_for: &str, needs_decision: bool) -> WaitEntry {
    WaitEntry {
        call: call.to_owned(),
        waits_for: waits_for.to_owned(),
        needs_decision,
        detail: json!({"call_id": call}),
    }
}

fn checkpoint(document: &str, status: TurnStatus, waits: Vec<WaitEntry>) -> Checkpoint {
    Checkpoint {
        document: document.as_bytes().to_vec(),
        status,
        waits,
    }
}

/// The contract, on `store`.
async fn contract(store: Arc<dyn TurnStore>) {
    let a = Worker::new("a");
    let b = Worker::new("b");
    let waits = vec![
        wait("toolu_1", "approval", true),
        wait("toolu_2", "task", false),
    ];
    let lease = store
        .put(&a, &checkpoint("v1", TurnStatus::Running, waits.clone()))
        .await
        .unwrap();
    let turn = lease.turn().to_owned();
    assert_eq!(lease.version(), 1);

    // Held: no one else takes it, named or not.
    assert!(store.claim(&b, None).await.unwrap().is_none());
    let held = store.claim(&b, Some(&turn)).await.unwrap_err();
    assert_eq!(held.kind(), ErrorKind::Held, "{held}");
    assert!(held.to_string().contains("held by worker `a`"), "{held}");

    // Each checkpoint is a compare-and-set on the version last kept.
    store
        .keep(
            &lease,
            &checkpoint("v2", TurnStatus::Waiting, waits.clone()),
        )
        .await
        .unwrap();
    assert_eq!(lease.version(), 2);
    lease.set_version(1);
    let stale = store
        .keep(
            &lease,
            &checkpoint("old", TurnStatus::Waiting, waits.clone()),
        )
        .await
        .unwrap_err();
    assert_eq!(stale.kind(), ErrorKind::LeaseLost, "{stale}");
    lease.set_version(2);
    let kept = store.turn(&turn).await.unwrap().unwrap();
    assert_eq!((kept.version, kept.document.as_slice()), (2, &b"v2"[..]));
    assert_eq!(kept.status, TurnStatus::Waiting);
    store.renew(&lease).await.unwrap();
    store.release(&lease).await.unwrap();

    // Released, it waits for an approval no one recorded: left alone.
    let listed = store.waiting().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].turn, turn);
    assert!(!listed[0].ready);
    assert_eq!(listed[0].worker, None);
    assert!(store.claim(&b, None).await.unwrap().is_none());

    // Decisions: only for a call that waits for one, of its kind.
    let error = store
        .decide(&turn, "toolu_2", &Decision::Approve)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("toolu_1 (approval)"), "{error}");
    let error = store
        .decide(&turn, "toolu_9", &Decision::Approve)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Input);
    let error = store
        .decide(&turn, "toolu_1", &Decision::Answer { answers: json!({}) })
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("an approval or a denial"),
        "{error}"
    );
    let error = store
        .decide("no-such-turn", "toolu_1", &Decision::Approve)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no turn `no-such-turn`"),
        "{error}"
    );
    store
        .decide(&turn, "toolu_1", &Decision::Approve)
        .await
        .unwrap();
    let listed = store.waiting().await.unwrap();
    assert!(listed[0].ready);
    assert_eq!(listed[0].waits[0].decided, Some(Decision::Approve));
    assert_eq!(listed[0].waits[1].decided, None);

    // A worker whose lease ran out keeps nothing, renews nothing.
    let stale = Worker::new("stale").lease(Duration::ZERO);
    let claimed = store.claim(&stale, None).await.unwrap().unwrap();
    assert_eq!(claimed.lease.turn(), turn);
    assert_eq!(claimed.document, b"v2");
    assert_eq!(claimed.decisions.len(), 1);
    assert_eq!(claimed.decisions[0].call, "toolu_1");
    assert_eq!(claimed.decisions[0].decision, Decision::Approve);
    let error = store
        .keep(
            &claimed.lease,
            &checkpoint("late", TurnStatus::Running, vec![]),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::LeaseLost, "{error}");
    assert!(error.to_string().contains("sends nothing more"), "{error}");
    assert_eq!(store.expired().await.unwrap(), vec![turn.clone()]);
    // Another worker takes it over, with the decision still there.
    let c = Worker::new("c");
    let taken = store.claim(&c, None).await.unwrap().unwrap();
    assert_eq!(taken.lease.turn(), turn);
    assert_eq!(taken.decisions.len(), 1);
    assert!(store.expired().await.unwrap().is_empty());
    for error in [
        store.renew(&claimed.lease).await.unwrap_err(),
        store.release(&claimed.lease).await.unwrap_err(),
    ] {
        assert_eq!(error.kind(), ErrorKind::LeaseLost, "{error}");
    }
    assert_eq!(store.turn(&turn).await.unwrap().unwrap().document, b"v2");

    // A call waiting for the resumption alone keeps its decision.
    store
        .keep(
            &taken.lease,
            &checkpoint(
                "pending",
                TurnStatus::Running,
                vec![wait("toolu_1", "resume", false)],
            ),
        )
        .await
        .unwrap();
    let listed = store.waiting().await.unwrap();
    assert_eq!(listed[0].waits[0].decided, Some(Decision::Approve));
    // A checkpoint in which the call no longer waits uses its decision up.
    store
        .keep(
            &taken.lease,
            &checkpoint("sent", TurnStatus::Running, vec![]),
        )
        .await
        .unwrap();
    store
        .keep(
            &taken.lease,
            &checkpoint(
                "again",
                TurnStatus::Waiting,
                vec![wait("toolu_1", "approval", true)],
            ),
        )
        .await
        .unwrap();
    store.release(&taken.lease).await.unwrap();
    let listed = store.waiting().await.unwrap();
    assert!(!listed[0].ready, "{listed:?}");
    assert_eq!(listed[0].waits[0].decided, None);

    // A decision recorded while a worker holds the turn, for a call that
    // still waits when it is kept, stays for the next worker.
    let d = Worker::new("d");
    let held = store.claim(&d, Some(&turn)).await.unwrap().unwrap();
    store
        .decide(
            &turn,
            "toolu_1",
            &Decision::Deny {
                reason: "no".into(),
            },
        )
        .await
        .unwrap();
    store
        .keep(
            &held.lease,
            &checkpoint(
                "waits",
                TurnStatus::Waiting,
                vec![wait("toolu_1", "approval", true)],
            ),
        )
        .await
        .unwrap();
    store.release(&held.lease).await.unwrap();
    let next = store.claim(&a, None).await.unwrap().unwrap();
    assert_eq!(
        next.decisions[0].decision,
        Decision::Deny {
            reason: "no".into()
        }
    );

    // Ended: no worker takes it up, nothing is decided for it.
    store
        .keep(&next.lease, &checkpoint("end", TurnStatus::Done, vec![]))
        .await
        .unwrap();
    store.release(&next.lease).await.unwrap();
    let error = store.claim(&b, Some(&turn)).await.unwrap_err();
    assert!(error.to_string().contains("has ended"), "{error}");
    assert!(store.waiting().await.unwrap().is_empty());
    assert!(store.claim(&b, None).await.unwrap().is_none());

    // The oldest ready turn first.
    let mut puts = Vec::new();
    for name in ["first", "second"] {
        let lease = store
            .put(&a, &checkpoint(name, TurnStatus::Waiting, vec![]))
            .await
            .unwrap();
        store.release(&lease).await.unwrap();
        puts.push(lease.turn().to_owned());
    }
    let first = store.claim(&b, None).await.unwrap().unwrap();
    assert_eq!(first.lease.turn(), puts[0]);
    let second = store.claim(&b, None).await.unwrap().unwrap();
    assert_eq!(second.lease.turn(), puts[1]);

    // Many workers claiming one turn at once: one holds it.
    let lease = store
        .put(&a, &checkpoint("raced", TurnStatus::Waiting, vec![]))
        .await
        .unwrap();
    store.release(&lease).await.unwrap();
    let raced = lease.turn().to_owned();
    let claims = (0..8).map(|i| {
        let store = store.clone();
        let raced = raced.clone();
        tokio::spawn(async move {
            let worker = Worker::new(format!("racer-{i}"));
            store.claim(&worker, Some(&raced)).await
        })
    });
    let results = futures_util::future::join_all(claims).await;
    let won = results
        .iter()
        .filter(|r| matches!(r, Ok(Ok(Some(_)))))
        .count();
    let refused = results
        .iter()
        .filter(|r| matches!(r, Ok(Err(e)) if e.kind() == ErrorKind::Held))
        .count();
    assert_eq!((won, refused), (1, 7), "{results:?}");
}

/// A real suspended turn, kept through a hold and resumed by the worker
/// that claims it after its approval is recorded.
async fn real_turn(store: Arc<dyn TurnStore>) {
    let schema = json!({"type": "object", "properties": {"order": {"type": "string"}}});
    let source = || {
        let server = InProcessServer::new()
            .tool(
                Tool::new("lookup", "Looks up an order.", schema.clone()),
                |_, _| async { Ok(CallToolResult::text("paid")) },
            )
            .tool(
                Tool::new("refund", "Refunds an order.", schema.clone()),
                |_, _| async { Ok(CallToolResult::text("refunded")) },
            );
        Source::client("shop", server)
            .policy(Policy::allow_all().ask("shop/refund").unwrap())
            .build()
            .unwrap()
    };
    let registry = Registry::builtin().unwrap();
    let provider = registry.get("anthropic").unwrap();
    let response = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"order": "A-17"}},
        {"type": "tool_use", "id": "toolu_2", "name": "refund", "input": {"order": "A-17"}}]});
    let shop = source();
    let listing = shop.tools(provider, &ListOptions::new()).await.unwrap();
    let first = Worker::new("first");
    let hold = TurnHold::new(store.clone(), &first);
    let run = shop
        .execute_tool_calls(
            provider,
            &response,
            &listing,
            &hold.options(ExecOptions::new().suspend(true)),
        )
        .await
        .unwrap();
    assert_eq!(run.status, Status::Suspended);
    let turn = hold.finish(&run).await.unwrap().unwrap();
    let listed = store.waiting().await.unwrap();
    let listed = listed.iter().find(|t| t.turn == turn).unwrap();
    assert_eq!(listed.status, TurnStatus::Waiting);
    assert_eq!(listed.waits.len(), 1);
    assert_eq!(listed.waits[0].wait.call, "toolu_2");
    assert_eq!(listed.waits[0].wait.detail["tool"], "refund");
    assert!(!listed.ready);

    store
        .decide(&turn, "toolu_2", &Decision::Approve)
        .await
        .unwrap();
    let second = Worker::new("second");
    let claimed = store.claim(&second, Some(&turn)).await.unwrap().unwrap();
    let state = TurnState::from_json(&claimed.document).unwrap();
    let mut options = ExecOptions::new().suspend(true);
    for decided in &claimed.decisions {
        assert_eq!(decided.decision, Decision::Approve);
        options = options.approve_call(&decided.call);
    }
    let hold = TurnHold::claimed(store.clone(), &second, claimed);
    let _renewing = hold.renewing();
    let run = shop
        .resume_turn(provider, state, &listing, &hold.options(options))
        .await
        .unwrap();
    assert_eq!(run.status, Status::Ok);
    assert_eq!(run.turn.results.len(), 2);
    assert_eq!(hold.finish(&run).await.unwrap(), Some(turn.clone()));
    let ended = store.turn(&turn).await.unwrap().unwrap();
    assert_eq!(ended.status, TurnStatus::Done);
    let state = TurnState::from_json(&ended.document).unwrap();
    assert!(state.waiting().is_empty());
}

#[test]
fn sqlite_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("turns.db").display());
    common::runtime().block_on(async {
        let store = store::open(&url).await.unwrap();
        contract(store.clone()).await;
        real_turn(store).await;
        // Opened again, the migrated store is taken as it is.
        let again = store::open(&url).await.unwrap();
        assert_eq!(again.waiting().await.unwrap().len(), 3);
    });
}

#[test]
fn postgres_keeps_the_contract() {
    let server = common::postgres::start().unwrap_or_else(|e| panic!("{e}"));
    common::runtime().block_on(async {
        let store = store::open(&server.url).await.unwrap();
        contract(store.clone()).await;
        real_turn(store).await;
        let again = store::open(&server.url).await.unwrap();
        assert_eq!(again.waiting().await.unwrap().len(), 3);
    });
}

#[test]
fn a_url_of_no_store_is_refused_naming_it() {
    common::runtime().block_on(async {
        let error = store::open("mysql://db/turns").await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Input);
        assert!(
            error
                .to_string()
                .contains("`mysql://db/turns` is not a turn store's URL")
        );
        let error = store::open("sqlite:/no/such/folder/turns.db")
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Store);
        assert!(
            error
                .to_string()
                .contains("`sqlite:/no/such/folder/turns.db` cannot be opened and migrated"),
            "{error}"
        );
    });
}
