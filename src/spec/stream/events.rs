//! `stream.events`: the event rules: which events a rule applies to (`on`,
//! `when`) and what it does: open, replace, append to, set or close an item,
//! merge into the message, take whole items or call fragments, end the
//! stream, or report a stream error.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::Problem;
use crate::json::pointer_child;
use crate::spec::path::{ConditionDoc, JsonPath, Step};

/// One event rule: which events it applies to and what each does.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct EventRuleDoc {
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
    /// The list of whole items the event carries (a final response's
    /// output): an item still open, not a call, takes the entry at its key's
    /// position and is complete.
    #[serde(default)]
    pub settle: Option<String>,
    #[serde(default)]
    pub error: Option<OneOrMany>,
}

/// A name or a list of names (or of paths).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(in crate::spec) enum OneOrMany {
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

/// Merge the object at a path into the message, or set message fields from event paths.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(in crate::spec) enum MessageMergeDoc {
    Path(String),
    Fields(BTreeMap<String, String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct OpenDoc {
    pub key: String,
    /// The item as the event carries it; absent: an empty object.
    #[serde(default)]
    pub item: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct KeyDoc {
    pub key: String,
}

/// Call fragments: entries of a list, each merged into the call it belongs to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct FragmentsDoc {
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
pub(in crate::spec) struct WholeDoc {
    pub list: String,
    #[serde(default)]
    pub pieces: Option<PiecesDoc>,
}

/// Elements that stream one item's arguments in pieces addressed by JSON path.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct PiecesDoc {
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
pub(in crate::spec) struct AppendDoc {
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
pub(in crate::spec) struct SetDoc {
    #[serde(default)]
    pub key: Option<String>,
    pub from: String,
    pub to: String,
}

/// A condition on an event.
#[derive(Debug, Clone)]
pub(crate) struct Condition {
    pub path: JsonPath,
    pub equals: Option<Value>,
    /// The same number for conditions on the same path, so an event's
    /// rules look a path up once.
    pub slot: usize,
}

/// What a rule merges into the message.
#[derive(Debug, Clone)]
pub(crate) enum MessageMerge {
    Object(JsonPath),
    Fields(Vec<(JsonPath, JsonPath)>),
}

#[derive(Debug, Clone)]
pub(crate) struct Open {
    pub key: JsonPath,
    pub item: Option<JsonPath>,
}

#[derive(Debug, Clone)]
pub(crate) struct Fragments {
    pub list: JsonPath,
    pub id: Option<JsonPath>,
    pub index: Option<JsonPath>,
    pub append: Vec<JsonPath>,
    pub drop: Vec<JsonPath>,
}

#[derive(Debug, Clone)]
pub(crate) struct Pieces {
    pub at: JsonPath,
    pub list: JsonPath,
    pub path: String,
    pub more: String,
    pub null: Option<String>,
    /// `at` then `into`: where the arguments are in the item.
    pub args: JsonPath,
    /// The key `list` names in the `at` object, when it is one key.
    pub list_key: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Whole {
    pub list: JsonPath,
    pub pieces: Option<Pieces>,
}

#[derive(Debug, Clone)]
pub(crate) struct Append {
    pub key: Option<JsonPath>,
    pub from: JsonPath,
    pub to: JsonPath,
    pub as_: AppendAs,
}

#[derive(Debug, Clone)]
pub(crate) struct Set {
    pub key: Option<JsonPath>,
    pub from: JsonPath,
    pub to: JsonPath,
}

/// One event rule.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub on: Vec<String>,
    pub when: Option<Condition>,
    pub message: Option<MessageMerge>,
    pub open: Option<Open>,
    pub replace: Option<Open>,
    pub fragments: Option<Fragments>,
    pub whole: Option<Whole>,
    pub append: Option<Append>,
    pub set: Option<Set>,
    pub close: Option<JsonPath>,
    pub end: bool,
    pub settle: Option<JsonPath>,
    pub error: Vec<JsonPath>,
}

fn path(p: &str) -> JsonPath {
    JsonPath::parse(p)
}

pub(super) fn compile_rule(doc: EventRuleDoc, at: &str, unnamed: bool) -> Result<Rule, Problem> {
    if doc.on.is_some() && unnamed {
        return Err(Problem::at(
            pointer_child(at, "on"),
            "`on` matches an event's name, but the stream names none: set `stream.name`",
        ));
    }
    if let Some(append) = &doc.append
        && append.as_ == AppendAs::Json
        && append.key.is_none()
    {
        return Err(Problem::at(
            pointer_child(at, "append"),
            "`as: json` text is parsed when an item closes: give the item's `key`",
        ));
    }
    let rule = Rule {
        on: doc.on.map(|o| o.into_vec()).unwrap_or_default(),
        when: doc.when.map(|c| Condition {
            path: path(&c.path),
            equals: c.equals,
            slot: 0,
        }),
        message: doc.message.map(|m| match m {
            MessageMergeDoc::Path(p) => MessageMerge::Object(path(&p)),
            MessageMergeDoc::Fields(fields) => MessageMerge::Fields(
                fields
                    .iter()
                    .map(|(to, from)| (path(to), path(from)))
                    .collect(),
            ),
        }),
        open: doc.open.map(|o| Open {
            key: path(&o.key),
            item: o.item.as_deref().map(path),
        }),
        replace: doc.replace.map(|o| Open {
            key: path(&o.key),
            item: o.item.as_deref().map(path),
        }),
        fragments: doc.fragments.map(|f| Fragments {
            list: path(&f.list),
            id: f.id.as_deref().map(path),
            index: f.index.as_deref().map(path),
            append: f.append.iter().map(|p| path(p)).collect(),
            drop: f.drop.iter().map(|p| path(p)).collect(),
        }),
        whole: doc.whole.map(|w| Whole {
            list: path(&w.list),
            pieces: w.pieces.map(|p| {
                let (at, list, into) = (path(&p.at), path(&p.list), path(&p.into));
                let args = JsonPath(at.0.iter().chain(&into.0).cloned().collect());
                let list_key = match list.0.as_slice() {
                    [Step::Key(k), ..] => Some(k.clone()),
                    _ => None,
                };
                Pieces {
                    at,
                    list,
                    path: p.path,
                    more: p.more,
                    null: p.null_key,
                    args,
                    list_key,
                }
            }),
        }),
        append: doc.append.map(|a| Append {
            key: a.key.as_deref().map(path),
            from: path(&a.from),
            to: path(&a.to),
            as_: a.as_,
        }),
        set: doc.set.map(|s| Set {
            key: s.key.as_deref().map(path),
            from: path(&s.from),
            to: path(&s.to),
        }),
        close: doc.close.map(|k| path(&k.key)),
        end: doc.end.unwrap_or(false),
        settle: doc.settle.as_deref().map(path),
        error: doc
            .error
            .map(|e| e.into_vec())
            .unwrap_or_default()
            .iter()
            .map(|p| path(p))
            .collect(),
    };
    let acts = rule.message.is_some()
        || rule.open.is_some()
        || rule.replace.is_some()
        || rule.fragments.is_some()
        || rule.whole.is_some()
        || rule.append.is_some()
        || rule.set.is_some()
        || rule.close.is_some()
        || rule.end
        || !rule.error.is_empty();
    if !acts {
        return Err(Problem::at(at, "the rule does nothing: give it an action"));
    }
    Ok(rule)
}
