//! Events as the assembler reads them: a borrowed tree, not a
//! `serde_json::Value`.
//!
//! An event is parsed by serde_json's own parser (so a malformed event gets
//! the same error, naming what was wrong and the line and column) into
//! `serde_json_borrow`'s value: a string without escapes is borrowed from
//! the event's text, an object is a vector of its members searched in
//! order, and nothing is hashed. The rules read the paths they name from it;
//! only what the assembler keeps (an item it opens, a value it sets, a
//! fragment it merges) becomes a `serde_json::Value`, with [`to_value`].

use std::borrow::Cow;

use serde_json::{Map, Number, Value};
use serde_json_borrow::ObjectAsVec;

use crate::spec::path::{JsonPath, Step};

/// One event, borrowing from the text it was read from.
pub(crate) type Event<'t> = serde_json_borrow::Value<'t>;

/// An event's object.
pub(crate) type Object<'t> = ObjectAsVec<'t>;

/// Parses one event from its text.
pub(crate) fn parse(text: &str) -> serde_json::Result<Event<'_>> {
    serde_json::from_str(text)
}

/// Parses one event from bytes that may not be UTF-8 (serde_json then says where).
pub(crate) fn parse_slice(bytes: &[u8]) -> serde_json::Result<Event<'_>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(_) => serde_json::from_slice(bytes),
    }
}

#[cfg(feature = "eventstream")]
/// An empty object.
pub(crate) fn empty_object<'t>() -> Event<'t> {
    Event::Object(ObjectAsVec::default())
}

/// The member `key` of an object; of several members with that key, the
/// last (as a `serde_json::Value` read from the same text keeps it).
pub(crate) fn member<'v, 't>(object: &'v Object<'t>, key: &str) -> Option<&'v Event<'t>> {
    object
        .as_vec()
        .iter()
        .rev()
        .find(|(k, _)| &**k == key)
        .map(|(_, v)| v)
}

/// The member `key` of `value`, if it is an object that has one.
pub(crate) fn field<'v, 't>(value: &'v Event<'t>, key: &str) -> Option<&'v Event<'t>> {
    match value {
        Event::Object(object) => member(object, key),
        _ => None,
    }
}

fn step<'v, 't>(value: &'v Event<'t>, step: &Step) -> Option<&'v Event<'t>> {
    match (step, value) {
        (Step::Key(k), Event::Object(o)) => member(o, k),
        (Step::Index(i), Event::Array(a)) => a.get(*i),
        (Step::Index(i), Event::Object(o)) => member(o, &i.to_string()),
        _ => None,
    }
}

/// The value at `path` in an event, if every step exists (an index also
/// reads a key of that name), as [`JsonPath::get`] reads a `serde_json::Value`.
pub(crate) fn get<'v, 't>(path: &JsonPath, value: &'v Event<'t>) -> Option<&'v Event<'t>> {
    path.0.iter().try_fold(value, step)
}

/// The value at `path` inside `object` (the path's first step is a key of it).
pub(crate) fn get_in<'v, 't>(path: &JsonPath, object: &'v Object<'t>) -> Option<&'v Event<'t>> {
    let (first, rest) = path.0.split_first()?;
    let first = match first {
        Step::Key(k) => member(object, k)?,
        Step::Index(i) => member(object, &i.to_string())?,
    };
    rest.iter().try_fold(first, step)
}

fn number(n: &serde_json_borrow::Number) -> Number {
    (*n).into()
}

/// The part of an event the assembler keeps, as a `serde_json::Value`
/// (members in the event's order; of a repeated key, the last value in the
/// first key's place, as serde_json reads it).
pub(crate) fn to_value(event: &Event<'_>) -> Value {
    match event {
        Event::Null => Value::Null,
        Event::Bool(b) => Value::Bool(*b),
        Event::Number(n) => Value::Number(number(n)),
        Event::Str(s) => Value::String(String::from(&**s)),
        Event::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        Event::Object(object) => Value::Object(to_map(object)),
    }
}

/// An event's object as a `serde_json` map; see [`to_value`].
pub(crate) fn to_map(object: &Object<'_>) -> Map<String, Value> {
    let mut map = Map::with_capacity(object.len());
    for (k, v) in object.iter() {
        map.insert(k.to_owned(), to_value(v));
    }
    map
}

/// A `serde_json::Value` (an event an SDK decoded) read as an event, its
/// strings borrowed.
pub(crate) fn borrow(value: &Value) -> Event<'_> {
    match value {
        Value::Null => Event::Null,
        Value::Bool(b) => Event::Bool(*b),
        Value::Number(n) => Event::Number(match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into(),
            (None, Some(i)) => i.into(),
            // A serde_json number that is no integer is a finite float.
            (None, None) => n.as_f64().unwrap_or_default().into(),
        }),
        Value::String(s) => Event::Str(Cow::Borrowed(s)),
        Value::Array(items) => Event::Array(items.iter().map(borrow).collect()),
        Value::Object(map) => Event::Object(
            map.iter()
                .map(|(k, v)| (k.as_str(), borrow(v)))
                .collect::<Vec<_>>()
                .into(),
        ),
    }
}

/// Whether an event's value equals a value a spec wrote (numbers as
/// serde_json compares them: an integer never equals a float).
pub(crate) fn equals(event: &Event<'_>, want: &Value) -> bool {
    match (event, want) {
        (Event::Null, Value::Null) => true,
        (Event::Bool(a), Value::Bool(b)) => a == b,
        (Event::Number(a), Value::Number(b)) => number(a) == *b,
        (Event::Str(a), Value::String(b)) => **a == **b,
        (Event::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equals(x, y))
        }
        (Event::Object(a), Value::Object(b)) => {
            // Compared as the maps serde_json would read: repeated keys count once.
            let keys = a
                .iter()
                .enumerate()
                .filter(|(i, (k, _))| !a.iter().skip(i + 1).any(|(later, _)| later == *k))
                .count();
            keys == b.len()
                && b.iter()
                    .all(|(k, v)| member(a, k).is_some_and(|found| equals(found, v)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_read_as_serde_json_reads_them() {
        let text = r#"{"a": {"b": [1, -2, 3.5, "x\"y", null, true]}, "k": 1, "k": 2, "0": "zero"}"#;
        let event = parse(text).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(to_value(&event), value);
        assert!(equals(&event, &value));
        assert!(!equals(&event, &json!({"k": 2})));
        assert!(equals(&borrow(&value), &value));
        assert_eq!(
            get(&JsonPath::parse("a/b/3"), &event).map(to_value),
            Some(json!("x\"y"))
        );
        assert_eq!(
            get(&JsonPath::parse("k"), &event).map(to_value),
            Some(json!(2))
        );
        assert_eq!(
            get(&JsonPath::parse("0"), &event).map(to_value),
            Some(json!("zero"))
        );
        assert!(get(&JsonPath::parse("a/c"), &event).is_none());
        assert!(!equals(&parse("1").unwrap(), &json!(1.0)));
        // A malformed event gets serde_json's own error.
        let bad = r#"{"a": [1,}"#;
        assert_eq!(
            parse(bad).unwrap_err().to_string(),
            serde_json::from_str::<Value>(bad).unwrap_err().to_string()
        );
    }
}
