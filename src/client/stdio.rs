//! Spawning a stdio server: its stdout read through a tap that notes what the
//! SDK's types drop, and the tail of what it writes to stderr kept.
//!
//! The official SDK (rmcp 3.11) reads each message into its own types, which
//! have no place for two fields of MCP 2025-11-25: a tool's `execution`
//! (`taskSupport`) and the server's `tasks` capability. The tap sees the raw
//! lines on their way to the SDK, unchanged, and keeps those two fields, so
//! that a tool that runs only as a task is called as one.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::lines::{self, LineScan};
use crate::error::{Error, ErrorKind, Result};

/// The last lines a server wrote to stderr, for error messages.
#[derive(Debug, Clone)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Turns `true` when the stderr pipe closed (every line is in).
    closed: tokio::sync::watch::Receiver<bool>,
}

const TAIL_LINES: usize = 20;

impl StderrTail {
    /// Waits until the pipe closed, so that the last lines are in, at most
    /// `within`.
    pub(crate) async fn wait_closed(&self, within: Duration) {
        let mut closed = self.closed.clone();
        let _ = tokio::time::timeout(within, closed.wait_for(|c| *c)).await;
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// `"; stderr: ..."` with the last lines, or nothing.
    pub(crate) fn describe(&self) -> String {
        let lines = self.lines.lock().map(|l| l.clone()).unwrap_or_default();
        if lines.is_empty() {
            return String::new();
        }
        let joined: Vec<String> = lines.into_iter().collect();
        format!("; its stderr ended with:\n{}", joined.join("\n"))
    }
}

/// What the tap noted of the server's raw messages.
#[derive(Debug, Default)]
pub(crate) struct Noted {
    /// Each listed tool's `execution`, by name.
    pub(crate) execution: HashMap<String, Value>,
    /// The server's `capabilities.tasks`, from `initialize`.
    pub(crate) tasks: Option<Value>,
    /// Bumped at every `initialize` answer seen: a session the SDK started
    /// again on its own (an HTTP server that lost the session) may offer
    /// other tools.
    pub(crate) sessions: Option<Arc<AtomicU64>>,
    /// The server refused the session (an HTTP server that lost it).
    pub(crate) refused: bool,
    /// The tools left out of a `tools/list` answer because they could not
    /// be read (name, why), until the listing takes them.
    pub(crate) left_out: Vec<(String, String)>,
}

/// The notes of one session's tap.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tap(Arc<Mutex<Noted>>);

/// Lines longer than this are passed on without being looked at (a tool
/// list is far shorter; a large tool result need not be copied).
const MAX_NOTED_LINE: usize = 16 << 20;

/// The capacity a tap keeps for the next line once one ends; a longer
/// line's buffer is freed.
const KEPT_LINE_CAPACITY: usize = 64 << 10;

impl Tap {
    /// A tap that bumps `version` at every `initialize` answer it sees.
    pub(crate) fn counting_sessions(version: Arc<AtomicU64>) -> Self {
        Tap(Arc::new(Mutex::new(Noted {
            sessions: Some(version),
            ..Noted::default()
        })))
    }

    /// The server refused the session: it must be started again.
    #[cfg_attr(not(feature = "rmcp-http"), allow(dead_code))]
    pub(crate) fn refuse_session(&self) {
        if let Ok(mut noted) = self.0.lock() {
            noted.refused = true;
        }
    }

    /// Whether the server refused the session.
    pub(crate) fn session_refused(&self) -> bool {
        self.0.lock().is_ok_and(|noted| noted.refused)
    }

    /// Notes the tools left out of a `tools/list` answer (name, why).
    pub(crate) fn left_out(&self, tools: Vec<(String, String)>) {
        for (name, why) in &tools {
            tracing::warn!(tool = %name, why = %why,
                "a tool of the server's tools/list answer could not be read: left out");
        }
        if let Ok(mut noted) = self.0.lock() {
            noted.left_out.extend(tools);
        }
    }

    /// The tools left out of the `tools/list` answers read since the last
    /// call.
    pub(crate) fn take_left_out(&self) -> Vec<(String, String)> {
        self.0
            .lock()
            .map(|mut noted| std::mem::take(&mut noted.left_out))
            .unwrap_or_default()
    }

    /// A tool's `execution`, as last listed.
    pub(crate) fn execution(&self, tool: &str) -> Option<Value> {
        self.0.lock().ok()?.execution.get(tool).cloned()
    }

    /// The server's `tasks` capability.
    #[cfg(test)]
    pub(crate) fn tasks(&self) -> Option<Value> {
        self.0.lock().ok()?.tasks.clone()
    }

    /// Whether a call of `tool` is sent task-augmented: its listed
    /// `execution.taskSupport` says `required`, or `optional` on a server
    /// whose `tasks` capability takes task-augmented `tools/call`. Read in
    /// place, for every call.
    pub(crate) fn runs_as_task(&self, tool: &str) -> bool {
        let Ok(noted) = self.0.lock() else {
            return false;
        };
        let support = noted
            .execution
            .get(tool)
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str);
        match support {
            Some("required") => true,
            Some("optional") => noted
                .tasks
                .as_ref()
                .is_some_and(|t| t.pointer("/requests/tools/call").is_some()),
            _ => false,
        }
    }

    /// Looks at one complete message; only those that may carry the fields
    /// are parsed.
    pub(crate) fn note_message(&self, line: &[u8]) {
        static KEYS: LazyLock<[memchr::memmem::Finder<'static>; 3]> = LazyLock::new(|| {
            [
                memchr::memmem::Finder::new(b"\"execution\""),
                memchr::memmem::Finder::new(b"\"tasks\""),
                memchr::memmem::Finder::new(b"\"protocolVersion\""),
            ]
        });
        if KEYS.iter().all(|key| key.find(line).is_none()) {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(result) = message.get("result") else {
            return;
        };
        let Ok(mut noted) = self.0.lock() else {
            return;
        };
        if let Some(tasks) = result.get("capabilities").and_then(|c| c.get("tasks")) {
            noted.tasks = Some(tasks.clone());
        }
        if result.get("protocolVersion").is_some()
            && result.get("serverInfo").is_some()
            && let Some(sessions) = &noted.sessions
        {
            sessions.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            for tool in tools {
                if let (Some(name), Some(execution)) = (
                    tool.get("name").and_then(Value::as_str),
                    tool.get("execution"),
                ) {
                    noted.execution.insert(name.to_owned(), execution.clone());
                }
            }
        }
    }
}

/// The child's stdout, passed on byte for byte while the tap looks at each
/// line; after a line the SDK cannot take (see [`lines`](super::lines))
/// that answers a request, the error answer for that request follows.
pub(crate) struct TapReader<R> {
    inner: R,
    tap: Tap,
    /// The server, as the error answers name it.
    server: String,
    line: Vec<u8>,
    /// The current line outgrew [`MAX_NOTED_LINE`]: skip to its end.
    skipping: bool,
    scan: LineScan,
    /// An error answer to pass on before anything else.
    answer: Vec<u8>,
    /// Bytes read past a line that was answered, not yet passed on nor
    /// looked at.
    held: Vec<u8>,
}

impl<R> TapReader<R> {
    pub(crate) fn new(inner: R, tap: Tap, server: &str) -> Self {
        TapReader {
            inner,
            tap,
            server: server.to_owned(),
            line: Vec::new(),
            skipping: false,
            scan: LineScan::default(),
            answer: Vec::new(),
            held: Vec::new(),
        }
    }

    /// Looks at `bytes`; `Some(n)` when the line ending at `bytes[n - 1]`
    /// is answered (the answer is in `self.answer`): the bytes after it
    /// wait until the answer has been passed on.
    fn look(&mut self, mut bytes: &[u8]) -> Option<usize> {
        let total = bytes.len();
        while !bytes.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                Some(end) => {
                    self.scan.push(&bytes[..end]);
                    let whole = if self.skipping {
                        None
                    } else if self.line.is_empty() {
                        // A whole line in this read: looked at where it lies.
                        Some(&bytes[..end])
                    } else {
                        self.line.extend_from_slice(&bytes[..end]);
                        Some(&self.line[..])
                    };
                    if let Some(line) = whole {
                        self.tap.note_message(line);
                    }
                    let unreadable = self.scan.unreadable(whole);
                    let id = unreadable.as_ref().and_then(|_| self.scan.answered());
                    // A tool list that only some of its tools spoil loses
                    // only those.
                    let salvaged = match (&unreadable, whole, &id) {
                        (Some(_), Some(line), Some(_)) => lines::without_unreadable_tools(line),
                        _ => None,
                    };
                    self.scan = LineScan::default();
                    self.line.clear();
                    if self.line.capacity() > KEPT_LINE_CAPACITY {
                        // A long line (a large tool list) leaves no buffer behind.
                        self.line = Vec::new();
                    }
                    self.skipping = false;
                    bytes = &bytes[end + 1..];
                    if let (Some(why), Some(id)) = (unreadable, id) {
                        tracing::warn!(server = %self.server, why = %why,
                            "a message from the server could not be read");
                        self.answer = match salvaged {
                            Some(salvaged) => {
                                let line = salvaged.line;
                                self.tap.note_message(&line[..line.len() - 1]);
                                self.tap.left_out(salvaged.left_out);
                                line
                            }
                            None => lines::answer(&id, &why, &self.server),
                        };
                        return Some(total - bytes.len());
                    }
                }
                None => {
                    self.scan.push(bytes);
                    if !self.skipping {
                        if self.line.len() + bytes.len() > MAX_NOTED_LINE {
                            self.skipping = true;
                            self.line = Vec::new();
                        } else {
                            self.line.extend_from_slice(bytes);
                        }
                    }
                    return None;
                }
            }
        }
        None
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if !this.answer.is_empty() {
            let n = this.answer.len().min(buf.remaining());
            buf.put_slice(&this.answer[..n]);
            this.answer.drain(..n);
            return Poll::Ready(Ok(()));
        }
        if !this.held.is_empty() {
            let held = std::mem::take(&mut this.held);
            let n = held.len().min(buf.remaining());
            let passed = this.look(&held[..n]).unwrap_or(n);
            buf.put_slice(&held[..passed]);
            this.held = held[passed..].to_vec();
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled
            && let Some(passed) = this.look(&buf.filled()[before..])
        {
            this.held = buf.filled()[before + passed..].to_vec();
            buf.set_filled(before + passed);
        }
        polled
    }
}

/// The transport the SDK speaks over: the tapped stdout and the stdin.
pub(crate) type StdioTransport = (TapReader<ChildStdout>, ChildStdin);

/// The spawned process: killed when dropped, or asked to exit by [`ChildGuard::close`].
pub(crate) struct ChildGuard(Option<Child>);

/// How long a server that was told to exit (its stdin closed) has before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

impl ChildGuard {
    /// How the process ended, waiting for it at most `within`; `None` while
    /// it runs (or when it cannot be waited on).
    pub(crate) async fn exit_status(&mut self, within: Duration) -> Option<ExitStatus> {
        let child = self.0.as_mut()?;
        match tokio::time::timeout(within, child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        }
    }

    /// Waits briefly for the process to exit after its stdin closed, then kills it.
    pub(crate) async fn close(mut self) {
        if let Some(mut child) = self.0.take()
            && tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.start_kill();
        }
    }
}

/// A spawned server: its transport, the process, the stderr tail and the tap.
pub(crate) struct Spawned {
    pub(crate) transport: StdioTransport,
    pub(crate) child: ChildGuard,
    pub(crate) stderr: StderrTail,
    pub(crate) tap: Tap,
}

/// Spawns `command args` with `env` added to the environment.
pub(crate) fn spawn(
    name: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
) -> Result<Spawned> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (is it installed, and on the PATH?)"
        } else {
            ""
        };
        Error::new(
            ErrorKind::Unavailable,
            format!("server `{name}`: cannot start `{command}`{hint}"),
        )
        .with_source(e)
    })?;
    let missing = |what: &str| {
        Error::new(
            ErrorKind::Unavailable,
            format!("server `{name}`: its {what} could not be opened"),
        )
    };
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let (closed_tx, closed) = tokio::sync::watch::channel(false);
    let tail = StderrTail {
        lines: Arc::default(),
        closed,
    };
    if let Some(stderr) = child.stderr.take() {
        let (tail, name) = (tail.clone(), name.to_owned());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %name, "stderr: {line}");
                tail.push(line);
            }
            let _ = closed_tx.send(true);
        });
    }
    let tap = Tap::default();
    Ok(Spawned {
        transport: (TapReader::new(stdout, tap.clone(), name), stdin),
        child: ChildGuard(Some(child)),
        stderr: tail,
        tap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn the_tap_passes_every_byte_and_notes_lines_cut_anywhere() {
        let lines = concat!(
            r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}},{"name":"b"}]}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"execution":3}}"#,
            "\n"
        );
        for cut in [1, 7, 64, 4096] {
            let (mut write, read) = tokio::io::duplex(cut);
            let tap = Tap::default();
            let mut reader = TapReader::new(read, tap.clone(), "s");
            let writer = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                write.write_all(lines.as_bytes()).await.unwrap();
            });
            let mut passed = String::new();
            reader.read_to_string(&mut passed).await.unwrap();
            writer.await.unwrap();
            assert_eq!(passed, lines);
            assert_eq!(
                tap.execution("a"),
                Some(serde_json::json!({"taskSupport": "required"}))
            );
            assert_eq!(tap.execution("b"), None);
            assert!(tap.tasks().is_some());
        }
    }
}
