//! Events as the assembler reads them: a borrowed tree in an arena, not a
//! `serde_json::Value`.
//!
//! An event is parsed by serde_json's own parser (so a malformed event gets
//! the same error, naming what was wrong and the line and column) into an
//! [`Event`]: a string without escapes is borrowed from the event's text (an
//! escaped one is unescaped into the arena), an object is a slice of its
//! members searched in order, and nothing is hashed. The slices live in a
//! `bumpalo` arena that the decoder empties before each event, so reading an
//! event allocates nothing once the arena has grown to the stream's largest
//! event, and nothing is freed member by member. The rules read the paths
//! they name from it; only what the assembler keeps (an item it opens, a
//! value it sets, a fragment it merges) becomes a `serde_json::Value`, with
//! [`to_value`].

use std::fmt;

use bumpalo::Bump;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::spec::path::{JsonPath, Step};

/// One event, borrowing from the text it was read from and from the arena.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Event<'x> {
    Null,
    Bool(bool),
    Number(Num),
    Str(&'x str),
    Array(&'x [Event<'x>]),
    Object(Members<'x>),
}

/// An event's object: its members in the order they came.
pub(crate) type Members<'x> = &'x [(&'x str, Event<'x>)];

/// A number as serde_json reads it: a non-negative integer, a negative one,
/// or a (finite) float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Pos(u64),
    Neg(i64),
    Float(f64),
}

impl<'x> Event<'x> {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Event::Null)
    }

    pub(crate) fn as_str(&self) -> Option<&'x str> {
        match self {
            Event::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&'x [Event<'x>]> {
        match self {
            Event::Array(items) => Some(items),
            _ => None,
        }
    }

    pub(crate) fn as_object(&self) -> Option<Members<'x>> {
        match self {
            Event::Object(members) => Some(members),
            _ => None,
        }
    }
}

/// Reads one JSON value into the arena.
#[derive(Clone, Copy)]
struct Seed<'b>(&'b Bump);

impl<'de: 'b, 'b> DeserializeSeed<'de> for Seed<'b> {
    type Value = Event<'b>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Event<'b>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de: 'b, 'b> Visitor<'de> for Seed<'b> {
    type Value = Event<'b>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Event<'b>, E> {
        Ok(Event::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Event<'b>, E> {
        // As serde_json: a non-negative integer is stored unsigned.
        Ok(Event::Number(match u64::try_from(v) {
            Ok(u) => Num::Pos(u),
            Err(_) => Num::Neg(v),
        }))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Event<'b>, E> {
        Ok(Event::Number(Num::Pos(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Event<'b>, E> {
        Ok(match Number::from_f64(v) {
            Some(_) => Event::Number(Num::Float(v)),
            None => Event::Null,
        })
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Event<'b>, E> {
        Ok(Event::Str(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Event<'b>, E> {
        Ok(Event::Str(self.0.alloc_str(v)))
    }

    fn visit_none<E>(self) -> Result<Event<'b>, E> {
        Ok(Event::Null)
    }

    fn visit_unit<E>(self) -> Result<Event<'b>, E> {
        Ok(Event::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Event<'b>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Event<'b>, A::Error> {
        let mut items = bumpalo::collections::Vec::new_in(self.0);
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Event::Array(items.into_bump_slice()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<'b>, A::Error> {
        let mut members = bumpalo::collections::Vec::new_in(self.0);
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            members.push((key, map.next_value_seed(self)?));
        }
        Ok(Event::Object(members.into_bump_slice()))
    }
}

/// Reads an object's key: borrowed from the text, or unescaped into the arena.
#[derive(Clone, Copy)]
struct KeySeed<'b>(&'b Bump);

impl<'de: 'b, 'b> DeserializeSeed<'de> for KeySeed<'b> {
    type Value = &'b str;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<&'b str, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de: 'b, 'b> Visitor<'de> for KeySeed<'b> {
    type Value = &'b str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<&'b str, E> {
        Ok(v)
    }

    fn visit_str<E>(self, v: &str) -> Result<&'b str, E> {
        Ok(self.0.alloc_str(v))
    }
}

/// Parses one event from its text into `arena`, with serde_json's errors.
pub(crate) fn parse<'x>(text: &'x str, arena: &'x Bump) -> serde_json::Result<Event<'x>> {
    read(serde_json::Deserializer::from_str(text), arena)
}

/// Parses one event from bytes that may not be UTF-8 (serde_json then says where).
pub(crate) fn parse_slice<'x>(bytes: &'x [u8], arena: &'x Bump) -> serde_json::Result<Event<'x>> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text, arena),
        Err(_) => read(serde_json::Deserializer::from_slice(bytes), arena),
    }
}

/// One whole value from `de` (nothing but whitespace after it).
fn read<'x, R: serde_json::de::Read<'x>>(
    mut de: serde_json::Deserializer<R>,
    arena: &'x Bump,
) -> serde_json::Result<Event<'x>> {
    let event = Seed(arena).deserialize(&mut de)?;
    de.end()?;
    Ok(event)
}

/// The member `key` of an object; of several members with that key, the
/// last (as a `serde_json::Value` read from the same text keeps it).
pub(crate) fn member<'a, 'x>(
    members: &'a [(&'x str, Event<'x>)],
    key: &str,
) -> Option<&'a Event<'x>> {
    members
        .iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// The member `key` of `value`, if it is an object that has one.
pub(crate) fn field<'a, 'x>(value: &'a Event<'x>, key: &str) -> Option<&'a Event<'x>> {
    match value {
        Event::Object(members) => member(members, key),
        _ => None,
    }
}

fn step<'a, 'x>(value: &'a Event<'x>, step: &Step) -> Option<&'a Event<'x>> {
    match (step, value) {
        (Step::Key(k), Event::Object(o)) => member(o, k),
        (Step::Index(i), Event::Array(a)) => a.get(*i),
        (Step::Index(i), Event::Object(o)) => member(o, &i.to_string()),
        _ => None,
    }
}

/// The value at `path` in an event, if every step exists (an index also
/// reads a key of that name), as [`JsonPath::get`] reads a `serde_json::Value`.
pub(crate) fn get<'a, 'x>(path: &JsonPath, value: &'a Event<'x>) -> Option<&'a Event<'x>> {
    path.0.iter().try_fold(value, step)
}

/// The value at `path` inside an object (the path's first step is a key of it).
pub(crate) fn get_in<'a, 'x>(
    path: &JsonPath,
    members: &'a [(&'x str, Event<'x>)],
) -> Option<&'a Event<'x>> {
    let (first, rest) = path.0.split_first()?;
    let first = match first {
        Step::Key(k) => member(members, k)?,
        Step::Index(i) => member(members, &i.to_string())?,
    };
    rest.iter().try_fold(first, step)
}

fn number(n: Num) -> Number {
    match n {
        Num::Pos(u) => u.into(),
        Num::Neg(i) => i.into(),
        // Only finite floats are read (see `visit_f64`).
        Num::Float(f) => Number::from_f64(f).unwrap_or_else(|| 0.into()),
    }
}

/// The part of an event the assembler keeps, as a `serde_json::Value`
/// (members in the event's order; of a repeated key, the last value in the
/// first key's place, as serde_json reads it).
pub(crate) fn to_value(event: &Event<'_>) -> Value {
    match *event {
        Event::Null => Value::Null,
        Event::Bool(b) => Value::Bool(b),
        Event::Number(n) => Value::Number(number(n)),
        Event::Str(s) => Value::String(s.to_owned()),
        Event::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        Event::Object(members) => Value::Object(to_map(members)),
    }
}

/// An event's object as a `serde_json` map; see [`to_value`].
pub(crate) fn to_map(members: Members<'_>) -> Map<String, Value> {
    let mut map = Map::with_capacity(members.len());
    for (k, v) in members {
        map.insert((*k).to_owned(), to_value(v));
    }
    map
}

/// A `serde_json::Value` (an event an SDK decoded) read as an event, its
/// strings borrowed, its lists in `arena`.
pub(crate) fn borrow<'x>(value: &'x Value, arena: &'x Bump) -> Event<'x> {
    match value {
        Value::Null => Event::Null,
        Value::Bool(b) => Event::Bool(*b),
        Value::Number(n) => Event::Number(match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Num::Pos(u),
            (None, Some(i)) => Num::Neg(i),
            // A serde_json number that is no integer is a finite float.
            (None, None) => Num::Float(n.as_f64().unwrap_or_default()),
        }),
        Value::String(s) => Event::Str(s),
        Value::Array(items) => {
            Event::Array(arena.alloc_slice_fill_iter(items.iter().map(|v| borrow(v, arena))))
        }
        Value::Object(map) => Event::Object(
            arena.alloc_slice_fill_iter(map.iter().map(|(k, v)| (k.as_str(), borrow(v, arena)))),
        ),
    }
}

/// Whether an event's value equals a value a spec wrote (numbers as
/// serde_json compares them: an integer never equals a float).
pub(crate) fn equals(event: &Event<'_>, want: &Value) -> bool {
    match (*event, want) {
        (Event::Null, Value::Null) => true,
        (Event::Bool(a), Value::Bool(b)) => a == *b,
        (Event::Number(a), Value::Number(b)) => number(a) == *b,
        (Event::Str(a), Value::String(b)) => a == b,
        (Event::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equals(x, y))
        }
        (Event::Object(a), Value::Object(b)) => {
            // Compared as the maps serde_json would read: repeated keys count once.
            let keys = a
                .iter()
                .enumerate()
                .filter(|(i, (k, _))| !a[i + 1..].iter().any(|(later, _)| later == k))
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
        let arena = Bump::new();
        let text = r#"{"a": {"b": [1, -2, 3.5, "x\"y", null, true]}, "k": 1, "k": 2, "0": "zero", "e\u0073c": {}}"#;
        let event = parse(text, &arena).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(to_value(&event), value);
        assert!(equals(&event, &value));
        assert!(!equals(&event, &json!({"k": 2})));
        let other = Bump::new();
        assert!(equals(&borrow(&value, &other), &value));
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
        assert!(get(&JsonPath::parse("esc"), &event).is_some());
        assert!(get(&JsonPath::parse("a/c"), &event).is_none());
        assert!(!equals(&parse("1", &arena).unwrap(), &json!(1.0)));
        // A malformed event, or text after it, gets serde_json's own error.
        for bad in [r#"{"a": [1,}"#, r#"{"a": 1} x"#, "[1, 2"] {
            assert_eq!(
                parse(bad, &arena).unwrap_err().to_string(),
                serde_json::from_str::<Value>(bad).unwrap_err().to_string()
            );
        }
        assert_eq!(
            parse_slice(b"{\"a\": \"\xff\"}", &arena)
                .unwrap_err()
                .to_string(),
            serde_json::from_slice::<Value>(b"{\"a\": \"\xff\"}")
                .unwrap_err()
                .to_string()
        );
    }
}
