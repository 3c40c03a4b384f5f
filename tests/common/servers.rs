//! Real third-party MCP servers for the end-to-end tests, installed on first
//! use: `@modelcontextprotocol/server-everything` into `<target>/e2e-npm` and
//! `@modelcontextprotocol/server-filesystem` into `<target>/e2e-npm-filesystem`
//! (exact versions, no lock file), `@modelcontextprotocol/server-pdf` into
//! `<target>/e2e-npm-pdf`, and a virtualenv in `<target>/e2e-venv` with
//! the pins of `tests/e2e/requirements.txt` (`mcp`, `mcp-server-time`), which
//! also runs the tests' own Python servers.
//! The installs are `tests/installs`' (a lock file keeps concurrent
//! installers apart; a stamp records what was installed, so a changed pin
//! reinstalls).
#![allow(dead_code)]

use super::install::{manifest_dir, target_dir};

use std::path::{Path, PathBuf};
use std::process::Command;

use test_installs::npm_server;
#[allow(unused_imports)]
pub use test_installs::{EVERYTHING, FILESYSTEM, PDF, phoenix, python};

/// `(command, args)` for the everything server over stdio.
pub fn everything() -> Result<(String, Vec<String>), String> {
    let entry = npm_server(
        EVERYTHING,
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    )?;
    Ok((
        "node".into(),
        vec![entry.display().to_string(), "stdio".into()],
    ))
}

/// The folder in which `npx -y @modelcontextprotocol/server-everything`
/// starts the pinned install (its `node_modules`), with no download: run
/// `npx` there with `npm_config_offline=true`.
pub fn everything_npx_dir() -> Result<PathBuf, String> {
    everything()?;
    Ok(target_dir().join(test_installs::npm_server_dir(EVERYTHING)?))
}

/// The built example `name` (`target/debug/examples/NAME`), which
/// `cargo test --all-features` builds beside the test binaries.
pub fn example(name: &str) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/debug/deps/<test> -> target/debug/examples/<name>
    exe.parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("examples").join(name))
        .filter(|p| p.exists())
        .ok_or_else(|| {
            format!(
                "target/debug/examples/{name} is not built: run the tests with \
                 `cargo test --all-features` (which builds the examples), or \
                 `cargo build --all-features --example {name}`"
            )
        })
}

/// `(command, args)` for `examples/skills_server.rs` (the MCP Rust SDK's
/// `skills-fs` catalogue) over stdio, serving `tests/fixtures/skills`.
pub fn skills() -> Result<(String, Vec<String>), String> {
    let server = example("skills_server")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills");
    Ok((
        server.display().to_string(),
        vec![root.display().to_string()],
    ))
}

/// `(command, args)` for the MCP Apps PDF server over stdio.
pub fn pdf() -> Result<(String, Vec<String>), String> {
    let entry = npm_server(
        PDF,
        "node_modules/@modelcontextprotocol/server-pdf/dist/index.js",
    )?;
    Ok((
        "node".into(),
        vec![entry.display().to_string(), "--stdio".into()],
    ))
}

/// `(command, args)` for the filesystem server over stdio, allowed to read `root`.
pub fn filesystem(root: &Path) -> Result<(String, Vec<String>), String> {
    let entry = npm_server(
        FILESYSTEM,
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    )?;
    Ok((
        "node".into(),
        vec![entry.display().to_string(), root.display().to_string()],
    ))
}

/// `(command, args)` for mcp-server-time, in UTC.
pub fn time() -> Result<(String, Vec<String>), String> {
    let python = python()?;
    Ok((
        python.display().to_string(),
        vec![
            "-m".into(),
            "mcp_server_time".into(),
            "--local-timezone".into(),
            "UTC".into(),
        ],
    ))
}

/// `(command, args)` for the reconnection tests' server (`tests/e2e/soak_server.py`).
pub fn soak() -> Result<(String, Vec<String>), String> {
    let python = python()?;
    let script = manifest_dir().join("tests/e2e/soak_server.py");
    Ok((
        python.display().to_string(),
        vec![script.display().to_string()],
    ))
}

/// `(command, args)` for the tests' own Python server.
pub fn lab() -> Result<(String, Vec<String>), String> {
    let python = python()?;
    let script = manifest_dir().join("tests/e2e/lab_server.py");
    Ok((
        python.display().to_string(),
        vec![script.display().to_string()],
    ))
}

/// `(command, args)` for the tests' probe server, which logs every
/// `tools/call` it receives to `log` (one JSON line each).
pub fn probe(log: &Path) -> Result<(String, Vec<String>), String> {
    let python = python()?;
    let script = manifest_dir().join("tests/e2e/probe_server.py");
    Ok((
        python.display().to_string(),
        vec![script.display().to_string(), log.display().to_string()],
    ))
}

/// The JSON lines a logging server (the probe, the programmatic server)
/// wrote to `log`, one per `tools/call` it received; none when it wrote
/// nothing yet.
pub fn logged(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `(command, args)` for the tools of the recorded programmatic exchanges
/// (`tests/e2e/programmatic_server.py`), which logs every `tools/call` it
/// receives to `log` (one JSON line each).
pub fn programmatic(log: &Path) -> Result<(String, Vec<String>), String> {
    let python = python()?;
    let script = manifest_dir().join("tests/e2e/programmatic_server.py");
    Ok((
        python.display().to_string(),
        vec![script.display().to_string(), log.display().to_string()],
    ))
}

/// `(command, args)` for the tests' MCP 2026-07-28 server: tools that ask for
/// input, and a tool list that changes.
pub fn input() -> Result<(String, Vec<String>), String> {
    let python = python()?;
    let script = manifest_dir().join("tests/e2e/input_server.py");
    Ok((
        python.display().to_string(),
        vec![script.display().to_string()],
    ))
}

/// A server process, killed when dropped, with the URL it serves.
pub struct Running {
    child: std::process::Child,
    /// Its streamable HTTP endpoint.
    pub url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// The everything server in its `streamableHttp` mode on a free loopback
/// port, once it says it listens.
pub fn everything_http() -> Result<Running, String> {
    everything_http_on(free_port())
}

/// The same on the port of `url` (a server started again where one was).
pub fn everything_http_at(url: &str) -> Result<Running, String> {
    let port = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| format!("e2e: no port in {url}"))?;
    everything_http_on(port)
}

fn everything_http_on(port: u16) -> Result<Running, String> {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let (node, mut args) = everything()?;
    args.pop(); // the "stdio" mode argument
    args.push("streamableHttp".into());
    let mut child = Command::new(node)
        .args(args)
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("e2e: cannot start the everything server: {e}"))?;
    let stderr = child.stderr.take().ok_or("e2e: no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening") {
                let _ = tx.send(());
            }
        }
    });
    let running = Running {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .map_err(|_| "e2e: the everything server did not start listening within 60 s".to_owned())?;
    Ok(running)
}
