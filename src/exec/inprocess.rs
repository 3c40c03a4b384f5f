//! Tools that live in the same process: closures behind the [`Server`] trait.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::future::BoxFuture;
use super::server::{CallContext, Server, ToolsPage};
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{
    CallToolResponse, CallToolResult, Catalog, GetPromptResult, Object, Page, PromptMessage,
    ReadResourceResult, ResourceContents, Tool,
};

type Handler = Arc<
    dyn Fn(Map<String, Value>, CallContext) -> BoxFuture<'static, Result<CallToolResponse>>
        + Send
        + Sync,
>;

/// An MCP server made of Rust functions: for tests, and for local tools an
/// agent offers beside its real servers.
///
/// ```
/// use mcp_adapters::{CallToolResult, InProcessServer, Tool};
/// use serde_json::json;
///
/// let server = InProcessServer::new()
///     .tool(Tool::new("add", "Adds two numbers", json!({"type": "object"})), |args, _ctx| async move {
///         let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
///         Ok(CallToolResult::text(sum.to_string()))
///     });
/// ```
#[derive(Clone, Default)]
pub struct InProcessServer {
    tools: Vec<Tool>,
    /// By tool name, hashed with FNV: names are short and every call looks one up.
    handlers: HashMap<String, Handler, fnv::FnvBuildHasher>,
    page_size: Option<usize>,
    resources: Vec<ResourceContents>,
    prompts: Vec<(Object, GetPromptResult)>,
    skills: Vec<Object>,
}

impl std::fmt::Debug for InProcessServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = self.tools.iter().map(|t| &t.name).collect();
        f.debug_struct("InProcessServer")
            .field("tools", &names)
            .finish()
    }
}

impl InProcessServer {
    /// A server with no tools.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool and the async function that runs it. A tool with the same
    /// name replaces the earlier one.
    pub fn tool<F, Fut>(self, tool: Tool, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.add(
            tool,
            Arc::new(move |args, ctx| {
                let running = handler(args, ctx);
                Box::pin(async move { running.await.map(CallToolResponse::from) })
            }),
        )
    }

    /// Adds a tool that may ask for input before it completes (MCP 2026-07-28
    /// multi-round-trip requests): its function returns a [`CallToolResponse`],
    /// either a result or an [`InputRequiredResult`](crate::mcp::InputRequiredResult);
    /// on the retry, the answers are in [`CallContext::input_responses`] and the
    /// request state in [`CallContext::request_state`].
    ///
    /// ```
    /// use mcp_adapters::mcp::{InputRequest, InputRequiredResult, InputResponse};
    /// use mcp_adapters::{CallToolResult, InProcessServer, Tool};
    /// use serde_json::json;
    ///
    /// let server = InProcessServer::new().tool_with_input(
    ///     Tool::new("delete", "Deletes a note", json!({"type": "object"})),
    ///     |_args, ctx| async move {
    ///         Ok(match ctx.input_response("confirm").and_then(InputResponse::accepted_content) {
    ///             None if ctx.input_responses.is_none() => InputRequiredResult::new()
    ///                 .ask("confirm", InputRequest::form("Delete the note?", json!({"type": "object",
    ///                     "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})))
    ///                 .into(),
    ///             Some(content) if content["confirm"] == true => CallToolResult::text("Deleted").into(),
    ///             _ => CallToolResult::text("Kept").into(),
    ///         })
    ///     },
    /// );
    /// ```
    pub fn tool_with_input<F, Fut>(self, tool: Tool, handler: F) -> Self
    where
        F: Fn(Map<String, Value>, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResponse>> + Send + 'static,
    {
        self.add(
            tool,
            Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
        )
    }

    fn add(mut self, tool: Tool, handler: Handler) -> Self {
        self.tools.retain(|t| t.name != tool.name);
        self.handlers.insert(tool.name.clone(), handler);
        self.tools.push(tool);
        self
    }

    /// Serves a resource: `resources/read` of its URI answers its contents
    /// (such as the `ui://` interface of an MCP Apps tool). A resource with
    /// the same URI replaces the earlier one.
    pub fn resource(mut self, contents: ResourceContents) -> Self {
        self.resources.retain(|r| r.uri != contents.uri);
        self.resources.push(contents);
        self
    }

    /// Serves a skill (the MCP Skills extension): `files` are its files,
    /// `SKILL.md` among them, each at a URI under the skill's directory.
    /// `skills/list` lists it with the frontmatter of its `SKILL.md` and a
    /// manifest of each file's digest and size, and `resources/read` serves
    /// the files. (A file served again with [`resource`](Self::resource)
    /// afterwards keeps its manifest entry: a server that tampers.)
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when no file is a `SKILL.md`, or its frontmatter
    /// does not parse.
    pub fn skill(mut self, files: Vec<ResourceContents>) -> Result<Self> {
        let skill_md = files
            .iter()
            .find(|f| f.uri.ends_with("/SKILL.md"))
            .ok_or_else(|| Error::input("a skill's files include its SKILL.md"))?;
        let frontmatter = super::skills::frontmatter_of(skill_md.text.as_deref().unwrap_or(""))
            .map_err(|e| Error::input(e.message().to_owned()))?;
        let mut manifest = Vec::with_capacity(files.len());
        for file in &files {
            let bytes =
                super::skills::bytes_of(file).map_err(|e| Error::input(e.message().to_owned()))?;
            manifest.push(serde_json::json!({
                "uri": file.uri,
                "digest": super::skills::sha256_digest(&bytes),
                "size": bytes.len(),
            }));
        }
        let mut entry = Object::new();
        entry.insert("uri".into(), Value::String(skill_md.uri.clone()));
        entry.insert("frontmatter".into(), Value::Object(frontmatter));
        entry.insert("resources".into(), Value::Array(manifest));
        self.skills.retain(|s| s["uri"] != entry["uri"]);
        self.skills.push(entry);
        for file in files {
            self = self.resource(file);
        }
        Ok(self)
    }

    /// Serves a prompt: `prompts/list` lists `name` and `description`, and
    /// `prompts/get` of it answers `messages` (whatever the arguments). A
    /// prompt with the same name replaces the earlier one.
    pub fn prompt(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        messages: Vec<PromptMessage>,
    ) -> Self {
        let name = name.into();
        let description = description.into();
        self.prompts.retain(|(p, _)| p["name"] != name.as_str());
        let mut entry = Object::new();
        entry.insert("name".into(), Value::String(name));
        entry.insert("description".into(), Value::String(description.clone()));
        let result = GetPromptResult {
            description: Some(description),
            messages,
            meta: None,
        };
        self.prompts.push((entry, result));
        self
    }

    /// Lists tools `size` at a time, with cursors, as a paginating server would.
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size.max(1));
        self
    }
}

impl Server for InProcessServer {
    /// Its tools run in the call itself, whatever their task support says.
    fn supports_tasks(&self) -> bool {
        true
    }

    fn list_tools(&self, cursor: Option<String>) -> BoxFuture<'_, Result<ToolsPage>> {
        let start = match cursor.as_deref().map(str::parse::<usize>) {
            None => Ok(0),
            Some(Ok(n)) if n <= self.tools.len() => Ok(n),
            Some(_) => Err(Error::input(format!("invalid cursor {cursor:?}"))),
        };
        let page = start.map(|start| {
            let end = self
                .page_size
                .map_or(self.tools.len(), |n| (start + n).min(self.tools.len()));
            let page = ToolsPage::new(self.tools[start..end].to_vec());
            if end < self.tools.len() {
                page.with_next_cursor(end.to_string())
            } else {
                page
            }
        });
        Box::pin(async move { page })
    }

    fn list_catalog(
        &self,
        catalog: Catalog,
        _cursor: Option<String>,
    ) -> BoxFuture<'_, Result<Page>> {
        let items = match catalog {
            Catalog::Resources => self
                .resources
                .iter()
                .map(|r| {
                    let mut entry = Object::new();
                    entry.insert("uri".into(), Value::String(r.uri.clone()));
                    entry.insert("name".into(), Value::String(r.uri.clone()));
                    if let Some(mime) = &r.mime_type {
                        entry.insert("mimeType".into(), Value::String(mime.clone()));
                    }
                    entry
                })
                .collect(),
            Catalog::Prompts => self.prompts.iter().map(|(p, _)| p.clone()).collect(),
            Catalog::Skills => self.skills.clone(),
            _ => Vec::new(),
        };
        Box::pin(async move { Ok(Page::new(items)) })
    }

    fn get_prompt(
        &self,
        name: &str,
        _arguments: Map<String, Value>,
    ) -> BoxFuture<'_, Result<GetPromptResult>> {
        let found = self.prompts.iter().find(|(p, _)| p["name"] == name);
        let answer = match found {
            Some((_, result)) => Ok(result.clone()),
            None => Err(Error::new(
                ErrorKind::Server,
                format!("this server has no prompt `{name}`"),
            )),
        };
        Box::pin(async move { answer })
    }

    fn read_resource(&self, uri: &str) -> BoxFuture<'_, Result<ReadResourceResult>> {
        let found = self.resources.iter().find(|r| r.uri == uri);
        let answer = match found {
            Some(contents) => Ok(ReadResourceResult::new(vec![contents.clone()])),
            None => Err(Error::new(
                ErrorKind::Server,
                format!("this server has no resource `{uri}`"),
            )),
        };
        Box::pin(async move { answer })
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        context: CallContext,
    ) -> BoxFuture<'_, Result<CallToolResponse>> {
        match self.handlers.get(name) {
            Some(handler) => handler(arguments, context),
            None => {
                let err = Error::new(
                    ErrorKind::UnknownTool,
                    format!("this server has no tool `{name}`"),
                );
                Box::pin(async move { Err(err) })
            }
        }
    }
}
