//! The `stream:` section: how a streamed response is read: its framing, the
//! payload that ends it, where an event's name is, the message being built,
//! what becomes of a call still open at the end, and the event rules
//! (`events.rs`). The crate's `stream` module runs the compiled plan.

mod events;

use std::collections::HashMap;

use fnv::FnvBuildHasher;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::path::{JsonPath, PathDoc};
use crate::error::Problem;
use crate::json::pointer_child;
pub(crate) use events::{Append, AppendAs, Condition, Fragments, MessageMerge, Open, Pieces, Rule};
use events::{EventRuleDoc, compile_rule};

/// How a stream's bytes are cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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

/// How a streamed response builds the assistant message, and when each
/// call is complete.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct StreamDoc {
    pub framing: Framing,
    /// A data payload that ends the stream, such as `[DONE]`.
    #[serde(default)]
    pub done: Option<String>,
    #[serde(default)]
    pub name: Option<EventNameDoc>,
    #[serde(default)]
    pub message: MessageDoc,
    #[serde(default)]
    pub open_at_end: OpenAtEnd,
    /// What the events do, in order.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub events: Vec<EventRuleDoc>,
}

/// Where an event's name (for `on`) is: `{path: type}`, or `wrapper` for
/// `{"<name>": {...}}` events (rule paths then address the inner object).
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = crate::spec::schema::string_or_object)
)]
#[serde(untagged, deny_unknown_fields)]
pub(super) enum EventNameDoc {
    Wrapper(WrapperKeyword),
    Path { path: PathDoc },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(super) enum WrapperKeyword {
    Wrapper,
}

/// The assistant message the events build.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct MessageDoc {
    /// The message before any event.
    #[serde(default)]
    pub base: Option<Map<String, Value>>,
    /// Where the items go in the message; absent, the message is the list of items.
    #[serde(default)]
    pub items: Option<PathDoc>,
    /// Leave the items out of a message that has none.
    #[serde(default)]
    pub omit_empty: bool,
    /// Items left out of the message when they equal one of these (an
    /// empty text part the API would refuse in a request).
    #[serde(default)]
    pub drop: Vec<Value>,
}

/// A call still open when the stream ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum OpenAtEnd {
    /// It is incomplete: never run, left out of the message.
    #[default]
    Drop,
    /// The end of the stream completes it (formats without a per-call end event).
    Close,
}

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

/// Compiles a typed `stream:` section.
pub(super) fn compile(doc: StreamDoc) -> Result<StreamPlan, Problem> {
    let name = match doc.name {
        None => EventName::None,
        Some(EventNameDoc::Path { path }) => EventName::Path(path.compile()),
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
        items: doc.message.items.as_ref().map(PathDoc::compile),
        omit_empty: doc.message.omit_empty,
        drop: doc.message.drop,
        open_at_end: doc.open_at_end,
        rules,
    })
}
