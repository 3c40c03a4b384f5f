//! What a server asks the client for besides a person's answer: a model's
//! completion (`sampling/createMessage`) and the client's roots
//! (`roots/list`).
//!
//! Both exist in every revision from 2025-06-18 on: as requests the server
//! sends during a call (up to 2025-11-25) and as input requests inside an
//! `input_required` result (2026-07-28, where both are deprecated but fully
//! functional). The types follow the wire JSON of 2025-11-25, which added tool
//! use to sampling (SEP-1577): messages may hold `tool_use` and `tool_result`
//! blocks, and a request may offer `tools` with a `toolChoice`.
//!
//! As everywhere in [`mcp`](crate::mcp), what a type does not interpret
//! (`_meta`, fields of later revisions) survives a round trip, and a content
//! block of a type this library does not know is kept as
//! [`SamplingContent::Unknown`].

use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{Content, MediaContent, Object, TextContent, Tool};
use crate::error::{Error, Result};

/// A string-valued wire enum whose unknown values are kept as sent.
macro_rules! open_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
            /// A value this library does not know, as sent.
            Other(String),
        }

        impl $name {
            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $wire,)+
                    $name::Other(other) => other,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($wire => $name::$variant,)+
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                Ok($name::from(s.as_str()))
            }
        }
    };
}

open_enum! {
    /// How much of the client's context a server asks to be included
    /// (`includeContext`; `thisServer` and `allServers` are deprecated).
    IncludeContext {
        /// `"none"`, the default.
        None = "none",
        /// `"thisServer"`: context from the requesting server's sessions.
        ThisServer = "thisServer",
        /// `"allServers"`: context from every server the client talks to.
        AllServers = "allServers",
    }
}

open_enum! {
    /// Why the model stopped (`stopReason`).
    StopReason {
        /// `"endTurn"`: the model finished its answer.
        EndTurn = "endTurn",
        /// `"stopSequence"`: it produced one of the stop sequences.
        StopSequence = "stopSequence",
        /// `"maxTokens"`: it reached `maxTokens`.
        MaxTokens = "maxTokens",
        /// `"toolUse"`: it called one of the request's tools.
        ToolUse = "toolUse",
    }
}

open_enum! {
    /// Whether the model may, must or must not call a tool (`toolChoice.mode`).
    ToolChoiceMode {
        /// `"auto"`, the default: the model decides.
        Auto = "auto",
        /// `"required"`: the model must call at least one tool.
        Required = "required",
        /// `"none"`: the model must not call a tool.
        None = "none",
    }
}

/// Who speaks a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Role {
    /// The user (tool results are the user's).
    User,
    /// The model (tool uses are the model's).
    Assistant,
}

impl Role {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// `sampling/createMessage`: the server asks the client's model for a
/// completion. `maxTokens` is required and the client must respect it.
///
/// ```
/// use mcp_adapters::mcp::{CreateMessageParams, SamplingMessage};
/// use serde_json::json;
///
/// let asked: CreateMessageParams = serde_json::from_value(json!({
///     "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2 + 2?"}}],
///     "systemPrompt": "Answer briefly.",
///     "maxTokens": 100
/// }))?;
/// assert_eq!(asked.messages[0].text(), "What is 2 + 2?");
/// let built = CreateMessageParams::new(vec![SamplingMessage::user_text("What is 2 + 2?")], 100)
///     .with_system_prompt("Answer briefly.");
/// assert_eq!(built, asked);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageParams {
    /// The conversation so far, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// Advisory hints for choosing a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt; the client may change or omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// How much of the client's context to include (`none` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens the completion may have.
    pub max_tokens: u64,
    /// Texts that end the completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// Tools the model may call (2025-11-25); the server runs them, not the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// Whether the model may call them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret (`task`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl CreateMessageParams {
    /// A request for at most `max_tokens` tokens continuing `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            meta: None,
            extra: Object::new(),
        }
    }

    /// Sets the system prompt.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Offers `tools`, with `mode` as the tool choice when given.
    pub fn with_tools(mut self, tools: Vec<Tool>, mode: Option<ToolChoiceMode>) -> Self {
        self.tools = Some(tools);
        self.tool_choice = mode.map(ToolChoice::new);
        self
    }

    /// The context asked for: [`IncludeContext::None`] when absent.
    pub fn include_context(&self) -> IncludeContext {
        self.include_context.clone().unwrap_or(IncludeContext::None)
    }

    /// Reads a request's `params`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the field that is missing or malformed.
    pub fn from_value(params: Value) -> Result<Self> {
        CreateMessageParams::deserialize(&params).map_err(|e| {
            let error = Error::input("malformed sampling/createMessage request").with_source(e);
            match locate_bad_message(&params) {
                Some(at) => error.with_path(at),
                None => error,
            }
        })
    }
}

/// Where in `params` a message fails to read (the request's own fields are
/// read through `extra`, which hides the path of a nested failure).
fn locate_bad_message(params: &Value) -> Option<String> {
    let messages = params.get("messages")?.as_array()?;
    messages.iter().enumerate().find_map(|(i, message)| {
        serde_path_to_error::deserialize::<_, SamplingMessage>(message)
            .err()
            .map(|e| format!("/messages/{i}{}", crate::json::pointer_of(e.path())))
    })
}

/// `toolChoice`: whether the model may call the request's tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolChoice {
    /// `auto` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl ToolChoice {
    /// A tool choice of `mode`.
    pub fn new(mode: ToolChoiceMode) -> Self {
        ToolChoice {
            mode: Some(mode),
            extra: Object::new(),
        }
    }

    /// The mode: [`ToolChoiceMode::Auto`] when absent.
    pub fn mode(&self) -> ToolChoiceMode {
        self.mode.clone().unwrap_or(ToolChoiceMode::Auto)
    }
}

/// Advisory preferences for choosing the model (`modelPreferences`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model names or families, most preferred first; each is matched as a
    /// substring of a model's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl ModelPreferences {
    /// The first of `models` that the hints name, trying the hints in
    /// order: a hint names a model when it is a substring of the model's
    /// name, ignoring ASCII case. `None` when no hint names any of them
    /// (choose by the priorities, or your default).
    ///
    /// ```
    /// use mcp_adapters::mcp::ModelPreferences;
    /// use serde_json::json;
    ///
    /// let prefs: ModelPreferences = serde_json::from_value(json!({"hints": [{"name": "sonnet"}, {"name": "claude"}]}))?;
    /// let models = ["claude-haiku-4-5", "claude-sonnet-4-5", "gpt-5"];
    /// assert_eq!(prefs.pick(&models), Some("claude-sonnet-4-5"));
    /// assert_eq!(prefs.pick(&["gpt-5"]), None);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn pick<'a>(&self, models: &[&'a str]) -> Option<&'a str> {
        let hints = self.hints.as_deref().unwrap_or_default();
        hints
            .iter()
            .filter_map(|hint| hint.name.as_deref())
            .filter(|name| !name.is_empty())
            .find_map(|name| {
                let name = name.to_ascii_lowercase();
                models
                    .iter()
                    .find(|model| model.to_ascii_lowercase().contains(&name))
                    .copied()
            })
    }
}

/// One model hint.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelHint {
    /// A model name or family, matched as a substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

/// One message of a sampling conversation: a role and one or more blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// The blocks, in order: on the wire one block (every revision) or a
    /// list of them (2025-11-25 and later); a single block is written as one.
    #[serde(with = "one_or_many")]
    pub content: Vec<SamplingContent>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

impl SamplingMessage {
    /// A message of `role` with `content`.
    pub fn new(role: Role, content: Vec<SamplingContent>) -> Self {
        SamplingMessage {
            role,
            content,
            meta: None,
        }
    }

    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![SamplingContent::text(text)])
    }

    /// An assistant message of one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, vec![SamplingContent::text(text)])
    }

    /// The texts of the message's text blocks, joined with newlines.
    pub fn text(&self) -> String {
        join_texts(&self.content)
    }
}

fn join_texts(content: &[SamplingContent]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            SamplingContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One block of a sampling message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SamplingContent {
    /// `{"type": "text"}`
    Text(TextContent),
    /// `{"type": "image"}`: base64 data and its MIME type.
    Image(MediaContent),
    /// `{"type": "audio"}`: base64 data and its MIME type.
    Audio(MediaContent),
    /// `{"type": "tool_use"}`: the model calls one of the request's tools.
    ToolUse(ToolUse),
    /// `{"type": "tool_result"}`: the server's result of such a call.
    ToolResult(ToolResult),
    /// A block whose type is unknown, or a known type that is malformed, kept as sent.
    Unknown(Value),
}

impl SamplingContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// The block's `type` as sent.
    pub fn type_name(&self) -> &str {
        match self {
            SamplingContent::Text(_) => "text",
            SamplingContent::Image(_) => "image",
            SamplingContent::Audio(_) => "audio",
            SamplingContent::ToolUse(_) => "tool_use",
            SamplingContent::ToolResult(_) => "tool_result",
            SamplingContent::Unknown(v) => {
                v.get("type").and_then(Value::as_str).unwrap_or("unknown")
            }
        }
    }

    /// Reads a block; one of unknown or malformed type is kept as [`SamplingContent::Unknown`].
    pub fn from_value(value: Value) -> Self {
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        let parsed = match kind {
            "text" => TextContent::deserialize(&value).map(SamplingContent::Text),
            "image" => MediaContent::deserialize(&value).map(SamplingContent::Image),
            "audio" => MediaContent::deserialize(&value).map(SamplingContent::Audio),
            "tool_use" => ToolUse::deserialize(&value).map(SamplingContent::ToolUse),
            "tool_result" => ToolResult::deserialize(&value).map(SamplingContent::ToolResult),
            _ => return SamplingContent::Unknown(value),
        };
        parsed.unwrap_or(SamplingContent::Unknown(value))
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        Ok(SamplingContent::from_value(Value::deserialize(
            deserializer,
        )?))
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use super::tagged;
        match self {
            SamplingContent::Text(c) => tagged("text", c, serializer),
            SamplingContent::Image(c) => tagged("image", c, serializer),
            SamplingContent::Audio(c) => tagged("audio", c, serializer),
            SamplingContent::ToolUse(c) => tagged("tool_use", c, serializer),
            SamplingContent::ToolResult(c) => tagged("tool_result", c, serializer),
            SamplingContent::Unknown(v) => v.serialize(serializer),
        }
    }
}

/// A call of one of the request's tools, by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUse {
    /// The call's id; its result names it in `toolUseId`.
    pub id: String,
    /// The tool's name, as the request offered it.
    pub name: String,
    /// The arguments.
    pub input: Object,
    /// Protocol metadata (keep it: providers may use it for caching).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

impl ToolUse {
    /// A call `id` of the tool `name` with `input`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Object) -> Self {
        ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
        }
    }
}

/// The result of a [`ToolUse`], sent back by the server in the next request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResult {
    /// The [`ToolUse::id`] it answers.
    pub tool_use_id: String,
    /// The result's blocks (those of a `CallToolResult`).
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

/// The client's answer to `sampling/createMessage`: the model's message, the
/// model that wrote it and why it stopped.
///
/// ```
/// use mcp_adapters::mcp::{CreateMessageResult, StopReason};
/// use serde_json::json;
///
/// let answer = CreateMessageResult::text("claude-sonnet-4-5", "4").with_stop_reason(StopReason::EndTurn);
/// assert_eq!(serde_json::to_value(&answer)?, json!({
///     "role": "assistant", "content": {"type": "text", "text": "4"},
///     "model": "claude-sonnet-4-5", "stopReason": "endTurn"
/// }));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Who speaks: the assistant.
    pub role: Role,
    /// The blocks: text, media, or `tool_use` blocks when the model called tools.
    #[serde(with = "one_or_many")]
    pub content: Vec<SamplingContent>,
    /// The model that wrote it.
    pub model: String,
    /// Why the model stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
    /// Fields this library does not interpret, kept as sent.
    #[serde(flatten)]
    pub extra: Object,
}

impl CreateMessageResult {
    /// An assistant message of `content` written by `model`.
    pub fn new(model: impl Into<String>, content: Vec<SamplingContent>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content,
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: Object::new(),
        }
    }

    /// An assistant message of one text block.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(model, vec![SamplingContent::text(text)])
    }

    /// Sets why the model stopped.
    pub fn with_stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }

    /// The texts of the text blocks, joined with newlines.
    pub fn text_content(&self) -> String {
        join_texts(&self.content)
    }

    /// The tool uses, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.content.iter().filter_map(|block| match block {
            SamplingContent::ToolUse(t) => Some(t),
            _ => None,
        })
    }
}

/// `content`: one block or a list of them on the wire, a list here.
mod one_or_many {
    use super::SamplingContent;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    pub fn serialize<S: Serializer>(
        content: &[SamplingContent],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match content {
            [one] => one.serialize(serializer),
            many => many.serialize(serializer),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<SamplingContent>, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Array(items) => Ok(items.into_iter().map(SamplingContent::from_value).collect()),
            one @ Value::Object(_) => Ok(vec![SamplingContent::from_value(one)]),
            other => Err(serde::de::Error::custom(format!(
                "`content` must be a content block or a list of them, not {}",
                crate::json::type_name(&other)
            ))),
        }
    }
}

/// A directory or file the client lets servers work in (`roots/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

impl Root {
    /// A root at `uri`, which must be a `file://` URI.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `uri` is not a `file://` URI.
    pub fn new(uri: impl Into<String>) -> Result<Self> {
        let uri = uri.into();
        let parsed = url::Url::parse(&uri)
            .map_err(|e| Error::input(format!("root `{uri}` is not a URI")).with_source(e))?;
        if parsed.scheme() != "file" {
            return Err(Error::input(format!(
                "root `{uri}` is not a file:// URI (MCP roots are files and directories)"
            )));
        }
        Ok(Root {
            uri,
            name: None,
            meta: None,
        })
    }

    /// A root at the file or directory `path`, named after its last
    /// component: its canonical path when it exists (`..` and symbolic links
    /// resolved), else the path made absolute against the current directory.
    ///
    /// ```
    /// use mcp_adapters::mcp::Root;
    ///
    /// # #[cfg(unix)] {
    /// let root = Root::from_path("/home/me/my project")?;
    /// assert_eq!(root.uri, "file:///home/me/my%20project");
    /// assert_eq!(root.name.as_deref(), Some("my project"));
    /// # }
    /// # Ok::<(), mcp_adapters::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when the path cannot be made absolute or has no
    /// file URI (on Windows, a path without a drive).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let absolute = std::fs::canonicalize(path)
            .or_else(|_| std::path::absolute(path))
            .map_err(|e| {
                Error::input(format!("root `{}` cannot be made absolute", path.display()))
                    .with_source(e)
            })?;
        let uri = url::Url::from_file_path(&absolute).map_err(|()| {
            Error::input(format!("root `{}` has no file:// URI", absolute.display()))
        })?;
        Ok(Root {
            uri: uri.into(),
            name: absolute
                .file_name()
                .map(|name| name.to_string_lossy().into_owned()),
            meta: None,
        })
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots, in the client's order.
    pub roots: Vec<Root>,
    /// Protocol metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Object>,
}

impl ListRootsResult {
    /// A result listing `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult { roots, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_with_tools_and_history_round_trips() {
        // 2025-11-25 schema examples: request-with-tools.json and the follow-up
        // with tool results (modelcontextprotocol/modelcontextprotocol).
        let wire = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "What's the weather like in Paris and London?"}},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_abc123", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_def456", "name": "get_weather", "input": {"city": "London"}, "_meta": {"c": 1}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "call_abc123", "content": [{"type": "text", "text": "18°C"}]},
                    {"type": "tool_result", "toolUseId": "call_def456", "content": [{"type": "text", "text": "15°C"}], "isError": false}
                ]}
            ],
            "tools": [{"name": "get_weather", "description": "Get current weather for a city",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}],
            "toolChoice": {"mode": "auto"},
            "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8},
            "includeContext": "thisServer",
            "maxTokens": 1000,
            "task": {"ttl": 60000}
        });
        let params = CreateMessageParams::from_value(wire.clone()).unwrap();
        assert_eq!(params.include_context(), IncludeContext::ThisServer);
        assert_eq!(
            params.tool_choice.as_ref().unwrap().mode(),
            ToolChoiceMode::Auto
        );
        assert_eq!(params.messages[1].content.len(), 2);
        assert!(matches!(
            &params.messages[2].content[0],
            SamplingContent::ToolResult(r) if r.tool_use_id == "call_abc123"
        ));
        assert_eq!(params.extra["task"], json!({"ttl": 60000}));
        assert_eq!(serde_json::to_value(&params).unwrap(), wire);
    }

    #[test]
    fn malformed_requests_name_the_field() {
        let err = CreateMessageParams::from_value(json!({"messages": []})).unwrap_err();
        assert!(err.message_with_causes().contains("maxTokens"), "{err:#}");
        let err = CreateMessageParams::from_value(
            json!({"messages": [{"role": "system", "content": []}], "maxTokens": 5}),
        )
        .unwrap_err();
        assert_eq!(
            err.location().path.as_deref(),
            Some("/messages/0/role"),
            "{err}"
        );
    }

    #[test]
    fn unknown_blocks_and_values_are_kept() {
        let message: SamplingMessage = serde_json::from_value(json!({
            "role": "user", "content": [{"type": "video", "data": "x"}, {"type": "image", "data": 3}]
        }))
        .unwrap();
        assert!(matches!(&message.content[0], SamplingContent::Unknown(_)));
        assert_eq!(message.content[1].type_name(), "image");
        assert!(matches!(&message.content[1], SamplingContent::Unknown(_)));
        let result: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant", "content": [], "model": "m", "stopReason": "refusal"
        }))
        .unwrap();
        assert_eq!(
            result.stop_reason,
            Some(StopReason::Other("refusal".into()))
        );
        assert!(
            serde_json::from_value::<SamplingMessage>(json!({"role": "user", "content": "hi"}))
                .is_err()
        );
    }

    #[test]
    fn roots_are_file_uris() {
        // An existing path is resolved, so `..` names a directory.
        let dir = std::env::current_dir().unwrap();
        let parent = Root::from_path(dir.join("..")).unwrap();
        let expected = dir
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(parent.name.as_deref(), Some(expected.as_str()));
        assert!(!parent.uri.contains(".."), "{}", parent.uri);
        assert!(Root::new("https://example.com/x").is_err());
        assert!(Root::new("not a uri").is_err());
        let root = Root::new("file:///tmp/x").unwrap().with_name("x");
        assert_eq!(
            serde_json::to_value(ListRootsResult::new(vec![root])).unwrap(),
            json!({"roots": [{"uri": "file:///tmp/x", "name": "x"}]})
        );
    }
}
