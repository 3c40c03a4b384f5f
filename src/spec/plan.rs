//! The compiled form of a provider spec: what the engine executes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

pub(crate) use super::doc::{ArgFormat, ContentForm, MissingArguments, MissingDescription};
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
        steps_get(&self.0, value)
    }

    /// The value at this path inside `map` (the path's first step is a key of it).
    pub fn get_in<'v>(&self, map: &'v Map<String, Value>) -> Option<&'v Value> {
        match self.0.split_first() {
            Some((Step::Key(k), rest)) => steps_get(rest, member(map, k)?),
            Some((Step::Index(i), rest)) => steps_get(rest, map.get(&i.to_string())?),
            None => None,
        }
    }

    /// The value at this path, created as `null` (with objects on the way,
    /// and a list where an index meets nothing) where it is missing; an index
    /// may add the next element of a list. `None` when a step meets a value
    /// that is not an object (or, for an index, a list long enough).
    pub fn get_or_insert<'v>(&self, value: &'v mut Value) -> Option<&'v mut Value> {
        let mut cur = value;
        for step in &self.0 {
            if cur.is_null() {
                *cur = match step {
                    Step::Index(_) => Value::Array(Vec::new()),
                    Step::Key(_) => Value::Object(Map::new()),
                };
            }
            if let (Step::Index(i), Value::Array(a)) = (step, &mut *cur)
                && *i == a.len()
            {
                a.push(Value::Null);
            }
            cur = match (step, cur) {
                // Looked up before inserting: most paths exist, and an entry
                // would allocate the key every time.
                (Step::Key(k), Value::Object(m)) => {
                    if member(m, k).is_none() {
                        m.insert(k.clone(), Value::Null);
                    }
                    member_mut(m, k)?
                }
                (Step::Index(i), Value::Array(a)) => a.get_mut(*i)?,
                (Step::Index(i), Value::Object(m)) => m.entry(i.to_string()).or_insert(Value::Null),
                _ => return None,
            };
        }
        Some(cur)
    }

    /// Removes the value at this path, if there is one.
    pub fn remove(&self, value: &mut Value) -> Option<Value> {
        let (last, parents) = self.0.split_last()?;
        match (last, steps_mut(parents, value)?) {
            (Step::Key(k), Value::Object(m)) => m.shift_remove(k),
            (Step::Index(i), Value::Object(m)) => m.shift_remove(&i.to_string()),
            (Step::Index(i), Value::Array(a)) if *i < a.len() => Some(a.remove(*i)),
            _ => None,
        }
    }
}

fn steps_get<'v>(steps: &[Step], value: &'v Value) -> Option<&'v Value> {
    steps.iter().try_fold(value, |v, step| match (step, v) {
        (Step::Key(k), Value::Object(m)) => member(m, k),
        (Step::Index(i), Value::Array(a)) => a.get(*i),
        (Step::Index(i), Value::Object(m)) => m.get(&i.to_string()),
        _ => None,
    })
}

fn steps_mut<'v>(steps: &[Step], value: &'v mut Value) -> Option<&'v mut Value> {
    steps.iter().try_fold(value, |v, step| match (step, v) {
        (Step::Key(k), Value::Object(m)) => member_mut(m, k),
        (Step::Index(i), Value::Array(a)) => a.get_mut(*i),
        (Step::Index(i), Value::Object(m)) => m.get_mut(&i.to_string()),
        _ => None,
    })
}

/// A member of an object. Paths are looked up for every event of a stream,
/// mostly in small objects, where comparing a few short keys is cheaper than
/// hashing one.
fn member<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

fn member_mut<'v>(map: &'v mut Map<String, Value>, key: &str) -> Option<&'v mut Value> {
    if map.len() <= 8 {
        map.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get_mut(key)
    }
}

/// How tools are listed.
#[derive(Debug, Clone)]
pub(crate) struct ToolsPlan {
    pub definition: Template,
    pub missing_description: MissingDescription,
}

/// The `schema:` section of a spec: the rules (`mode: subset`) every tool's schema goes through.
#[derive(Debug, Clone)]
pub(crate) struct SchemaPlan {
    pub rules_id: String,
    pub rules: Arc<StrictRules>,
}

/// The strict-mode section of a spec.
#[derive(Debug, Clone)]
pub(crate) struct StrictPlan {
    pub rules_id: String,
    pub rules: Arc<StrictRules>,
    pub default: super::doc::StrictMode,
}

/// One value of an option: what it changes in listings and in answers.
#[derive(Debug, Clone, Default)]
pub(crate) struct OptionEffect {
    pub description: Option<String>,
    pub merge_last: Option<Map<String, Value>>,
    pub merge_each: Option<Map<String, Value>>,
    /// The results section with the value's override merged in.
    pub results: Option<Arc<ResultsPlan>>,
}

impl OptionEffect {
    /// The stages the value changes: `tools`, `results`.
    pub fn changes(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.merge_last.is_some() || self.merge_each.is_some() {
            out.push("tools");
        }
        if self.results.is_some() {
            out.push("results");
        }
        out
    }
}

/// An option and its values.
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

/// Which items are tool calls: `path` holds `equals`, or (without it) is present and not `null`.
#[derive(Debug, Clone)]
pub(crate) struct Select {
    pub path: JsonPath,
    pub equals: Option<String>,
}

/// A field of a call item.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub path: JsonPath,
    pub optional: bool,
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
    pub missing_arguments: MissingArguments,
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
}

impl MediaKind {
    pub fn key(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
            MediaKind::ResourceLink => "resource_link",
            MediaKind::ResourceText => "resource_text",
            MediaKind::ResourceBlob => "resource_blob",
            MediaKind::Unknown => "unknown",
        }
    }
}

/// What a media rule produces.
#[derive(Debug, Clone)]
pub(crate) enum MediaAction {
    Block(Template),
    Attach(Template),
    /// An item sent after the turn's answers; the answer keeps a note.
    FollowUp(Template),
    Text(Vec<Piece>),
}

impl MediaAction {
    /// Whether the rule sends the medium itself (not a text about it).
    pub fn places_media(&self) -> bool {
        !matches!(self, MediaAction::Text(_))
    }
}

/// One rule of a media row: the first whose MIME types match (and whose
/// variables are present, and whose limits the medium fits) applies.
#[derive(Debug, Clone)]
pub(crate) struct MediaRule {
    pub accept: Option<Vec<String>>,
    pub action: MediaAction,
    /// The largest payload the rule takes, in decoded bytes.
    pub max_bytes: Option<u64>,
}

/// How follow-up items are wrapped.
#[derive(Debug, Clone)]
pub(crate) struct FollowUpPlan {
    /// A text item (variable `text`).
    pub text: Template,
    /// Wraps the turn's items (variable `items`) into one item.
    pub envelope: Option<Template>,
}

/// A limit on the media of one request, counted over one turn.
#[derive(Debug, Clone)]
pub(crate) struct RequestLimit {
    pub accept: Option<Vec<String>>,
    pub max_bytes: Option<u64>,
    pub max_items: Option<u64>,
}

/// How a `structuredContent` value is rendered.
#[derive(Debug, Clone)]
pub(crate) enum StructuredRender {
    JsonText,
    /// The value itself becomes `${content}` when it is the only part.
    Value,
    Rules(Vec<MediaRule>),
}

/// When and how `structuredContent` is used.
#[derive(Debug, Clone)]
pub(crate) struct StructuredPlan {
    pub mode: super::doc::StructuredMode,
    pub render: StructuredRender,
}

/// How results are answered.
#[derive(Debug, Clone)]
pub(crate) struct ResultsPlan {
    pub structured: StructuredPlan,
    pub content: ContentForm,
    pub text_block: Option<Template>,
    pub envelope: Template,
    pub error_envelope: Option<Template>,
    pub error_prefix: Option<String>,
    pub media: BTreeMap<MediaKind, Vec<MediaRule>>,
    pub follow_up: Option<FollowUpPlan>,
    pub request_limits: Vec<RequestLimit>,
}

/// The compiled `search:` section.
#[derive(Debug, Clone)]
pub(crate) struct SearchPlan {
    /// Merged into a deferred tool's definition.
    pub defer: Map<String, Value>,
    /// The provider's own search tools, by name.
    pub server_tools: BTreeMap<String, Value>,
    pub client: Option<ClientSearchPlan>,
    /// Variables: name, description, tools.
    pub namespace: Option<Template>,
}

/// A search the client answers in the provider's shape.
#[derive(Debug, Clone)]
pub(crate) struct ClientSearchPlan {
    /// Variables: name, description, schema.
    pub tool: Option<Template>,
    pub calls: Option<SearchCallsPlan>,
    /// Variables: call_id, name, tools, references, text.
    pub answer: Template,
    /// Variables: name.
    pub reference: Option<Template>,
}

/// Which items are search calls, and how their id and arguments are read.
#[derive(Debug, Clone)]
pub(crate) struct SearchCallsPlan {
    pub select: Select,
    pub id: Field,
    pub arguments: Field,
    pub arg_format: ArgFormat,
}
