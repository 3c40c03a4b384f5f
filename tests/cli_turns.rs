//! `run` keeps what it did, through the binary, against the tests' probe
//! server (`tests/e2e/probe_server.py`, on the official Python SDK), whose
//! own log of every `tools/call` it received (and of every call the client
//! cancelled) is the account the output must match:
//!
//! - every RESPONSE is read and checked before a call is sent;
//! - each turn is written as it ends, and SIGTERM (sent once the log shows
//!   the call the test holds in flight, never after a sleep) leaves a valid
//!   JSON array of the turns that finished, the interrupted one included,
//!   accounting for every call the server received;
//! - with `--suspend`, the interrupted turn is suspended, and resuming it
//!   (with the responses not played) sends every call, none twice;
//! - a second signal cuts the call in flight, and its server is told;
//! - a call given up on its timeout is cancelled on its server even when it
//!   is the turn's last;
//! - the summary counts a suspended turn's waiting calls;
//! - the exit statuses are those `docs/command-line.md` lists.
#![cfg(all(feature = "cli", unix))]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One call at a time, so that a held call keeps the ones after it unsent.
const ONE_AT_A_TIME: &[&str] = &["--max-concurrency", "1"];

/// A hang guard: no test waits longer than this for what it drives.
const PATIENCE: Duration = Duration::from_secs(120);

fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// A test's folder, with the probe server logging into it.
struct Probe {
    dir: tempfile::TempDir,
    log: PathBuf,
    server: String,
}

impl Probe {
    fn new() -> Probe {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("probe.jsonl");
        let (python, args) = common::servers::probe(&log).unwrap_or_else(|e| panic!("{e}"));
        let server = format!("probe={python} {}", args.join(" "));
        Probe { dir, log, server }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `run --provider anthropic --server PROBE`, `flags`, then `responses`.
    fn args<'a>(&'a self, flags: &[&'a str], responses: &'a [String]) -> Vec<&'a str> {
        let mut args = vec!["run", "--provider", "anthropic", "--server", &self.server];
        args.extend_from_slice(flags);
        args.extend(responses.iter().map(String::as_str));
        args
    }

    /// Runs `run` with `flags` on `responses` to its end.
    fn run(&self, flags: &[&str], responses: &[String]) -> Output {
        bin()
            .args(self.args(flags, responses))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Starts `run` with `flags` on `responses`, and waits until the probe
    /// has received the call `held`.
    fn start_held(&self, flags: &[&str], responses: &[String], held: &str) -> Running {
        let mut running = Running::start(&self.args(flags, responses), self.path("out.json"));
        wait_for_call(&self.log, held, &mut running.child);
        running
    }

    /// The probe's log.
    fn log(&self) -> (Vec<(String, String)>, Vec<String>) {
        log(&self.log)
    }
}

/// The probe's log: the calls it received (tool, text) and the texts of
/// the calls the client cancelled. A line the server is still writing (no
/// newline yet) is left for the next read.
fn log(log: &Path) -> (Vec<(String, String)>, Vec<String>) {
    let (mut received, mut cancelled) = (Vec::new(), Vec::new());
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let whole = text.rfind('\n').map_or("", |end| &text[..end]);
    for line in whole.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        match entry["cancelled"].as_str() {
            Some(text) => cancelled.push(text.to_owned()),
            None => received.push((
                entry["tool"].as_str().unwrap().to_owned(),
                entry["arguments"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )),
        }
    }
    (received, cancelled)
}

/// Waits until the log shows a call of `text`.
fn wait_for_call(path: &Path, text: &str, child: &mut Child) {
    let started = Instant::now();
    while !log(path).0.iter().any(|(_, t)| t == text) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the command ended before the server received `{text}`"
        );
        assert!(started.elapsed() < PATIENCE, "`{text}` never arrived");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes `responses` as `dir/NNN.json`; returns their paths.
fn write_responses(dir: &Path, responses: &[Value]) -> Vec<String> {
    responses
        .iter()
        .enumerate()
        .map(|(i, response)| {
            let path = dir.join(format!("{:03}.json", i + 1));
            std::fs::write(&path, response.to_string()).unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect()
}

/// An Anthropic response of `calls` (id, tool, input).
fn response(calls: &[(String, &str, Value)]) -> Value {
    json!({"content": calls.iter().map(|(id, tool, input)| json!({
        "type": "tool_use", "id": id, "name": tool, "input": input
    })).collect::<Vec<_>>()})
}

/// `turns` turns of three `append` calls (ids and texts `tN.cI`); turn
/// `held` has a `hold` call (id and text `tN.hold`) second, answered once
/// `release` exists.
fn conversation(turns: usize, held: usize, release: &Path) -> Vec<Value> {
    (1..=turns)
        .map(|t| {
            let mut calls: Vec<(String, &str, Value)> = (0..3)
                .map(|i| {
                    let id = format!("t{t}.c{i}");
                    (id.clone(), "append", json!({"text": id}))
                })
                .collect();
            if t == held {
                let id = format!("t{t}.hold");
                let input = json!({"text": id, "release": release.to_str().unwrap()});
                calls.insert(1, (id, "hold", input));
            }
            response(&calls)
        })
        .collect()
}

/// A running command: stdout into a file (a pipe would fill), stderr read
/// line by line.
struct Running {
    child: Child,
    stdout: PathBuf,
    stderr: Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(args: &[&str], stdout: PathBuf) -> Running {
        let mut child = bin()
            .args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, stderr) = channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Running {
            child,
            stdout,
            stderr,
            seen: Vec::new(),
        }
    }

    fn signal(&self, signal: i32) {
        let pid = i32::try_from(self.child.id()).unwrap();
        // SAFETY: sends a signal to the child this test started.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    /// Waits until stderr has a line containing `text`.
    fn wait_stderr(&mut self, text: &str) {
        while !self.seen.iter().any(|l| l.contains(text)) {
            match self.stderr.recv_timeout(PATIENCE) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("stderr never said `{text}`: {:#?}", self.seen),
            }
        }
    }

    /// Waits for the end: the exit status, stdout and the whole of stderr.
    fn finish(mut self) -> (Option<i32>, String, String) {
        let status = self.child.wait().unwrap();
        self.seen.extend(self.stderr.iter());
        let stdout = std::fs::read_to_string(&self.stdout).unwrap();
        (status.code(), stdout, self.seen.join("\n"))
    }
}

/// Every call record of `turns` by call id.
fn records(turns: &[Value]) -> BTreeMap<String, Value> {
    turns
        .iter()
        .flat_map(|turn| turn["calls"].as_array().unwrap().iter())
        .map(|record| {
            (
                record["call_id"].as_str().unwrap().to_owned(),
                record.clone(),
            )
        })
        .collect()
}

/// The calls the server received are exactly those the output says ran or
/// may have run, each once.
fn accounted(turns: &[Value], received: &[(String, String)]) {
    let records = records(turns);
    let mut texts: Vec<&str> = received.iter().map(|(_, t)| t.as_str()).collect();
    texts.sort_unstable();
    let before = texts.len();
    texts.dedup();
    assert_eq!(before, texts.len(), "a call was sent twice: {received:?}");
    let ran: Vec<&str> = records
        .iter()
        .filter(|(_, r)| {
            r["ran"] == true
                || r["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("Interrupted"))
        })
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(texts, ran, "the server's log and the output disagree");
}

#[test]
fn a_malformed_third_response_fails_the_run_before_anything_is_sent() {
    let probe = Probe::new();
    let paths = write_responses(probe.dir.path(), &conversation(4, 0, probe.dir.path()));
    for (third, why) in [
        ("{\"content\": [", "invalid JSON"),
        ("{\"choices\": []}", "not a `anthropic` response"),
    ] {
        std::fs::write(&paths[2], third).unwrap();
        let out = probe.run(&[], &paths);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            stderr.contains(&paths[2]) && stderr.contains(why),
            "{stderr}"
        );
        assert_eq!(probe.log(), (vec![], vec![]), "nothing was sent");
    }
    // Stdin cannot be read as two responses.
    let out = probe.run(&[], &["-".to_owned(), "-".to_owned()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than once"));
}

#[test]
fn sigterm_halfway_through_200_turns_leaves_the_finished_turns_accounted_for() {
    let probe = Probe::new();
    let release = probe.path("release");
    let paths = write_responses(probe.dir.path(), &conversation(200, 100, &release));
    let mut running = probe.start_held(ONE_AT_A_TIME, &paths, "t100.hold");
    running.signal(libc::SIGTERM);
    running.wait_stderr("note: SIGTERM: no new turn or call is started");
    // The call in flight ends within the grace the command gives it.
    std::fs::write(&release, "").unwrap();
    let (status, stdout, stderr) = running.finish();
    assert_eq!(status, Some(143), "{stderr}");
    let turns: Vec<Value> = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout is not one JSON array: {stdout}"));
    assert_eq!(turns.len(), 100, "{stderr}");
    assert!(turns[..99].iter().all(|t| t["status"] == "ok"));
    let last = &turns[99];
    assert_eq!(last["status"], "halt");
    assert_eq!(last["response"], paths[99].as_str());
    let results: Vec<&str> = last["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(results[0], "appended t100.c0");
    in_flight_ended(&last["calls"][1], &stderr);
    for record in &last["calls"].as_array().unwrap()[2..] {
        assert_eq!(record["ran"], false);
        assert!(
            record["error"]
                .as_str()
                .unwrap()
                .contains("interrupted before this call was sent"),
            "{record}"
        );
    }
    assert!(
        stderr.contains(&format!(
            "a signal stopped the run; the 100 later turn(s) were not played, from {} on",
            paths[100]
        )),
        "{stderr}"
    );
    let (received, cancelled) = probe.log();
    assert_eq!(received.len(), 99 * 3 + 2);
    assert!(cancelled.is_empty());
    accounted(&turns, &received);
}

#[test]
fn with_suspend_the_interrupted_turn_resumes_and_no_call_is_sent_twice() {
    let probe = Probe::new();
    let release = probe.path("release");
    let state = probe.path("state.json");
    let state = state.to_str().unwrap();
    let paths = write_responses(probe.dir.path(), &conversation(200, 100, &release));
    let suspend = [ONE_AT_A_TIME, &["--suspend", state]].concat();
    let mut running = probe.start_held(&suspend, &paths, "t100.hold");
    running.signal(libc::SIGTERM);
    running.wait_stderr("note: SIGTERM: no new turn or call is started");
    std::fs::write(&release, "").unwrap();
    let (status, stdout, stderr) = running.finish();
    assert_eq!(status, Some(143), "{stderr}");
    let first: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(first.len(), 100);
    let suspended = &first[99];
    assert_eq!(suspended["status"], "suspended");
    let waiting: Vec<(&str, &str)> = suspended["waiting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["call_id"].as_str().unwrap(),
                w["waits_for"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(waiting, [("t100.c1", "resume"), ("t100.c2", "resume")]);
    assert!(
        stderr.contains("summary (turn 100): 4 call(s): 2 ran, 0 rejected before sending, 0 denied, 0 failed, 2 waiting"),
        "{stderr}"
    );
    assert!(Path::new(state).exists());
    let interrupted = stderr;
    let (received, _) = probe.log();
    assert_eq!(received.len(), 99 * 3 + 2);

    // The suspended turn resumed, then the 100 responses not played.
    let resume = [ONE_AT_A_TIME, &["--resume", state]].concat();
    let out = probe.run(&resume, &paths[100..]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let second: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(second.len(), 101);
    assert_eq!(second[0]["resumed"], state);
    let results: Vec<&str> = second[0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(results[0], "appended t100.c0");
    assert_eq!(&results[2..], ["appended t100.c1", "appended t100.c2"]);
    in_flight_ended(&second[0]["calls"][1], &interrupted);
    let (received, _) = probe.log();
    assert_eq!(received.len(), 200 * 3 + 1, "every call, once");
    let mut turns = first[..99].to_vec();
    turns.extend(second);
    accounted(&turns, &received);
}

#[test]
fn a_second_signal_cuts_the_call_in_flight_and_its_server_is_told() {
    let probe = Probe::new();
    // Never released.
    let release = probe.path("never");
    let paths = write_responses(probe.dir.path(), &conversation(3, 2, &release));
    let mut running = probe.start_held(ONE_AT_A_TIME, &paths, "t2.hold");
    running.signal(libc::SIGINT);
    running.wait_stderr("note: SIGINT: no new turn or call is started");
    running.signal(libc::SIGINT);
    let (status, stdout, stderr) = running.finish();
    assert_eq!(status, Some(130), "{stderr}");
    assert!(
        stderr.contains("the calls still in flight are answered as interrupted"),
        "{stderr}"
    );
    let turns: Vec<Value> = serde_json::from_str(&stdout).unwrap();
    assert_eq!(turns.len(), 2);
    let hold = &records(&turns)["t2.hold"];
    assert!(
        hold["error"]
            .as_str()
            .unwrap()
            .starts_with("Interrupted: the turn was interrupted before the call's answer came"),
        "{hold}"
    );
    let (received, cancelled) = probe.log();
    assert_eq!(
        cancelled,
        ["t2.hold"],
        "the server got notifications/cancelled"
    );
    accounted(&turns, &received);
}

#[test]
fn a_timed_out_call_is_cancelled_on_its_server_even_when_it_is_the_last() {
    let probe = Probe::new();
    let never = probe.path("never");
    let calls = [
        ("first".to_owned(), "append", json!({"text": "first"})),
        (
            "last".to_owned(),
            "hold",
            json!({"text": "last", "release": never.to_str().unwrap()}),
        ),
    ];
    let paths = write_responses(probe.dir.path(), &[response(&calls)]);
    let out = probe.run(&["--call-timeout", "1000"], &paths);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let turn: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        turn["calls"][1]["error"]
            .as_str()
            .unwrap()
            .starts_with("Timeout"),
        "{}",
        turn["calls"][1]
    );
    // The process ended after the notice reached the server.
    let (received, cancelled) = probe.log();
    assert_eq!(received.len(), 2);
    assert_eq!(cancelled, ["last"]);
}

#[test]
fn the_summary_of_a_suspended_three_call_turn_counts_the_waiting_call() {
    let probe = Probe::new();
    let policy = probe.path("policy.yaml");
    std::fs::write(&policy, "default: allow\nask: [publish]\n").unwrap();
    let calls = [
        ("c1".to_owned(), "append", json!({"text": "one"})),
        ("c2".to_owned(), "publish", json!({"text": "two"})),
        ("c3".to_owned(), "append", json!({"text": "three"})),
    ];
    let paths = write_responses(probe.dir.path(), &[response(&calls)]);
    let state = probe.path("state.json");
    let flags = [
        "--policy",
        policy.to_str().unwrap(),
        "--suspend",
        state.to_str().unwrap(),
    ];
    let out = probe.run(&flags, &paths);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "summary: 3 call(s): 2 ran, 0 rejected before sending, 0 denied, 0 failed, 1 waiting"
        ),
        "{stderr}"
    );
}

/// An argument the application binds, on the official SDK's server: the
/// listing does not show it, the bound value arrives, and the call in which
/// the model wrote it is refused and never sent; the value is nowhere in
/// what the command prints.
#[test]
fn a_bound_argument_arrives_with_the_applications_value_and_a_written_one_is_refused() {
    let probe = Probe::new();
    let (python, args) = common::servers::probe(&probe.log).unwrap_or_else(|e| panic!("{e}"));
    let config = probe.path("servers.json");
    let entry = json!({"command": python, "args": args,
        "bind": ["file_note:/tenant=env:PROBE_TENANT"]});
    std::fs::write(&config, json!({"mcpServers": {"probe": entry}}).to_string()).unwrap();
    let config = config.to_str().unwrap();
    let tenant = "acme-tenant-4711";

    let listed = bin()
        .args(["tools", "--provider", "openai-chat", "--config", config])
        .env("PROBE_TENANT", tenant)
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let note = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "file_note")
        .unwrap();
    let parameters = &note["function"]["parameters"];
    assert_eq!(parameters["required"], json!(["text"]), "{parameters}");
    assert!(
        parameters["properties"].get("tenant").is_none(),
        "{parameters}"
    );

    let calls = [
        ("n1".to_owned(), "file_note", json!({"text": "one"})),
        (
            "n2".to_owned(),
            "file_note",
            json!({"text": "two", "tenant": "globex"}),
        ),
    ];
    let paths = write_responses(probe.dir.path(), &[response(&calls)]);
    let mut args = vec![
        "run",
        "--provider",
        "anthropic",
        "--validate",
        "--config",
        config,
    ];
    args.extend(paths.iter().map(String::as_str));
    let out = bin()
        .args(args)
        .env("PROBE_TENANT", tenant)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let received: Vec<Value> = std::fs::read_to_string(&probe.log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let arguments: Vec<&Value> = received.iter().map(|r| &r["arguments"]).collect();
    assert_eq!(arguments, [&json!({"tenant": tenant, "text": "one"})]);
    let turn: Value = serde_json::from_str(&stdout).unwrap();
    let texts: Vec<&str> = turn["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts[0], "filed one");
    assert!(
        texts[1].contains("`/tenant` is the application's to write"),
        "{texts:?}"
    );
    assert!(
        !stdout.contains(tenant) && !stderr.contains(tenant),
        "{stdout}\n{stderr}"
    );
}

/// The statuses `docs/command-line.md` lists, each produced by the binary.
#[test]
fn the_exit_statuses_are_those_the_docs_list() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/command-line.md"))
            .unwrap();
    for row in [
        "| 0 | success |",
        "| 1 | failure:",
        "| 2 | usage:",
        "| 3 | `run --suspend`:",
        "| 130, 143 | `run` interrupted by SIGINT or SIGTERM",
    ] {
        assert!(docs.contains(row), "the docs lack `{row}`");
    }
    let status = |args: &[&str]| {
        bin()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(status(&["run", "--provider", "anthropic"]), Some(0));
    assert_eq!(
        status(&["run", "--provider", "anthropic", "missing.json"]),
        Some(1)
    );
    assert_eq!(
        status(&["run", "--provider", "anthropic", "--bogus"]),
        Some(2)
    );
    assert_eq!(status(&["run"]), Some(2));
    // 3 and 143 are held above; SIGINT here.
    let probe = Probe::new();
    let release = probe.path("release");
    let hold = [(
        "h".to_owned(),
        "hold",
        json!({"text": "h", "release": release.to_str().unwrap()}),
    )];
    let paths = write_responses(probe.dir.path(), &[response(&hold)]);
    let mut running = probe.start_held(&[], &paths, "h");
    running.signal(libc::SIGINT);
    running.wait_stderr("note: SIGINT");
    std::fs::write(&release, "").unwrap();
    let (status, stdout, stderr) = running.finish();
    assert_eq!(status, Some(130), "{stderr}");
    let turn: Value = serde_json::from_str(&stdout).unwrap();
    in_flight_ended(&turn["calls"][0], &stderr);
}

/// The record of the call in flight when the signal came, released then:
/// it ran, unless the machine was too slow for the grace the command gives
/// it (then it was cut, and stderr says so).
fn in_flight_ended(record: &Value, stderr: &str) {
    if record["ran"] == true {
        return;
    }
    assert!(
        stderr.contains("the calls still in flight are answered as interrupted")
            && record["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("Interrupted")),
        "{record}"
    );
}
