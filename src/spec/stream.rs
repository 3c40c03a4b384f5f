//! The compiled form of a spec's `stream:` section, and its compilation.

use std::collections::HashMap;

use fnv::FnvBuildHasher;

use serde_json::{Map, Value};

use super::doc::{
    AppendAs, EventNameDoc, EventRuleDoc, Framing, MessageMergeDoc, OpenAtEnd, StreamDoc,
};
use super::plan::{JsonPath, Step};
use crate::error::Problem;
use crate::json::pointer_child;

/// How a stream is read.
#[derive(Debug, Clone)]
pub(crate) struct StreamPlan {
    pub framing: Framing,
    pub done: Option<String>,
    pub name: EventName,
    pub base: Map<String, Value>,
    pub items: Option<JsonPath>,
    pub omit_empty: bool,
    pub drop: Vec<Value>,
    pub open_at_end: OpenAtEnd,
    pub rules: Vec<Rule>,
    /// Per event name, the rules that may apply to it (those with that name
    /// in `on`, and those without `on`), in order.
    pub by_name: HashMap<String, Vec<usize>, FnvBuildHasher>,
    /// The rules that apply to an event whose name no rule mentions.
    pub unnamed: Vec<usize>,
}

/// Where an event's name is.
#[derive(Debug, Clone)]
pub(crate) enum EventName {
    /// Events are not named; rules use `when` only.
    None,
    Path(JsonPath),
    /// `{"<name>": body}`: rule paths address the body.
    Wrapper,
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
    pub error: Vec<JsonPath>,
}

fn path(p: &str) -> JsonPath {
    JsonPath::parse(p)
}

/// Compiles a typed `stream:` section.
pub(crate) fn compile(doc: StreamDoc) -> Result<StreamPlan, Problem> {
    let name = match doc.name {
        None => EventName::None,
        Some(EventNameDoc::Path { path: p }) => EventName::Path(path(&p)),
        Some(EventNameDoc::Wrapper(_)) => EventName::Wrapper,
    };
    if doc.events.is_empty() {
        return Err(Problem::at(
            "/stream/events",
            "a stream needs at least one event rule",
        ));
    }
    let mut rules = Vec::with_capacity(doc.events.len());
    let mut ends = false;
    for (i, rule) in doc.events.into_iter().enumerate() {
        let at = pointer_child("/stream/events", &i.to_string());
        let rule = compile_rule(rule, &at, matches!(name, EventName::None))?;
        ends |= rule.end;
        rules.push(rule);
    }
    if !ends && doc.done.is_none() {
        return Err(Problem::at(
            "/stream",
            "no rule ends the stream (`end: true`) and there is no `done` marker: a cut stream could not be told from a finished one",
        ));
    }
    let unnamed: Vec<usize> = (0..rules.len())
        .filter(|&i| rules[i].on.is_empty())
        .collect();
    let mut paths: Vec<JsonPath> = Vec::new();
    for condition in rules.iter_mut().filter_map(|r| r.when.as_mut()) {
        condition.slot = match paths.iter().position(|p| *p == condition.path) {
            Some(slot) => slot,
            None => {
                paths.push(condition.path.clone());
                paths.len() - 1
            }
        };
    }
    let mut by_name: HashMap<String, Vec<usize>, FnvBuildHasher> = HashMap::default();
    for (i, rule) in rules.iter().enumerate() {
        for name in &rule.on {
            by_name.entry(name.clone()).or_default().push(i);
        }
    }
    for list in by_name.values_mut() {
        list.extend(&unnamed);
        list.sort_unstable();
        list.dedup();
    }
    Ok(StreamPlan {
        by_name,
        unnamed,
        framing: doc.framing,
        done: doc.done,
        name,
        base: doc.message.base.unwrap_or_default(),
        items: doc.message.items.as_deref().map(path),
        omit_empty: doc.message.omit_empty,
        drop: doc.message.drop,
        open_at_end: doc.open_at_end,
        rules,
    })
}

fn compile_rule(doc: EventRuleDoc, at: &str, unnamed: bool) -> Result<Rule, Problem> {
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
