//! The one trait through which the library talks to MCP servers.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::answerer::{Answerer, CallState};
use super::asks::Handlers;
use super::durable::IdempotencyKey;
use super::future::BoxFuture;
use crate::error::{Error, ErrorKind, Result};
use crate::listing::Defaulted;
use crate::mcp::{
    CacheScope, CallToolResponse, Catalog, GetPromptResult, InputResponse, InputResponses, Page,
    ReadResourceResult, Tool,
};

/// One page of a `tools/list` answer.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolsPage {
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
    /// How long the page stays fresh (`ttlMs`, MCP 2026-07-28); `None` when
    /// the server gave no hint (an earlier revision).
    pub ttl: Option<Duration>,
    /// Who may reuse the page (`cacheScope`), when the server said.
    pub cache_scope: Option<CacheScope>,
    /// Tools the page held that could not be read (one nested too deep,
    /// one not UTF-8): left out of the toolset, and reported
    /// ([`DropReason::Unreadable`](crate::toolset::DropReason::Unreadable)).
    pub unreadable: Vec<UnreadableTool>,
}

/// A tool of a `tools/list` page that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnreadableTool {
    /// Its name, as far as it reads (`?` when it does not).
    pub name: String,
    /// Why it could not be read.
    pub why: String,
}

impl ToolsPage {
    /// A page of `tools`, the last one.
    pub fn new(tools: Vec<Tool>) -> Self {
        ToolsPage {
            tools,
            ..Default::default()
        }
    }

    /// Sets the cursor of the next page.
    pub fn with_next_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.next_cursor = Some(cursor.into());
        self
    }

    /// Sets how long the page stays fresh.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Sets who may reuse the page.
    pub fn with_cache_scope(mut self, scope: CacheScope) -> Self {
        self.cache_scope = Some(scope);
        self
    }
}

/// A progress notification for a running call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// The call's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The call's id, if the model gave one.
    pub call_id: Option<String>,
    /// Progress so far.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message, if any.
    pub message: Option<String>,
}

/// Receives [`Progress`] notifications.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// What a server (and a policy, an approver or a hook) knows about a call
/// besides its arguments.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// The call, shared with the pipeline that runs it (its server, tool and
    /// id are read with [`server_id`](Self::server_id), [`tool`](Self::tool)
    /// and [`call_id`](Self::call_id)): none outside a source's call.
    call: Option<Arc<CallState>>,
    /// Who the call is made for (a user id, a tenant), if the caller said:
    /// shared by the turn's calls.
    pub principal: Option<Arc<str>>,
    /// The caller's own data, passed through untouched.
    pub assigns: Arc<Map<String, Value>>,
    /// Servers whose output is already in the model's context.
    pub taint: Arc<BTreeSet<String>>,
    /// MCP request `_meta` to send with the call.
    pub meta: Option<Map<String, Value>>,
    /// Where progress notifications go.
    pub progress: Option<ProgressFn>,
    /// On a retry after `input_required`: the answers to the previous round's
    /// questions (MCP `inputResponses`), keyed as the questions were.
    pub input_responses: Option<InputResponses>,
    /// On a retry after `input_required`: the previous round's opaque
    /// `requestState`, to be sent back exactly as received.
    pub request_state: Option<String>,
    /// Answers what the server asks during this call (elicitation, sampling,
    /// roots), under the source's rules; set by a source for every call. A
    /// client declares its [`features`](Answerer::features) on the call where
    /// the revision declares capabilities per request.
    pub answerer: Option<Answerer>,
    /// The call's idempotency key, the same wherever its turn is resumed:
    /// [`McpClient`](crate::McpClient) sends it in the request's `_meta`
    /// under [`IDEMPOTENCY_KEY`](crate::exec::IDEMPOTENCY_KEY), and
    /// a server may use it to recognise a call it has already run. Set by a
    /// source for every call.
    pub idempotency_key: Option<IdempotencyKey>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("server_id", &self.server_id())
            .field("tool", &self.tool())
            .field("call_id", &self.call_id())
            .field("principal", &self.principal)
            .field("taint", &self.taint)
            .field("input_responses", &self.input_responses)
            .field("request_state", &self.request_state)
            .field("answerer", &self.answerer)
            .field("idempotency_key", &self.idempotency_key)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// The context of `call`, with nothing else set.
    pub(super) fn of(call: Arc<CallState>) -> Self {
        CallContext {
            call: Some(call),
            ..Default::default()
        }
    }

    /// The same call's context with the shared parts only (the call, the
    /// assigns, the taint): what is left once a request took the rest.
    pub(super) fn hollow(&self) -> Self {
        CallContext {
            call: self.call.clone(),
            assigns: self.assigns.clone(),
            taint: self.taint.clone(),
            ..Default::default()
        }
    }

    /// The call's server (empty outside a source's call).
    pub fn server_id(&self) -> &str {
        self.call
            .as_deref()
            .map_or("", |c| c.call().server_id.as_str())
    }

    /// The tool's MCP name (empty outside a source's call).
    pub fn tool(&self) -> &str {
        self.call.as_deref().map_or("", |c| c.call().tool.as_str())
    }

    /// The call's id, if the model gave one.
    pub fn call_id(&self) -> Option<&str> {
        self.call
            .as_deref()
            .and_then(|c| c.call().call_id.as_deref())
    }

    /// The answer to the previous round's question `key`, on a retry.
    pub fn input_response(&self, key: &str) -> Option<&InputResponse> {
        self.input_responses.as_ref()?.get(key)
    }

    /// Reports progress to the caller's callback, if any.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                server_id: self.server_id().to_owned(),
                tool: self.tool().to_owned(),
                call_id: self.call_id().map(str::to_owned),
                progress,
                total,
                message,
            });
        }
    }
}

/// An MCP server, as the library uses it: list tools page by page, call a tool.
///
/// Implemented by [`InProcessServer`](super::InProcessServer) for tools that live
/// in the same process, and by the real MCP clients behind the `rmcp` feature.
/// A call whose future is dropped (on timeout) is cancelled; a real client also
/// tells its server.
pub trait Server: Send + Sync {
    /// One page of the server's tools, starting at `cursor`.
    fn list_tools(&self, cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>>;

    /// Calls the tool `name` with `arguments`.
    ///
    /// The answer is the result, or (MCP 2026-07-28) a request for input: the
    /// runner then asks the source's input handler and calls again with the
    /// same arguments and the answers in [`CallContext::input_responses`] and
    /// [`CallContext::request_state`]. A [`CallToolResult`](crate::CallToolResult)
    /// becomes a response with `.into()`.
    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>>;

    /// Reads the resource at `uri` (`resources/read`), such as the `ui://`
    /// interface of an MCP Apps tool. The default: the server serves none.
    fn read_resource(&self, uri: &str) -> BoxFuture<'_, Result<ReadResourceResult>> {
        let message = format!("this server serves no resources (asked for `{uri}`)");
        Box::pin(async move { Err(Error::new(ErrorKind::Unavailable, message)) })
    }

    /// One page of a catalogue besides the tools (`resources/list`,
    /// `resources/templates/list`, `prompts/list`), from `cursor`. The
    /// default: the server lists none.
    fn list_catalog(
        &self,
        catalog: Catalog,
        cursor: Option<String>,
    ) -> BoxFuture<'_, Result<Page>> {
        let _ = cursor;
        let message = format!("this server has no {}", catalog.method());
        Box::pin(async move { Err(Error::new(ErrorKind::Unavailable, message)) })
    }

    /// The prompt `name` with `arguments` (`prompts/get`). The default: the
    /// server serves no prompts.
    fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'_, Result<GetPromptResult>> {
        let _ = arguments;
        let message = format!("this server serves no prompts (asked for `{name}`)");
        Box::pin(async move { Err(Error::new(ErrorKind::Unavailable, message)) })
    }

    /// Takes up the call of `tool` that the server runs as task `task_id`
    /// (handed back earlier, in a turn that was then suspended): follows
    /// the task as [`call_tool`](Self::call_tool) would have, and answers
    /// with its result (or hands it back again, if the turn may be
    /// suspended once more). A task the server no longer has (it
    /// restarted) is an [`ErrorKind::Interrupted`] error. The default: the
    /// server cannot take tasks up.
    fn resume_task(
        &self,
        tool: &str,
        task_id: &str,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        let _ = context;
        let message = format!("this server cannot take up task `{task_id}` of a call of `{tool}`");
        Box::pin(async move { Err(Error::new(ErrorKind::Unavailable, message)) })
    }

    /// A number that changes whenever the server announces that its tool list
    /// changed (`notifications/tools/list_changed`). A source lists the server
    /// again, for its next listing or call, when the number differs from the
    /// one it saw when it last listed. A server whose tools never change keeps
    /// the default, 0.
    fn tools_version(&self) -> u64 {
        0
    }

    /// Whether the server runs calls that must run as tasks
    /// (`execution.taskSupport: "required"`, MCP 2025-11-25) to their end. A
    /// source never lists such a tool of a server that cannot (the default:
    /// a `Server` that hands back task handles to the runner cannot);
    /// [`InProcessServer`](super::InProcessServer) and
    /// [`McpClient`](crate::McpClient) can.
    fn supports_tasks(&self) -> bool {
        false
    }

    /// The handlers the server's session declared its capabilities from, if
    /// it declares any at start-up ([`McpClient`](crate::McpClient): those of
    /// its [`ClientOptions`](crate::ClientOptions)). A source given no
    /// handlers of its own answers with these.
    fn handlers(&self) -> Option<Handlers> {
        None
    }

    /// Gives the server the source's answerer for questions it asks outside
    /// any call (called when the source is built). The default ignores it.
    fn attach(&self, answerer: Answerer) {
        let _ = answerer;
    }

    /// Whether the server can be reached now; [`ServerState::Up`] by default.
    fn state(&self) -> ServerState {
        ServerState::Up
    }

    /// Ends the connection once what the client still owes the server has
    /// gone out (the cancel notices of calls whose futures were dropped):
    /// [`McpClient`](crate::McpClient) then asks a server it spawned to exit
    /// (and kills it if it does not). A later listing or call may start the
    /// connection again. The default does nothing.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// The fields the server left out of its answers so far, read with the
    /// official MCP SDKs' defaults, one entry per field
    /// ([`McpClient`](crate::McpClient)); none by default.
    fn defaulted(&self) -> Vec<Defaulted> {
        Vec::new()
    }
}

/// The most pages [`list_all_tools`] follows, against a server that never stops paginating.
pub(super) const MAX_PAGES: usize = 1000;

/// A server's whole tool list, with the cache hints of its pages merged.
#[derive(Debug, Clone, Default)]
pub(super) struct ToolList {
    /// Shared with the toolsets built from the list.
    pub(super) tools: Vec<Arc<Tool>>,
    /// The shortest page TTL; a page without one counts as 0 when others
    /// have one, and `None` means no page had a hint.
    pub(super) ttl: Option<Duration>,
    /// `Private` if any page is private, `Public` if every page is public.
    pub(super) scope: Option<CacheScope>,
    /// The tools of its pages that could not be read.
    pub(super) unreadable: Vec<UnreadableTool>,
}

/// All of a server's tools, following `nextCursor`.
///
/// # Errors
///
/// The server's error, or [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)
/// when it paginates past [`MAX_PAGES`] or repeats a cursor.
pub(super) async fn list_all_tools(server: &dyn Server) -> Result<ToolList> {
    let mut list = ToolList::default();
    let mut cursor = None;
    let mut seen = BTreeSet::new();
    for page_index in 0..MAX_PAGES {
        let page = server.list_tools(cursor.take()).await?;
        list.tools.extend(page.tools.into_iter().map(Arc::new));
        list.unreadable.extend(page.unreadable);
        list.ttl = match (page_index, list.ttl, page.ttl) {
            (0, _, ttl) => ttl,
            (_, None, None) => None,
            (_, a, b) => Some(a.unwrap_or_default().min(b.unwrap_or_default())),
        };
        list.scope = match (page_index, list.scope, page.cache_scope) {
            (0, _, scope) => scope,
            (_, Some(CacheScope::Private), _) | (_, _, Some(CacheScope::Private)) => {
                Some(CacheScope::Private)
            }
            (_, Some(CacheScope::Public), Some(CacheScope::Public)) => Some(CacheScope::Public),
            _ => None,
        };
        match page.next_cursor {
            None => return Ok(list),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(crate::Error::new(
                    crate::ErrorKind::Unavailable,
                    format!("the server repeated the tools/list cursor `{next}`"),
                ));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(crate::Error::new(
        crate::ErrorKind::Unavailable,
        format!("the server's tools/list went past {MAX_PAGES} pages"),
    ))
}

/// A server's whole `catalog`, following `nextCursor` as [`list_all_tools`] does.
///
/// # Errors
///
/// The server's error, or [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)
/// when it paginates past [`MAX_PAGES`] or repeats a cursor.
pub(super) async fn list_whole_catalog(
    server: &dyn Server,
    catalog: Catalog,
) -> Result<Vec<crate::mcp::Object>> {
    let mut items = Vec::new();
    let mut cursor = None;
    let mut seen = BTreeSet::new();
    for _ in 0..MAX_PAGES {
        let page = server.list_catalog(catalog, cursor.take()).await?;
        items.extend(page.items);
        match page.next_cursor {
            None => return Ok(items),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(crate::Error::new(
                    crate::ErrorKind::Unavailable,
                    format!(
                        "the server repeated the {} cursor `{next}`",
                        catalog.method()
                    ),
                ));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(crate::Error::new(
        crate::ErrorKind::Unavailable,
        format!(
            "the server's {} went past {MAX_PAGES} pages",
            catalog.method()
        ),
    ))
}

/// Whether a server can be reached, as its client knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Its session is live (or it has none to lose: an in-process server).
    Up,
    /// Its session ended and a new one is being started (try `attempt`).
    Reconnecting {
        /// The try under way, from 1.
        attempt: u32,
    },
    /// Every try to start a new session failed: calls and listings fail at
    /// once until it is tried again.
    Down {
        /// The last try's error.
        error: String,
        /// When the server went down.
        since: std::time::SystemTime,
    },
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::Up => f.write_str("up"),
            ServerState::Reconnecting { attempt } => write!(f, "reconnecting (try {attempt})"),
            ServerState::Down { error, .. } => write!(f, "down: {error}"),
        }
    }
}

/// A shared server is a server: several sources (a client with a handler and
/// one without, say) can use one connection, and the caller keeps a handle.
impl<S: Server + ?Sized> Server for Arc<S> {
    fn list_tools(&self, cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        (**self).list_tools(cursor)
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        (**self).call_tool(name, arguments, context)
    }

    fn read_resource(&self, uri: &str) -> BoxFuture<'_, Result<ReadResourceResult>> {
        (**self).read_resource(uri)
    }

    fn resume_task(
        &self,
        tool: &str,
        task_id: &str,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        (**self).resume_task(tool, task_id, context)
    }

    fn list_catalog(
        &self,
        catalog: Catalog,
        cursor: Option<String>,
    ) -> BoxFuture<'_, Result<Page>> {
        (**self).list_catalog(catalog, cursor)
    }

    fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'_, Result<GetPromptResult>> {
        (**self).get_prompt(name, arguments)
    }

    fn tools_version(&self) -> u64 {
        (**self).tools_version()
    }

    fn handlers(&self) -> Option<Handlers> {
        (**self).handlers()
    }

    fn supports_tasks(&self) -> bool {
        (**self).supports_tasks()
    }

    fn attach(&self, answerer: Answerer) {
        (**self).attach(answerer);
    }

    fn state(&self) -> ServerState {
        (**self).state()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        (**self).close()
    }

    fn defaulted(&self) -> Vec<Defaulted> {
        (**self).defaulted()
    }
}
