//! Deep merging of JSON values: a spec over the spec it `extends`, an
//! option value's `results` over the spec's, and an option's `merge_last` /
//! `merge_each` over tool definitions.

use serde_json::{Map, Value};

/// Deep-merges `over` into `base`: objects merge key by key, `null` removes a key,
/// anything else replaces.
pub(crate) fn deep_merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => merge_maps(b, o.clone()),
        (b, o) => *b = o.clone(),
    }
}

/// [`deep_merge`] of an object into a value.
pub(crate) fn merge_object(target: &mut Value, extra: &Map<String, Value>) {
    merge_object_owned(target, extra.clone());
}

/// [`merge_object`] of an object the caller gives up: its values are moved
/// into `target` rather than copied.
pub(crate) fn merge_object_owned(target: &mut Value, extra: Map<String, Value>) {
    match target {
        Value::Object(map) => merge_maps(map, extra),
        other => *other = Value::Object(extra),
    }
}

fn merge_maps(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        if v.is_null() {
            base.shift_remove(&k);
            continue;
        }
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge_maps(b, o),
            (Some(existing), v) => *existing = v,
            (None, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `null` removes a key, objects merge key by key, anything else
    /// replaces, whether the values are moved in or copied.
    #[test]
    fn owned_merge_matches_the_copying_one() {
        let base = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1], "gone": true});
        let over = json!({"b": {"c": null, "x": {"y": 1}}, "e": {"now": "object"}, "gone": null, "new": [2]});
        let Value::Object(over) = over else {
            unreachable!()
        };
        let (mut copied, mut moved) = (base.clone(), base);
        merge_object(&mut copied, &over);
        merge_object_owned(&mut moved, over.clone());
        assert_eq!(moved, copied);
        assert_eq!(
            moved,
            json!({"a": 1, "b": {"d": 3, "x": {"y": 1}}, "e": {"now": "object"}, "new": [2]})
        );
        let mut not_an_object = json!("text");
        merge_object_owned(&mut not_an_object, over.clone());
        assert_eq!(Value::Object(over), not_an_object);
    }
}
