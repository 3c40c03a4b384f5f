//! The interop matrix: popular third-party MCP servers from npm and PyPI,
//! pinned one a line in `tests/interop/servers.jsonl`, each installed into
//! `target/` on first run (the npm ones together in `target/interop-npm`,
//! each PyPI one in a virtualenv of its own, `target/interop-py-NAME`, with
//! its pins), started over stdio and, concurrently:
//!
//! - listed by the library under every built-in provider, each listing with
//!   no failed server and no tool left out, and each tool definition of a
//!   provider with official SDK types validated by the oracle
//!   (`tests/conformance/`);
//! - listed by the command line as the README shows (`tools --provider
//!   anthropic --server NAME='COMMAND ARGS'`), the same as the library's;
//! - called through `run` for each core provider with the line's calls, each
//!   answer holding what the line says the server answers, and each answer
//!   validated by the oracle.
//!
//! A line names the package (`npm:` or `pypi:`, an exact version), its
//! pinned dependencies, the SDK it is built on (for the docs' table), the
//! command and environment that start it (`{npm}`: the npm folder's
//! `node_modules`; `{venv}`: its virtualenv; `{work}`: a folder the test
//! makes for it, with `fruit.db`, a SQLite database of two fruits, `repo`, a
//! git repository of one commit, and `memory.jsonl`, a knowledge graph of one
//! entity), and the calls. `docs/interop.md` lists the same servers in a
//! table that [`the_docs_table_is_the_matrix`] keeps equal to the file.
#![cfg(feature = "cli")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::conformance::{Item, RESULTS, TOOLS, check};
use common::*;
use mcp_adapters::{ClientOptions, ListOptions, McpClient, Registry, Source};
use serde::Deserialize;
use serde_json::Value;
use test_installs::interop::Installed;

/// One line of the data file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Server {
    name: String,
    /// `npm:NAME@VERSION` or `pypi:NAME==VERSION`.
    package: String,
    /// Dependencies pinned beside it, in the same form.
    #[serde(default)]
    pins: Vec<String>,
    /// The MCP implementation it is built on, for the docs.
    sdk: String,
    /// The command line, split as `--server` splits it.
    command: String,
    #[serde(default)]
    env: BTreeMap<String, String>,
    calls: Vec<Call>,
}

/// A call and what its answer holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    tool: String,
    arguments: Value,
    says: Vec<String>,
}

/// A package spec, split (`npm:` or `pypi:`, an exact version).
fn package(spec: &str) -> test_installs::interop::Package<'_> {
    test_installs::interop::package(spec).unwrap_or_else(|e| panic!("{e}"))
}

fn data_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(test_installs::interop::SERVERS)
}

fn servers() -> Vec<Server> {
    let text = std::fs::read_to_string(data_file()).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", data_file().display(), i + 1))
        })
        .collect()
}

/// The docs' table of `servers`.
fn table(servers: &[Server]) -> String {
    let mut out = String::from(
        "| server | package | version | built on | calls answered under each core provider |\n\
         |---|---|---|---|---|\n",
    );
    for server in servers {
        let package = package(&server.package);
        let mut calls: Vec<(String, usize)> = Vec::new();
        for call in &server.calls {
            match calls.iter_mut().find(|(tool, _)| *tool == call.tool) {
                Some((_, n)) => *n += 1,
                None => calls.push((call.tool.clone(), 1)),
            }
        }
        let calls: Vec<String> = calls
            .into_iter()
            .map(|(tool, n)| match n {
                1 => format!("`{tool}`"),
                n => format!("`{tool}` ({n})"),
            })
            .collect();
        out.push_str(&format!(
            "| `{}` | {} `{}` | {} | {} | {} |\n",
            server.name,
            package.registry,
            package.name,
            package.version,
            server.sdk,
            calls.join(", ")
        ));
    }
    out
}

/// `docs/interop.md` lists exactly the servers of the data file, with
/// their versions and calls.
#[test]
fn the_docs_table_is_the_matrix() {
    let servers = servers();
    assert!(
        servers.len() >= 8,
        "the matrix has {} servers",
        servers.len()
    );
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/interop.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let start = doc
        .find("| server |")
        .expect("the table in docs/interop.md");
    let end = doc[start..]
        .find("\n\n")
        .map_or(doc.len(), |n| start + n + 1);
    assert_eq!(
        &doc[start..end],
        table(&servers),
        "docs/interop.md's table differs from tests/interop/servers.jsonl"
    );
    let mut names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), servers.len(), "two lines share a name");
}

/// Installs every package of the matrix, the npm ones together and each
/// PyPI one in its virtualenv, all at once.
fn install(servers: &[Server]) -> Installed {
    let plan = test_installs::interop::plan_of(
        servers
            .iter()
            .map(|s| (s.name.as_str(), s.package.as_str(), s.pins.as_slice())),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    test_installs::interop::install(&plan).unwrap_or_else(|e| panic!("{e}"))
}

/// The files the servers work on: `fruit.db`, `repo`, `memory.jsonl`.
fn make_work(dir: &Path) {
    let run = |program: &str, args: &[&str], cwd: &Path| {
        let out = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env("GIT_AUTHOR_NAME", "interop")
            .env("GIT_AUTHOR_EMAIL", "interop@example.com")
            .env("GIT_COMMITTER_NAME", "interop")
            .env("GIT_COMMITTER_EMAIL", "interop@example.com")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let db = dir.join("fruit.db").display().to_string();
    let sql = "import sqlite3, sys\n\
               c = sqlite3.connect(sys.argv[1])\n\
               c.execute('CREATE TABLE fruit (name TEXT, n INTEGER)')\n\
               c.executemany('INSERT INTO fruit VALUES (?, ?)', [('apple', 3), ('pear', 5)])\n\
               c.commit()\n";
    run("python3", &["-c", sql, &db], dir);
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("README.md"), "Fruit.\n").unwrap();
    run("git", &["init", "-q"], &repo);
    run("git", &["add", "README.md"], &repo);
    run("git", &["commit", "-q", "-m", "First commit"], &repo);
    let entity = r#"{"type":"entity","name":"Ada Lovelace","entityType":"person","observations":["wrote the first program"]}"#;
    std::fs::write(dir.join("memory.jsonl"), format!("{entity}\n")).unwrap();
}

/// `text` with the placeholders replaced.
fn fill(text: &str, places: &[(&str, String)]) -> String {
    places
        .iter()
        .fold(text.to_owned(), |text, (from, to)| text.replace(from, to))
}

/// Every string of `value` with the placeholders replaced.
fn fill_value(value: &Value, places: &[(&str, String)]) -> Value {
    match value {
        Value::String(s) => Value::String(fill(s, places)),
        Value::Array(items) => Value::Array(items.iter().map(|v| fill_value(v, places)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_value(v, places)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One server of the matrix, ready to start.
struct Ready<'a> {
    server: &'a Server,
    command: String,
    env: BTreeMap<String, String>,
    calls: Vec<(String, Value, &'a [String])>,
    _work: tempfile::TempDir,
}

impl Ready<'_> {
    /// The command line with `args` and this server, as the README runs it.
    fn cli(&self, args: &[&str]) -> Result<Value, String> {
        let server = format!("{}={}", self.server.name, self.command);
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
            .args(args)
            .args(["--server", &server])
            .envs(&self.env)
            .output()
            .map_err(|e| e.to_string())?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            return Err(format!("{args:?} failed: {stderr}"));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{args:?}: {e}: {stderr}"))
    }
}

/// What one server's run found: oracle items, and each failure.
#[derive(Default)]
struct Found {
    items: Vec<Item>,
    failures: Vec<String>,
}

/// Lists `ready` under every built-in provider through the library, then
/// once through the command line, and plays its calls through `run` for
/// each core provider.
fn exercise(ready: &Ready<'_>) -> Found {
    let mut found = Found::default();
    let name = &ready.server.name;
    let mut fail = |what: String| found.failures.push(format!("{name}: {what}"));
    let words = shlex::split(&ready.command).expect("a command shell-words can split");
    let registry = Registry::builtin().unwrap();
    let listed = runtime().block_on(async {
        let options = ClientOptions::new().init_timeout(Duration::from_secs(60));
        let client = McpClient::spawn(name, &words[0], &words[1..], &ready.env, &options)
            .await
            .map_err(|e| format!("did not start: {e:#}"))?;
        let source = Source::client(name.as_str(), client).build().unwrap();
        let mut listings = BTreeMap::new();
        for provider in registry.providers() {
            let listing = source
                .tools(provider, &ListOptions::new())
                .await
                .map_err(|e| format!("{}: {e:#}", provider.id()))?;
            listings.insert(provider.id().to_owned(), listing);
        }
        Ok::<_, String>(listings)
    });
    let listings = match listed {
        Ok(listings) => listings,
        Err(e) => {
            fail(e);
            return found;
        }
    };
    for (id, listing) in &listings {
        let report = &listing.report;
        if !report.toolset.failed_servers.is_empty()
            || !report.toolset.dropped.is_empty()
            || !report.excluded.is_empty()
            || listing.tools.is_empty()
        {
            fail(format!(
                "{id}: listed {} tools; {report:?}",
                listing.tools.len()
            ));
        }
        if let Some((_, check)) = TOOLS.iter().find(|(p, _)| p == id) {
            for (i, tool) in listing.tools.iter().enumerate() {
                let label = format!("{name} {id} tool {i}");
                found.items.push(Item::new(label, *check, tool.clone()));
            }
        }
    }
    match ready.cli(&["tools", "--provider", "anthropic"]) {
        Ok(out) if out["tools"] == Value::from(listings["anthropic"].tools.clone()) => {}
        Ok(out) => fail(format!(
            "the command line listed otherwise: {}",
            out["tools"]
        )),
        Err(e) => fail(e),
    }
    let dir = tempfile::tempdir().unwrap();
    for &p in CORE_PROVIDERS {
        let calls: Vec<(String, Value)> = ready
            .calls
            .iter()
            .map(|(tool, arguments, _)| (tool.clone(), arguments.clone()))
            .collect();
        let response = dir.path().join(format!("{p}.json"));
        std::fs::write(&response, model_response(p, &calls).to_string()).unwrap();
        let out = match ready.cli(&["run", "--provider", p, &response.display().to_string()]) {
            Ok(out) => out,
            Err(e) => {
                fail(e);
                continue;
            }
        };
        let results = out["results"].as_array().cloned().unwrap_or_default();
        if results.len() != calls.len() {
            fail(format!(
                "{p}: {} answers to {} calls: {out}",
                results.len(),
                calls.len()
            ));
            continue;
        }
        for (i, ((tool, _, says), answer)) in ready.calls.iter().zip(&results).enumerate() {
            // JSON text may come back parsed (Gemini): spaces do not count.
            let squeeze = |text: &str| text.split_whitespace().collect::<String>();
            let text = squeeze(&format!("{}\n{answer}", strings(answer).join("\n")));
            for said in says.iter() {
                if !text.contains(&squeeze(said)) {
                    fail(format!(
                        "{p}: call {i} (`{tool}`) did not say `{said}`: {answer}"
                    ));
                }
            }
            if let Some((_, check)) = RESULTS.iter().find(|(id, _)| *id == p) {
                let label = format!("{name} {p} answer {i}");
                found.items.push(Item::new(label, *check, answer.clone()));
            }
        }
    }
    found
}

/// Every server of the data file lists under every provider and answers its
/// calls as it should, through the library and the command line.
#[test]
fn every_server_lists_under_every_provider_and_answers_its_calls() {
    let servers = servers();
    let installed = install(&servers);
    let ready: Vec<Ready<'_>> = servers
        .iter()
        .map(|server| {
            let work = tempfile::tempdir().unwrap();
            make_work(work.path());
            let mut places = vec![("{work}", work.path().display().to_string())];
            if let Some(npm) = &installed.npm {
                places.push(("{npm}", npm.display().to_string()));
            }
            if let Some(venv) = installed.venvs.get(&server.name) {
                places.push(("{venv}", venv.display().to_string()));
            }
            Ready {
                server,
                command: fill(&server.command, &places),
                env: server
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), fill(v, &places)))
                    .collect(),
                calls: server
                    .calls
                    .iter()
                    .map(|c| {
                        (
                            c.tool.clone(),
                            fill_value(&c.arguments, &places),
                            &c.says[..],
                        )
                    })
                    .collect(),
                _work: work,
            }
        })
        .collect();
    let found: Vec<Found> = std::thread::scope(|scope| {
        let handles: Vec<_> = ready
            .iter()
            .map(|r| scope.spawn(move || exercise(r)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut failures = Vec::new();
    let mut items = Vec::new();
    for f in found {
        failures.extend(f.failures);
        items.extend(f.items);
    }
    let oracle = check(&items);
    assert!(
        failures.is_empty() && oracle.is_ok(),
        "{}\n{}",
        failures.join("\n"),
        oracle.err().unwrap_or_default()
    );
}
