//! Paths into JSON values as specs write them (`choices/0/message/tool_calls`),
//! compiled once and looked up for every response and stream event; and the
//! `{path, equals}` condition that `stream:` and `sampling:` rules share.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::json::{member, member_mut};

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

/// A path into a JSON value as a spec writes it: keys separated by `/`,
/// where a number indexes a list (`choices/0/message/tool_calls`).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub(crate) struct PathDoc(String);

impl PathDoc {
    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path, compiled.
    pub fn compile(&self) -> JsonPath {
        JsonPath::parse(&self.0)
    }
}

/// The value at `path` equals `equals` (any JSON value), or (without
/// `equals`) is present and not null.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ConditionDoc {
    pub path: PathDoc,
    /// The value the path must hold.
    #[serde(default)]
    pub equals: Option<Value>,
}
