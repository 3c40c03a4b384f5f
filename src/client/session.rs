//! One MCP session over the official SDK, behind the [`Server`] trait.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ErrorCode, ErrorData, Implementation,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    RequestMetaObject,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RequestContext, RequestHandle, RoleClient,
    RunningService, ServiceError,
};
use rmcp::transport::IntoTransport;
use rmcp::{ClientCacheConfig, ClientHandler, ClientLifecycleMode, ClientServiceExt};
use serde_json::{Map, Value};

use super::changes::{self, Watcher};
use super::convert::call_tool_response;
use super::requests::Calls;
use super::stdio::{self, ChildGuard, StderrTail, Tap};
use super::tasks::{Generation, TaskCall};
use crate::config::ServerConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{Answerer, BoxFuture, CallContext, ClientFeatures, Handlers, Server, ToolsPage};
use crate::mcp::{CacheScope, CallToolResponse, CreateMessageParams, Elicitation, TaskState, Tool};

/// How [`McpClient`] starts its session: the MCP lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Lifecycle {
    /// `server/discover` first (MCP 2026-07-28: per-request metadata, input
    /// rounds, list changes on a subscription); a server that answers it with
    /// an error is started with `initialize` instead, and so is one that does
    /// not answer within 10 s (the SDK's fixed wait, spent on a legacy server
    /// that ignores requests it does not know).
    #[default]
    Auto,
    /// `initialize` only (MCP 2025-11-25 and earlier): no input rounds; no wait
    /// for a legacy server that ignores `server/discover`.
    Legacy,
    /// `server/discover` only: a server that does not speak 2026-07-28 fails to start.
    Modern,
}

/// How [`McpClient`] starts and talks to a server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Bound on starting the server and its handshake (default 60 s).
    pub init_timeout: Duration,
    /// Bound on one `tools/list` page (default 60 s).
    pub list_timeout: Duration,
    /// The lifecycle ([`Lifecycle::Auto`] by default).
    pub lifecycle: Lifecycle,
    /// What the client answers when the server asks, and so declares (none
    /// by default); see [`Handlers`].
    pub handlers: Handlers,
    /// How to sign in to streamable HTTP servers that require it (none by
    /// default); see [`OAuth`](crate::OAuth).
    #[cfg(feature = "oauth")]
    pub oauth: Option<super::auth::OAuth>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            init_timeout: Duration::from_secs(60),
            list_timeout: Duration::from_secs(60),
            lifecycle: Lifecycle::Auto,
            handlers: Handlers::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }
}

impl ClientOptions {
    /// The defaults: 60 s to start, 60 s per `tools/list` page, [`Lifecycle::Auto`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`lifecycle`](Self::lifecycle).
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// Sets [`init_timeout`](Self::init_timeout).
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// Sets [`list_timeout`](Self::list_timeout).
    pub fn list_timeout(mut self, timeout: Duration) -> Self {
        self.list_timeout = timeout;
        self
    }

    /// Sets [`handlers`](Self::handlers): the client declares their
    /// capabilities (at `initialize` up to 2025-11-25, on every request from
    /// 2026-07-28) and answers the server's requests with them; give the same
    /// handlers to the source that runs the calls (a source given none takes
    /// these).
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }
}

/// Progress notifications a server may send before its call is registered.
const EARLY_PROGRESS: usize = 64;

/// Where each in-flight call's progress notifications go, by progress token.
#[derive(Default)]
struct Routes {
    inner: Mutex<RoutesInner>,
}

#[derive(Default)]
struct RoutesInner {
    active: HashMap<String, CallContext>,
    /// Notifications that arrived before their call was registered (the
    /// request is on the wire before its token is known here).
    early: VecDeque<(String, ProgressNotificationParam)>,
}

fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(&token.0).unwrap_or_default()
}

impl Routes {
    fn register(&self, token: &ProgressToken, context: CallContext) -> String {
        let key = token_key(token);
        let early = match self.inner.lock() {
            Ok(mut inner) => {
                inner.active.insert(key.clone(), context.clone());
                let (mine, rest) = std::mem::take(&mut inner.early)
                    .into_iter()
                    .partition(|(k, _)| *k == key);
                inner.early = rest;
                mine
            }
            Err(_) => VecDeque::new(),
        };
        for (_, params) in early {
            report(&context, params);
        }
        key
    }

    fn unregister(&self, key: &str) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.active.remove(key);
        }
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        let key = token_key(&params.progress_token);
        let target = match self.inner.lock() {
            Ok(mut inner) => match inner.active.get(&key) {
                Some(context) => Some(context.clone()),
                None => {
                    if inner.early.len() == EARLY_PROGRESS {
                        inner.early.pop_front();
                    }
                    inner.early.push_back((key, params.clone()));
                    None
                }
            },
            Err(_) => None,
        };
        if let Some(context) = target {
            report(&context, params);
        }
    }
}

fn report(context: &CallContext, params: ProgressNotificationParam) {
    context.report_progress(params.progress, params.total, params.message);
}

/// The SDK's client handler: announces this crate, routes progress, counts
/// tool-list changes and answers the server's requests through the answerer
/// of the call each belongs to.
#[derive(Clone)]
struct Handler {
    routes: Arc<Routes>,
    info: ClientConfig,
    tools_version: Arc<AtomicU64>,
    calls: Arc<Calls>,
}

/// The JSON-RPC error a refused request is answered with: `-1` for a
/// rejection (MCP's code for a declined sampling request), invalid params
/// for a malformed one, an internal error otherwise.
fn refusal(err: &Error) -> ErrorData {
    let code = match err.kind() {
        ErrorKind::Denied => ErrorCode(-1),
        ErrorKind::Input => ErrorCode::INVALID_PARAMS,
        _ => ErrorCode::INTERNAL_ERROR,
    };
    ErrorData::new(code, err.message_with_causes(), None)
}

/// No answerer for a request: nothing was configured to answer it.
fn unanswered(what: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("this client does not answer {what}"),
        None,
    )
}

/// Re-reads a value of one model as another, through its JSON.
fn rewrap<T: serde::Serialize, U: serde::de::DeserializeOwned>(
    value: &T,
    what: &str,
) -> std::result::Result<U, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ErrorData::internal_error(format!("cannot convert the {what}: {e}"), None))
}

impl Handler {
    /// The answerer of the call the request belongs to, when its handlers
    /// answer `what` (`answers` says whether they do).
    async fn answerer(
        &self,
        context: &RequestContext<RoleClient>,
        what: &str,
        answers: impl Fn(ClientFeatures) -> bool,
    ) -> std::result::Result<Answerer, ErrorData> {
        self.calls
            .attribute(context)
            .await
            .filter(|answerer| answers(answerer.features()))
            .ok_or_else(|| unanswered(what))
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routes.deliver(params);
    }

    /// A legacy server's (or an unscoped) `notifications/tools/list_changed`.
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_version.fetch_add(1, Ordering::SeqCst);
    }

    /// `elicitation/create` sent during a call: the input handler answers.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> std::result::Result<ElicitResult, ErrorData> {
        let answerer = self
            .answerer(&context, "elicitation", |f| {
                f.elicitation_form || f.elicitation_url
            })
            .await?;
        let params = serde_json::to_value(&request).map_err(|e| {
            ErrorData::internal_error(format!("cannot read the request: {e}"), None)
        })?;
        let crate::mcp::InputRequest::Elicitation(elicitation) =
            crate::mcp::InputRequest::from_value(
                serde_json::json!({"method": "elicitation/create", "params": params}),
            )
        else {
            return Err(ErrorData::invalid_params(
                "the elicitation is neither a form nor a URL",
                None,
            ));
        };
        let elicitation: Elicitation = elicitation;
        let answer = answerer
            .elicit(&context.id.to_string(), elicitation)
            .await
            .map_err(|e| refusal(&e))?;
        rewrap(&answer, "elicitation answer")
    }

    /// `sampling/createMessage` sent during a call: the sampling handler
    /// answers, under the sampling rules.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> std::result::Result<rmcp::model::CreateMessageResult, ErrorData> {
        let answerer = self.answerer(&context, "sampling", |f| f.sampling).await?;
        let wire = serde_json::to_value(&params).map_err(|e| {
            ErrorData::internal_error(format!("cannot read the request: {e}"), None)
        })?;
        let params = CreateMessageParams::from_value(wire).map_err(|e| refusal(&e))?;
        let answer = answerer.sample(params).await.map_err(|e| refusal(&e))?;
        rewrap(&answer, "sampling answer")
    }

    /// `roots/list`: the configured roots.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> std::result::Result<rmcp::model::ListRootsResult, ErrorData> {
        let answerer = self.answerer(&context, "roots/list", |f| f.roots).await?;
        let roots = answerer.list_roots().map_err(|e| refusal(&e))?;
        rewrap(&roots, "roots")
    }
}

/// A live MCP server, through the official Rust SDK (the `rmcp` feature).
///
/// Dropping the client ends the session (and kills a spawned server).
///
/// [`McpClient`] implements [`Server`](crate::Server) over an rmcp
/// session: it spawns a stdio server ([`McpClient::spawn`]) or connects to a
/// streamable HTTP one ([`McpClient::connect_http`], the `rmcp-http`
/// feature), starts the session ([`Lifecycle`]: `server/discover` for MCP
/// 2026-07-28, `initialize` for earlier revisions), lists its tools one page
/// per call, with their cache hints, and calls tools. It counts the server's
/// `notifications/tools/list_changed` in
/// [`Server::tools_version`](crate::Server::tools_version), read from a
/// `subscriptions/listen` stream on a 2026-07-28 session. For each call it
///
/// - sends [`CallContext::meta`](crate::CallContext::meta) as the
///   request's `_meta` (the SDK adds a `progressToken` to every request);
/// - on a 2026-07-28 session, declares form elicitation, and passes a round's
///   answers ([`CallContext::input_responses`](crate::CallContext::input_responses),
///   [`CallContext::request_state`](crate::CallContext::request_state)) and
///   the server's `input_required` answer through;
/// - routes the server's `notifications/progress` for that token to
///   [`CallContext::progress`](crate::CallContext::progress);
/// - sends `notifications/cancelled` when the call's future is dropped before
///   the answer arrives (a timeout in [`Source::execute_tool_calls`](crate::Source::execute_tool_calls));
/// - answers [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) when the
///   server exits or the connection closes before it answered, so a crashed
///   server never leaves a call hanging.
///
/// [`HubConfig::connect`](crate::HubConfig::connect) starts every
/// server of a configuration and returns a [`SourceBuilder`](crate::SourceBuilder).
/// `From`/`TryFrom` impls turn the SDK's `Tool`, `CallToolResult` and
/// `ContentBlock` into this crate's types and back.
pub struct McpClient {
    pub(super) name: String,
    service: RunningService<RoleClient, Handler>,
    routes: Arc<Routes>,
    /// A spawned server's process and stderr.
    process: Option<Process>,
    /// What the SDK's types drop of the server's messages, where it can be seen.
    tap: Option<Tap>,
    options: ClientOptions,
    tools_version: Arc<AtomicU64>,
    /// The calls in flight, for the requests the server sends during them.
    calls: Arc<Calls>,
    /// Tools that run only as tasks (MCP 2025-11-25), learnt from their refusals.
    tasks_only: Mutex<std::collections::HashSet<String>>,
    /// Reads the `subscriptions/listen` stream for list changes (2026-07-28).
    _watcher: Option<Watcher>,
    /// Tells the server when the roots change (up to 2025-11-25).
    _roots: Option<AbortOnDrop>,
}

/// A spawned server: killed when its client is dropped.
struct Process {
    stderr: StderrTail,
    child: ChildGuard,
}

/// A background task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name)
            .field("closed", &self.service.is_closed())
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
    /// quoted in start-up and crash errors.
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
        let spawned = stdio::spawn(name, command, args, env)?;
        let tail = spawned.stderr.clone();
        let process = Process {
            stderr: spawned.stderr,
            child: spawned.child,
        };
        Self::start(
            name,
            spawned.transport,
            options,
            Some(process),
            Some(spawned.tap),
        )
        .await
        .map_err(|err| {
            let message = format!("{}{}", err.message(), tail.describe());
            err.with_message(message)
        })
    }

    /// Connects to a streamable HTTP server at `url`, sending `headers` with
    /// every request (an `Authorization: Bearer` header becomes the SDK's
    /// bearer token). With [`ClientOptions::oauth`] (the `oauth` feature) and
    /// no `Authorization` header, a server that requires sign-in is signed in to.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect); [`ErrorKind::Input`] for an invalid
    /// header; [`ErrorKind::Unauthorized`] when the sign-in fails.
    #[cfg(feature = "rmcp-http")]
    pub async fn connect_http(
        name: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        options: &ClientOptions,
    ) -> Result<Self> {
        super::http::connect(name, url, headers, options, |transport, tap| {
            Self::start(name, transport, options, None, Some(tap))
        })
        .await
    }

    /// Without the `rmcp-http` feature: always an error saying so.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unavailable`], naming the feature.
    #[cfg(not(feature = "rmcp-http"))]
    pub async fn connect_http(
        name: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
        options: &ClientOptions,
    ) -> Result<Self> {
        let _ = (headers, options);
        Err(Error::new(
            ErrorKind::Unavailable,
            format!(
                "server `{name}`: `{url}` is an HTTP server; build mcp-adapters with the `rmcp-http` feature to reach it"
            ),
        ))
    }

    /// Initializes a session over a pair of byte streams carrying
    /// newline-delimited JSON-RPC, as a stdio server's are (a process the
    /// application started itself, a socket, an in-memory pipe): read as
    /// [`spawn`](Self::spawn) reads a server's stdout, so that what the SDK's
    /// types drop (a tool's `execution`, the server's `tasks` capability) is
    /// still seen.
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
        let tap = Tap::default();
        let transport = (stdio::TapReader::new(read, tap.clone()), write);
        Self::start(name, transport, options, None, Some(tap)).await
    }

    /// Initializes a session over any transport the SDK accepts (see
    /// [`from_streams`](Self::from_streams) for byte streams).
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
        Self::start(name, transport, options, None, None).await
    }

    async fn start<T, E, A>(
        name: &str,
        transport: T,
        options: &ClientOptions,
        process: Option<Process>,
        tap: Option<Tap>,
    ) -> Result<Self>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let routes = Arc::new(Routes::default());
        let tools_version = Arc::new(AtomicU64::new(0));
        let calls = Arc::new(Calls::default());
        calls.set_outside(Answerer::standalone(options.handlers.clone(), name));
        // The session declares what the handlers answer (at `initialize`; a
        // 2026-07-28 session on every request, where each `tools/call`
        // declares its source's, see `call_capabilities`).
        let mut info = ClientConfig::new(
            capabilities(options.handlers.features(), true, false),
            Implementation::new("mcp-adapters", env!("CARGO_PKG_VERSION")),
        );
        if options.lifecycle == Lifecycle::Legacy {
            // The newest revision that starts with `initialize`.
            info.protocol_version = ProtocolVersion::V_2025_11_25;
        }
        let handler = Handler {
            routes: routes.clone(),
            info,
            tools_version: tools_version.clone(),
            calls: calls.clone(),
        };
        let unavailable = |message: String| {
            Error::new(
                ErrorKind::Unavailable,
                format!("server `{name}`: {message}"),
            )
        };
        let modern = vec![ProtocolVersion::V_2026_07_28];
        let lifecycle = match options.lifecycle {
            Lifecycle::Auto => ClientLifecycleMode::Auto {
                preferred_versions: modern,
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Lifecycle::Legacy => ClientLifecycleMode::Initialize,
            Lifecycle::Modern => ClientLifecycleMode::Discover {
                preferred_versions: modern,
            },
        };
        let started = std::time::Instant::now();
        let service = tokio::time::timeout(
            options.init_timeout,
            handler.serve_with_lifecycle(transport, lifecycle),
        )
        .await
        .map_err(|_| {
            unavailable(format!(
                "no answer to the handshake (`server/discover`, `initialize`) within {} ms",
                options.init_timeout.as_millis()
            ))
        })?
        .map_err(|e| unavailable("initialization failed".into()).with_source(e))?;
        let peer = service.peer().clone();
        // This crate keeps the tool lists itself (see `Source::toolset`), so
        // that a refresh always asks the server and a failure is reported.
        peer.set_response_cache_config(ClientCacheConfig::disabled())
            .await;
        let remaining = options.init_timeout.saturating_sub(started.elapsed());
        let watcher = changes::watch(name, &peer, tools_version.clone(), remaining).await;
        let legacy = peer
            .peer_info()
            .is_none_or(|info| info.protocol_version.has_initialize());
        let roots = match options.handlers.roots_list() {
            Some(roots) if legacy => Some(announce_roots(name, &peer, roots.watch())),
            _ => None,
        };
        Ok(McpClient {
            name: name.to_owned(),
            service,
            routes,
            process,
            tap,
            options: options.clone(),
            tools_version,
            calls,
            tasks_only: Mutex::default(),
            _watcher: watcher,
            _roots: roots,
        })
    }

    /// The name given when connecting.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the server said about itself in `server/discover` or
    /// `initialize` (its `serverInfo`, capabilities, the protocol version in
    /// use and instructions), as JSON.
    pub fn server_info(&self) -> Option<Value> {
        self.service
            .peer_info()
            .and_then(|info| serde_json::to_value(&*info).ok())
    }

    /// Whether the session has ended (the server exited or the connection closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Ends the session and waits for it to close (a spawned server is
    /// asked to exit, then killed).
    pub async fn close(mut self) {
        let _ = self.service.close().await;
        if let Some(process) = self.process.take() {
            process.child.close().await;
        }
    }

    /// Whether the session is 2026-07-28 or later (per-request metadata, input rounds).
    pub(super) fn is_modern(&self) -> bool {
        self.service
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize())
    }

    /// The session's peer, to send requests on.
    pub(super) fn peer(&self) -> &rmcp::service::Peer<RoleClient> {
        self.service.peer()
    }

    /// Whether a call of `tool` is sent as a task (MCP 2025-11-25): the
    /// tool's `taskSupport` says `required`, or `optional` on a server that
    /// takes task-augmented calls, or the tool refused a plain call.
    fn needs_task(&self, tool: &str) -> bool {
        if self.tasks_only.lock().is_ok_and(|set| set.contains(tool)) {
            return true;
        }
        let Some(tap) = &self.tap else {
            return false;
        };
        let support = tap.execution(tool);
        match support
            .as_ref()
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("required") => true,
            Some("optional") => tap
                .tasks()
                .is_some_and(|t| t.pointer("/requests/tools/call").is_some()),
            _ => false,
        }
    }

    pub(super) fn remember_task(&self, tool: &str) {
        if let Ok(mut set) = self.tasks_only.lock() {
            set.insert(tool.to_owned());
        }
    }

    pub(super) fn error(&self, what: &str, err: ServiceError) -> Error {
        #[cfg(feature = "oauth")]
        if let Some(failure) = super::auth::sign_in_failure(what, &err) {
            return failure;
        }
        let stderr = || {
            self.process
                .as_ref()
                .map(|p| p.stderr.describe())
                .unwrap_or_default()
        };
        match err {
            ServiceError::McpError(e) => Error::new(
                ErrorKind::Server,
                format!(
                    "server `{}` answered {what} with error {}: {}",
                    self.name, e.code.0, e.message
                ),
            )
            .with_source(ServiceError::McpError(e)),
            err @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)) => Error::new(
                ErrorKind::Unavailable,
                format!(
                    "server `{}` is gone: the connection closed before it answered {what} (the server exited or crashed){}",
                    self.name,
                    stderr()
                ),
            )
            .with_source(err),
            other => Error::new(
                ErrorKind::Server,
                format!("server `{}`: {what} failed", self.name),
            )
            .with_source(other),
        }
    }
}

/// The capabilities `features` declare; `list_changed` says whether roots
/// announce changes (revisions up to 2025-11-25 only), `tasks` whether the
/// tasks extension is declared (a 2026-07-28 call).
fn capabilities(features: ClientFeatures, list_changed: bool, tasks: bool) -> ClientCapabilities {
    let mut wire = serde_json::Map::new();
    if tasks {
        wire.insert(
            "extensions".into(),
            serde_json::json!({ rmcp::model::TASKS_EXTENSION_ID: {} }),
        );
    }
    if features.elicitation_form || features.elicitation_url {
        let mut elicitation = serde_json::Map::new();
        if features.elicitation_form {
            elicitation.insert("form".into(), serde_json::json!({}));
        }
        if features.elicitation_url {
            elicitation.insert("url".into(), serde_json::json!({}));
        }
        wire.insert("elicitation".into(), Value::Object(elicitation));
    }
    if features.sampling {
        let mut sampling = serde_json::Map::new();
        if features.sampling_tools {
            sampling.insert("tools".into(), serde_json::json!({}));
        }
        if features.sampling_context {
            sampling.insert("context".into(), serde_json::json!({}));
        }
        wire.insert("sampling".into(), Value::Object(sampling));
    }
    if features.roots {
        let roots = if list_changed {
            serde_json::json!({"listChanged": true})
        } else {
            serde_json::json!({})
        };
        wire.insert("roots".into(), roots);
    }
    serde_json::from_value(Value::Object(wire)).unwrap_or_default()
}

/// Sends `notifications/roots/list_changed` whenever the roots change.
fn announce_roots(
    name: &str,
    peer: &rmcp::service::Peer<RoleClient>,
    mut roots: tokio::sync::watch::Receiver<Arc<Vec<crate::mcp::Root>>>,
) -> AbortOnDrop {
    let (name, peer) = (name.to_owned(), peer.clone());
    AbortOnDrop(tokio::spawn(async move {
        roots.mark_unchanged();
        while roots.changed().await.is_ok() {
            if let Err(e) = peer.notify_roots_list_changed().await {
                tracing::debug!(server = %name, error = %e, "could not send notifications/roots/list_changed");
                return;
            }
        }
    }))
}

/// A call on the wire: dropped before its answer arrived, it tells the server
/// (`notifications/cancelled`); either way it stops routing progress.
struct InFlight {
    handle: Option<RequestHandle<RoleClient>>,
    routes: Arc<Routes>,
    key: Option<String>,
}

impl InFlight {
    async fn answer(&mut self) -> std::result::Result<rmcp::model::ServerResult, ServiceError> {
        let Some(handle) = self.handle.as_mut() else {
            return Err(ServiceError::TransportClosed);
        };
        let answer = (&mut handle.rx).await;
        self.handle = None;
        answer.unwrap_or(Err(ServiceError::TransportClosed))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(key) = &self.key {
            self.routes.unregister(key);
        }
        let Some(handle) = self.handle.take() else {
            return;
        };
        let reason = Some("the caller stopped waiting (timeout)".to_owned());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(e) = handle.cancel(reason).await {
                        tracing::debug!(error = %e, "could not send notifications/cancelled");
                    }
                });
            }
            Err(_) => tracing::debug!("no runtime to send notifications/cancelled on"),
        }
    }
}

impl McpClient {
    /// One `tools/call` on the wire, with a round's answers and state.
    async fn call_once(
        &self,
        call: &TaskCall<'_>,
        arguments: Map<String, Value>,
    ) -> std::result::Result<rmcp::model::ServerResult, ServiceError> {
        let context = call.context;
        let mut params = CallToolRequestParams::new(call.name.to_owned());
        params.arguments = Some(arguments);
        if let Some(responses) = &context.input_responses {
            let wire = responses
                .iter()
                .filter_map(|(key, response)| {
                    serde_json::to_value(response)
                        .ok()
                        .map(|value| (key.clone(), value))
                })
                .collect::<BTreeMap<String, Value>>();
            params = params.with_input_responses(wire);
        }
        if let Some(state) = &context.request_state {
            params = params.with_request_state(state.clone());
        }
        let mut options = PeerRequestOptions::no_options();
        let mut meta = context.meta.clone().map(RequestMetaObject::from);
        if self.is_modern() {
            meta.get_or_insert_default()
                .set_client_capabilities(capabilities(call.answerer.features(), false, true));
        }
        if let Some(meta) = meta {
            options = options.with_meta(meta);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .service
            .peer()
            .send_request_with_option(request, options)
            .await?;
        call.registration.set_id(handle.id.clone());
        let key = context.progress.is_some().then(|| {
            self.routes
                .register(&handle.progress_token, context.clone())
        });
        let mut in_flight = InFlight {
            handle: Some(handle),
            routes: self.routes.clone(),
            key,
        };
        in_flight.answer().await
    }
}

impl Server for McpClient {
    fn list_tools(&self, cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        Box::pin(async move {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let listed = tokio::time::timeout(
                self.options.list_timeout,
                self.service.peer().list_tools(Some(params)),
            )
            .await
            .map_err(|_| {
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "server `{}` did not answer tools/list within {} ms",
                        self.name,
                        self.options.list_timeout.as_millis()
                    ),
                )
            })?
            .map_err(|e| self.error("tools/list", e))?;
            let mut tools = listed
                .tools
                .into_iter()
                .map(Tool::try_from)
                .collect::<Result<Vec<_>>>()
                .map_err(|e| {
                    let message = format!("server `{}`: {}", self.name, e.message());
                    e.with_message(message)
                })?;
            // What the SDK's tool type drops, as the server sent it.
            if let Some(tap) = &self.tap {
                for tool in &mut tools {
                    if let Some(execution) = tap.execution(&tool.name) {
                        tool.extra.insert("execution".into(), execution);
                    }
                }
            }
            let mut page = ToolsPage::new(tools);
            page.next_cursor = listed.next_cursor;
            page.ttl = listed.ttl_ms.map(Duration::from_millis);
            page.cache_scope = listed.cache_scope.map(|scope| match scope {
                rmcp::model::CacheScope::Private => CacheScope::Private,
                _ => CacheScope::Public,
            });
            Ok(page)
        })
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        let name = name.to_owned();
        Box::pin(async move {
            let answerer = context
                .answerer
                .clone()
                .or_else(|| self.calls.outside())
                .unwrap_or_else(|| Answerer::standalone(Handlers::default(), &self.name));
            // Registered before it is sent: the server may ask at once.
            let registration = self.calls.register(answerer.clone());
            let call = TaskCall {
                name: &name,
                context: &context,
                answerer: &answerer,
                registration: &registration,
            };
            let legacy = !self.is_modern();
            if legacy && self.needs_task(&name) {
                return self.call_as_task(&call, arguments).await;
            }
            let what = format!("tools/call `{name}`");
            let answer = match self.call_once(&call, arguments.clone()).await {
                Ok(answer) => answer,
                // A 2025-11-25 tool whose task support is `required` refuses a
                // call that is not a task with -32601 (and runs nothing).
                Err(ServiceError::McpError(e))
                    if legacy && e.code == ErrorCode::METHOD_NOT_FOUND =>
                {
                    tracing::debug!(server = %self.name, tool = %name,
                        "a plain call was refused with -32601; calling it as a task");
                    return self.call_as_task(&call, arguments).await;
                }
                Err(e) => return Err(self.error(&what, e)),
            };
            let response = call_tool_response(answer).map_err(|e| {
                let message = format!("server `{}` answered {what}: {}", self.name, e.message());
                e.with_message(message)
            })?;
            match response {
                CallToolResponse::Task(task) => {
                    let state =
                        TaskState::from_value(&serde_json::to_value(&task).unwrap_or_default())?;
                    self.follow_task(&call, state, Generation::Extension).await
                }
                other => Ok(other),
            }
        })
    }

    fn tools_version(&self) -> u64 {
        self.tools_version.load(Ordering::SeqCst)
    }

    fn handlers(&self) -> Option<Handlers> {
        Some(self.options.handlers.clone())
    }

    /// Tasks of both generations are followed to their end.
    fn supports_tasks(&self) -> bool {
        true
    }

    fn attach(&self, answerer: Answerer) {
        self.calls.set_outside(answerer);
    }
}
