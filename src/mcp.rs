//! The MCP model: serde types that follow MCP's wire JSON (protocol revisions
//! 2025-06-18 through 2026-07-28).
//!
//! Every type keeps what it does not interpret: `annotations`, `_meta` and any
//! field a later protocol revision adds survive a round trip. A content block
//! whose `type` is unknown (or whose known type is malformed) is kept as
//! [`Content::Unknown`] instead of failing the whole result; later stages render
//! it as a placeholder.
//!
//! A `tools/call` answer is a [`CallToolResponse`]: a completed
//! [`CallToolResult`], or (from 2026-07-28, by its `resultType`) a request for
//! input ([`InputRequiredResult`]) or a task handle ([`CreateTaskResult`]). A
//! [`CallToolResult`] never holds one of those: reading one whose `resultType`
//! is not `complete` fails.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

mod rounds;
mod sampling;
mod tasks;

pub use rounds::{
    CacheScope, CallToolResponse, CreateTaskResult, ElicitAction, ElicitResult, Elicitation,
    FormElicitation, InputRequest, InputRequests, InputRequiredResult, InputResponse,
    InputResponses, ResultType, UrlElicitation,
};
pub use sampling::{
    CreateMessageParams, CreateMessageResult, IncludeContext, ListRootsResult, ModelHint,
    ModelPreferences, Role, Root, SamplingContent, SamplingMessage, StopReason, ToolChoice,
    ToolChoiceMode, ToolResult, ToolUse,
};
pub use tasks::{TaskState, TaskStatus};

/// A JSON object.
pub type Object = Map<String, Value>;

/// An MCP tool, as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's name on its server.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the tool's arguments.
    pub input_schema: Value,
    /// The JSON Schema of the tool's `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, ...), kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Object>,
    /// Icons, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl Tool {
    /// Whether the tool runs as a task (`execution.taskSupport`, MCP
    /// 2025-11-25): `"required"`, `"optional"` or `"forbidden"`, as sent;
    /// `None` when the tool does not say (which means forbidden).
    pub fn task_support(&self) -> Option<&str> {
        self.extra.get("execution")?.get("taskSupport")?.as_str()
    }

    /// Whether the model may see and call the tool, by the MCP Apps
    /// extension (`io.modelcontextprotocol/ui`): `false` when its
    /// `_meta.ui.visibility` lists who may call it and `"model"` is not among
    /// them (`["app"]`: a tool the app's own interface calls). Without a
    /// `visibility`, a tool is for both.
    ///
    /// ```
    /// use mcp_adapters::Tool;
    /// use serde_json::json;
    ///
    /// let mut tool = Tool::new("save_pdf", "Saves the viewer's edits", json!({"type": "object"}));
    /// assert!(tool.visible_to_model());
    /// tool.meta = Some(json!({"ui": {"visibility": ["app"]}}).as_object().unwrap().clone());
    /// assert!(!tool.visible_to_model());
    /// ```
    pub fn visible_to_model(&self) -> bool {
        let visibility = self
            .meta
            .as_ref()
            .and_then(|meta| meta.get("ui"))
            .and_then(|ui| ui.get("visibility"));
        match visibility {
            Some(Value::Array(callers)) => callers.iter().any(|c| c.as_str() == Some("model")),
            _ => true,
        }
    }

    /// The tool's user interface under the MCP Apps extension: a `ui://`
    /// resource a host renders beside the call's result
    /// (`_meta.ui.resourceUri`, or the older flat `_meta["ui/resourceUri"]`).
    pub fn ui_resource_uri(&self) -> Option<&str> {
        let meta = self.meta.as_ref()?;
        meta.get("ui")
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str)
    }

    /// A tool with a name, a description and an input schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            extra: Object::new(),
        }
    }
}

/// Reads the tools of a `tools/list` result (`{"tools": [...], "nextCursor": ...}`)
/// or of a bare array of tools.
///
/// # Errors
///
/// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the offending tool's index
/// when the value is neither form or a tool is malformed.
pub fn parse_tools_list(value: Value) -> Result<Vec<Tool>> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(mut map) => match map.remove("tools") {
            Some(Value::Array(items)) => items,
            Some(_) => return Err(Error::input("`tools` is not an array").with_path("/tools")),
            None => {
                return Err(Error::input(
                    "expected a tools/list result ({\"tools\": [...]}) or an array of tools",
                ));
            }
        },
        _ => {
            return Err(Error::input(
                "expected a tools/list result ({\"tools\": [...]}) or an array of tools",
            ));
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value(item).map_err(|e| {
                Error::input("malformed tool")
                    .with_path(format!("/tools/{i}"))
                    .with_source(e)
            })
        })
        .collect()
}

/// The result of a completed `tools/call` (`resultType` `complete`, or absent
/// before 2026-07-28).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", try_from = "CallToolResultWire")]
pub struct CallToolResult {
    /// The content blocks, in the server's order.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output: an object up to 2025-11-25, any JSON value from 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reported an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret (`resultType`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

/// What a [`CallToolResult`] is read from: the same fields, before the check
/// that the result is complete.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallToolResultWire {
    #[serde(default)]
    content: Vec<Content>,
    #[serde(default)]
    structured_content: Option<Value>,
    #[serde(default)]
    is_error: bool,
    #[serde(default, rename = "_meta")]
    meta: Option<Object>,
    #[serde(flatten)]
    extra: Object,
}

impl TryFrom<CallToolResultWire> for CallToolResult {
    type Error = String;

    fn try_from(wire: CallToolResultWire) -> std::result::Result<Self, String> {
        CallToolResult::check_complete(&wire.extra)?;
        Ok(CallToolResult {
            content: wire.content,
            structured_content: wire.structured_content,
            is_error: wire.is_error,
            meta: wire.meta,
            extra: wire.extra,
        })
    }
}

impl CallToolResult {
    /// Refuses fields whose `resultType` says the result is not complete.
    pub(crate) fn check_complete(extra: &Object) -> std::result::Result<(), String> {
        match extra.get("resultType") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::String(s)) if s == "complete" => Ok(()),
            Some(other) => {
                let shown = other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_owned);
                Err(format!(
                    "resultType `{shown}` is not a completed tool result (read it as a CallToolResponse)"
                ))
            }
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(text)],
            ..Default::default()
        }
    }

    /// An error result (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..Self::text(text)
        }
    }
}

/// One content block of a [`CallToolResult`].
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `{"type": "text"}`
    Text(TextContent),
    /// `{"type": "image"}`
    Image(MediaContent),
    /// `{"type": "audio"}`
    Audio(MediaContent),
    /// `{"type": "resource_link"}`
    ResourceLink(ResourceLink),
    /// `{"type": "resource"}`: an embedded resource.
    Resource(EmbeddedResource),
    /// A block whose type is unknown, or a known type that is malformed, kept as sent.
    Unknown(Value),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// The block's annotations (`audience`, `priority`, `lastModified`), as sent.
    pub fn annotations(&self) -> Option<&Object> {
        match self {
            Content::Text(t) => t.annotations.as_ref(),
            Content::Image(m) | Content::Audio(m) => m.annotations.as_ref(),
            Content::ResourceLink(l) => l.annotations.as_ref(),
            Content::Resource(r) => r.annotations.as_ref(),
            Content::Unknown(v) => match v.get("annotations") {
                Some(Value::Object(map)) => Some(map),
                _ => None,
            },
        }
    }

    /// Whether the block is meant for the model: `true` unless its
    /// annotations' `audience` lists roles and `assistant` is not one of
    /// them (`["user"]`: the block is for the person only).
    ///
    /// ```
    /// use mcp_adapters::Content;
    /// use serde_json::json;
    ///
    /// let for_user = Content::from_value(json!({"type": "text", "text": "Receipt #12", "annotations": {"audience": ["user"]}}));
    /// assert!(!for_user.for_model());
    /// assert!(Content::text("42").for_model());
    /// ```
    pub fn for_model(&self) -> bool {
        match self.annotations().and_then(|a| a.get("audience")) {
            Some(Value::Array(roles)) => roles.iter().any(|r| r.as_str() == Some("assistant")),
            _ => true,
        }
    }

    /// The block's `type` as sent.
    pub fn type_name(&self) -> &str {
        match self {
            Content::Text(_) => "text",
            Content::Image(_) => "image",
            Content::Audio(_) => "audio",
            Content::ResourceLink(_) => "resource_link",
            Content::Resource(_) => "resource",
            Content::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }
}

/// A text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Audience and priority hints, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Object>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

/// An image or audio block: base64 data and its MIME type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaContent {
    /// The base64-encoded bytes.
    pub data: String,
    /// The MIME type, such as `image/png`.
    pub mime_type: String,
    /// Audience and priority hints, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Object>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

/// A link to a resource the client may read; this library never fetches it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// The resource's name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Audience and priority hints, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Object>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret (`icons`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

/// A resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Audience and priority hints, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Object>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

/// A catalogue a server lists besides its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Catalog {
    /// `resources/list`: resources by URI.
    Resources,
    /// `resources/templates/list`: URI templates of resources.
    ResourceTemplates,
    /// `prompts/list`: prompts by name.
    Prompts,
    /// `skills/list` (the Skills extension, SEP-2640): each skill's
    /// `SKILL.md` URI, its frontmatter and the manifest of its files.
    Skills,
}

impl Catalog {
    /// The method that lists them.
    pub fn method(self) -> &'static str {
        match self {
            Catalog::Resources => "resources/list",
            Catalog::ResourceTemplates => "resources/templates/list",
            Catalog::Prompts => "prompts/list",
            Catalog::Skills => "skills/list",
        }
    }

    /// The key of the list in the answer.
    pub fn key(self) -> &'static str {
        match self {
            Catalog::Resources => "resources",
            Catalog::ResourceTemplates => "resourceTemplates",
            Catalog::Prompts => "prompts",
            Catalog::Skills => "skills",
        }
    }
}

/// One page of a [`Catalog`]: each entry as the server sent it (`uri` or
/// `uriTemplate`, `name`, `title`, `description`, `mimeType`, a prompt's
/// `arguments`, ...), and the cursor of the next page.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Page {
    /// The entries.
    pub items: Vec<Object>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
}

impl Page {
    /// A page of `items`, the last one.
    pub fn new(items: Vec<Object>) -> Self {
        Page {
            items,
            next_cursor: None,
        }
    }
}

/// What `prompts/get` answers: the prompt's messages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptResult {
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// Its content: a text, an image, audio, a resource link or an embedded resource.
    pub content: Content,
}

impl PromptMessage {
    /// A message of `role` with `content`.
    pub fn new(role: impl Into<String>, content: Content) -> Self {
        PromptMessage {
            role: role.into(),
            content,
        }
    }
}

/// What `resources/read` answers: the resource's contents (a resource may
/// have several parts, each with its own URI).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents, text or base64 blobs.
    pub contents: Vec<ResourceContents>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret (`ttlMs`, `cacheScope`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl ReadResourceResult {
    /// A result of these contents.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        ReadResourceResult {
            contents,
            ..Default::default()
        }
    }
}

/// The contents of an embedded resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text, for a text resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The base64-encoded bytes, for a blob resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

impl ResourceContents {
    /// A text resource at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Content::from_value(value))
    }
}

impl Content {
    /// Reads a content block; a block of unknown or malformed type is kept as [`Content::Unknown`].
    pub fn from_value(value: Value) -> Content {
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        let parsed = match kind {
            "text" => TextContent::deserialize(&value).map(Content::Text),
            "image" => MediaContent::deserialize(&value).map(Content::Image),
            "audio" => MediaContent::deserialize(&value).map(Content::Audio),
            "resource_link" => ResourceLink::deserialize(&value).map(Content::ResourceLink),
            "resource" => EmbeddedResource::deserialize(&value)
                .and_then(|r| {
                    if r.resource.text.is_some() == r.resource.blob.is_some() {
                        Err(serde::de::Error::custom("exactly one of text and blob"))
                    } else {
                        Ok(r)
                    }
                })
                .map(Content::Resource),
            _ => return Content::Unknown(value),
        };
        parsed.unwrap_or(Content::Unknown(value))
    }
}

/// Serializes a content block's fields with its `type` first.
fn tagged<S: Serializer, T: Serialize>(
    tag: &str,
    inner: &T,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    let mut value = serde_json::to_value(inner).map_err(serde::ser::Error::custom)?;
    if let Value::Object(map) = &mut value {
        map.insert("type".into(), Value::String(tag.into()));
        map.sort_keys_type_first();
    }
    value.serialize(s)
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Content::Text(c) => tagged("text", c, serializer),
            Content::Image(c) => tagged("image", c, serializer),
            Content::Audio(c) => tagged("audio", c, serializer),
            Content::ResourceLink(c) => tagged("resource_link", c, serializer),
            Content::Resource(c) => tagged("resource", c, serializer),
            Content::Unknown(v) => v.serialize(serializer),
        }
    }
}

trait TypeFirst {
    fn sort_keys_type_first(&mut self);
}

impl TypeFirst for Object {
    fn sort_keys_type_first(&mut self) {
        if let Some(t) = self.shift_remove("type") {
            let rest = std::mem::take(self);
            self.insert("type".into(), t);
            self.extend(rest);
        }
    }
}
