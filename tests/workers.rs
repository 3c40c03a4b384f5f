//! Workers sharing durable turns through a store, as separate
//! `mcp-adapters run --resume URL` processes against the tests' probe
//! server (`tests/e2e/probe_server.py`, on the official Python SDK), whose
//! own log of the `tools/call` requests it received shows what was sent:
//!
//! - a fleet of four workers and forty turns on a real PostgreSQL server
//!   (`common::postgres`), approvals recorded with `turns decide` at random
//!   moments, workers killed with SIGKILL at random points: every turn ends,
//!   no call is sent twice, and every call that ran (an approved one among
//!   them) was sent exactly once, the others answered as interrupted,
//!   denied, or never sent;
//! - two workers racing for one turn: one goes on, the other is told the
//!   turn is held, and sends nothing;
//! - a worker whose lease ran out keeps no checkpoint, so sends nothing.
//!
//! The randomness is seeded (`WORKERS_SEED`, else the time) and the seed
//! printed; nothing is timed.
#![cfg(feature = "cli")]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_adapters::store::{self, TurnHold, TurnStatus, TurnStore, Worker};
use mcp_adapters::{ExecOptions, HubConfig, ListOptions, Policy, Registry, ServerConfig, Status};
use serde_json::{Value, json};

/// The tools a policy asks about.
const POLICY: &str = "default: allow\nask: [probe/publish, probe/hold]\n";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-adapters")
}

/// SplitMix64: the tests' seeded randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    let seed = std::env::var("WORKERS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    eprintln!("seed: WORKERS_SEED={seed}");
    seed
}

/// The probe's log: one object per `tools/call` it received.
/// What the fleet's processes share.
struct Setup {
    dir: tempfile::TempDir,
    log: PathBuf,
    release: PathBuf,
    python: String,
    args: Vec<String>,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("probe.jsonl");
        let release = dir.path().join("release");
        let (python, args) = common::servers::probe(&log).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("policy.yaml"), POLICY).unwrap();
        Setup {
            dir,
            log,
            release,
            python,
            args,
        }
    }

    fn server_flag(&self) -> String {
        format!("probe={} {}", self.python, self.args.join(" "))
    }

    /// `run --resume URL` with `extra`, in a process group of its own (so
    /// that a kill takes its server down with it), its output in files.
    fn worker(&self, url: &str, name: &str, extra: &[&str]) -> Child {
        use std::os::unix::process::CommandExt;
        let out = std::fs::File::create(self.dir.path().join(format!("{name}.out"))).unwrap();
        let err = std::fs::File::create(self.dir.path().join(format!("{name}.err"))).unwrap();
        Command::new(bin())
            .args(["run", "--provider", "anthropic", "--server"])
            .arg(self.server_flag())
            .arg("--policy")
            .arg(self.dir.path().join("policy.yaml"))
            .args(["--resume", url, "--worker", name])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn output_of(&self, name: &str) -> (String, String) {
        let read = |ext: &str| {
            std::fs::read_to_string(self.dir.path().join(format!("{name}.{ext}")))
                .unwrap_or_default()
        };
        (read("out"), read("err"))
    }
}

/// Puts `count` turns in `store`, each suspended on its calls that need
/// approval (run in this process against one probe server, as
/// `run --suspend URL` would): `append` (allowed), `publish` and `hold`
/// (asked about; `hold` answers once the release file exists).
async fn put_turns(store: Arc<dyn TurnStore>, setup: &Setup, count: usize) -> Vec<String> {
    let source = HubConfig::new()
        .server(
            "probe",
            ServerConfig::stdio(setup.python.clone(), setup.args.clone()),
        )
        .connect()
        .await
        .unwrap()
        .policy(
            Policy::allow_all()
                .ask("probe/publish")
                .unwrap()
                .ask("probe/hold")
                .unwrap(),
        )
        .build()
        .unwrap();
    let registry = Registry::builtin().unwrap();
    let provider = registry.get("anthropic").unwrap();
    let listing = source.tools(provider, &ListOptions::new()).await.unwrap();
    let release = setup.release.display().to_string();
    let mut turns = Vec::new();
    for turn in 0..count {
        let response = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "append", "input": {"text": format!("t{turn}-append")}},
            {"type": "tool_use", "id": "toolu_p", "name": "publish", "input": {"text": format!("t{turn}-publish")}},
            {"type": "tool_use", "id": "toolu_h", "name": "hold", "input": {"text": format!("t{turn}-hold"), "release": release}}]});
        let hold = TurnHold::new(store.clone(), &Worker::new("creator"));
        let run = source
            .execute_tool_calls(
                provider,
                &response,
                &listing,
                &hold.options(ExecOptions::new().suspend(true)),
            )
            .await
            .unwrap();
        assert_eq!(run.status, Status::Suspended);
        turns.push(hold.finish(&run).await.unwrap().unwrap());
    }
    source.close().await;
    turns
}

/// A worker process of the fleet.
struct Running {
    child: Child,
    name: String,
    kill_at: Option<Instant>,
}

/// How each call of the fleet's turns ended, by its `text`, read from the
/// turns' last documents: `ran`, or the error's kind.
async fn endings(store: &dyn TurnStore, turns: &[String]) -> BTreeMap<String, String> {
    let mut endings = BTreeMap::new();
    for turn in turns {
        let kept = store.turn(turn).await.unwrap().unwrap();
        assert_eq!(kept.status, TurnStatus::Done, "turn {turn} did not end");
        let document: Value = serde_json::from_slice(&kept.document).unwrap();
        for call in document["calls"].as_array().unwrap() {
            let text = call["arguments"]["text"].as_str().unwrap().to_owned();
            let ended = &call["stage"]["ended"];
            let how = if ended["result"].is_object() {
                "ran".to_owned()
            } else {
                ended["error"]["kind"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{call}"))
                    .to_owned()
            };
            endings.insert(text, how);
        }
    }
    endings
}

#[test]
fn a_fleet_of_four_workers_ends_forty_turns_through_kills_sending_no_call_twice() {
    let mut rng = Rng(seed());
    let server = common::postgres::start().unwrap_or_else(|e| panic!("{e}"));
    let setup = Setup::new();
    let runtime = common::runtime();
    let store = runtime.block_on(store::open(&server.url)).unwrap();
    let turns = runtime.block_on(put_turns(store.clone(), &setup, 40));
    let url = server.url.clone();

    let mut slots: Vec<Option<Running>> = (0..4).map(|_| None).collect();
    let (mut kills, mut runs, mut decided, mut interrupted) = (0usize, 0usize, 0usize, 0usize);
    let (mut in_flight_kills, mut seen_in_flight) = (0usize, std::collections::HashSet::new());
    let mut exits: BTreeMap<i32, usize> = BTreeMap::new();
    // A hang guard only: the fleet ends long before it.
    let guard = Instant::now() + Duration::from_secs(900);
    loop {
        assert!(
            Instant::now() < guard,
            "the fleet did not end: {runs} runs, {kills} kills, {decided} decisions, exits {exits:?}"
        );
        // Workers that ended, and workers killed where their turn was.
        for slot in &mut slots {
            let Some(running) = slot else { continue };
            if let Some(status) = running.child.try_wait().unwrap() {
                let code = status.code().unwrap_or(-1);
                *exits.entry(code).or_default() += 1;
                let (out, err) = setup.output_of(&running.name);
                // A call cut by a kill is answered as interrupted.
                if code == 0 {
                    let out: Value = serde_json::from_str(&out).unwrap();
                    for call in out["calls"].as_array().unwrap() {
                        if call["outcome"] == "interrupted" {
                            interrupted += 1;
                            let error = call["error"].to_string();
                            assert!(error.contains("nterrupted"), "{call}");
                        }
                    }
                }
                // 0: the turn ended; 3: it waits again; 4: none was ready;
                // 1 only when this worker's lease ran out while it ran.
                assert!(
                    matches!(code, 0 | 3 | 4) || err.contains("lease on turn"),
                    "worker {} exited {code}: {err}",
                    running.name
                );
                *slot = None;
            } else if running.kill_at.is_some_and(|at| Instant::now() >= at) {
                let group = running.child.id() as i32;
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
                running.child.wait().unwrap();
                kills += 1;
                *slot = None;
            }
        }
        // After ten kills, one of them while a call was in flight, the
        // calls to `hold` answer at once.
        if kills >= 10 && in_flight_kills > 0 && !setup.release.exists() {
            std::fs::write(&setup.release, "").unwrap();
        }
        let waiting = runtime.block_on(store.waiting()).unwrap();
        if waiting.is_empty() && slots.iter().all(Option::is_none) {
            break;
        }
        // Until then, a worker whose call to `hold` reached the probe is
        // killed with the call in flight.
        if !setup.release.exists() {
            for line in common::servers::logged(&setup.log) {
                let Some(text) = line["arguments"]["text"].as_str() else {
                    continue;
                };
                let Some(turn) = text
                    .strip_suffix("-hold")
                    .and_then(|t| t.strip_prefix('t'))
                    .and_then(|t| t.parse::<usize>().ok())
                else {
                    continue;
                };
                let holder = waiting
                    .iter()
                    .find(|t| t.turn == turns[turn])
                    .and_then(|t| t.worker.clone());
                for running in slots.iter_mut().flatten() {
                    if Some(&running.name) == holder.as_ref()
                        && seen_in_flight.insert(text.to_owned())
                    {
                        running.kill_at = Some(Instant::now());
                        in_flight_kills += 1;
                    }
                }
            }
        }
        // A decision at a random moment, for a random call that waits.
        let undecided: Vec<(String, String)> = waiting
            .iter()
            .flat_map(|t| {
                t.waits
                    .iter()
                    .filter(|w| w.wait.needs_decision && w.decided.is_none())
                    .map(|w| (t.turn.clone(), w.wait.call.clone()))
            })
            .collect();
        if !undecided.is_empty() && rng.below(3) == 0 {
            let (turn, call) = &undecided[rng.below(undecided.len() as u64) as usize];
            let flag = if rng.below(10) == 0 {
                "--deny-call"
            } else {
                "--approve-call"
            };
            let out = Command::new(bin())
                .args(["turns", "decide", &url, "--turn", turn, flag, call])
                .output()
                .unwrap();
            // A turn may have moved on since it was listed (a worker took
            // it over and sent the call, or it ended).
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success()
                    || err.contains("has ended")
                    || err.contains("waiting for a decision"),
                "{err}"
            );
            decided += 1;
        }
        // Idle slots take up a worker; until ten kills, each is killed at
        // a random point, later one in four.
        for slot in slots
            .iter_mut()
            .filter(|s| s.is_none() && !waiting.is_empty())
        {
            runs += 1;
            let name = format!("w{runs}");
            let kill = kills < 10 || rng.below(4) == 0;
            // Before the release, a call to `hold` stays in flight until
            // its worker is killed: a later kill falls there more often.
            let within = if kills < 10 { 6000 } else { 3000 };
            let kill_at = kill.then(|| Instant::now() + Duration::from_millis(rng.below(within)));
            let child = setup.worker(&url, &name, &["--lease", "3"]);
            *slot = Some(Running {
                child,
                name,
                kill_at,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!(
        "{runs} runs, {kills} kills, {decided} decisions, {interrupted} calls answered interrupted, exits {exits:?}"
    );
    assert!(kills >= 10, "only {kills} kills");

    let endings = runtime.block_on(endings(store.as_ref(), &turns));
    assert_eq!(endings.len(), 120, "{endings:?}");
    let mut sent: HashMap<String, usize> = HashMap::new();
    let mut keys: HashMap<String, usize> = HashMap::new();
    for line in common::servers::logged(&setup.log) {
        *sent
            .entry(line["arguments"]["text"].as_str().unwrap().to_owned())
            .or_default() += 1;
        *keys
            .entry(line["key"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    for (key, count) in &keys {
        assert_eq!(
            *count, 1,
            "the call of idempotency key {key} was sent {count} times"
        );
    }
    let mut by_ending: BTreeMap<&str, usize> = BTreeMap::new();
    for (text, how) in &endings {
        *by_ending.entry(how.as_str()).or_default() += 1;
        let count = sent.get(text).copied().unwrap_or(0);
        match how.as_str() {
            "ran" => assert_eq!(count, 1, "{text} ran, and was sent {count} times"),
            // Cut by a kill while in flight: it may or may not have run.
            "interrupted" => assert!(count <= 1, "{text} was sent {count} times"),
            // Denied, or never sent: the kill fell before its request.
            _ => assert_eq!(count, 0, "{text} ended {how}, and was sent {count} times"),
        }
    }
    eprintln!("endings: {by_ending:?}");
    assert!(
        by_ending.get("interrupted").copied().unwrap_or(0) >= 1,
        "no call was cut in flight: {by_ending:?}"
    );
    assert!(interrupted >= 1, "no worker answered a call as interrupted");
    assert_eq!(sent.len(), sent.values().filter(|c| **c == 1).count());
}

/// A SQLite store in `dir`, one turn put in it waiting for the approval of
/// a call to `hold`, and the approval recorded: `(url, turn)`.
fn approved_turn(setup: &Setup, runtime: &tokio::runtime::Runtime) -> (String, String) {
    let url = format!("sqlite:{}", setup.dir.path().join("turns.db").display());
    let store = runtime.block_on(store::open(&url)).unwrap();
    let turn = runtime
        .block_on(put_turns(store.clone(), setup, 1))
        .remove(0);
    for call in ["toolu_p", "toolu_h"] {
        let out = Command::new(bin())
            .args([
                "turns",
                "decide",
                &url,
                "--turn",
                &turn,
                "--approve-call",
                call,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (url, turn)
}

fn wait_for(child: &mut Child) -> i32 {
    child.wait().unwrap().code().unwrap_or(-1)
}

#[test]
fn of_two_workers_resuming_one_turn_at_once_one_goes_on_and_the_other_sends_nothing() {
    let setup = Setup::new();
    let runtime = common::runtime();
    let (url, turn) = approved_turn(&setup, &runtime);
    // Both at once; the winner's call to `hold` stays in flight until the
    // release file exists, so the loser meets the turn held.
    let args = ["--turn", turn.as_str()];
    let mut a = setup.worker(&url, "a", &args);
    let mut b = setup.worker(&url, "b", &args);
    let loser = loop {
        if let Some(status) = a.try_wait().unwrap() {
            break ("a", status.code());
        }
        if let Some(status) = b.try_wait().unwrap() {
            break ("b", status.code());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(loser.1, Some(1), "{:?}", setup.output_of(loser.0));
    let (out, err) = setup.output_of(loser.0);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains(&format!("turn `{turn}` is held by worker `")),
        "{err}"
    );
    // The loser started no call: the winner's `hold` is the one request
    // in flight (the probe logs it once the winner sends it).
    std::fs::write(&setup.release, "").unwrap();
    let (winner, mut child) = if loser.0 == "a" { ("b", b) } else { ("a", a) };
    assert_eq!(wait_for(&mut child), 0, "{:?}", setup.output_of(winner));
    let (out, _) = setup.output_of(winner);
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["status"], "ok");
    let mut texts: Vec<String> = common::servers::logged(&setup.log)
        .iter()
        .map(|l| l["arguments"]["text"].as_str().unwrap().to_owned())
        .collect();
    // `append` ran when the turn was put; the winner sent the other two,
    // at once, so the server may log them in either order.
    if let Some(sent) = texts.get_mut(1..) {
        sent.sort();
    }
    assert_eq!(texts, ["t0-append", "t0-hold", "t0-publish"]);
}

#[test]
fn a_worker_whose_lease_ran_out_keeps_no_checkpoint_and_sends_nothing() {
    let setup = Setup::new();
    std::fs::write(&setup.release, "").unwrap();
    let runtime = common::runtime();
    let (url, turn) = approved_turn(&setup, &runtime);
    // A lease of zero has run out, by the database's clock, once taken.
    let mut stale = setup.worker(&url, "stale", &["--lease", "0"]);
    assert_eq!(wait_for(&mut stale), 1, "{:?}", setup.output_of("stale"));
    let (out, err) = setup.output_of("stale");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains(&format!("lease on turn `{turn}` is lost")),
        "{err}"
    );
    assert_eq!(
        common::servers::logged(&setup.log).len(),
        1,
        "only `append`, when it was put"
    );
    // The turn is taken up by a worker that holds its lease, and ends.
    let mut worker = setup.worker(&url, "next", &[]);
    assert_eq!(wait_for(&mut worker), 0, "{:?}", setup.output_of("next"));
    let (out, err) = setup.output_of("next");
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["status"], "ok", "{err}");
    assert_eq!(common::servers::logged(&setup.log).len(), 3);
    let store = runtime.block_on(store::open(&url)).unwrap();
    let kept = runtime.block_on(store.turn(&turn)).unwrap().unwrap();
    assert_eq!(kept.status, TurnStatus::Done);
}
