//! The one trait through which the library talks to MCP servers.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::mcp::{CallToolResult, Tool};

/// A boxed, sendable future: what [`Server`] methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One page of a `tools/list` answer.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolsPage {
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
}

impl ToolsPage {
    /// A page of `tools`, the last one.
    pub fn new(tools: Vec<Tool>) -> Self {
        ToolsPage {
            tools,
            next_cursor: None,
        }
    }

    /// Sets the cursor of the next page.
    pub fn with_next_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.next_cursor = Some(cursor.into());
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
    /// The call's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The call's id, if the model gave one.
    pub call_id: Option<String>,
    /// Who the call is made for (a user id, a tenant), if the caller said.
    pub principal: Option<String>,
    /// The caller's own data, passed through untouched.
    pub assigns: Arc<Map<String, Value>>,
    /// Servers whose output is already in the model's context.
    pub taint: Arc<BTreeSet<String>>,
    /// MCP request `_meta` to send with the call.
    pub meta: Option<Map<String, Value>>,
    /// Where progress notifications go.
    pub progress: Option<ProgressFn>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("server_id", &self.server_id)
            .field("tool", &self.tool)
            .field("call_id", &self.call_id)
            .field("principal", &self.principal)
            .field("taint", &self.taint)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// Reports progress to the caller's callback, if any.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                server_id: self.server_id.clone(),
                tool: self.tool.clone(),
                call_id: self.call_id.clone(),
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
    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResult>>;
}

/// The most pages [`list_all_tools`] follows, against a server that never stops paginating.
pub(crate) const MAX_PAGES: usize = 1000;

/// All of a server's tools, following `nextCursor`.
///
/// # Errors
///
/// The server's error, or [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)
/// when it paginates past [`MAX_PAGES`] or repeats a cursor.
pub(crate) async fn list_all_tools(server: &dyn Server) -> Result<Vec<Tool>> {
    let mut tools = Vec::new();
    let mut cursor = None;
    let mut seen = BTreeSet::new();
    for _ in 0..MAX_PAGES {
        let page = server.list_tools(cursor.take()).await?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
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
