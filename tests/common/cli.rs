//! The command line as the tests run it: the built binary, from the
//! package's folder, with no standard input.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs `mcp-adapters` with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-adapters"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Standard output read as one JSON document, whatever the exit status;
/// a failure to read it shows both streams.
pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Standard output read as one JSON document, the command having
/// succeeded.
pub fn success_json(out: &Output) -> Value {
    assert!(out.status.success(), "stderr: {}", stderr(out));
    stdout_json(out)
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
