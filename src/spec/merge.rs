//! Deep merging of JSON values: a spec over the spec it `extends`, an
//! option value's `results` over the spec's, and an option's `merge_last` /
//! `merge_each` over tool definitions.

use serde_json::{Map, Value};

/// Deep-merges `over` into `base`: objects merge key by key, `null` removes a key,
/// anything else replaces.
pub(crate) fn deep_merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => merge_maps(b, o),
        (b, o) => *b = o.clone(),
    }
}

/// [`deep_merge`] of an object into a value.
pub(crate) fn merge_object(target: &mut Value, extra: &Map<String, Value>) {
    match target {
        Value::Object(map) => merge_maps(map, extra),
        other => *other = Value::Object(extra.clone()),
    }
}

fn merge_maps(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        if v.is_null() {
            base.shift_remove(k);
        } else if let Some(existing) = base.get_mut(k) {
            deep_merge(existing, v);
        } else {
            base.insert(k.clone(), v.clone());
        }
    }
}
