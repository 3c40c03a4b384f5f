//! The typed front end of a provider spec: the YAML document as serde structs.
//!
//! Every struct denies unknown fields and every enumerated value is an enum,
//! so nothing in a spec is silently ignored or replaced by a default it did
//! not ask for. Templates stay JSON values here; [`compile`](super::compile)
//! turns them into plans once the document is known to be well formed.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::listing::StrictMode;
use crate::results::StructuredMode;

/// A provider spec, after `extends` has been merged.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpecDoc {
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    pub tools: ToolsDoc,
    #[serde(default)]
    pub strict: Option<StrictDoc>,
    #[serde(default)]
    pub options: BTreeMap<String, OptionDoc>,
    pub calls: CallsDoc,
    pub results: ResultsDoc,
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StrictDoc {
    pub rules: String,
    #[serde(default)]
    pub default: StrictDefault,
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
    /// `{}`.
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
