//! Hostile schemas: each must end in an error (or a correct answer) quickly,
//! without overflowing the stack.

mod common;

use common::{drop_deep, obj};
use mcp_adapters::strict::{StrictError, convert};
use serde_json::{Map, Value, json};

fn reason(result: Result<mcp_adapters::strict::StrictSchema, StrictError>) -> String {
    result
        .expect_err("hostile input must fail")
        .kind()
        .to_string()
}

fn nested_objects(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        let props = obj([("a", schema)]);
        schema = obj([
            ("type", json!("object")),
            ("properties", props),
            ("required", json!(["a"])),
        ]);
    }
    schema
}

#[test]
fn hundred_thousand_levels_of_objects() {
    let schema = nested_objects(100_000);
    assert_eq!(reason(convert(&schema, &common::rules())), "max_depth");
    drop_deep(schema);
}

#[test]
fn hundred_thousand_levels_in_a_dropped_keyword() {
    let mut deep = json!(0);
    for _ in 0..100_000 {
        deep = Value::Array(vec![deep]);
    }
    let a = obj([("type", json!("string")), ("default", deep)]);
    let schema = obj([("type", json!("object")), ("properties", obj([("a", a)]))]);
    assert_eq!(reason(convert(&schema, &common::rules())), "max_depth");
    drop_deep(schema);
}

#[test]
fn hundred_thousand_levels_of_items_and_any_of() {
    let mut schema = json!({"type": "string"});
    for i in 0..100_000 {
        schema = if i % 2 == 0 {
            obj([("type", json!("array")), ("items", schema)])
        } else {
            obj([("anyOf", Value::Array(vec![schema]))])
        };
    }
    let root = obj([
        ("type", json!("object")),
        ("properties", obj([("a", schema)])),
    ]);
    assert_eq!(reason(convert(&root, &common::rules())), "max_depth");
    drop_deep(root);
}

#[test]
fn ref_cycles() {
    let pure = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"],
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
    assert_eq!(reason(convert(&pure, &common::rules())), "recursive_ref");
    let self_ref = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": ["a"],
        "$defs": {"A": {"$ref": "#/$defs/A"}}});
    assert_eq!(
        reason(convert(&self_ref, &common::rules())),
        "recursive_ref"
    );
}

#[test]
fn long_ref_chain() {
    let defs: Map<String, Value> = (0..100_000)
        .map(|i| {
            (
                format!("d{i}"),
                json!({"$ref": format!("#/$defs/d{}", i + 1)}),
            )
        })
        .collect();
    let a = json!({"$ref": "#/$defs/d0"});
    let schema = obj([
        ("type", json!("object")),
        ("properties", obj([("a", a)])),
        ("$defs", Value::Object(defs)),
    ]);
    assert_eq!(reason(convert(&schema, &common::rules())), "max_depth");
}

fn fan_out(levels: usize, leaf: Value) -> Value {
    let mut defs = Map::new();
    for i in 0..levels {
        let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
        let def =
            json!({"type": "object", "properties": {"l": next, "r": next}, "required": ["l", "r"]});
        defs.insert(format!("d{i}"), def);
    }
    defs.insert(format!("d{levels}"), leaf);
    json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "required": ["root"], "$defs": defs})
}

#[test]
fn ref_fan_out_bomb_with_optional_leaf() {
    // 2^60 instance paths to the optional leaf property.
    let leaf = json!({"type": "object", "properties": {"x": {"type": "string"}}});
    let schema = fan_out(60, leaf);
    let err = convert(&schema, &common::rules()).expect_err("unbounded null paths");
    assert_eq!(err.kind().to_string(), "max_properties");
}

#[test]
fn ref_fan_out_bomb_without_optional_properties_converts_once_per_definition() {
    let leaf = json!({"type": "string"});
    let schema = fan_out(9, leaf);
    let strict = convert(&schema, &common::rules()).expect("each definition is converted once");
    assert!(strict.null_paths.is_empty());
    assert_eq!(strict.schema["$defs"].as_object().map(Map::len), Some(10));
    let wide = fan_out(60, json!({"type": "string"}));
    let strict = convert(&wide, &common::rules()).expect("2^60 expansions, 61 conversions");
    assert_eq!(strict.schema["$defs"].as_object().map(Map::len), Some(61));
}

#[test]
fn a_million_properties() {
    let props: Map<String, Value> = (0..1_000_000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let schema = obj([
        ("type", json!("object")),
        ("properties", Value::Object(props)),
    ]);
    assert_eq!(reason(convert(&schema, &common::rules())), "max_properties");
}

#[test]
fn a_million_enum_values() {
    let values: Vec<Value> = (0..1_000_000).map(Value::from).collect();
    let e = obj([("enum", Value::Array(values))]);
    let schema = obj([("type", json!("object")), ("properties", obj([("e", e)]))]);
    assert_eq!(
        reason(convert(&schema, &common::rules())),
        "max_enum_values"
    );
}

#[test]
fn a_million_any_of_branches() {
    let branches: Vec<Value> = (0..1_000_000).map(|i| json!({"const": i})).collect();
    let e = obj([("anyOf", Value::Array(branches))]);
    let schema = obj([("type", json!("object")), ("properties", obj([("e", e)]))]);
    assert_eq!(reason(convert(&schema, &common::rules())), "max_nodes");
}

#[test]
fn deep_null_probe_through_refs_terminates() {
    let defs: Map<String, Value> = (0..1000)
        .map(|i| (format!("d{i}"), json!({"anyOf": [{"$ref": format!("#/$defs/d{}", (i + 1) % 1000)}, {"type": "string"}]})))
        .collect();
    let schema =
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    // Either answer is fine; it must terminate without overflowing.
    let _ = convert(&schema, &common::rules());
}
