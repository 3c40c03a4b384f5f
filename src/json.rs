//! Bounds on the nesting of JSON values the library copies or renders.
//!
//! `serde_json` clones, serializes and drops values recursively, one stack
//! frame (or several) per level. Text parsed by `serde_json` is at most 128
//! levels deep, but a value built in memory (an in-process server's tool, a
//! result assembled by a hook) can be nested arbitrarily deep. The library
//! measures nesting iteratively before it copies a value of unknown origin,
//! and refuses what is deeper than [`MAX_NESTING`].

use serde_json::Value;

/// Deepest nesting of arrays and objects the library copies or renders: a
/// tool's schemas, call arguments, `structuredContent`, unknown content
/// blocks. The same bound as the strict converter's.
pub const MAX_NESTING: usize = 256;

/// Whether `value` has an array or object nested more than `cap` levels deep
/// (the value itself, if a container, is level 1). Iterative: safe on any depth.
pub(crate) fn deeper_than(value: &Value, cap: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, level)) = stack.pop() {
        let is_container = |c: &&Value| matches!(c, Value::Array(_) | Value::Object(_));
        match value {
            Value::Array(_) | Value::Object(_) if level > cap => return true,
            Value::Array(items) => {
                stack.extend(items.iter().filter(is_container).map(|c| (c, level + 1)))
            }
            Value::Object(map) => {
                stack.extend(map.values().filter(is_container).map(|c| (c, level + 1)))
            }
            _ => {}
        }
    }
    false
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
    fn a_million_levels_are_measured_and_dropped_without_recursion() {
        let mut deep = json!(0);
        for _ in 0..1_000_000 {
            deep = Value::Array(vec![deep]);
        }
        assert!(deeper_than(&deep, MAX_NESTING));
        dismantle(deep);
    }
}
