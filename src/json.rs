//! JSON helpers shared by every stage: nesting bounds, pointers, type names.
//!
//! `serde_json` clones, serializes and drops values recursively, one stack
//! frame (or several) per level. Text parsed by `serde_json` is at most 128
//! levels deep, but a value built in memory (an in-process server's tool, a
//! result assembled by a hook) can be nested arbitrarily deep. The library
//! measures nesting before it copies a value of unknown origin (never looking
//! further down than the bound), and refuses what is deeper than 256.

use serde_json::{Map, Value};

/// Deepest nesting of arrays and objects the library copies or renders: a
/// tool's schemas, call arguments, `structuredContent`, unknown content
/// blocks, and schemas given to the strict converter.
pub(crate) const MAX_NESTING: usize = 256;

/// Whether `value` has an array or object nested more than `cap` levels deep
/// (the value itself, if a container, is level 1). Safe on any depth: the
/// recursion stops `cap` levels down, whatever lies below.
pub(crate) fn deeper_than(value: &Value, cap: usize) -> bool {
    !within(value, cap)
}

/// Whether every container in `value` is at most `cap` levels deep. It
/// recurses into containers only, at most `cap` levels (a few dozen bytes of
/// stack a level); scalars, most of a schema, cost one comparison. Cheaper
/// than [`first_too_deep`], which keeps the path it walks.
fn within(value: &Value, cap: usize) -> bool {
    match value {
        Value::Object(map) => {
            cap > 0 && map.values().all(|v| !is_container(v) || within(v, cap - 1))
        }
        Value::Array(items) => {
            cap > 0 && items.iter().all(|v| !is_container(v) || within(v, cap - 1))
        }
        _ => true,
    }
}

/// Whether a value is an array or an object.
pub(crate) fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

/// The JSON pointer of the first container (in document order) nested more
/// than `cap` levels deep, if any. Runs with an explicit stack in time linear
/// in the size of `value`; names are only kept for containers, so wide
/// values stay cheap.
pub(crate) fn first_too_deep(value: &Value, cap: usize) -> Option<String> {
    enum Frame<'a> {
        Object(serde_json::map::Iter<'a>),
        Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
    }
    enum Token<'a> {
        Key(&'a str),
        Index(usize),
    }
    fn frame(value: &Value) -> Option<Frame<'_>> {
        match value {
            Value::Object(map) => Some(Frame::Object(map.iter())),
            Value::Array(items) => Some(Frame::Array(items.iter().enumerate())),
            _ => None,
        }
    }
    let mut frames: Vec<Frame<'_>> = frame(value).into_iter().collect();
    if cap == 0 && !frames.is_empty() {
        return Some(String::new());
    }
    let mut tokens: Vec<Token<'_>> = Vec::new();
    while let Some(top) = frames.last_mut() {
        let next = match top {
            Frame::Object(iter) => iter.next().map(|(k, v)| (Token::Key(k), v)),
            Frame::Array(iter) => iter.next().map(|(i, v)| (Token::Index(i), v)),
        };
        let Some((token, child)) = next else {
            frames.pop();
            tokens.pop();
            continue;
        };
        let Some(child_frame) = frame(child) else {
            continue;
        };
        tokens.push(token);
        if frames.len() >= cap {
            let mut pointer = String::new();
            for token in &tokens {
                match token {
                    Token::Key(key) => push_pointer_segment(&mut pointer, key),
                    Token::Index(i) => push_pointer_segment(&mut pointer, &i.to_string()),
                }
            }
            return Some(pointer);
        }
        frames.push(child_frame);
    }
    None
}

/// Drops a value of any depth without recursion.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(mut value) = stack.pop() {
        match &mut value {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    if let Some(child) = map.swap_remove(&key) {
                        stack.push(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Objects up to this many members are searched by comparing keys.
const SCAN_MEMBERS: usize = 8;

/// A member of an object. Schemas and stream events are mostly small
/// objects, where comparing a few short keys is cheaper than hashing one
/// (`Map` hashes every key it looks up).
pub(crate) fn member<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= SCAN_MEMBERS {
        map.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// A member of an object, to change; see [`member`].
pub(crate) fn member_mut<'v>(map: &'v mut Map<String, Value>, key: &str) -> Option<&'v mut Value> {
    if map.len() <= SCAN_MEMBERS {
        map.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get_mut(key)
    }
}

/// Whether an object has a member; see [`member`].
pub(crate) fn has_member(map: &Map<String, Value>, key: &str) -> bool {
    member(map, key).is_some()
}

/// Appends `/segment` to a JSON pointer, escaping `~` and `/` (RFC 6901).
pub(crate) fn push_pointer_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    if memchr::memchr2(b'~', b'/', segment.as_bytes()).is_none() {
        pointer.push_str(segment);
        return;
    }
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// The JSON pointer of the place a typed read failed.
pub(crate) fn pointer_of(path: &serde_path_to_error::Path) -> String {
    let mut at = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => {
                push_pointer_segment(&mut at, &index.to_string())
            }
            serde_path_to_error::Segment::Map { key } => push_pointer_segment(&mut at, key),
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    at
}

/// `pointer` with `/segment` appended (see [`push_pointer_segment`]).
pub(crate) fn pointer_child(pointer: &str, segment: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + segment.len() + 1);
    out.push_str(pointer);
    push_pointer_segment(&mut out, segment);
    out
}

/// What a value is, for messages: `null`, `a boolean`, `a number`,
/// `a string`, `an array`, `an object`.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn measures_levels() {
        assert!(!deeper_than(&json!(1), 0));
        assert!(deeper_than(&json!([]), 0));
        assert!(!deeper_than(&json!([]), 1));
        assert!(!deeper_than(&json!({"a": [1, {"b": 2}]}), 3));
        assert!(deeper_than(&json!({"a": [1, {"b": {}}]}), 3));
    }

    #[test]
    fn the_measure_and_the_pointer_agree() {
        let values = [
            json!(1),
            json!([]),
            json!({"a": [1, {"b": {}}], "c": [[[]]]}),
            json!([[1, 2], {"x": [{"y": [0]}]}, "s"]),
        ];
        for value in &values {
            for cap in 0..6 {
                assert_eq!(
                    deeper_than(value, cap),
                    first_too_deep(value, cap).is_some(),
                    "{value} at {cap}"
                );
            }
        }
    }

    #[test]
    fn names_the_first_place_too_deep() {
        let value = json!({"ok": [1], "a/b": [{"c~": {"d": []}}]});
        assert_eq!(first_too_deep(&value, 3).as_deref(), Some("/a~1b/0/c~0"));
        assert_eq!(first_too_deep(&value, 5), None);
    }

    #[test]
    fn pointers_escape() {
        assert_eq!(pointer_child("/a", "b/c~d"), "/a/b~1c~0d");
    }

    #[test]
    fn a_million_levels_are_measured_and_dropped_without_recursion() {
        let mut deep = json!(0);
        for _ in 0..1_000_000 {
            deep = Value::Array(vec![deep]);
        }
        assert!(deeper_than(&deep, MAX_NESTING));
        dismantle(deep);
    }
}
