//! A small generator of JSON instances from a schema, and helpers to move
//! instances between the original and the strict form.

use serde_json::{Map, Value, json};

/// A tiny deterministic random source (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 0
    }
}

/// Generates an instance meant to satisfy `schema` (best effort: patterns,
/// formats and `multipleOf` are ignored, so callers filter with a validator).
pub fn generate(schema: &Value, root: &Value, rng: &mut Rng, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        return Value::Null;
    };
    if depth > 12 {
        return Value::Null;
    }
    if let Some(Value::String(r)) = map.get("$ref") {
        return generate(resolve(root, r), root, rng, depth + 1);
    }
    if let Some(value) = map.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return values
            .get(rng.below(values.len() as u64) as usize)
            .cloned()
            .unwrap_or(Value::Null);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        let pick = &branches[rng.below(branches.len() as u64) as usize];
        return generate(pick, root, rng, depth + 1);
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => vec!["object"],
    };
    let t = types
        .get(rng.below(types.len() as u64) as usize)
        .copied()
        .unwrap_or("null");
    by_type(t, map, root, rng, depth)
}

fn by_type(t: &str, map: &Map<String, Value>, root: &Value, rng: &mut Rng, depth: usize) -> Value {
    let int = |k: &str| map.get(k).and_then(Value::as_i64);
    match t {
        "string" => {
            let min = int("minLength").unwrap_or(0).max(0) as u64;
            let max = int("maxLength").map_or(min + 6, |m| m as u64).max(min);
            let len = min + rng.below(max - min + 1);
            Value::String((0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect())
        }
        "integer" | "number" => {
            let min = int("minimum").unwrap_or(-50);
            let max = int("maximum").unwrap_or(min + 100).max(min);
            json!(min + rng.below((max - min + 1) as u64) as i64)
        }
        "boolean" => Value::Bool(rng.coin()),
        "array" => {
            let min = int("minItems").unwrap_or(0).max(0) as u64;
            let max = int("maxItems").map_or(min + 3, |m| m as u64).max(min);
            let n = min + rng.below(max - min + 1);
            let items = map.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..n)
                    .map(|_| generate(&items, root, rng, depth + 1))
                    .collect(),
            )
        }
        "object" => object(map, root, rng, depth),
        _ => Value::Null,
    }
}

fn object(map: &Map<String, Value>, root: &Value, rng: &mut Rng, depth: usize) -> Value {
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, schema) in props {
            if required.contains(&name.as_str()) || rng.coin() {
                out.insert(name.clone(), generate(schema, root, rng, depth + 1));
            }
        }
    }
    Value::Object(out)
}

fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    let fragment = reference.trim_start_matches('#');
    if fragment.is_empty() {
        return root;
    }
    root.pointer(fragment).unwrap_or(&Value::Null)
}

/// Sets every property the strict schema requires but the instance lacks
/// to `null` (what a model answering the strict schema sends for an
/// optional property it leaves out), following properties, items, the
/// `anyOf` branch an object fits, and `$ref`s.
pub fn fill_missing(instance: &mut Value, schema: &Value, root: &Value, depth: usize) {
    let Value::Object(map) = schema else { return };
    if depth > 24 {
        return;
    }
    if let Some(Value::String(r)) = map.get("$ref") {
        fill_missing(instance, resolve(root, r), root, depth + 1);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        // Fill only the first branch (through nested anyOf and $ref) the
        // instance fits: an object schema holding all its keys, or an array schema.
        if let Some(target) = branches
            .iter()
            .find_map(|b| fitting(instance, b, root, depth + 1))
        {
            fill_missing(instance, target, root, depth + 1);
        }
    }
    match instance {
        Value::Object(fields) => {
            let Some(Value::Object(props)) = map.get("properties") else {
                return;
            };
            for (name, sub) in props {
                let value = fields.entry(name.clone()).or_insert(Value::Null);
                fill_missing(value, sub, root, depth + 1);
            }
        }
        Value::Array(items) => {
            if let Some(sub) = map.get("items") {
                for item in items {
                    fill_missing(item, sub, root, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn fitting<'a>(
    instance: &Value,
    schema: &'a Value,
    root: &'a Value,
    depth: usize,
) -> Option<&'a Value> {
    if depth > 24 || !(instance.is_object() || instance.is_array()) {
        return None;
    }
    if let Some(Value::String(r)) = schema.get("$ref") {
        return fitting(instance, resolve(root, r), root, depth + 1);
    }
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        return branches
            .iter()
            .find_map(|b| fitting(instance, b, root, depth + 1));
    }
    match (instance, schema.get("properties"), schema.get("items")) {
        (Value::Object(fields), Some(Value::Object(props)), _)
            if fields.keys().all(|k| props.contains_key(k)) =>
        {
            Some(schema)
        }
        (Value::Array(_), _, Some(_)) => Some(schema),
        _ => None,
    }
}
