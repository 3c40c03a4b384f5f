//! Spawning a stdio server: its stdout read through a tap that notes what the
//! SDK's types drop, and the tail of what it writes to stderr kept.
//!
//! The official SDK (rmcp 3.11) reads each message into its own types, which
//! have no place for two fields of MCP 2025-11-25: a tool's `execution`
//! (`taskSupport`) and the server's `tasks` capability. The tap sees the raw
//! lines on their way to the SDK and keeps those two fields, so that a tool
//! that runs only as a task is called as one.
//!
//! A `tools/list` answer's tools are read by the tap itself, from the line,
//! into the library's [`Tool`]s, and the SDK is given the answer without
//! them: a server's tool list is read once, straight into what the
//! toolset keeps, rather than into the SDK's types (through a buffered
//! copy of the whole message) and then converted. A server of 20,000 tools
//! lists about 5 MB in one line.

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
use crate::mcp::Tool;

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
    /// The ids of the `tools/list` requests sent and not yet answered,
    /// whose answers' tools are read from their bytes.
    expected: Vec<Value>,
    /// The tools of `tools/list` answers read from their bytes, by the id
    /// of the request each answers, until the listing takes them.
    listed: Vec<(Value, Vec<Tool>)>,
}

/// A request's id as JSON, as the tap reads it from a line.
pub(crate) fn id_json(id: &rmcp::model::RequestId) -> Value {
    match id {
        rmcp::model::RequestId::Number(n) => Value::from(*n),
        rmcp::model::RequestId::String(s) => Value::from(&**s),
    }
}

/// The notes of one session's tap.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tap(Arc<Mutex<Noted>>);

/// Lines longer than this are passed on without being looked at (a tool
/// list is far shorter; a large tool result need not be copied).
const MAX_NOTED_LINE: usize = 16 << 20;

/// The capacity a tap keeps for what it passes on once a line has passed;
/// a longer line's buffer is freed.
const KEPT_LINE_CAPACITY: usize = 64 << 10;

/// How many `tools/list` answers read from their bytes wait for their
/// request at most.
pub(crate) const MAX_LISTED: usize = 4;

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

    /// A `tools/list` request `id` was sent: the tools of its answer are
    /// read from the answer's bytes. Only the last [`MAX_LISTED`] requests
    /// are waited for.
    pub(crate) fn expect_list(&self, id: Value) {
        if let Ok(mut noted) = self.0.lock() {
            if noted.expected.len() == MAX_LISTED {
                noted.expected.remove(0);
            }
            noted.expected.push(id);
        }
    }

    /// Whether `id` is that of a `tools/list` request waited for (which no
    /// longer is).
    fn expected_list(&self, id: &Value) -> bool {
        let Ok(mut noted) = self.0.lock() else {
            return false;
        };
        let at = noted.expected.iter().position(|expected| expected == id);
        at.map(|at| noted.expected.remove(at)).is_some()
    }

    /// Keeps the tools of the `tools/list` answer to request `id`, read
    /// from its bytes, until the listing takes them, and notes each tool's
    /// `execution`. An answer whose request stopped waiting is never
    /// taken: only the last [`MAX_LISTED`] are kept.
    fn listed(&self, id: Value, tools: Vec<Tool>) {
        let Ok(mut noted) = self.0.lock() else {
            return;
        };
        for tool in &tools {
            if let Some(execution) = tool.extra.get("execution") {
                noted.execution.insert(tool.name.clone(), execution.clone());
            }
        }
        if noted.listed.len() == MAX_LISTED {
            noted.listed.remove(0);
        }
        noted.listed.push((id, tools));
    }

    /// The tools of the `tools/list` answer to request `id`, when the tap
    /// read them from its bytes.
    pub(crate) fn take_listed(&self, id: &Value) -> Option<Vec<Tool>> {
        let mut noted = self.0.lock().ok()?;
        noted.expected.retain(|expected| expected != id);
        let at = noted.listed.iter().position(|(listed, _)| listed == id)?;
        Some(noted.listed.remove(at).1)
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

/// The child's stdout, passed on line by line while the tap looks at each
/// line: a line is held back until it ends (up to [`MAX_NOTED_LINE`]
/// bytes; a longer one passes as it comes). A `tools/list` answer passes
/// without its tools, which the tap reads into the library's type itself
/// ([`Tap::take_listed`]); after a line the SDK cannot take (see
/// [`lines`](super::lines)) that answers a request, the error answer for
/// that request follows. Every other byte passes as it was read.
pub(crate) struct TapReader<R> {
    inner: R,
    tap: Tap,
    /// The server, as the error answers name it.
    server: String,
    /// The current line so far, held back until it ends.
    line: Vec<u8>,
    /// The current line outgrew [`MAX_NOTED_LINE`]: it passes as it comes,
    /// to its end.
    skipping: bool,
    scan: LineScan,
    /// Bytes to pass on before anything else, from `out_at` on: a line
    /// that was held back, what passes instead of it, an error answer.
    out: Vec<u8>,
    out_at: usize,
    /// Bytes read past a line passed on through `out`, not yet looked at.
    held: Vec<u8>,
}

/// What passes for a line that ended.
enum Ending {
    /// The line, as it was read.
    AsIs,
    /// The line, then these bytes (an error answer).
    Followed(Vec<u8>),
    /// These bytes instead of the line (a tool list without its tools).
    Replaced(Vec<u8>),
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
            out: Vec::new(),
            out_at: 0,
            held: Vec::new(),
        }
    }

    /// A line ended: `line` is the whole of it when it was kept (`None`
    /// for one that outgrew [`MAX_NOTED_LINE`]). Says what passes for it.
    fn ended(&mut self, line: Option<&[u8]>) -> Ending {
        let scan = std::mem::take(&mut self.scan);
        self.skipping = false;
        let unreadable = scan.unreadable(line);
        // Only the answer to a `tools/list` request this session sent.
        static TOOLS: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new(b"\"tools\""));
        if unreadable.is_none()
            && let Some(line) = line
            && TOOLS.find(line).is_some()
            && let Some(id) = scan.answered()
            && self.tap.expected_list(&id)
            && let Some(read) = lines::read_tools(line)
        {
            self.tap.listed(id, read.tools);
            return Ending::Replaced(read.line);
        }
        if let Some(line) = line {
            self.tap.note_message(line);
        }
        let Some(why) = unreadable else {
            return Ending::AsIs;
        };
        let Some(id) = scan.answered() else {
            return Ending::AsIs;
        };
        tracing::warn!(server = %self.server, why = %why,
            "a message from the server could not be read");
        // A tool list that only some of its tools spoil loses only those.
        match line.and_then(lines::without_unreadable_tools) {
            Some(salvaged) => {
                let line = salvaged.line;
                self.tap.note_message(&line[..line.len() - 1]);
                self.tap.left_out(salvaged.left_out);
                Ending::Followed(line)
            }
            None => Ending::Followed(lines::answer(&id, &why, &self.server)),
        }
    }

    /// Looks at the bytes read into `buf` after `before`. The whole lines
    /// among them pass where they lie, up to one that passes otherwise (held
    /// back, replaced or followed by an answer): what passes for that one
    /// goes to `out`, and the bytes after it wait in `held`. `false` when
    /// none of the bytes pass where they lie.
    fn look(&mut self, buf: &mut ReadBuf<'_>, before: usize) -> bool {
        let mut at = before;
        loop {
            let rest = &buf.filled()[at..];
            if rest.is_empty() {
                return at > before;
            }
            let end = memchr::memchr(b'\n', rest);
            let body = &rest[..end.unwrap_or(rest.len())];
            self.scan.push(body);
            if self.skipping {
                // Passes where it lies.
                let Some(end) = end else {
                    return true;
                };
                at += end + 1;
                if let Ending::Followed(answer) = self.ended(None) {
                    self.hold_after(buf, at, answer);
                    return true;
                }
                continue;
            }
            let Some(end) = end else {
                // An unfinished line: held back, unless it grew too long.
                if self.line.len() + rest.len() > MAX_NOTED_LINE {
                    self.skipping = true;
                    if self.line.is_empty() {
                        return true;
                    }
                    let mut out = std::mem::take(&mut self.line);
                    out.extend_from_slice(rest);
                    let read = buf.filled().len();
                    self.hold_after_line(buf, at, read, out);
                    return at > before;
                }
                self.line.extend_from_slice(rest);
                buf.set_filled(at);
                return at > before;
            };
            if self.line.is_empty() {
                // A whole line in this read: looked at where it lies.
                let line_end = at + end + 1;
                match self.ended(Some(&buf.filled()[at..at + end])) {
                    Ending::AsIs => at = line_end,
                    Ending::Followed(answer) => {
                        self.hold_after(buf, line_end, answer);
                        return true;
                    }
                    Ending::Replaced(instead) => {
                        self.hold_after_line(buf, at, line_end, instead);
                        return at > before;
                    }
                }
                continue;
            }
            // The end of a line held back: it passes through `out`.
            self.line.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.line);
            let out = match self.ended(Some(&line)) {
                Ending::AsIs => with_line_feed(line),
                Ending::Followed(answer) => {
                    let mut out = with_line_feed(line);
                    out.extend_from_slice(&answer);
                    out
                }
                Ending::Replaced(instead) => instead,
            };
            self.hold_after_line(buf, at, at + end + 1, out);
            return at > before;
        }
    }

    /// The bytes of `buf` from `at` on wait in `held`; `out` passes first.
    fn hold_after(&mut self, buf: &mut ReadBuf<'_>, at: usize, out: Vec<u8>) {
        self.hold_after_line(buf, at, at, out);
    }

    /// The bytes of `buf` from `from` on leave it: those from `to` on wait
    /// in `held` (before what waited there already); `out` passes first.
    fn hold_after_line(&mut self, buf: &mut ReadBuf<'_>, from: usize, to: usize, out: Vec<u8>) {
        let mut held = buf.filled()[to..].to_vec();
        held.append(&mut self.held);
        self.held = held;
        buf.set_filled(from);
        self.out = out;
        self.out_at = 0;
    }
}

/// `line` with its line feed put back.
fn with_line_feed(mut line: Vec<u8>) -> Vec<u8> {
    line.push(b'\n');
    line
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            if this.out_at < this.out.len() {
                let n = (this.out.len() - this.out_at).min(buf.remaining());
                buf.put_slice(&this.out[this.out_at..this.out_at + n]);
                this.out_at += n;
                if this.out_at == this.out.len() {
                    this.out_at = 0;
                    this.out.clear();
                    if this.out.capacity() > KEPT_LINE_CAPACITY {
                        // A long line (a large tool list) leaves no buffer behind.
                        this.out = Vec::new();
                    }
                }
                return Poll::Ready(Ok(()));
            }
            let before = buf.filled().len();
            if this.held.is_empty() {
                std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
                if buf.filled().len() == before {
                    // The end: a last line without a line feed passes as it is.
                    if this.line.is_empty() {
                        return Poll::Ready(Ok(()));
                    }
                    this.out = std::mem::take(&mut this.line);
                    this.scan = LineScan::default();
                    continue;
                }
            } else {
                let n = this.held.len().min(buf.remaining());
                buf.put_slice(&this.held[..n]);
                this.held.drain(..n);
            }
            if this.look(buf, before) {
                return Poll::Ready(Ok(()));
            }
        }
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

    #[tokio::test]
    async fn a_line_that_outgrows_what_the_tap_holds_passes_whole_and_in_order() {
        // Held back as it comes, then passed on once it is too long to
        // hold: what was held first, then the rest as it comes.
        let mut lines =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":""#.to_vec();
        lines.extend((0..MAX_NOTED_LINE + 100).map(|i| b'a' + (i % 26) as u8));
        lines.extend_from_slice(b"\"}]}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
        let (mut write, read) = tokio::io::duplex(1 << 16);
        let mut reader = TapReader::new(read, Tap::default(), "s");
        let sent = lines.clone();
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            write.write_all(&sent).await.unwrap();
        });
        let mut passed = Vec::new();
        reader.read_to_end(&mut passed).await.unwrap();
        writer.await.unwrap();
        // The long line whole, the error answer for its request (the SDK
        // cannot take a line that long), then the next line.
        let long = lines.iter().position(|&b| b == b'\n').unwrap() + 1;
        assert!(passed[..long] == lines[..long], "the long line was changed");
        let rest = &passed[long..];
        let answer_end = rest.iter().position(|&b| b == b'\n').unwrap() + 1;
        let answer: serde_json::Value = serde_json::from_slice(&rest[..answer_end]).unwrap();
        assert_eq!(answer["id"], 1);
        assert_eq!(&rest[answer_end..], &lines[long..]);
    }

    #[tokio::test]
    async fn a_tool_list_passes_without_its_tools_which_the_tap_keeps() {
        let list = r#"{"jsonrpc":"2.0","id":"l1","result":{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"b","inputSchema":{}}]}}"#;
        let lines = format!(
            "{list}\n{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
            // No request of this session's: passed on as it is.
            r#"{"jsonrpc":"2.0","id":"other","result":{"tools":[{"name":"c","inputSchema":{}}]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        );
        for cut in [1, 7, 64, 4096] {
            let (mut write, read) = tokio::io::duplex(cut);
            let tap = Tap::default();
            tap.expect_list(serde_json::json!("l1"));
            let mut reader = TapReader::new(read, tap.clone(), "s");
            let sent = lines.clone();
            let writer = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                write.write_all(sent.as_bytes()).await.unwrap();
            });
            let mut passed = String::new();
            reader.read_to_string(&mut passed).await.unwrap();
            writer.await.unwrap();
            let expected = lines.replacen(
                list,
                r#"{"jsonrpc":"2.0","id":"l1","result":{"tools":[]}}"#,
                1,
            );
            assert_eq!(passed, expected, "cut at {cut}");
            assert_eq!(tap.take_listed(&serde_json::json!("other")), None);
            let tools = tap.take_listed(&serde_json::json!("l1")).unwrap();
            assert_eq!(tools.len(), 2);
            assert_eq!(tools[1].input_schema, serde_json::json!({}));
            assert!(tap.runs_as_task("a"));
            // Taken once.
            assert_eq!(tap.take_listed(&serde_json::json!("l1")), None);
        }
    }
}
