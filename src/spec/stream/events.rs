//! `stream.events`: the event rules: which events a rule applies to (`on`,
//! `when`) and what it does: open, replace, append to, set or close an item,
//! merge into the message, take whole items or call fragments, end the
//! stream, or report a stream error.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::Problem;
use crate::json::pointer_child;
use crate::spec::path::{ConditionDoc, JsonPath, PathDoc, Step};

/// What the events this rule matches do; every matching rule applies, in order.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct EventRuleDoc {
    /// The event names this rule applies to (see `name`).
    #[serde(default)]
    pub on: Option<OneOrMany<String>>,
    #[serde(default)]
    pub when: Option<ConditionDoc>,
    /// Merge the object at this path into the message, or set message
    /// fields from event paths (`{field: path}`).
    #[serde(default)]
    pub message: Option<MessageMergeDoc>,
    #[serde(default)]
    pub open: Option<OpenDoc>,
    #[serde(default)]
    pub replace: Option<ReplaceDoc>,
    #[serde(default)]
    pub fragments: Option<FragmentsDoc>,
    #[serde(default)]
    pub whole: Option<WholeDoc>,
    #[serde(default)]
    pub append: Option<AppendDoc>,
    #[serde(default)]
    pub set: Option<SetDoc>,
    #[serde(default)]
    pub close: Option<CloseDoc>,
    /// The stream is complete.
    #[serde(default)]
    pub end: Option<bool>,
    /// The path of the whole items the event carries (a final response's
    /// output): an item still open that is not a call takes the entry at
    /// its key's position, and is complete.
    #[serde(default)]
    pub settle: Option<PathDoc>,
    /// The event is a stream error: paths of its message, the first present wins.
    #[serde(default)]
    pub error: Option<OneOrMany<PathDoc>>,
}

/// One, or a list of at least one.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema), schemars(inline))]
#[serde(untagged)]
pub(in crate::spec) enum OneOrMany<T> {
    One(T),
    Many(#[cfg_attr(test, schemars(length(min = 1)))] Vec<T>),
}

impl<T> OneOrMany<T> {
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// Merge the object at a path into the message, or set message fields from event paths.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema), schemars(inline))]
#[serde(untagged)]
pub(in crate::spec) enum MessageMergeDoc {
    Path(PathDoc),
    Fields(BTreeMap<String, PathDoc>),
}

/// Start an item.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct OpenDoc {
    /// A path in the event to the key the item is known by (a block index,
    /// an output index).
    pub key: PathDoc,
    /// The item as the event carries it; absent: an empty object.
    #[serde(default)]
    pub item: Option<PathDoc>,
}

/// Replace an open item with the whole one the event carries.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ReplaceDoc {
    /// A path in the event to the key the item is known by.
    pub key: PathDoc,
    /// The item.
    pub item: PathDoc,
}

/// The item is complete (a call runs now).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct CloseDoc {
    /// A path in the event to the key the item is known by.
    pub key: PathDoc,
}

/// Entries of a list, each merged into the call it belongs to: by id (a
/// new id starts a call), then index, then the latest call. Empty strings
/// and nulls never overwrite.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct FragmentsDoc {
    pub list: PathDoc,
    /// A fragment's call id: a new id starts a call, a known one continues it.
    #[serde(default)]
    pub id: Option<PathDoc>,
    /// A fragment's position key: it continues the call last given it.
    #[serde(default)]
    pub index: Option<PathDoc>,
    /// Paths whose strings are appended (an object counts as its JSON text).
    #[serde(default)]
    pub append: Vec<PathDoc>,
    /// Paths left out of the item.
    #[serde(default)]
    pub drop: Vec<PathDoc>,
}

/// Every element of the list (or the object) at the path is a complete item.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct WholeDoc {
    pub list: PathDoc,
    #[serde(default)]
    pub pieces: Option<PiecesDoc>,
}

/// Elements that stream one item's arguments in pieces addressed by JSON
/// path: an element whose `at` object has other keys and `more: true` opens
/// the item, pieces fill `into`, an empty `at` object (or a last piece
/// without `more`) completes it.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct PiecesDoc {
    /// The object of an element that carries the piece protocol.
    pub at: PathDoc,
    /// Its list of pieces, each `{<path key>: "$.a.b[0]", <value>, <more>}`.
    pub list: PathDoc,
    /// Where, in that object, the assembled arguments go.
    pub into: PathDoc,
    /// A piece's JSON-path key, such as `jsonPath`.
    pub path: String,
    /// The key that is true while more follows (on the object and on a piece).
    pub more: String,
    /// A piece key whose presence means `null`.
    #[serde(default)]
    pub null_key: Option<String>,
}

/// Append the event's fragment to a field of an item (by key) or of the
/// message (no key).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct AppendDoc {
    /// A path in the event to the key of the item; absent: the message itself.
    #[serde(default)]
    pub key: Option<PathDoc>,
    pub from: PathDoc,
    pub to: PathDoc,
    #[serde(default, rename = "as")]
    pub as_: AppendAs,
}

/// How appended fragments are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum AppendAs {
    /// Concatenated into a string.
    #[default]
    Text,
    /// Concatenated JSON text, parsed into the value when the item closes
    /// (blank: `{}`, or what was there).
    Json,
    /// Each fragment pushed onto a list.
    List,
}

/// Set a field of an item (by key) or of the message to the event's value.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct SetDoc {
    /// A path in the event to the key of the item; absent: the message itself.
    #[serde(default)]
    pub key: Option<PathDoc>,
    pub from: PathDoc,
    pub to: PathDoc,
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
    let paths = |list: &[PathDoc]| list.iter().map(PathDoc::compile).collect::<Vec<_>>();
    let rule = Rule {
        on: doc.on.map(OneOrMany::into_vec).unwrap_or_default(),
        when: doc.when.map(|c| Condition {
            path: c.path.compile(),
            equals: c.equals,
            slot: 0,
        }),
        message: doc.message.map(|m| match m {
            MessageMergeDoc::Path(p) => MessageMerge::Object(p.compile()),
            MessageMergeDoc::Fields(fields) => MessageMerge::Fields(
                fields
                    .iter()
                    .map(|(to, from)| (JsonPath::parse(to), from.compile()))
                    .collect(),
            ),
        }),
        open: doc.open.map(|o| Open {
            key: o.key.compile(),
            item: o.item.as_ref().map(PathDoc::compile),
        }),
        replace: doc.replace.map(|o| Open {
            key: o.key.compile(),
            item: Some(o.item.compile()),
        }),
        fragments: doc.fragments.map(|f| Fragments {
            list: f.list.compile(),
            id: f.id.as_ref().map(PathDoc::compile),
            index: f.index.as_ref().map(PathDoc::compile),
            append: paths(&f.append),
            drop: paths(&f.drop),
        }),
        whole: doc.whole.map(|w| Whole {
            list: w.list.compile(),
            pieces: w.pieces.map(|p| {
                let (at, list, into) = (p.at.compile(), p.list.compile(), p.into.compile());
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
            key: a.key.as_ref().map(PathDoc::compile),
            from: a.from.compile(),
            to: a.to.compile(),
            as_: a.as_,
        }),
        set: doc.set.map(|s| Set {
            key: s.key.as_ref().map(PathDoc::compile),
            from: s.from.compile(),
            to: s.to.compile(),
        }),
        close: doc.close.map(|k| k.key.compile()),
        end: doc.end.unwrap_or(false),
        settle: doc.settle.as_ref().map(PathDoc::compile),
        error: doc.error.map(|e| paths(&e.into_vec())).unwrap_or_default(),
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
