//! A turn interrupted from outside (`ExecOptions::interrupt`), as a process
//! told to stop interrupts it: nothing is sent after `stop`, the calls in
//! flight end (or, once `cut`, are answered as interrupted, their requests
//! dropped), and a turn that may be suspended keeps its calls not sent for
//! its resumption, which sends each of them once.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcp_adapters::exec::*;
use mcp_adapters::{CallToolResult, ErrorKind, ListOptions, Tool};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// What the server saw: the calls it received, those whose futures were
/// dropped, and a signal for each call of `hold` that started.
#[derive(Default)]
struct Seen {
    received: Mutex<Vec<String>>,
    dropped: Mutex<Vec<String>>,
    held: Notify,
    release: Notify,
}

/// Counts its drop unless disarmed.
struct DropGuard(Arc<Seen>, String, bool);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if self.2 {
            self.0.dropped.lock().unwrap().push(self.1.clone());
        }
    }
}

/// `echo` answers at once; `hold` answers once the test releases it.
fn server(seen: Arc<Seen>) -> InProcessServer {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let (a, b) = (seen.clone(), seen);
    InProcessServer::new()
        .tool(Tool::new("echo", "echo", schema.clone()), move |args, _| {
            let text = args["text"].as_str().unwrap_or_default().to_owned();
            a.received.lock().unwrap().push(text.clone());
            async move { Ok(CallToolResult::text(format!("echo {text}"))) }
        })
        .tool(Tool::new("hold", "hold", schema), move |args, _| {
            let text = args["text"].as_str().unwrap_or_default().to_owned();
            b.received.lock().unwrap().push(text.clone());
            let seen = b.clone();
            async move {
                let mut guard = DropGuard(seen.clone(), text.clone(), true);
                let released = seen.release.notified();
                seen.held.notify_one();
                released.await;
                guard.2 = false;
                Ok(CallToolResult::text(format!("held {text}")))
            }
        })
}

/// One call at a time: `echo a`, `hold b`, `echo c`, `echo d`.
fn response() -> Value {
    let calls = [("echo", "a"), ("hold", "b"), ("echo", "c"), ("echo", "d")];
    json!({"content": calls.iter().enumerate().map(|(i, (tool, text))| json!({
        "type": "tool_use", "id": format!("toolu_{i}"), "name": tool, "input": {"text": text}
    })).collect::<Vec<_>>()})
}

fn texts(run: &Execution) -> Vec<String> {
    run.turn
        .results
        .iter()
        .map(|r| {
            r["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn received(seen: &Seen) -> Vec<String> {
    seen.received.lock().unwrap().clone()
}

/// Runs `response()` against `seen`'s server with `options` (one call at a
/// time, given `interrupt`), in a task, and waits until `hold b` is in flight.
async fn held(
    seen: &Arc<Seen>,
    options: ExecOptions,
    interrupt: &Interrupt,
) -> tokio::task::JoinHandle<mcp_adapters::Result<Execution>> {
    let source = Source::client("s", server(seen.clone())).build().unwrap();
    let p = provider("anthropic");
    let listing = source.tools(p, &ListOptions::new()).await.unwrap();
    let options = options.max_concurrency(1).interrupt(interrupt.clone());
    let running = tokio::spawn(async move {
        source
            .execute_tool_calls(p, &response(), &listing, &options)
            .await
    });
    seen.held.notified().await;
    running
}

#[test]
fn a_stopped_turn_sends_nothing_more_and_halts_once_the_calls_in_flight_end() {
    runtime().block_on(async {
        let seen = Arc::new(Seen::default());
        let interrupt = Interrupt::new();
        let running = held(&seen, ExecOptions::new(), &interrupt).await;
        interrupt.stop();
        seen.release.notify_one();
        let run = running.await.unwrap().unwrap();
        assert_eq!(run.status, Status::Halt);
        assert_eq!(received(&seen), ["a", "b"], "nothing sent after the stop");
        let answers = texts(&run);
        assert_eq!(
            &answers[..2],
            ["echo a", "held b"],
            "the call in flight ended"
        );
        for (i, record) in run.calls.iter().enumerate().skip(2) {
            let error = record.error.as_ref().expect("not run");
            assert_eq!(error.kind(), ErrorKind::Denied, "call {i}");
            assert!(
                error
                    .message()
                    .contains("interrupted before this call was sent"),
                "{error}"
            );
            assert!(!record.ran);
        }
    });
}

#[test]
fn a_cut_answers_the_calls_in_flight_as_interrupted_and_drops_their_requests() {
    runtime().block_on(async {
        let seen = Arc::new(Seen::default());
        let interrupt = Interrupt::new();
        let running = held(&seen, ExecOptions::new(), &interrupt).await;
        interrupt.stop();
        interrupt.cut();
        let run = running.await.unwrap().unwrap();
        assert_eq!(run.status, Status::Halt);
        assert_eq!(received(&seen), ["a", "b"]);
        assert_eq!(
            seen.dropped.lock().unwrap().as_slice(),
            ["b"],
            "the request in flight is dropped"
        );
        let error = run.calls[1].error.as_ref().expect("cut");
        assert_eq!(error.kind(), ErrorKind::Interrupted);
        assert!(
            error.message().contains("may or may not have run"),
            "{error}"
        );
        assert_eq!(
            run.calls[2].error.as_ref().unwrap().kind(),
            ErrorKind::Denied
        );
    });
}

#[test]
fn a_stopped_turn_that_may_be_suspended_keeps_its_unsent_calls_for_its_resumption() {
    runtime().block_on(async {
        let seen = Arc::new(Seen::default());
        let interrupt = Interrupt::new();
        let running = held(&seen, ExecOptions::new().suspend(true), &interrupt).await;
        interrupt.stop();
        seen.release.notify_one();
        let run = running.await.unwrap().unwrap();
        assert_eq!(run.status, Status::Suspended);
        assert!(run.turn.results.is_empty());
        assert_eq!(received(&seen), ["a", "b"]);
        let waiting: Vec<(usize, &Wait)> = run.waiting.iter().map(|w| (w.index, &w.what)).collect();
        assert_eq!(waiting, [(2, &Wait::Resume), (3, &Wait::Resume)]);
        assert_eq!(
            serde_json::to_value(&run.waiting[0]).unwrap()["waits_for"],
            "resume"
        );
        let state = run.suspended.as_ref().unwrap();
        let state = TurnState::from_json(&state.to_json().unwrap()).unwrap();

        // Resumed, in another source: the two calls not sent go out, once.
        let source = Source::client("s", server(seen.clone())).build().unwrap();
        let p = provider("anthropic");
        let listing = source.tools(p, &ListOptions::new()).await.unwrap();
        let run = source
            .resume_turn(p, state, &listing, &ExecOptions::new().max_concurrency(1))
            .await
            .unwrap();
        assert_eq!(run.status, Status::Ok);
        assert_eq!(texts(&run), ["echo a", "held b", "echo c", "echo d"]);
        assert_eq!(received(&seen), ["a", "b", "c", "d"], "each call once");
    });
}
