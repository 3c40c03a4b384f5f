//! Instance paths of properties made nullable, and removing the `null`s a
//! model sends for them.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One step of a [`NullPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "Option<String>", into = "Option<String>")]
pub enum Segment {
    /// The property of that name (JSON: the name as a string).
    Property(String),
    /// Every item of an array (JSON: `null`).
    Items,
}

impl From<Option<String>> for Segment {
    fn from(value: Option<String>) -> Self {
        value.map_or(Segment::Items, Segment::Property)
    }
}

impl From<Segment> for Option<String> {
    fn from(segment: Segment) -> Self {
        match segment {
            Segment::Property(name) => Some(name),
            Segment::Items => None,
        }
    }
}

/// The instance path of a property that was optional and became nullable.
///
/// Serialized as a JSON array of segments: a string is a property name and
/// `null` means "every item of the array here" (property names are always
/// strings, so the two cannot be confused). `["filters", null, "limit"]` is
/// the `limit` of every item of the `filters` array.
///
/// `Display` writes `$.filters[*].limit`; names that are not plain
/// identifiers are quoted as JSON strings: `$["a b"]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NullPath(pub Vec<Segment>);

impl NullPath {
    /// The segments, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }
}

impl fmt::Display for NullPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for segment in &self.0 {
            match segment {
                Segment::Items => f.write_str("[*]")?,
                Segment::Property(name) if is_identifier(name) => write!(f, ".{name}")?,
                Segment::Property(name) => write!(f, "[{}]", Value::String(name.clone()))?,
            }
        }
        Ok(())
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Removes, at every null path, a property whose value is `null`.
///
/// Only an exact `null` at the end of a path is removed; a wildcard segment
/// visits every item of an array; paths that do not match the arguments
/// (missing parents, other types) are skipped. Object key order is kept.
pub fn strip_nulls(arguments: &mut Map<String, Value>, null_paths: &[NullPath]) {
    for path in null_paths {
        strip_in_map(arguments, &path.0);
    }
}

fn strip_in_map(map: &mut Map<String, Value>, segments: &[Segment]) {
    let Some((Segment::Property(name), rest)) = segments.split_first() else {
        return;
    };
    if rest.is_empty() {
        if map.get(name).is_some_and(Value::is_null) {
            map.shift_remove(name);
        }
    } else if let Some(value) = map.get_mut(name) {
        strip_in_value(value, rest);
    }
}

fn strip_in_value(value: &mut Value, segments: &[Segment]) {
    match (value, segments.split_first()) {
        (Value::Object(map), _) => strip_in_map(map, segments),
        (Value::Array(items), Some((Segment::Items, rest))) if !rest.is_empty() => {
            for item in items {
                strip_in_value(item, rest);
            }
        }
        _ => {}
    }
}
