//! The typed front end of a provider spec: the YAML document as serde structs.
//!
//! Every struct denies unknown fields and every enumerated value is an enum,
//! so nothing in a spec is silently ignored or replaced by a default it did
//! not ask for. Templates stay JSON values here; [`compile`](super::compile)
//! turns them into plans once the document is known to be well formed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};

/// A provider spec, after `extends` has been merged.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpecDoc {
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Where the spec's facts come from, each with the date it was checked.
    #[serde(default)]
    pub sources: Vec<SourceDoc>,
    pub tools: ToolsDoc,
    /// The provider's subset of JSON Schema, applied to every tool's schema.
    #[serde(default)]
    pub schema: Option<SchemaDoc>,
    #[serde(default)]
    pub strict: Option<StrictDoc>,
    /// What each tool choice mode is in a request; a mode not listed has no
    /// way to be said.
    #[serde(default)]
    pub tool_choice: BTreeMap<ChoiceMode, ChoiceDoc>,
    #[serde(default)]
    pub options: BTreeMap<String, OptionDoc>,
    pub calls: CallsDoc,
    pub results: ResultsDoc,
    #[serde(default)]
    pub stream: Option<StreamDoc>,
    #[serde(default)]
    pub sampling: Option<SamplingDoc>,
    /// How the provider expresses deferred tools, tool search and namespaces.
    #[serde(default)]
    pub search: Option<SearchDoc>,
}

/// The `search:` section: deferred loading, the provider's own search tools,
/// a search the client answers, and namespaces.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchDoc {
    /// Merged into the definition of a deferred tool.
    pub defer: Map<String, Value>,
    /// Search tools the provider runs itself, by name (literal JSON).
    #[serde(default)]
    pub server_tools: BTreeMap<String, Value>,
    /// A search the client answers, in the provider's own shape.
    #[serde(default)]
    pub client: Option<ClientSearchDoc>,
    /// One group per server.
    #[serde(default)]
    pub namespace: Option<NamespaceDoc>,
}

/// A client-side search: the tool that offers it, how its calls are found
/// and how they are answered.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClientSearchDoc {
    /// The search tool's definition; absent: the library's search tool,
    /// listed through `tools.definition` like any tool.
    #[serde(default)]
    pub tool: Option<Value>,
    /// Which response items are search calls; absent: calls (`calls:`) to
    /// the search tool's name.
    #[serde(default)]
    pub calls: Option<SearchCallsDoc>,
    /// The answer to a search call.
    pub answer: Value,
    /// One item of `${references}` per tool found.
    #[serde(default)]
    pub reference: Option<Value>,
}

/// Search call items: which items, their id and their arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchCallsDoc {
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub arguments: ArgumentsDoc,
}

/// A namespace definition: one server's tools in a group of their own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NamespaceDoc {
    pub definition: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolsDoc {
    pub definition: Value,
    #[serde(default)]
    pub missing_description: MissingDescription,
}

/// What `${description}` is for a tool without a description.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingDescription {
    /// Absent (so `${description?}` vanishes).
    #[default]
    Omit,
    /// The empty string.
    EmptyString,
    /// Absent, and a description that is empty or blank once cleaned counts as absent too.
    OmitBlank,
}

/// One source of a spec's facts.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SourceDoc {
    /// A URL, or `owner/repo@commit:path` for a file of a repository.
    pub url: String,
    /// The date the spec was checked against it (`YYYY-MM-DD`).
    pub checked: String,
    /// What it is the source of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
}

/// The `schema:` section: rules (`mode: subset`) every tool's schema is rewritten by.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SchemaDoc {
    pub rules: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StrictDoc {
    pub rules: String,
    #[serde(default)]
    pub default: StrictDefault,
}

/// How strict-mode schemas are used, for specs that have strict rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StrictMode {
    /// Converted tools are strict; a tool that cannot be converted is sent
    /// non-strict with its original schema and reported as a fallback.
    #[default]
    Auto,
    /// Every tool is strict; a tool that cannot be converted is left out and reported as excluded.
    On,
    /// No tool is strict; schemas are sent as the server wrote them.
    Off,
}

impl std::str::FromStr for StrictMode {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "auto" => Ok(StrictMode::Auto),
            "true" | "on" => Ok(StrictMode::On),
            "false" | "off" => Ok(StrictMode::Off),
            _ => Err(Error::new(
                ErrorKind::Input,
                format!("strict mode `{s}`: expected auto, true or false"),
            )),
        }
    }
}

/// `auto`, `true` or `false`, with YAML booleans for the last two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StrictDefault(pub StrictMode);

impl<'de> Deserialize<'de> for StrictDefault {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) => Ok(StrictDefault(StrictMode::On)),
            Value::Bool(false) => Ok(StrictDefault(StrictMode::Off)),
            Value::String(s) if s == "auto" => Ok(StrictDefault(StrictMode::Auto)),
            other => Err(serde::de::Error::custom(format!(
                "expected auto, true or false (booleans unquoted), got {other}"
            ))),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptionDoc {
    #[serde(default)]
    pub description: Option<String>,
    pub values: BTreeMap<String, OptionValueDoc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptionValueDoc {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub merge_last: Option<Map<String, Value>>,
    #[serde(default)]
    pub merge_each: Option<Map<String, Value>>,
    /// Deep-merged over the spec's `results` when the option has this value
    /// (the loader merges it, so this is a whole results section).
    #[serde(default)]
    pub results: Option<ResultsDoc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallsDoc {
    pub locate: Vec<LocateDoc>,
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub name: FieldDoc,
    pub arguments: ArgumentsDoc,
}

/// Where the items are: a path (applies when the input has its first key), or
/// `{when, list}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum LocateDoc {
    Path(String),
    When { when: String, list: String },
}

/// Which items are calls: those whose `path` holds `equals`, or (without
/// `equals`) those where `path` is present and not `null`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SelectDoc {
    pub path: String,
    #[serde(default)]
    pub equals: Option<String>,
}

/// A field of a call item: a path, or `{path, optional}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum FieldDoc {
    Path(String),
    Full {
        path: String,
        #[serde(default)]
        optional: bool,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArgumentsDoc {
    pub path: String,
    pub format: ArgFormat,
    #[serde(default)]
    pub missing: MissingArguments,
}

/// How a call's arguments are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArgFormat {
    /// A JSON object.
    Object,
    /// A string holding a JSON object.
    JsonText,
    /// Either.
    ObjectOrJsonText,
}

/// What absent (or `null`) arguments mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MissingArguments {
    /// The call is rejected.
    #[default]
    Reject,
    /// `{}`, also for arguments sent as the JSON text `null`.
    EmptyObject,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResultsDoc {
    pub content: ContentForm,
    #[serde(default)]
    pub text_block: Option<Value>,
    pub envelope: Value,
    #[serde(default)]
    pub error: ErrorDoc,
    #[serde(default)]
    pub structured_content: StructuredDoc,
    #[serde(default)]
    pub media: MediaDoc,
    #[serde(default)]
    pub follow_up: Option<FollowUpDoc>,
    #[serde(default)]
    pub request_limits: Vec<RequestLimitDoc>,
}

/// How media sent after the turn's answers (`follow_up` rules) are wrapped.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FollowUpDoc {
    /// A text item: the text that introduces each follow-up medium.
    pub text: Value,
    /// Wraps all the turn's follow-up items into one item (a user message);
    /// without it the items are appended as they are.
    #[serde(default)]
    pub envelope: Option<Value>,
}

/// A limit on the media one request carries, counted over one turn's media.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestLimitDoc {
    #[serde(default)]
    pub accept: Option<Vec<String>>,
    #[serde(default)]
    pub max_bytes: Option<u64>,
    #[serde(default)]
    pub max_items: Option<u64>,
}

/// What `${content}` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ContentForm {
    /// One string: the parts' texts joined with newlines.
    String,
    /// A list of blocks (texts through `text_block`).
    Blocks,
    /// A string, unless a media rule produced a block: then blocks.
    StringOrBlocks,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErrorDoc {
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub envelope: Option<Value>,
}

/// How `structuredContent` is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructuredMode {
    /// Only when `content` is empty (servers usually repeat it as text).
    #[default]
    Auto,
    /// Instead of `content`.
    Prefer,
    /// After `content`.
    Append,
    /// Never.
    Ignore,
}

impl std::str::FromStr for StructuredMode {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "auto" => Ok(StructuredMode::Auto),
            "prefer" => Ok(StructuredMode::Prefer),
            "append" => Ok(StructuredMode::Append),
            "ignore" => Ok(StructuredMode::Ignore),
            _ => Err(Error::new(
                ErrorKind::Input,
                format!("structured mode `{s}`: expected auto, prefer, append or ignore"),
            )),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StructuredDoc {
    #[serde(default, rename = "use")]
    pub use_: StructuredMode,
    #[serde(default)]
    pub render: RenderDoc,
}

/// How a `structuredContent` value reaches the model.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RenderDoc {
    Keyword(RenderKeyword),
    Rules(Vec<RuleDoc>),
}

impl Default for RenderDoc {
    fn default() -> Self {
        RenderDoc::Keyword(RenderKeyword::JsonText)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RenderKeyword {
    /// The value as JSON text.
    JsonText,
    /// The value itself is `${content}` (`content: string` only).
    Value,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MediaDoc {
    #[serde(default)]
    pub image: Option<RowDoc>,
    #[serde(default)]
    pub audio: Option<RowDoc>,
    #[serde(default)]
    pub resource_link: Option<RowDoc>,
    #[serde(default)]
    pub resource_text: Option<RowDoc>,
    #[serde(default)]
    pub resource_blob: Option<RowDoc>,
    #[serde(default)]
    pub unknown: Option<RowDoc>,
}

/// A media row: `placeholder` (the standard text form), or rules tried in order.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum RowDoc {
    Placeholder(PlaceholderKeyword),
    Rules(Vec<RuleDoc>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PlaceholderKeyword {
    Placeholder,
}

/// One media rule: the MIME types it takes and what it produces.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleDoc {
    #[serde(default)]
    pub accept: Option<Vec<String>>,
    #[serde(default)]
    pub block: Option<Value>,
    #[serde(default)]
    pub attach: Option<Value>,
    #[serde(default)]
    pub as_text: Option<String>,
    #[serde(default)]
    pub follow_up: Option<Value>,
    /// The largest payload (decoded bytes) the rule takes.
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// How a stream's bytes are cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Framing {
    /// Server-sent events: each `data:` payload is one JSON event (or the
    /// spec's `done` marker).
    Sse,
    /// Newline-delimited JSON: one event per line.
    Ndjson,
    /// JSON values one after another, such as the event objects an SDK
    /// yields, written out; a JSON array holds several events.
    Json,
    /// `application/vnd.amazon.eventstream` binary frames (cargo feature
    /// `eventstream`); each frame is the event `{"<event type>": payload}`.
    #[serde(rename = "eventstream")]
    EventStream,
}

impl Framing {
    /// The framing's name as a spec and the command line write it.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Sse => "sse",
            Framing::Ndjson => "ndjson",
            Framing::Json => "json",
            Framing::EventStream => "eventstream",
        }
    }
}

/// How a streamed response is read: its framing, and what each event does to
/// the assistant message being assembled.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamDoc {
    pub framing: Framing,
    /// A data payload (not JSON) that ends the stream, such as `[DONE]`.
    #[serde(default)]
    pub done: Option<String>,
    /// How an event is named for `on:`.
    #[serde(default)]
    pub name: Option<EventNameDoc>,
    #[serde(default)]
    pub message: MessageDoc,
    /// What becomes of a call still open when the stream ends.
    #[serde(default)]
    pub open_at_end: OpenAtEnd,
    pub events: Vec<EventRuleDoc>,
}

/// Where an event's name is.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum EventNameDoc {
    /// The string at a path of the event.
    Path { path: String },
    /// `wrapper`: the event is `{"<name>": {...}}`; rule paths address the inner object.
    Wrapper(WrapperKeyword),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WrapperKeyword {
    Wrapper,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageDoc {
    /// The message before any event.
    #[serde(default)]
    pub base: Option<Map<String, Value>>,
    /// Where the items go in the message; absent, the message is the list of items.
    #[serde(default)]
    pub items: Option<String>,
    /// Leave `items` out of a message that has none.
    #[serde(default)]
    pub omit_empty: bool,
    /// Items left out of the message when they equal one of these (an
    /// empty text part the API would refuse in a request).
    #[serde(default)]
    pub drop: Vec<Value>,
}

/// A call still open at the end of the stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OpenAtEnd {
    /// It is incomplete: never run, left out of the message.
    #[default]
    Drop,
    /// The end of the stream completes it (formats without a per-call end event).
    Close,
}

/// One event rule: which events it applies to and what each does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventRuleDoc {
    #[serde(default)]
    pub on: Option<OneOrMany>,
    #[serde(default)]
    pub when: Option<ConditionDoc>,
    #[serde(default)]
    pub message: Option<MessageMergeDoc>,
    #[serde(default)]
    pub open: Option<OpenDoc>,
    #[serde(default)]
    pub replace: Option<OpenDoc>,
    #[serde(default)]
    pub fragments: Option<FragmentsDoc>,
    #[serde(default)]
    pub whole: Option<WholeDoc>,
    #[serde(default)]
    pub append: Option<AppendDoc>,
    #[serde(default)]
    pub set: Option<SetDoc>,
    #[serde(default)]
    pub close: Option<KeyDoc>,
    #[serde(default)]
    pub end: Option<bool>,
    #[serde(default)]
    pub error: Option<OneOrMany>,
}

/// A name or a list of names (or of paths).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// An event whose `path` holds `equals`, or (without it) where `path` is present and not null.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConditionDoc {
    pub path: String,
    #[serde(default)]
    pub equals: Option<Value>,
}

/// Merge the object at a path into the message, or set message fields from event paths.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum MessageMergeDoc {
    Path(String),
    Fields(BTreeMap<String, String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenDoc {
    pub key: String,
    /// The item as the event carries it; absent: an empty object.
    #[serde(default)]
    pub item: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KeyDoc {
    pub key: String,
}

/// Call fragments: entries of a list, each merged into the call it belongs to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FragmentsDoc {
    pub list: String,
    /// A fragment's call id: a new id starts a new call, a known one continues it.
    #[serde(default)]
    pub id: Option<String>,
    /// A fragment's position key: continues the call last given it.
    #[serde(default)]
    pub index: Option<String>,
    /// Paths whose strings are appended (an object there counts as its JSON text).
    #[serde(default)]
    pub append: Vec<String>,
    /// Paths left out of the item.
    #[serde(default)]
    pub drop: Vec<String>,
}

/// Whole items: every element of a list (or the object) at a path is a complete item.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WholeDoc {
    pub list: String,
    #[serde(default)]
    pub pieces: Option<PiecesDoc>,
}

/// Elements that stream one item's arguments in pieces addressed by JSON path.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PiecesDoc {
    /// The object of an element that carries the piece protocol.
    pub at: String,
    /// Its list of pieces, each `{<path key>: "$.a.b[0]", <value>, <more>}`.
    pub list: String,
    /// Where, in that object, the assembled arguments go.
    pub into: String,
    /// A piece's JSON path key.
    pub path: String,
    /// The key that is true while more follows (on the object and on a piece).
    pub more: String,
    /// A piece key whose presence means the value `null`.
    #[serde(default)]
    pub null_key: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AppendDoc {
    /// The item's key; absent: the message itself.
    #[serde(default)]
    pub key: Option<String>,
    pub from: String,
    pub to: String,
    #[serde(default, rename = "as")]
    pub as_: AppendAs,
}

/// How appended fragments are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AppendAs {
    /// Concatenated into a string.
    #[default]
    Text,
    /// Concatenated JSON text, parsed into the value when the item closes
    /// (empty text leaves what was there, or `{}`).
    Json,
    /// Each fragment pushed onto a list.
    List,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetDoc {
    #[serde(default)]
    pub key: Option<String>,
    pub from: String,
    pub to: String,
}

/// How an MCP `sampling/createMessage` request becomes a request body, and
/// the provider's response a `CreateMessageResult`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SamplingDoc {
    /// The request body.
    pub request: Value,
    /// Request fields the provider has no place for: dropped, with a warning.
    #[serde(default)]
    pub ignore: Vec<SamplingParam>,
    #[serde(default)]
    pub system: Option<SystemDoc>,
    pub messages: MessagesDoc,
    #[serde(default)]
    pub tools: SamplingToolsDoc,
    /// What each `toolChoice` mode becomes, when sampling differs from the
    /// spec's own `tool_choice`; a mode not listed is an error.
    #[serde(default)]
    pub tool_choice: Option<BTreeMap<ChoiceMode, ChoiceDoc>>,
    pub response: ResponseDoc,
}

/// A field of a sampling request that a spec may place or ignore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SamplingParam {
    System,
    Temperature,
    StopSequences,
    Metadata,
}

/// Where the system prompt goes: a value for `${system}`, or a message put
/// before the others.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SystemDoc {
    #[serde(default)]
    pub value: Option<Value>,
    #[serde(default)]
    pub message: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessagesDoc {
    pub user: RoleDoc,
    pub assistant: RoleDoc,
    pub tool_use: ToolUseDoc,
    pub tool_results: ResultsPlacement,
    #[serde(default)]
    pub follow_ups: FollowUpPlacement,
    /// Consecutive messages of one role become one (APIs whose roles must alternate).
    #[serde(default)]
    pub merge_consecutive: bool,
    /// The form call ids must have; ids of the history that do not are
    /// replaced, the same way in tool uses and in the results that answer them.
    #[serde(default)]
    pub call_ids: Option<CallIdsDoc>,
}

/// The form of call ids a provider accepts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallIdsDoc {
    /// The characters an id may have.
    pub alphabet: IdAlphabet,
    /// The exact length of an id.
    #[serde(default)]
    pub length: Option<usize>,
    /// The largest length of an id.
    #[serde(default)]
    pub max_length: Option<usize>,
}

/// Characters of a call id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IdAlphabet {
    /// `A-Z`, `a-z`, `0-9`.
    Alphanumeric,
    /// `A-Z`, `a-z`, `0-9`, `_`, `-`.
    AlphanumericDashUnderscore,
    /// Any character.
    Any,
}

/// How the messages of one role are shaped.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoleDoc {
    pub content: ContentForm,
    #[serde(default)]
    pub text_block: Option<Value>,
    pub envelope: Value,
    #[serde(default)]
    pub media: SamplingMediaDoc,
    /// Envelope variables read from the message's `_meta`: variable name to
    /// the `_meta` key, or `{key, default}` for a field the API requires.
    #[serde(default)]
    pub meta: BTreeMap<String, MetaVarDoc>,
}

/// A message variable from the message's `_meta`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum MetaVarDoc {
    Key(String),
    Full {
        key: String,
        /// The value when the message's `_meta` lacks the key.
        default: Value,
    },
}

/// The media a message of one role may hold; a kind not listed is refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SamplingMediaDoc {
    #[serde(default)]
    pub image: Option<Vec<RuleDoc>>,
    #[serde(default)]
    pub audio: Option<Vec<RuleDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolUseDoc {
    pub into: ToolUseInto,
    pub item: Value,
    /// Template variables read from the tool use's `_meta`: variable name to `_meta` key.
    #[serde(default)]
    pub meta: BTreeMap<String, String>,
}

/// Where an assistant message's tool uses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolUseInto {
    /// Among the message's content blocks, in order.
    Content,
    /// Into `${tool_calls}`, beside the content.
    ToolCalls,
    /// Items of their own after the message.
    Messages,
}

/// Where a user message's tool results go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResultsPlacement {
    /// The answers are the content of one user message.
    Content,
    /// Each answer is a message (or item) of its own.
    Messages,
}

/// Where the media a tool result cannot carry go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FollowUpPlacement {
    /// After the answers, as the message(s) the results' follow-up envelope makes.
    #[default]
    After,
    /// Into the content of the answers' user message, after them.
    Content,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SamplingToolsDoc {
    /// Wraps the tool definitions (variables `tools`, `tool_choice`) into `${tools}`.
    #[serde(default)]
    pub wrap: Option<Value>,
    /// The strict mode of the tools offered (`false` unless a spec says otherwise).
    #[serde(default = "strict_off")]
    pub strict: StrictDefault,
    /// The API requires the tool definitions whenever the history holds tool
    /// uses or results: `{omit: tools}` keeps them then.
    #[serde(default)]
    pub required_by_history: bool,
}

fn strict_off() -> StrictDefault {
    StrictDefault(StrictMode::Off)
}

impl Default for SamplingToolsDoc {
    fn default() -> Self {
        SamplingToolsDoc {
            wrap: None,
            strict: strict_off(),
            required_by_history: false,
        }
    }
}

/// A `toolChoice` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ChoiceMode {
    Auto,
    Required,
    None,
}

impl ChoiceMode {
    pub fn key(self) -> &'static str {
        match self {
            ChoiceMode::Auto => "auto",
            ChoiceMode::Required => "required",
            ChoiceMode::None => "none",
        }
    }
}

/// What a tool choice mode becomes: a value for `${tool_choice}`, or `{omit: ...}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ChoiceDoc {
    Omit(OmitDoc),
    Value(Value),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OmitDoc {
    pub omit: OmitWhat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OmitWhat {
    /// No tool choice is sent: the provider's default.
    ToolChoice,
    /// Neither the tools nor a tool choice are sent.
    Tools,
}

/// How a provider's response is read back.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResponseDoc {
    /// Where the model's name is; absent, the request's model.
    #[serde(default)]
    pub model: Option<String>,
    /// Paths of an error body's message: the first present, not null and
    /// not an object wins.
    #[serde(default)]
    pub error: Vec<String>,
    /// Where the answer is, read in order: a string (one text block) or a list of items.
    pub content: Vec<String>,
    /// What the items that are not calls become; the first rule that matches applies.
    #[serde(default)]
    pub items: Vec<ItemRuleDoc>,
    pub stop_reason: StopReasonDoc,
    /// `_meta` keys of a tool use and the call item's paths they are read from.
    #[serde(default)]
    pub tool_use_meta: BTreeMap<String, String>,
    /// `_meta` keys of the result and the response's paths they are read
    /// from (fields of the assistant message the next request must send back).
    #[serde(default)]
    pub message_meta: BTreeMap<String, String>,
}

/// What one kind of response item becomes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ItemRuleDoc {
    #[serde(default)]
    pub when: Option<ConditionDoc>,
    /// A text block from the string at this path.
    #[serde(default)]
    pub text: Option<String>,
    /// An image or audio block.
    #[serde(default)]
    pub media: Option<MediaReadDoc>,
    /// The items of the list at this path are read with the same rules.
    #[serde(default)]
    pub each: Option<String>,
    /// The item is left out (reasoning, hosted tools' items).
    #[serde(default)]
    pub skip: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MediaReadDoc {
    pub mime: String,
    pub data: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StopReasonDoc {
    /// Paths of the provider's reason: the first present (and not null) wins.
    pub from: Vec<String>,
    /// Provider values and the MCP reasons they are; others are kept as sent.
    #[serde(default)]
    pub map: BTreeMap<String, McpStopReason>,
    /// A reason that maps to `endTurn` is `toolUse` when the answer holds tool
    /// calls (APIs that report the same reason for both).
    #[serde(default)]
    pub calls_mean_tool_use: bool,
    /// An empty reason (`""`) is `toolUse` when the answer holds tool calls
    /// and no reason otherwise (APIs that leave the reason empty on tool-call
    /// turns).
    #[serde(default)]
    pub empty_means_tool_use: bool,
}

/// An MCP `stopReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) enum McpStopReason {
    #[serde(rename = "endTurn")]
    EndTurn,
    #[serde(rename = "stopSequence")]
    StopSequence,
    #[serde(rename = "maxTokens")]
    MaxTokens,
    #[serde(rename = "toolUse")]
    ToolUse,
}
