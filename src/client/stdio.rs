//! Spawning a stdio server and keeping the tail of what it writes to stderr.

use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::transport::TokioChildProcess;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::error::{Error, ErrorKind, Result};

/// The last lines a server wrote to stderr, for error messages.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

const TAIL_LINES: usize = 20;

impl StderrTail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// `"; stderr: ..."` with the last lines, or nothing.
    pub(crate) fn describe(&self) -> String {
        let lines = self.0.lock().map(|l| l.clone()).unwrap_or_default();
        if lines.is_empty() {
            return String::new();
        }
        let joined: Vec<String> = lines.into_iter().collect();
        format!("; its stderr ended with:\n{}", joined.join("\n"))
    }
}

/// Spawns `command args` with `env` added to the environment.
pub(crate) fn spawn(
    name: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> Result<(TokioChildProcess, StderrTail)> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).envs(env).kill_on_drop(true);
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{name}`: cannot start `{command}`"),
            )
            .with_source(e)
        })?;
    let tail = StderrTail::default();
    if let Some(stderr) = stderr {
        let (tail, name) = (tail.clone(), name.to_owned());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %name, "stderr: {line}");
                tail.push(line);
            }
        });
    }
    Ok((transport, tail))
}
