//! A server that dies comes back: a real stdio server (`tests/e2e/soak_server.py`,
//! on the official Python SDK) killed with SIGKILL at random points over many
//! turns of concurrent calls; the reference server over streamable HTTP
//! restarted between turns; and a server that never comes back. Every call
//! is answered exactly once and in order, and the server's own log of the
//! calls it received shows none twice, unless the application opted in to
//! one retry of a tool that says it is safe to repeat.
#![cfg(feature = "rmcp")]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use common::instances::Rng;
use common::servers;
use mcp_adapters::client::*;
use mcp_adapters::exec::*;
use mcp_adapters::*;
use serde_json::{Value, json};

fn soak_env(log: &Path, refuse: Option<&Path>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert("SOAK_LOG".into(), log.display().to_string());
    if let Some(refuse) = refuse {
        env.insert("SOAK_REFUSE".into(), refuse.display().to_string());
    }
    env
}

/// The log's lines.
fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The pid of the server that started last.
fn last_pid(log: &Path) -> Option<u32> {
    log_lines(log)
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("start ").and_then(|p| p.parse().ok()))
}

fn kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
}

fn response(calls: &[(String, Value)]) -> Value {
    let blocks: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": input})
        })
        .collect();
    json!({"content": blocks})
}

fn text(answer: &Value) -> String {
    answer["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn a_server_killed_at_random_comes_back_and_no_call_is_sent_twice() {
    let (command, args) = servers::soak().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    common::runtime().block_on(async {
        let options = ClientOptions::new().reconnect(
            Reconnect::new().backoff(Duration::from_millis(20), Duration::from_millis(200)),
        );
        let client = McpClient::spawn("soak", &command, &args, &soak_env(&log, None), &options)
            .await
            .unwrap();
        let source = Source::client("soak", client).build().unwrap();
        let provider = common::provider("anthropic");
        let mut rng = Rng::new(0x5eed);
        let started = Instant::now();
        let (mut kills, mut interrupted, mut retried_turns) = (0, 0, Vec::new());
        const TURNS: usize = 12;
        for turn in 0..=TURNS {
            // The last turn is quiet: the server is back and everything runs.
            let killing = turn < TURNS && rng.coin();
            let retry = turn % 2 == 1;
            let calls: Vec<(String, Value)> = (0..6)
                .map(|i| {
                    let tool = if rng.coin() { "work" } else { "peek" };
                    let ms = 50 + rng.below(350);
                    (tool.to_owned(), json!({"id": format!("t{turn}c{i}"), "ms": ms}))
                })
                .collect();
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            assert_eq!(common::tool_names(&listing), ["work", "peek"], "turn {turn}");
            let killer = killing.then(|| {
                let (log, wait) = (log.clone(), Duration::from_millis(rng.below(300)));
                tokio::spawn(async move {
                    tokio::time::sleep(wait).await;
                    if let Some(pid) = last_pid(&log) {
                        kill(pid);
                    }
                })
            });
            let exec = ExecOptions::new()
                .max_concurrency(3)
                .call_timeout(Duration::from_secs(20))
                .retry_interrupted(retry);
            let run = source
                .execute_tool_calls(provider, &response(&calls), &listing, &exec)
                .await
                .unwrap();
            if let Some(killer) = killer {
                killer.await.unwrap();
                kills += 1;
            }
            // Every call answered once, in the model's order.
            assert_eq!(run.turn.results.len(), calls.len(), "turn {turn}");
            for (i, ((tool, input), record)) in calls.iter().zip(&run.calls).enumerate() {
                assert_eq!(record.index, i);
                assert_eq!(record.call_id.as_deref(), Some(format!("toolu_{i}").as_str()));
                let id = input["id"].as_str().unwrap();
                let answer = text(&run.turn.results[i]);
                match &record.error {
                    None => {
                        let verb = if tool == "work" { "worked" } else { "peeked" };
                        assert_eq!(answer, format!("{verb} {id}"), "turn {turn}");
                    }
                    Some(error) => {
                        assert_eq!(error.kind(), ErrorKind::Interrupted, "turn {turn}: {error}");
                        assert!(answer.contains("not sent again"), "{answer}");
                        interrupted += 1;
                    }
                }
            }
            if !killing {
                assert!(run.calls.iter().all(|c| c.ran), "turn {turn}: {:?}", run.calls);
            }
            if retry && killing {
                retried_turns.push(turn);
            }
        }
        // The server's own log: no call received twice, but for a read-only
        // tool in a turn that opted in to the retry (at most twice then).
        let mut received: HashMap<String, usize> = HashMap::new();
        for line in log_lines(&log) {
            if let Some(call) = line.strip_prefix("work ").or_else(|| line.strip_prefix("peek ")) {
                *received.entry(line.split(' ').next().unwrap().to_owned() + " " + call).or_default() += 1;
            }
        }
        for (call, times) in &received {
            let turn: usize = call.split(['t', 'c']).nth(1).and_then(|t| t.trim().parse().ok()).unwrap_or(usize::MAX);
            let allowed = if call.starts_with("peek") && turn % 2 == 1 { 2 } else { 1 };
            assert!(*times <= allowed, "{call} received {times} times");
        }
        assert!(kills >= 3, "the seed kills too rarely: {kills}");
        assert!(interrupted > 0, "no call was interrupted in {kills} kills");
        assert_eq!(source.server_states()[0].1, ServerState::Up);
        eprintln!(
            "{TURNS} turns, {kills} kills, {interrupted} calls interrupted, retry turns with kills: {retried_turns:?}, {:?}",
            started.elapsed()
        );
    });
}

#[test]
fn a_server_that_never_comes_back_is_down_and_its_tools_leave() {
    let (command, args) = servers::soak().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let (log, refuse) = (dir.path().join("calls.log"), dir.path().join("refuse"));
    common::runtime().block_on(async {
        let options = ClientOptions::new().reconnect(
            Reconnect::new()
                .attempts(3)
                .backoff(Duration::from_millis(20), Duration::from_millis(50))
                .retry_after(Duration::from_secs(600)),
        );
        let env = soak_env(&log, Some(&refuse));
        let client = McpClient::spawn("soak", &command, &args, &env, &options)
            .await
            .unwrap();
        let local = InProcessServer::new().tool(
            Tool::new("ping", "Answers", json!({"type": "object"})),
            |_args, _ctx| async { Ok(CallToolResult::text("pong")) },
        );
        let hub = Source::hub()
            .server("soak", client)
            .server("local", local)
            .build()
            .unwrap();
        let provider = common::provider("anthropic");
        let listing = hub.tools(provider, &ListOptions::new()).await.unwrap();
        assert_eq!(
            common::tool_names(&listing),
            ["soak__work", "soak__peek", "local__ping"]
        );

        std::fs::write(&refuse, "").unwrap();
        kill(last_pid(&log).unwrap());
        // The session's end is seen without a call.
        let seen = Instant::now();
        while !matches!(hub.server_states()[0].1, ServerState::Down { .. }) {
            assert!(
                seen.elapsed() < Duration::from_secs(60),
                "{:?}",
                hub.server_states()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        // Listing tries it again: three tries, then down; its tools leave.
        let listing_again = hub.tools(provider, &ListOptions::new()).await.unwrap();
        assert_eq!(common::tool_names(&listing_again), ["local__ping"]);
        let failed = &listing_again.report.toolset.failed_servers;
        assert_eq!(failed[0].server_id, "soak");
        assert!(failed[0].error.contains("is down"), "{}", failed[0].error);
        let starts = log_lines(&log)
            .iter()
            .filter(|l| l.starts_with("start"))
            .count();
        assert_eq!(starts, 1, "the refused starts never got to log");
        let ServerState::Down { error, .. } = &hub.server_states()[0].1 else {
            panic!("{:?}", hub.server_states())
        };
        assert!(
            error.contains("refusing to start") || error.contains("initialization failed"),
            "{error}"
        );

        // A call made with the old listing is answered at once, not after a timeout.
        let call = response(&[("soak__work".into(), json!({"id": "late", "ms": 10}))]);
        let exec = ExecOptions::new().call_timeout(Duration::from_secs(60));
        let run = hub
            .execute_tool_calls(provider, &call, &listing, &exec)
            .await
            .unwrap();
        let error = run.calls[0].error.as_ref().unwrap();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Unavailable | ErrorKind::UnknownTool
            ),
            "{error}"
        );
        assert!(!log_lines(&log).iter().any(|l| l.contains("late")));
    });
}

#[cfg(feature = "rmcp-http")]
#[test]
fn a_restarted_http_server_works_on_the_next_turn() {
    let first = servers::everything_http().unwrap_or_else(|e| panic!("{e}"));
    common::runtime().block_on(async {
        let client = McpClient::connect_http(
            "everything",
            &first.url,
            &BTreeMap::new(),
            &ClientOptions::new(),
        )
        .await
        .unwrap();
        let source = Source::client("everything", client).build().unwrap();
        let provider = common::provider("anthropic");
        let echo = |message: &str| response(&[("echo".into(), json!({"message": message}))]);
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        let run = source
            .execute_tool_calls(provider, &echo("before"), &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(text(&run.turn.results[0]), "Echo: before");

        // The server restarts on the same port: its sessions are gone.
        let url = first.url.clone();
        drop(first);
        let _second = servers::everything_http_at(&url).unwrap_or_else(|e| panic!("{e}"));
        let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
        let run = source
            .execute_tool_calls(provider, &echo("after"), &listing, &ExecOptions::new())
            .await
            .unwrap();
        assert_eq!(text(&run.turn.results[0]), "Echo: after", "{:?}", run.calls);
    });
}

#[test]
fn only_a_call_that_is_safe_to_repeat_is_sent_again_and_only_when_asked() {
    let (command, args) = servers::soak().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    common::runtime().block_on(async {
        let client = McpClient::spawn(
            "soak",
            &command,
            &args,
            &soak_env(&log, None),
            &ClientOptions::new(),
        )
        .await
        .unwrap();
        let source = Source::client("soak", client).build().unwrap();
        let provider = common::provider("anthropic");
        for (tool, retry, id) in [
            ("peek", true, "a"),
            ("peek", false, "b"),
            ("work", true, "c"),
        ] {
            let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
            let (log_at, id_at) = (log.clone(), format!("{tool} {id}"));
            let killer = tokio::spawn(async move {
                // Once the call has reached the server, kill it.
                while !log_lines(&log_at).contains(&id_at) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                kill(last_pid(&log_at).unwrap());
            });
            let call = response(&[(tool.into(), json!({"id": id, "ms": 3000}))]);
            let exec = ExecOptions::new().retry_interrupted(retry);
            let run = source
                .execute_tool_calls(provider, &call, &listing, &exec)
                .await
                .unwrap();
            killer.await.unwrap();
            let received = log_lines(&log)
                .iter()
                .filter(|l| **l == format!("{tool} {id}"))
                .count();
            if tool == "peek" && retry {
                assert_eq!(
                    text(&run.turn.results[0]),
                    format!("peeked {id}"),
                    "{:?}",
                    run.calls
                );
                assert_eq!(received, 2, "sent once more");
            } else {
                let error = run.calls[0].error.as_ref().expect("interrupted");
                assert_eq!(error.kind(), ErrorKind::Interrupted, "{error}");
                assert_eq!(received, 1, "{tool} {id} never sent again");
            }
        }
    });
}

#[test]
fn a_server_that_failed_to_start_is_tried_again_later() {
    let (command, args) = servers::soak().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let (log, refuse) = (dir.path().join("calls.log"), dir.path().join("refuse"));
    std::fs::write(&refuse, "").unwrap();
    common::runtime().block_on(async {
        let mut config = ServerConfig::stdio(&command, args.clone());
        if let ServerConfig::Stdio { env, .. } = &mut config {
            *env = soak_env(&log, Some(&refuse));
        }
        let options = ClientOptions::new()
            .reconnect(Reconnect::new().retry_after(Duration::from_millis(300)));
        let hub = HubConfig::new()
            .server("soak", config)
            .keep_going(true)
            .connect_with(&options)
            .await
            .unwrap()
            .build()
            .unwrap();
        assert!(matches!(hub.server_states()[0].1, ServerState::Down { .. }));
        let provider = common::provider("anthropic");
        let listing = hub.tools(provider, &ListOptions::new()).await.unwrap();
        assert!(listing.tools.is_empty());
        assert_eq!(listing.report.toolset.failed_servers[0].server_id, "soak");

        std::fs::remove_file(&refuse).unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let listing = hub.refresh().await.unwrap();
        assert_eq!(
            listing
                .tools()
                .iter()
                .map(|t| t.tool.name.as_str())
                .collect::<Vec<_>>(),
            ["work", "peek"]
        );
        assert_eq!(hub.server_states()[0].1, ServerState::Up);
    });
}
