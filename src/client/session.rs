//! One MCP session over the official SDK: started over a transport, used for
//! listings and calls until it ends. An [`McpClient`](super::McpClient)
//! holds one at a time and starts another when it ends.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, ListToolsRequest, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    RequestMetaObject, ServerResult,
};
use rmcp::service::{
    Peer, PeerRequestOptions, RequestHandle, RoleClient, RunningServiceCancellationToken,
    ServiceError,
};
use rmcp::transport::IntoTransport;
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt};
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::task::TaskTracker;

use super::changes::{self, Watcher};
use super::handler::{Handler, Routes};
use super::options::{ClientOptions, Lifecycle};
use super::requests::Calls;
use super::stdio::{ChildGuard, StderrTail, Tap, id_json};
use super::tasks::TaskCall;
use super::tolerant::{Exchange, Notes, StartFailure, Tolerant};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{ClientFeatures, ToolsPage};
use crate::mcp::{CacheScope, Catalog, GetPromptResult, Page, ReadResourceResult, Tool};

/// What outlives a session: where progress goes, the calls in flight, the
/// tool-list version a source watches, what the client still owes its
/// server.
#[derive(Default)]
pub(super) struct Shared {
    pub(super) routes: Arc<Routes>,
    pub(super) calls: Arc<Calls>,
    pub(super) tools_version: Arc<AtomicU64>,
    /// The cancel notices (`notifications/cancelled`, `tasks/cancel`) on
    /// their way, sent by tasks of their own when a call is dropped.
    pub(super) owed: TaskTracker,
    /// The fields the server left out of its answers, read with defaults.
    pub(super) notes: Arc<Notes>,
}

/// A spawned server: killed when its session is dropped.
pub(super) struct Process {
    /// The command line it was started with, for errors.
    pub(super) command: String,
    pub(super) stderr: StderrTail,
    pub(super) child: ChildGuard,
}

impl Process {
    /// How the process ended, if it did within `within` (its stderr's last
    /// lines are then in): `exited with status 1`. `None` while it runs.
    pub(super) async fn how_ended(&mut self, within: Duration) -> Option<String> {
        let status = self.child.exit_status(within).await?;
        // The pipe closes when the process ends: wait for its last lines.
        self.stderr.wait_closed(within).await;
        Some(match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => format!("ended without an exit status ({status})"),
        })
    }
}

/// How long a process whose handshake failed has to be seen ending (and
/// its stderr closing) before it is said to be still running.
pub(super) const EXITED_WITHIN: Duration = Duration::from_secs(2);

/// A background task that ends with its owner.
pub(super) struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One live session. The SDK's service runs in a task of its own, which
/// says when the session ends ([`ended`](Self::ended)).
pub(super) struct Session {
    name: String,
    peer: Peer<RoleClient>,
    /// Stops the service (taken by [`close`](Self::close), or used on drop).
    stop: Option<RunningServiceCancellationToken>,
    ended: watch::Receiver<bool>,
    routes: Arc<Routes>,
    /// What the client owes the server ([`Shared::owed`]).
    owed: TaskTracker,
    /// A spawned server's process and stderr.
    process: Option<Process>,
    /// What the SDK's types drop of the server's messages, where it can be seen.
    pub(super) tap: Option<Tap>,
    /// Reads the `subscriptions/listen` stream for list changes (2026-07-28).
    _watcher: Option<Watcher>,
    /// Tells the server when the roots change (up to 2025-11-25).
    _roots: Option<AbortOnDrop>,
    /// Whether the MCP Apps extension is declared.
    apps: bool,
}

impl Session {
    /// Starts a session over `transport`: the handshake the options'
    /// lifecycle says, declaring what the options' handlers answer.
    pub(super) async fn start<T, E, A>(
        name: &str,
        transport: T,
        options: &ClientOptions,
        shared: &Shared,
        mut process: Option<Process>,
        tap: Option<Tap>,
    ) -> Result<Session>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let mut info = ClientConfig::new(
            capabilities(options.handlers.features(), true, false, options.mcp_apps),
            Implementation::new("mcp-adapters", env!("CARGO_PKG_VERSION")),
        );
        if options.lifecycle == Lifecycle::Legacy {
            // The newest revision that starts with `initialize`.
            info.protocol_version = ProtocolVersion::V_2025_11_25;
        }
        let handler = Handler {
            routes: shared.routes.clone(),
            info,
            tools_version: shared.tools_version.clone(),
            calls: shared.calls.clone(),
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
        let exchange = Arc::new(Mutex::new(Exchange::default()));
        let transport = Tolerant::new(
            transport.into_transport(),
            name,
            exchange.clone(),
            shared.notes.clone(),
            options.lifecycle == Lifecycle::Auto,
            tap.clone(),
        );
        let started = std::time::Instant::now();
        let service = match tokio::time::timeout(
            options.init_timeout,
            handler.serve_with_lifecycle(transport, lifecycle),
        )
        .await
        {
            Ok(Ok(service)) => service,
            outcome => {
                let failure = StartFailure {
                    name,
                    waited: options.init_timeout,
                    error: outcome.ok().and_then(Result::err),
                };
                return Err(failure.describe(&exchange, process.as_mut()).await);
            }
        };
        let peer = service.peer().clone();
        // This crate keeps the tool lists itself (see `Source::toolset`), so
        // that a refresh always asks the server and a failure is reported.
        peer.set_response_cache_config(ClientCacheConfig::disabled())
            .await;
        let remaining = options.init_timeout.saturating_sub(started.elapsed());
        let watcher = changes::watch(name, &peer, shared.tools_version.clone(), remaining).await;
        let legacy = peer
            .peer_info()
            .is_none_or(|info| info.protocol_version.has_initialize());
        let roots = match options.handlers.roots_list() {
            Some(roots) if legacy => Some(announce_roots(name, &peer, roots.watch())),
            _ => None,
        };
        let stop = service.cancellation_token();
        let (ended_tx, ended) = watch::channel(false);
        let server = name.to_owned();
        tokio::spawn(async move {
            let reason = service.waiting().await;
            tracing::debug!(server = %server, reason = ?reason, "MCP session ended");
            let _ = ended_tx.send(true);
        });
        Ok(Session {
            name: name.to_owned(),
            peer,
            stop: Some(stop),
            ended,
            routes: shared.routes.clone(),
            owed: shared.owed.clone(),
            process,
            tap,
            _watcher: watcher,
            _roots: roots,
            apps: options.mcp_apps,
        })
    }

    /// Whether the session has ended (the server exited, the connection
    /// closed, or the server refused the session).
    pub(super) fn is_closed(&self) -> bool {
        *self.ended.borrow() || self.peer.is_transport_closed() || self.refused()
    }

    /// Whether the server refused the session (its requests were not run).
    pub(super) fn refused(&self) -> bool {
        self.tap.as_ref().is_some_and(Tap::session_refused)
    }

    /// Changes to `true` when the session ends.
    pub(super) fn ended(&self) -> watch::Receiver<bool> {
        self.ended.clone()
    }

    /// What the server said about itself, as JSON.
    pub(super) fn server_info(&self) -> Option<Value> {
        self.peer
            .peer_info()
            .and_then(|info| serde_json::to_value(&*info).ok())
    }

    /// The protocol revision the session speaks (`2025-11-25`, ...).
    pub(super) fn protocol_version(&self) -> Option<String> {
        let info = self.peer.peer_info()?;
        match serde_json::to_value(&info.protocol_version).ok()? {
            Value::String(version) => Some(version),
            _ => None,
        }
    }

    /// Whether the session is 2026-07-28 or later (per-request metadata, input rounds).
    pub(super) fn is_modern(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize())
    }

    /// The session's peer, to send requests on.
    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// The cancel notices the client owes the server, on their way.
    pub(super) fn owed(&self) -> &TaskTracker {
        &self.owed
    }

    /// The server's last stderr lines, for errors (stdio servers).
    pub(super) fn stderr(&self) -> String {
        self.process
            .as_ref()
            .map(|p| p.stderr.describe())
            .unwrap_or_default()
    }

    /// Ends the session: closes the transport, then waits briefly for a
    /// spawned server to exit before killing it.
    pub(super) async fn close(mut self) {
        if let Some(stop) = self.stop.take() {
            stop.cancel();
        }
        let mut ended = self.ended.clone();
        let _ = tokio::time::timeout(Duration::from_secs(5), ended.wait_for(|e| *e)).await;
        if let Some(process) = self.process.take() {
            process.child.close().await;
        }
    }

    /// The error for a request `what` that failed with `err`: the server's
    /// own error, or the session ending. `sent` says whether the request was
    /// on the wire (then the server may have acted on it).
    pub(super) fn error(&self, what: &str, err: ServiceError, sent: bool) -> Error {
        #[cfg(feature = "oauth")]
        if let Some(failure) = super::auth::sign_in_failure(what, &err) {
            return failure;
        }
        match err {
            // The server's error (`code: message(data)`) is said once: the
            // message ends with it, so it is not repeated as the cause.
            ServiceError::McpError(e) => Error::new(
                ErrorKind::Server,
                format!("server `{}` answered {what} with error {e}", self.name),
            )
            .with_source(e),
            err @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)) if sent => {
                Error::new(
                    ErrorKind::Interrupted,
                    format!(
                        "server `{}` went away while it handled {what} (it exited, crashed or dropped \
                         the connection), so the call may or may not have run; it was not sent again{}",
                        self.name,
                        self.stderr()
                    ),
                )
                .with_source(err)
            }
            err @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)) => Error::new(
                ErrorKind::Unavailable,
                format!(
                    "server `{}` is gone: the connection closed before {what} was sent (the server \
                     exited or crashed){}",
                    self.name,
                    self.stderr()
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

    /// `resources/read` of `uri`.
    pub(super) async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<ReadResourceResult> {
        let mut params = rmcp::model::ReadResourceRequestParams::new(uri);
        params.meta = traced_meta();
        let what = format!("resources/read of `{uri}`");
        let read = self
            .within(&what, timeout, self.peer().read_resource(params))
            .await?;
        self.as_ours(&what, &read)
    }

    /// One page of `catalog`, each entry as the server sent it.
    pub(super) async fn list_catalog(
        &self,
        catalog: Catalog,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<Page> {
        let mut params = PaginatedRequestParams::default().with_cursor(cursor);
        params.meta = traced_meta();
        let peer = self.peer();
        let what = catalog.method();
        // Each catalogue is optional: a server that has not got the method
        // (-32601) lists nothing.
        let value: Option<Value> = match catalog {
            Catalog::Resources => {
                let listed = self.optional(what, timeout, peer.list_resources(Some(params)));
                listed.await?.map(|l| self.as_ours(what, &l)).transpose()?
            }
            Catalog::ResourceTemplates => {
                let listed =
                    self.optional(what, timeout, peer.list_resource_templates(Some(params)));
                listed.await?.map(|l| self.as_ours(what, &l)).transpose()?
            }
            Catalog::Prompts => {
                let listed = self.optional(what, timeout, peer.list_prompts(Some(params)));
                listed.await?.map(|l| self.as_ours(what, &l)).transpose()?
            }
            Catalog::Skills => {
                // A server that does not declare the extension serves no skills.
                let declared = peer
                    .peer_info()
                    .is_some_and(|info| info.capabilities.supports_skills());
                if !declared {
                    return Ok(Page::new(Vec::new()));
                }
                // Sent as a request of its own, so that the entries come back
                // as the server sent them: one malformed entry is refused by
                // itself (`exec::skills`), not the whole listing.
                let request =
                    rmcp::model::ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(
                        what,
                        Some(serde_json::to_value(&params).unwrap_or_default()),
                    ));
                let listed = self.optional(what, timeout, peer.send_request(request));
                listed.await?.map(|l| self.as_ours(what, &l)).transpose()?
            }
        };
        let Some(value) = value else {
            tracing::debug!(server = %self.name, method = what,
                "the server has not got an optional listing (-32601): it lists nothing");
            return Ok(Page::new(Vec::new()));
        };
        let items = value[catalog.key()]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_object().cloned())
                    .collect()
            })
            .unwrap_or_default();
        let mut page = Page::new(items);
        page.next_cursor = value["nextCursor"].as_str().map(str::to_owned);
        Ok(page)
    }

    /// `prompts/get` of `name` with `arguments`.
    pub(super) async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<GetPromptResult> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name).with_arguments(arguments);
        params.meta = traced_meta();
        let what = format!("prompts/get of `{name}`");
        let got = self
            .within(&what, timeout, self.peer().get_prompt(params))
            .await?;
        self.as_ours(&what, &got)
    }

    /// `request`, bounded by `timeout`; the errors name `what` was asked.
    async fn within<T>(
        &self,
        what: &str,
        timeout: Duration,
        request: impl std::future::Future<Output = std::result::Result<T, ServiceError>>,
    ) -> Result<T> {
        tokio::time::timeout(timeout, request)
            .await
            .map_err(|_| {
                Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "server `{}` did not answer {what} within {} ms",
                        self.name,
                        timeout.as_millis()
                    ),
                )
            })?
            .map_err(|e| self.error(what, e, true))
    }

    /// As [`within`](Self::within), for a request the server may not have:
    /// its "method not found" error (-32601) is `None`.
    async fn optional<T>(
        &self,
        what: &str,
        timeout: Duration,
        request: impl std::future::Future<Output = std::result::Result<T, ServiceError>>,
    ) -> Result<Option<T>> {
        let answered = self
            .within(what, timeout, async {
                match request.await {
                    Ok(answer) => Ok(Some(answer)),
                    Err(ServiceError::McpError(e))
                        if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
                    {
                        Ok(None)
                    }
                    Err(e) => Err(e),
                }
            })
            .await?;
        Ok(answered)
    }

    /// An answer of the SDK's types as the library's: they share their JSON.
    fn as_ours<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        answer: &impl serde::Serialize,
    ) -> Result<T> {
        serde_json::to_value(answer)
            .and_then(serde_json::from_value)
            .map_err(|e| {
                Error::new(
                    ErrorKind::Server,
                    format!("server `{}`: {what} answered a malformed result", self.name),
                )
                .with_source(e)
            })
    }

    /// One page of `tools/list`, with what the SDK's tool type drops put back.
    pub(super) async fn list_page(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ToolsPage> {
        let mut params = PaginatedRequestParams::default().with_cursor(cursor);
        params.meta = traced_meta();
        let listed = self
            .within("tools/list", timeout, self.list_once(params))
            .await;
        let declared = self
            .peer()
            .peer_info()
            .is_none_or(|info| info.capabilities.tools.is_some());
        let listed = match listed {
            // A server that declares no tools (one of skills or resources
            // only) may refuse the method: it has no tools.
            Err(e) if !declared => {
                tracing::debug!(server = %self.name, error = %e,
                    "a server that declares no tools refused tools/list");
                return Ok(ToolsPage::new(Vec::new()));
            }
            listed => listed?,
        };
        let (id, listed) = listed;
        // A stdio server's tools, as the tap read them from the answer's
        // bytes; otherwise the SDK's, converted.
        let read = self.tap.as_ref().and_then(|tap| tap.take_listed(&id));
        let tools = match read {
            Some(tools) => tools,
            None => self.converted(listed.tools)?,
        };
        let mut page = ToolsPage::new(tools);
        if let Some(tap) = &self.tap {
            page.unreadable = tap
                .take_left_out()
                .into_iter()
                .map(|(name, why)| crate::exec::UnreadableTool { name, why })
                .collect();
        }
        page.next_cursor = listed.next_cursor;
        page.ttl = listed.ttl_ms.map(Duration::from_millis);
        page.cache_scope = listed.cache_scope.map(|scope| match scope {
            rmcp::model::CacheScope::Private => CacheScope::Private,
            _ => CacheScope::Public,
        });
        Ok(page)
    }

    /// One `tools/list` request: the answer, and the request's id as JSON
    /// (which the tap keeps the tools it read under). Dropped before the
    /// answer came, it tells the server.
    async fn list_once(
        &self,
        params: PaginatedRequestParams,
    ) -> std::result::Result<(Value, ListToolsResult), ServiceError> {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
        let handle = self
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        let id = id_json(&handle.id);
        let mut in_flight = InFlight {
            handle: Some(handle),
            routes: self.routes.clone(),
            owed: self.owed.clone(),
            key: None,
        };
        match in_flight.answer().await? {
            ServerResult::ListToolsResult(listed) => Ok((id, listed)),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }

    /// The SDK's tools as the library's, with what its type drops put back
    /// where the tap saw it (a tool's `execution`).
    fn converted(&self, tools: Vec<rmcp::model::Tool>) -> Result<Vec<Tool>> {
        let mut tools = tools
            .into_iter()
            .map(Tool::try_from)
            .collect::<Result<Vec<_>>>()
            .map_err(|e| {
                let message = format!("server `{}`: {}", self.name, e.message());
                e.with_message(message)
            })?;
        if let Some(tap) = &self.tap {
            for tool in &mut tools {
                if let Some(execution) = tap.execution(&tool.name) {
                    tool.extra.insert("execution".into(), execution);
                }
            }
        }
        Ok(tools)
    }

    /// Whether a call of `tool` is sent task-augmented (MCP 2025-11-25): its
    /// `taskSupport` says `required`, or `optional` on a server that takes
    /// task-augmented calls.
    pub(super) fn runs_as_task(&self, tool: &str) -> bool {
        self.tap.as_ref().is_some_and(|tap| tap.runs_as_task(tool))
    }

    /// One `tools/call` on the wire, with a round's answers and state. The
    /// error says whether the request was sent.
    pub(super) async fn call_once(
        &self,
        call: &TaskCall<'_>,
        arguments: Map<String, Value>,
    ) -> std::result::Result<rmcp::model::ServerResult, (ServiceError, bool)> {
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
        // The caller's `_meta`, and the trace this call is part of.
        let mut meta = context.meta.clone();
        if let Some(key) = &context.idempotency_key {
            meta.get_or_insert_default().insert(
                crate::exec::durable::IDEMPOTENCY_KEY.to_owned(),
                Value::String(key.to_string()),
            );
        }
        crate::telemetry::inject_context(&mut meta);
        let mut meta = meta.map(RequestMetaObject::from);
        if self.is_modern() {
            meta.get_or_insert_default()
                .set_client_capabilities(capabilities(
                    call.answerer.features(),
                    false,
                    true,
                    self.apps,
                ));
        }
        if let Some(meta) = meta {
            options = options.with_meta(meta);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer()
            .send_request_with_option(request, options)
            .await
            .map_err(|e| (e, false))?;
        call.registration.set_id(handle.id.clone());
        let key = context.progress.is_some().then(|| {
            self.routes
                .register(&handle.progress_token, context.clone())
        });
        let mut in_flight = InFlight {
            handle: Some(handle),
            routes: self.routes.clone(),
            owed: self.owed.clone(),
            key,
        };
        in_flight.answer().await.map_err(|e| (e, true))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.cancel();
        }
    }
}

/// A request's `_meta`: the trace it is part of, when there is one.
fn traced_meta() -> Option<RequestMetaObject> {
    let mut meta = None;
    crate::telemetry::inject_context(&mut meta);
    meta.map(RequestMetaObject::from)
}

/// The MCP Apps extension's id, and the views a host of it renders.
const APPS_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
const APPS_VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The capabilities `features` declare; `list_changed` says whether roots
/// announce changes (revisions up to 2025-11-25 only), `tasks` whether the
/// tasks extension is declared (a 2026-07-28 call), `apps` whether the MCP
/// Apps extension is.
fn capabilities(
    features: ClientFeatures,
    list_changed: bool,
    tasks: bool,
    apps: bool,
) -> ClientCapabilities {
    let mut wire = serde_json::Map::new();
    let mut extensions = serde_json::Map::new();
    if tasks {
        extensions.insert(
            rmcp::model::TASKS_EXTENSION_ID.into(),
            serde_json::json!({}),
        );
    }
    if apps {
        extensions.insert(
            APPS_EXTENSION_ID.into(),
            serde_json::json!({"mimeTypes": [APPS_VIEW_MIME_TYPE]}),
        );
    }
    if !extensions.is_empty() {
        wire.insert("extensions".into(), Value::Object(extensions));
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
    peer: &Peer<RoleClient>,
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
    /// Where the cancel notice is tracked until it is sent.
    owed: TaskTracker,
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
                runtime.spawn(self.owed.track_future(async move {
                    if let Err(e) = handle.cancel(reason).await {
                        tracing::debug!(error = %e, "could not send notifications/cancelled");
                    }
                }));
            }
            Err(_) => tracing::debug!("no runtime to send notifications/cancelled on"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apps_extension_is_declared_only_when_asked_for() {
        let declared = |tasks, apps| {
            serde_json::to_value(capabilities(ClientFeatures::default(), true, tasks, apps))
                .unwrap()
        };
        assert_eq!(declared(false, false), serde_json::json!({}));
        assert_eq!(
            declared(false, true)["extensions"],
            serde_json::json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
        );
        let both = declared(true, true);
        let extensions = both["extensions"].as_object().unwrap();
        assert_eq!(extensions.len(), 2, "{both}");
        assert!(extensions.contains_key(rmcp::model::TASKS_EXTENSION_ID));
    }
}
