//! The compiled form of a provider spec: what the engine executes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::template::{Piece, Template};
use crate::strict::StrictRules;

/// A step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// A compiled slash-separated path into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsonPath(pub Vec<Step>);

impl JsonPath {
    pub fn parse(path: &str) -> JsonPath {
        JsonPath(
            path.split('/')
                .map(|s| match s.parse() {
                    Ok(i) => Step::Index(i),
                    Err(_) => Step::Key(s.to_owned()),
                })
                .collect(),
        )
    }

    /// The value at this path, if every step exists (an index also reads a key of that name).
    pub fn get<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.0.iter().try_fold(value, |v, step| match (step, v) {
            (Step::Key(k), Value::Object(m)) => m.get(k),
            (Step::Index(i), Value::Array(a)) => a.get(*i),
            (Step::Index(i), Value::Object(m)) => m.get(&i.to_string()),
            _ => None,
        })
    }
}

/// How tools are listed.
#[derive(Debug, Clone)]
pub(crate) struct ToolsPlan {
    pub definition: Template,
    /// A tool without a description gets `""`.
    pub empty_description: bool,
    /// An empty or blank description counts as none.
    pub omit_blank_description: bool,
}

/// The strict-mode section of a spec.
#[derive(Debug, Clone)]
pub(crate) struct StrictPlan {
    pub rules_id: String,
    pub rules: Arc<StrictRules>,
    pub default: crate::listing::StrictMode,
}

/// One value of a listing option.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptionEffect {
    pub description: Option<String>,
    pub merge_last: Option<Map<String, Value>>,
    pub merge_each: Option<Map<String, Value>>,
}

/// A listing option and its values.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptionPlan {
    pub description: Option<String>,
    pub values: BTreeMap<String, OptionEffect>,
}

/// Where the items of a response are.
#[derive(Debug, Clone)]
pub(crate) struct Locate {
    pub when: String,
    pub list: JsonPath,
}

/// Which items are tool calls.
#[derive(Debug, Clone)]
pub(crate) enum Select {
    Equals(JsonPath, String),
    Has(JsonPath),
}

/// A field of a call item.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub path: JsonPath,
    pub optional: bool,
}

/// How arguments are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgFormat {
    Object,
    JsonString,
    Any,
}

/// How calls are read.
#[derive(Debug, Clone)]
pub(crate) struct CallsPlan {
    pub locate: Vec<Locate>,
    pub select: Select,
    pub id: Field,
    pub name: Field,
    pub arguments: Field,
    pub arg_format: ArgFormat,
    pub missing_args_empty: bool,
}

/// What `${content}` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContentForm {
    Blocks,
    Text,
    TextOrBlocks,
}

/// The kinds of content a media table maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MediaKind {
    Image,
    Audio,
    ResourceLink,
    ResourceText,
    ResourceBlob,
    Unknown,
    Structured,
}

impl MediaKind {
    pub const ALL: [MediaKind; 7] = [
        MediaKind::Image,
        MediaKind::Audio,
        MediaKind::ResourceLink,
        MediaKind::ResourceText,
        MediaKind::ResourceBlob,
        MediaKind::Unknown,
        MediaKind::Structured,
    ];

    pub fn key(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
            MediaKind::ResourceLink => "resource_link",
            MediaKind::ResourceText => "resource_text",
            MediaKind::ResourceBlob => "resource_blob",
            MediaKind::Unknown => "unknown",
            MediaKind::Structured => "structured",
        }
    }
}

/// What a media rule produces.
#[derive(Debug, Clone)]
pub(crate) enum MediaAction {
    Block(Template),
    Attach(Template),
    Text(Vec<Piece>),
    /// The structured value itself becomes `${content}`.
    Value,
}

/// One rule of a media row: the first whose MIME types match (and whose variables are present) applies.
#[derive(Debug, Clone)]
pub(crate) struct MediaRule {
    pub accept: Option<Vec<String>>,
    pub action: MediaAction,
}

/// How results are answered.
#[derive(Debug, Clone)]
pub(crate) struct ResultsPlan {
    pub structured: crate::results::StructuredMode,
    pub content: ContentForm,
    pub text_block: Option<Template>,
    pub envelope: Template,
    pub error_envelope: Option<Template>,
    pub error_prefix: Option<String>,
    pub media: BTreeMap<MediaKind, Vec<MediaRule>>,
}
