//! [`McpClient`]: a live MCP server behind the [`Server`] trait, whose
//! session is started again when it ends.
//!
//! A session ends when a stdio server's process exits or an HTTP server's
//! connection is gone for good (a server that only lost the session, HTTP 404,
//! is given a new one by the SDK itself, transparently). The next listing or
//! call then starts a new session, with backoff and bounded attempts
//! ([`Reconnect`]); a server that does not come back is down, and calls and
//! listings fail at once until it is tried again. Each change of state is a
//! `tracing` event and bumps [`Server::tools_version`], so a source lists the
//! server again: a down server's tools leave the listing, a server that came
//! back is listed anew. A call that was in flight when the session ended is
//! answered [`ErrorKind::Interrupted`] and never sent again here.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use rmcp::model::ErrorCode;
use rmcp::service::{RoleClient, ServiceError};
use rmcp::transport::IntoTransport;
use serde_json::{Map, Value};

use super::convert::call_tool_response;
use super::options::ClientOptions;
use super::session::{Process, Session, Shared};
use super::stdio::{self, Tap};
use super::tasks::{Generation, TaskCall};
use futures_util::FutureExt;
use tracing::Instrument;

use crate::config::ServerConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Answerer, BoxFuture, CallContext, Handlers, Server, ServerState, ToolsPage};
use crate::mcp::{CallToolResponse, Catalog, GetPromptResult, Page, ReadResourceResult, TaskState};
use crate::telemetry::SpanName;

/// How long closing a session waits for the cancel notices on their way.
const OWED_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// How a client starts a session again.
#[derive(Debug, Clone)]
enum Connector {
    /// Spawn the process again, or connect again.
    Config(ServerConfig),
    /// The application gave a transport: it cannot be made again.
    Given,
}

/// The client's state and when a down server may be tried again.
struct Status {
    state: ServerState,
    /// The session in use (a number that grows with each new one).
    session: u64,
    /// Set while down after failed tries: not tried again before.
    retry_at: Option<Instant>,
}

/// A live MCP server, through the official Rust SDK (the `rmcp` feature).
///
/// Dropping the client ends the session (and kills a spawned server).
///
/// [`McpClient`] implements [`Server`](crate::Server) over an rmcp
/// session: it spawns a stdio server ([`McpClient::spawn`]) or connects to a
/// streamable HTTP one ([`McpClient::connect_http`], the `rmcp-http`
/// feature), starts the session ([`Lifecycle`](crate::client::Lifecycle):
/// `server/discover` for MCP 2026-07-28, `initialize` for earlier
/// revisions), lists its tools one page per call, with their cache hints, and
/// calls tools. It counts the server's `notifications/tools/list_changed` in
/// [`Server::tools_version`](crate::Server::tools_version), read from a
/// `subscriptions/listen` stream on a 2026-07-28 session. For each call it
///
/// - sends [`CallContext::meta`](crate::exec::CallContext::meta) as the
///   request's `_meta` (the SDK adds a `progressToken` to every request);
/// - declares what the call's handlers answer on a 2026-07-28 session, passes
///   a round's answers ([`CallContext::input_responses`](crate::exec::CallContext::input_responses),
///   [`CallContext::request_state`](crate::exec::CallContext::request_state)) and
///   the server's `input_required` answer through, and answers the requests
///   the server sends during the call with the call's
///   [`Answerer`](crate::exec::Answerer);
/// - follows a call the server runs as a task to its end;
/// - routes the server's `notifications/progress` for that token to
///   [`CallContext::progress`](crate::exec::CallContext::progress);
/// - sends `notifications/cancelled` when the call's future is dropped before
///   the answer arrives (a timeout in [`Source::execute_tool_calls`](crate::Source::execute_tool_calls));
/// - answers [`ErrorKind::Interrupted`] when the server exits or the
///   connection closes before it answered, so a crashed server never leaves a
///   call hanging, and never sends it again.
///
/// When the session ends, the next listing or call starts a new one
/// ([`ClientOptions::reconnect`]); [`state`](Self::state) says where the
/// server is.
///
/// [`HubConfig::connect`](crate::HubConfig::connect) starts every
/// server of a configuration and returns a [`SourceBuilder`](crate::exec::SourceBuilder).
/// `From`/`TryFrom` impls turn the SDK's `Tool`, `CallToolResult` and
/// `ContentBlock` into this crate's types and back.
pub struct McpClient {
    pub(super) name: String,
    options: ClientOptions,
    connector: Connector,
    shared: Shared,
    /// `None` until a first session started (a server that failed to start).
    session: Mutex<Option<Arc<Session>>>,
    status: Arc<Mutex<Status>>,
    /// Held while a new session is started, so that one start serves every caller.
    restarting: tokio::sync::Mutex<()>,
    /// Tools that run only as tasks (MCP 2025-11-25), learnt from their refusals.
    tasks_only: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Connects to the server `config` describes; `name` is used in errors.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`] when the server cannot be started or reached,
    /// does not complete the handshake within [`ClientOptions::init_timeout`],
    /// or (for a URL) when the `rmcp-http` feature is off.
    pub async fn connect(
        name: &str,
        config: &ServerConfig,
        options: &ClientOptions,
    ) -> Result<Self> {
        match config {
            ServerConfig::Stdio { command, args, env } => {
                Self::spawn(name, command, args, env, options).await
            }
            ServerConfig::Http { url, headers } => {
                Self::connect_http(name, url, headers, options).await
            }
        }
    }

    /// Spawns `command args` (with `env` added) and initializes it over stdio.
    /// The server's stderr is logged at `debug` level and its last lines are
    /// quoted in start-up and crash errors. A server that exits is spawned
    /// again on the next listing or call.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn spawn(
        name: &str,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        options: &ClientOptions,
    ) -> Result<Self> {
        let connector = Connector::Config(ServerConfig::Stdio {
            command: command.to_owned(),
            args: args.to_vec(),
            env: env.clone(),
        });
        Self::first(name, connector, options).await
    }

    /// Connects to a streamable HTTP server at `url`, sending `headers` with
    /// every request (an `Authorization: Bearer` header becomes the SDK's
    /// bearer token). A connection that is gone is made again on the next
    /// listing or call. With `ClientOptions::oauth` (the `oauth` feature) and
    /// no `Authorization` header, a server that requires sign-in is signed
    /// in to (see [`OAuth`](crate::client::auth::OAuth)).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect); [`ErrorKind::Input`] for an invalid
    /// header; [`ErrorKind::Unauthorized`] when the sign-in fails.
    pub async fn connect_http(
        name: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        options: &ClientOptions,
    ) -> Result<Self> {
        let connector = Connector::Config(ServerConfig::Http {
            url: url.to_owned(),
            headers: headers.clone(),
        });
        Self::first(name, connector, options).await
    }

    /// Initializes a session over a pair of byte streams carrying
    /// newline-delimited JSON-RPC, as a stdio server's are (a process the
    /// application started itself, a socket, an in-memory pipe): read as
    /// [`spawn`](Self::spawn) reads a server's stdout, so that what the SDK's
    /// types drop (a tool's `execution`, the server's `tasks` capability) is
    /// still seen. The streams cannot be made again: once the session ends,
    /// the server is down for good.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn from_streams<R, W>(
        name: &str,
        read: R,
        write: W,
        options: &ClientOptions,
    ) -> Result<Self>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let shared = Self::shared(name, options);
        let tap = Tap::counting_sessions(shared.tools_version.clone());
        let transport = (stdio::TapReader::new(read, tap.clone(), name), write);
        let session = Session::start(name, transport, options, &shared, None, Some(tap)).await?;
        Ok(Self::with_session(
            name,
            Connector::Given,
            options,
            shared,
            session,
        ))
    }

    /// Initializes a session over any transport the SDK accepts (see
    /// [`from_streams`](Self::from_streams) for byte streams). The transport
    /// cannot be made again: once the session ends, the server is down for good.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn from_transport<T, E, A>(
        name: &str,
        transport: T,
        options: &ClientOptions,
    ) -> Result<Self>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let shared = Self::shared(name, options);
        let session = Session::start(name, transport, options, &shared, None, None).await?;
        Ok(Self::with_session(
            name,
            Connector::Given,
            options,
            shared,
            session,
        ))
    }

    fn shared(name: &str, options: &ClientOptions) -> Shared {
        let shared = Shared::default();
        shared
            .calls
            .set_outside(Answerer::standalone(options.handlers.clone(), name));
        shared
    }

    async fn first(name: &str, connector: Connector, options: &ClientOptions) -> Result<Self> {
        let shared = Self::shared(name, options);
        let session = start(name, &connector, options, &shared).await?;
        Ok(Self::with_session(
            name, connector, options, shared, session,
        ))
    }

    /// A client for a server that failed to start: down, with `error`,
    /// and tried again once [`Reconnect::retry_after`](crate::client::Reconnect::retry_after)
    /// has passed.
    pub(crate) fn unstarted(
        name: &str,
        config: &ServerConfig,
        options: &ClientOptions,
        error: &Error,
    ) -> Self {
        let connector = Connector::Config(config.clone());
        let status = Status {
            state: ServerState::Down {
                error: error.message_with_causes(),
                since: SystemTime::now(),
            },
            session: 0,
            retry_at: Some(Instant::now() + options.reconnect.retry_after),
        };
        McpClient {
            name: name.to_owned(),
            options: options.clone(),
            connector,
            shared: Self::shared(name, options),
            session: Mutex::new(None),
            status: Arc::new(Mutex::new(status)),
            restarting: tokio::sync::Mutex::new(()),
            tasks_only: Mutex::default(),
        }
    }

    fn with_session(
        name: &str,
        connector: Connector,
        options: &ClientOptions,
        shared: Shared,
        session: Session,
    ) -> Self {
        let status = Arc::new(Mutex::new(Status {
            state: ServerState::Up,
            session: 1,
            retry_at: None,
        }));
        let client = McpClient {
            name: name.to_owned(),
            options: options.clone(),
            connector,
            shared,
            session: Mutex::new(Some(Arc::new(session))),
            status,
            restarting: tokio::sync::Mutex::new(()),
            tasks_only: Mutex::default(),
        };
        client.watch_end(1);
        client
    }

    /// The name given when connecting.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the server is: up, being started again, or down (with the last
    /// error and since when).
    pub fn state(&self) -> ServerState {
        self.status
            .lock()
            .map(|s| s.state.clone())
            .unwrap_or(ServerState::Up)
    }

    /// What the server said about itself in `server/discover` or
    /// `initialize` (its `serverInfo`, capabilities, the protocol version in
    /// use and instructions), as JSON.
    pub fn server_info(&self) -> Option<Value> {
        self.current()?.server_info()
    }

    /// Whether the session has ended (the server exited or the connection
    /// closed); the next listing or call starts a new one.
    pub fn is_closed(&self) -> bool {
        self.current().is_none_or(|s| s.is_closed())
    }

    /// Ends the session and waits for it to close (a spawned server is
    /// asked to exit, then killed), once the cancel notices of calls
    /// dropped meanwhile have gone out.
    pub async fn close(self) {
        self.owed_sent().await;
        let session = self.current();
        drop(self);
        if let Some(Ok(session)) = session.map(Arc::try_unwrap) {
            session.close().await;
        }
    }

    /// Waits (at most [`OWED_WITHIN`]) for the cancel notices on their way
    /// to the server to go out.
    async fn owed_sent(&self) {
        let owed = &self.shared.owed;
        owed.close();
        if tokio::time::timeout(OWED_WITHIN, owed.wait())
            .await
            .is_err()
        {
            tracing::debug!(server = %self.name, left = owed.len(),
                "cancel notices still unsent when the session was closed");
        }
        owed.reopen();
    }

    fn current(&self) -> Option<Arc<Session>> {
        match self.session.lock() {
            Ok(session) => session.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Marks the server down when session `id` ends, unless a newer one
    /// replaced it meanwhile.
    fn watch_end(&self, id: u64) {
        let Some(mut ended) = self.current().map(|s| s.ended()) else {
            return;
        };
        let status = Arc::downgrade(&self.status);
        let version = self.shared.tools_version.clone();
        let name = self.name.clone();
        tokio::spawn(async move {
            if ended.wait_for(|e| *e).await.is_err() {
                return;
            }
            let Some(status) = status.upgrade() else {
                return;
            };
            let Ok(mut status) = status.lock() else {
                return;
            };
            if status.session == id && status.state == ServerState::Up {
                let state = ServerState::Down {
                    error: "its session ended (the server exited or the connection closed)".into(),
                    since: SystemTime::now(),
                };
                transition(&name, &mut status, state);
                version.fetch_add(1, Ordering::SeqCst);
            }
        });
    }

    fn set_state(&self, state: ServerState) {
        if let Ok(mut status) = self.status.lock() {
            transition(&self.name, &mut status, state);
        }
    }

    /// The session to use: the current one while it lives, else a new one
    /// (see [`Reconnect`](crate::client::Reconnect)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`] when the server is down.
    async fn live_session(&self) -> Result<Arc<Session>> {
        if let Some(current) = self.current().filter(|s| !s.is_closed()) {
            return Ok(current);
        }
        // Starting a session is a large future: boxed, so that every
        // request's own future stays small while the session lives.
        Box::pin(self.restart_session()).await
    }

    /// [`McpClient::live_session`] once the current session has ended: a
    /// new one, started by one caller at a time.
    async fn restart_session(&self) -> Result<Arc<Session>> {
        let _one = self.restarting.lock().await;
        let current = self.current();
        if let Some(current) = current.clone().filter(|s| !s.is_closed()) {
            return Ok(current);
        }
        let (state, retry_at) = match self.status.lock() {
            Ok(status) => (status.state.clone(), status.retry_at),
            Err(_) => (ServerState::Up, None),
        };
        if let (ServerState::Down { error, .. }, Some(at)) = (&state, retry_at)
            && Instant::now() < at
        {
            return Err(self.down(error));
        }
        let reconnect = self.options.reconnect;
        if matches!(self.connector, Connector::Given) || reconnect.attempts == 0 {
            let why = match self.connector {
                Connector::Given => {
                    "its session ended, and a transport the application gave cannot be made again"
                }
                _ => "its session ended, and it is not started again (Reconnect::never)",
            };
            self.mark_down(why.to_owned(), None);
            return Err(self.down(&format!(
                "{why}{}",
                current.map(|s| s.stderr()).unwrap_or_default()
            )));
        }
        let mut last = String::new();
        for attempt in 1..=reconnect.attempts {
            self.set_state(ServerState::Reconnecting { attempt });
            match start(&self.name, &self.connector, &self.options, &self.shared).await {
                Ok(session) => {
                    let session = Arc::new(session);
                    if let Ok(mut slot) = self.session.lock() {
                        *slot = Some(session.clone());
                    }
                    let id = match self.status.lock() {
                        Ok(mut status) => {
                            status.session += 1;
                            status.retry_at = None;
                            transition(&self.name, &mut status, ServerState::Up);
                            status.session
                        }
                        Err(_) => 0,
                    };
                    self.watch_end(id);
                    // Listed again: its tools may have changed.
                    self.shared.tools_version.fetch_add(1, Ordering::SeqCst);
                    return Ok(session);
                }
                Err(e) => {
                    last = e.message_with_causes();
                    if attempt < reconnect.attempts {
                        tokio::time::sleep(reconnect.wait(attempt)).await;
                    }
                }
            }
        }
        self.mark_down(last.clone(), Some(Instant::now() + reconnect.retry_after));
        Err(self.down(&last))
    }

    fn mark_down(&self, error: String, retry_at: Option<Instant>) {
        if let Ok(mut status) = self.status.lock() {
            status.retry_at = retry_at;
            let state = ServerState::Down {
                error,
                since: SystemTime::now(),
            };
            transition(&self.name, &mut status, state);
        }
        self.shared.tools_version.fetch_add(1, Ordering::SeqCst);
    }

    /// The error of a call or listing while the server is down with `error`.
    pub(super) fn down(&self, error: &str) -> Error {
        // The start-up errors name the server already.
        let own = format!("server `{}`: ", self.name);
        let error = error.strip_prefix(&own).unwrap_or(error);
        Error::new(
            ErrorKind::Unavailable,
            format!("server `{}` is down: {error}", self.name),
        )
    }

    /// Whether a working task of a call answered by `answerer` is handed
    /// back rather than followed: the call's turn may be suspended, and the
    /// server's tasks outlive this process (those of a server reached over
    /// HTTP do; a server this process started, over stdio, ends with it,
    /// and so do its tasks).
    pub(super) fn hands_back(&self, answerer: &Answerer) -> bool {
        answerer.may_suspend()
            && matches!(self.connector, Connector::Config(ServerConfig::Http { .. }))
    }

    /// Who answers what the server asks during a call made with `context`:
    /// the call's answerer, else the one attached for questions outside
    /// calls, else none but the defaults.
    fn answerer_for(&self, context: &CallContext) -> Answerer {
        context
            .answerer
            .clone()
            .or_else(|| self.shared.calls.outside())
            .unwrap_or_else(|| Answerer::standalone(Handlers::default(), &self.name))
    }

    /// Whether a call of `tool` is sent as a task (MCP 2025-11-25).
    fn needs_task(&self, session: &Session, tool: &str) -> bool {
        self.tasks_only.lock().is_ok_and(|set| set.contains(tool)) || session.runs_as_task(tool)
    }

    pub(super) fn remember_task(&self, tool: &str) {
        if let Ok(mut set) = self.tasks_only.lock() {
            set.insert(tool.to_owned());
        }
    }
}

/// Records a change of state, with a `tracing` event.
fn transition(name: &str, status: &mut Status, state: ServerState) {
    if status.state == state {
        return;
    }
    match &state {
        ServerState::Down { error, .. } => {
            tracing::warn!(server = %name, from = %status.state, error = %error, "MCP server is down");
        }
        _ => {
            tracing::info!(server = %name, from = %status.state, to = %state, "MCP server state changed")
        }
    }
    status.state = state;
}

/// Starts a session as `connector` says.
async fn start(
    name: &str,
    connector: &Connector,
    options: &ClientOptions,
    shared: &Shared,
) -> Result<Session> {
    match connector {
        Connector::Config(ServerConfig::Stdio { command, args, env }) => {
            let spawned = stdio::spawn(name, command, args, env)?;
            let process = Process {
                command: command_line(command, args),
                stderr: spawned.stderr,
                child: spawned.child,
            };
            Session::start(
                name,
                spawned.transport,
                options,
                shared,
                Some(process),
                Some(spawned.tap),
            )
            .await
        }
        Connector::Config(ServerConfig::Http { url, headers }) => {
            start_http(name, url, headers, options, shared).await
        }
        Connector::Given => Err(Error::new(
            ErrorKind::Unavailable,
            format!("server `{name}`: its transport cannot be made again"),
        )),
    }
}

/// `command args` as a person would type it in a shell, for errors.
fn command_line(command: &str, args: &[String]) -> String {
    let words = std::iter::once(command).chain(args.iter().map(String::as_str));
    // Quoting fails only on a NUL byte, which no process argument holds.
    shlex::try_join(words.clone()).unwrap_or_else(|_| words.collect::<Vec<_>>().join(" "))
}

#[cfg(feature = "rmcp-http")]
async fn start_http(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    options: &ClientOptions,
    shared: &Shared,
) -> Result<Session> {
    let tap = || Tap::counting_sessions(shared.tools_version.clone());
    super::http::connect(name, url, headers, options, tap, |transport, tap| {
        Session::start(name, transport, options, shared, None, Some(tap))
    })
    .await
}

#[cfg(not(feature = "rmcp-http"))]
async fn start_http(
    name: &str,
    url: &str,
    _headers: &BTreeMap<String, String>,
    _options: &ClientOptions,
    _shared: &Shared,
) -> Result<Session> {
    Err(Error::new(
        ErrorKind::Unavailable,
        format!(
            "server `{name}`: `{url}` is an HTTP server; build mcp-adapters with the `rmcp-http` feature to reach it"
        ),
    ))
}

/// What a request is about: its span's name ends with it, and (but for a
/// task, named by its tool) an attribute says it.
#[derive(Clone, Copy)]
enum Subject<'a> {
    None,
    Tool(&'a str),
    Task(&'a str),
    Resource(&'a str),
    Prompt(&'a str),
}

impl<'a> Subject<'a> {
    fn tool(self) -> Option<&'a str> {
        match self {
            Subject::Tool(name) => Some(name),
            _ => None,
        }
    }

    fn resource(self) -> Option<&'a str> {
        match self {
            Subject::Resource(uri) => Some(uri),
            _ => None,
        }
    }

    fn prompt(self) -> Option<&'a str> {
        match self {
            Subject::Prompt(name) => Some(name),
            _ => None,
        }
    }
}

impl McpClient {
    /// The span of one request to the server, by OpenTelemetry's conventions
    /// (see [`telemetry`](crate::telemetry)): `{method} {target}`, kind client.
    fn request_span(&self, method: &'static str, subject: Subject<'_>) -> tracing::Span {
        let transport = match &self.connector {
            Connector::Config(ServerConfig::Stdio { .. }) => "pipe",
            Connector::Config(_) => "tcp",
            Connector::Given => "",
        };
        // The name and transport are given here, where a subscriber reads
        // them once, rather than recorded afterwards (each `record` is
        // another visit of the span's data); the name is only put together
        // when a subscriber takes the span.
        let target = match subject {
            Subject::None => "",
            Subject::Tool(name)
            | Subject::Task(name)
            | Subject::Resource(name)
            | Subject::Prompt(name) => name,
        };
        tracing::info_span!(
            "mcp.client.request",
            otel.name = &*SpanName::new(method, target).text(),
            otel.kind = "client",
            mcp.method.name = method,
            gen_ai.tool.name = subject.tool(),
            mcp.resource.uri = subject.resource(),
            gen_ai.prompt.name = subject.prompt(),
            mcp.protocol.version = tracing::field::Empty,
            network.transport = (!transport.is_empty()).then_some(transport),
            mcp_adapters.server = self.name.as_str(),
            error.r#type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    }

    /// `request` in `span`, its failure and its duration recorded. A
    /// combinator rather than an `async fn`, so that the request's future is
    /// held once, not once as an argument and again as it is awaited.
    fn traced<'a, T: 'a>(
        &self,
        span: tracing::Span,
        method: &'static str,
        tool: Option<String>,
        request: impl std::future::Future<Output = Result<T>> + 'a,
    ) -> impl std::future::Future<Output = Result<T>> + 'a {
        // The clock is read only for a span that records the duration.
        let started = (!span.is_disabled()).then(std::time::Instant::now);
        let recorder = span.clone();
        request.instrument(span).inspect(move |result| {
            if let Some(started) = started {
                if let Err(e) = result {
                    crate::telemetry::record_failure(&recorder, e);
                }
                recorder.in_scope(|| {
                    crate::telemetry::operation_duration(
                        method,
                        tool.as_deref(),
                        started,
                        result.as_ref().err(),
                    );
                });
            }
        })
    }

    /// The session to send on, its protocol version recorded on the current span.
    async fn traced_session(&self) -> Result<Arc<Session>> {
        let session = self.live_session().await?;
        let span = tracing::Span::current();
        if !span.is_disabled()
            && let Some(version) = session.protocol_version()
        {
            span.record("mcp.protocol.version", version);
        }
        Ok(session)
    }
}

impl Server for McpClient {
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.owed_sent().await;
            let session = match self.session.lock() {
                Ok(mut session) => session.take(),
                Err(poisoned) => poisoned.into_inner().take(),
            };
            // Held elsewhere (a call still running), it ends when released.
            if let Some(Ok(session)) = session.map(Arc::try_unwrap) {
                session.close().await;
            }
        })
    }

    fn list_tools(&self, cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        let span = self.request_span("tools/list", Subject::None);
        Box::pin(self.traced(span, "tools/list", None, async move {
            let session = self.traced_session().await?;
            match session
                .list_page(cursor.clone(), self.options.list_timeout)
                .await
            {
                // The server no longer knows the session: list on a new one.
                Err(_) if session.refused() => {
                    let session = self.live_session().await?;
                    session.list_page(cursor, self.options.list_timeout).await
                }
                other => other,
            }
        }))
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        let span = self.request_span("tools/call", Subject::Tool(name));
        // The tool's name is kept for telemetry only when it is recorded.
        let tool = (!span.is_disabled()).then(|| name.to_owned());
        let name = name.to_owned();
        Box::pin(self.traced(span, "tools/call", tool, async move {
            let session = self.traced_session().await?;
            // Bound first, so that the first call's future is gone before a
            // second one is made.
            let first = self.call_on(&session, &name, &arguments, &context).await;
            match first {
                // The server refused the session before it ran the call: send
                // it on a new session, once.
                Err(_) if session.refused() => {
                    tracing::info!(server = %self.name, tool = %name,
                        "the server no longer knows the session; calling again on a new one");
                    let session = self.live_session().await?;
                    self.call_on(&session, &name, &arguments, &context).await
                }
                other => other,
            }
        }))
    }

    fn resume_task(
        &self,
        tool: &str,
        task_id: &str,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        let span = self.request_span("tasks/get", Subject::Task(tool));
        let (tool, task_id) = (tool.to_owned(), task_id.to_owned());
        Box::pin(self.traced(span, "tasks/get", None, async move {
            let session = self.traced_session().await?;
            let answerer = self.answerer_for(&context);
            let registration = self.shared.calls.register(answerer.clone());
            self.take_up_task(
                &session,
                &tool,
                &task_id,
                &context,
                &answerer,
                &registration,
            )
            .await
        }))
    }

    fn read_resource(&self, uri: &str) -> BoxFuture<'_, Result<ReadResourceResult>> {
        let span = self.request_span("resources/read", Subject::Resource(uri));
        let uri = uri.to_owned();
        Box::pin(self.traced(span, "resources/read", None, async move {
            let session = self.traced_session().await?;
            session.read_resource(&uri, self.options.list_timeout).await
        }))
    }

    fn list_catalog(
        &self,
        catalog: Catalog,
        cursor: Option<String>,
    ) -> BoxFuture<'_, Result<Page>> {
        let method = catalog.method();
        let span = self.request_span(method, Subject::None);
        Box::pin(self.traced(span, method, None, async move {
            let session = self.traced_session().await?;
            session
                .list_catalog(catalog, cursor, self.options.list_timeout)
                .await
        }))
    }

    fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'_, Result<GetPromptResult>> {
        let span = self.request_span("prompts/get", Subject::Prompt(name));
        let name = name.to_owned();
        Box::pin(self.traced(span, "prompts/get", None, async move {
            let session = self.traced_session().await?;
            session
                .get_prompt(&name, arguments, self.options.list_timeout)
                .await
        }))
    }

    fn tools_version(&self) -> u64 {
        self.shared.tools_version.load(Ordering::SeqCst)
    }

    fn handlers(&self) -> Option<Handlers> {
        Some(self.options.handlers.clone())
    }

    /// Tasks of both generations are followed to their end.
    fn supports_tasks(&self) -> bool {
        true
    }

    fn attach(&self, answerer: Answerer) {
        self.shared.calls.set_outside(answerer);
    }

    fn state(&self) -> ServerState {
        McpClient::state(self)
    }

    fn defaulted(&self) -> Vec<crate::listing::Defaulted> {
        self.shared.notes.all()
    }
}

impl McpClient {
    /// A call on `session`: plain, as a task when the tool runs only as one,
    /// or followed as a task when the server makes it one.
    async fn call_on(
        &self,
        session: &Session,
        name: &str,
        arguments: &Map<String, Value>,
        context: &CallContext,
    ) -> Result<CallToolResponse> {
        {
            let answerer = self.answerer_for(context);
            // Registered before it is sent: the server may ask at once.
            let registration = self.shared.calls.register(answerer.clone());
            let call = TaskCall {
                name,
                context,
                answerer: &answerer,
                registration: &registration,
                session,
                hand_back: self.hands_back(&answerer),
            };
            let legacy = !session.is_modern();
            if legacy && self.needs_task(session, name) {
                return Box::pin(self.call_as_task(&call, arguments.clone())).await;
            }
            let what = || format!("tools/call `{name}`");
            let answer = match session.call_once(&call, arguments.clone()).await {
                Ok(answer) => answer,
                // A 2025-11-25 tool whose task support is `required` refuses a
                // call that is not a task with -32601 (and runs nothing).
                Err((ServiceError::McpError(e), _))
                    if legacy && e.code == ErrorCode::METHOD_NOT_FOUND =>
                {
                    tracing::debug!(server = %self.name, tool = %name,
                        "a plain call was refused with -32601; calling it as a task");
                    return Box::pin(self.call_as_task(&call, arguments.clone())).await;
                }
                Err((e, sent)) => return Err(session.error(&what(), e, sent)),
            };
            let response = call_tool_response(answer).map_err(|e| {
                let message = format!(
                    "server `{}` answered {}: {}",
                    self.name,
                    what(),
                    e.message()
                );
                e.with_message(message)
            })?;
            match response {
                CallToolResponse::Task(task) => {
                    let state =
                        TaskState::from_value(&serde_json::to_value(&task).unwrap_or_default())?;
                    Box::pin(self.follow_task(&call, state, Generation::Extension)).await
                }
                other => Ok(other),
            }
        }
    }
}
