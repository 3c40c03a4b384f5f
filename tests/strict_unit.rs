//! One test per conversion rule, limit and nullable form.

mod common;

use mcp_adapters::strict::{
    Limit, NullPath, Segment, StrictReason, StrictRules, convert, strip_nulls,
};
use serde_json::{Value, json};

fn ok(schema: Value) -> (Value, Vec<String>) {
    let strict = convert(&schema, &common::rules()).expect("converts");
    let paths = strict.null_paths.iter().map(ToString::to_string).collect();
    (strict.schema, paths)
}

fn fails(schema: Value) -> (String, String) {
    let err = convert(&schema, &common::rules()).expect_err("fails");
    (err.pointer().to_owned(), err.kind().to_string())
}

fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

#[test]
fn closes_objects_and_requires_every_property_sorted() {
    let (s, paths) = ok(
        json!({"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string"}}, "required": ["b"]}),
    );
    assert_eq!(s["required"], json!(["a", "b"]));
    assert_eq!(s["additionalProperties"], json!(false));
    assert_eq!(paths, ["$.a"]);
}

#[test]
fn nullable_type_string() {
    let (s, _) = ok(object(json!({"x": {"type": "string"}})));
    assert_eq!(s["properties"]["x"], json!({"type": ["string", "null"]}));
}

#[test]
fn nullable_type_list() {
    let (s, _) = ok(object(json!({"x": {"type": ["string", "integer"]}})));
    assert_eq!(
        s["properties"]["x"]["type"],
        json!(["string", "integer", "null"])
    );
}

#[test]
fn nullable_enum() {
    let (s, _) = ok(object(
        json!({"x": {"enum": ["a", "b"]}, "y": {"type": "string", "enum": ["a"]}}),
    ));
    assert_eq!(s["properties"]["x"], json!({"enum": ["a", "b", null]}));
    assert_eq!(
        s["properties"]["y"],
        json!({"type": ["string", "null"], "enum": ["a", null]})
    );
}

#[test]
fn nullable_any_of_ref_and_const_are_wrapped() {
    let schema = json!({"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "d"},
        "r": {"$ref": "#/$defs/D"},
        "c": {"const": 3}
    }, "$defs": {"D": {"type": "string"}}});
    let (s, paths) = ok(schema);
    let nul = json!({"type": "null"});
    assert_eq!(s["properties"]["a"]["description"], "d");
    assert_eq!(s["properties"]["a"]["anyOf"][1], nul);
    assert_eq!(
        s["properties"]["r"],
        json!({"anyOf": [{"$ref": "#/$defs/D"}, nul]})
    );
    assert_eq!(s["properties"]["c"], json!({"anyOf": [{"const": 3}, nul]}));
    assert_eq!(paths, ["$.a", "$.r", "$.c"]);
}

#[test]
fn already_nullable_properties_are_not_null_paths() {
    let schema = object(json!({
        "t": {"type": ["string", "null"]},
        "e": {"enum": ["a", null]},
        "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "c": {"const": null},
        "r": {"$ref": "#/$defs/N"}
    }));
    let mut schema = schema;
    schema["$defs"] = json!({"N": {"type": "null"}});
    let (s, paths) = ok(schema.clone());
    assert!(paths.is_empty(), "{paths:?}");
    assert_eq!(s["properties"]["t"], schema["properties"]["t"]);
}

#[test]
fn null_paths_cross_arrays_refs_and_branches() {
    let schema = json!({"type": "object", "required": ["rows"], "properties": {
        "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}},
        "u": {"anyOf": [{"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": false}, {"type": "string"}]}
    }, "$defs": {"Row": {"type": "object", "properties": {"note": {"type": "string"}}}}});
    let (_, paths) = ok(schema);
    assert_eq!(paths, ["$.rows[*].note", "$.u", "$.u.k"]);
}

#[test]
fn null_path_json_form_uses_null_for_items() {
    let path = NullPath(vec![
        Segment::Property("a".into()),
        Segment::Items,
        Segment::Property("b c".into()),
    ]);
    assert_eq!(
        serde_json::to_value(&path).unwrap(),
        json!(["a", null, "b c"])
    );
    assert_eq!(path.to_string(), r#"$.a[*]["b c"]"#);
    let back: NullPath = serde_json::from_value(json!(["a", null, "b c"])).unwrap();
    assert_eq!(back, path);
}

#[test]
fn strip_nulls_removes_only_nulls_at_paths() {
    let paths: Vec<NullPath> =
        serde_json::from_value(json!([["a"], ["rows", null, "n"], ["m", "x"]])).unwrap();
    let mut args =
        json!({"a": null, "b": null, "rows": [{"n": null, "k": 1}, {"n": 2}], "m": null})
            .as_object()
            .cloned()
            .unwrap();
    strip_nulls(&mut args, &paths);
    assert_eq!(
        Value::Object(args),
        json!({"b": null, "rows": [{"k": 1}, {"n": 2}], "m": null})
    );
}

#[test]
fn kept_dropped_and_formats() {
    let (s, _) = ok(
        json!({"type": "object", "$schema": "x", "x-vendor": 1, "properties": {
        "d": {"type": "string", "format": "date", "default": "", "pattern": "^a", "minLength": 1},
        "u": {"type": "string", "format": "uri", "examples": ["a"], "contentMediaType": "text/plain"},
        "n": {"type": "array", "items": {"type": "number", "multipleOf": 2}, "uniqueItems": true, "maxItems": 3}
    }, "required": ["d", "u", "n"], "minProperties": 1}),
    );
    assert_eq!(
        s["properties"]["d"],
        json!({"type": "string", "format": "date", "pattern": "^a", "minLength": 1})
    );
    assert_eq!(s["properties"]["u"], json!({"type": "string"}));
    assert_eq!(
        s["properties"]["n"],
        json!({"type": "array", "items": {"type": "number", "multipleOf": 2}, "maxItems": 3})
    );
    assert!(
        s.get("$schema").is_none()
            && s.get("x-vendor").is_none()
            && s.get("minProperties").is_none()
    );
}

#[test]
fn every_unsupported_keyword_fails_with_its_name() {
    let keywords = [
        "allOf",
        "not",
        "oneOf",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "$dynamicRef",
        "$recursiveRef",
    ];
    for keyword in keywords {
        let schema = object(json!({"x": {"type": "string", keyword: {}}}));
        assert_eq!(
            fails(schema),
            (format!("/properties/x/{keyword}"), keyword.to_owned())
        );
    }
}

#[test]
fn structural_failures() {
    let cases = [
        (json!({"type": "string"}), "", "root_not_object"),
        (
            json!({"anyOf": [{"type": "object"}]}),
            "/anyOf",
            "root_any_of",
        ),
        (
            json!({"type": "object", "additionalProperties": true}),
            "/additionalProperties",
            "open_map",
        ),
        (
            object(json!({"m": {"type": "object"}})),
            "/properties/m",
            "open_map",
        ),
        (
            object(json!({"m": {"type": "object", "additionalProperties": {}}})),
            "/properties/m/additionalProperties",
            "open_map",
        ),
        (
            object(json!({"l": {"type": "array"}})),
            "/properties/l",
            "array_without_items",
        ),
        (
            object(json!({"u": {"description": "x"}})),
            "/properties/u",
            "untyped",
        ),
        (
            object(json!({"r": {"$ref": "other.json#/a"}})),
            "/properties/r/$ref",
            "non_local_ref",
        ),
        (
            object(json!({"r": {"$ref": "#/$defs/none"}})),
            "/properties/r/$ref",
            "unresolvable_ref",
        ),
        (
            object(json!({"r": {"$ref": "#/properties/x"}})),
            "/properties/r/$ref",
            "unresolvable_ref",
        ),
        (
            object(json!({"t": {"type": "text"}})),
            "/properties/t/type",
            "invalid_value",
        ),
    ];
    for (schema, pointer, reason) in cases {
        assert_eq!(
            fails(schema.clone()),
            (pointer.to_owned(), reason.to_owned()),
            "{schema}"
        );
    }
}

#[test]
fn closed_empty_nested_object_is_accepted() {
    let (s, _) = ok(object(
        json!({"m": {"type": "object", "additionalProperties": false}}),
    ));
    assert_eq!(s["properties"]["m"]["properties"], json!({}));
}

#[test]
fn recursive_ref_with_optional_properties_fails() {
    let schema = json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"],
        "$defs": {"N": {"type": "object", "properties": {"v": {"type": "string"}, "next": {"$ref": "#/$defs/N"}}, "required": ["next"]}}});
    assert_eq!(
        fails(schema),
        ("/$defs/N".to_owned(), "recursive_ref".to_owned())
    );
    let root = json!({"type": "object", "properties": {"me": {"$ref": "#"}}});
    assert_eq!(fails(root), ("".to_owned(), "recursive_ref".to_owned()));
}

fn limit_of(schema: Value) -> String {
    fails(schema).1
}

#[test]
fn limit_max_properties() {
    let props: serde_json::Map<String, Value> = (0..5001)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    assert_eq!(
        limit_of(object(Value::Object(props))),
        Limit::MaxProperties.name()
    );
}

#[test]
fn limit_max_depth_counts_object_levels() {
    let mut schema = json!({"type": "object", "properties": {}});
    for _ in 0..9 {
        schema = json!({"type": "object", "properties": {"n": schema}, "required": ["n"]});
    }
    assert!(
        convert(&schema, &common::rules()).is_ok(),
        "10 levels are allowed"
    );
    let deeper = json!({"type": "object", "properties": {"n": schema}, "required": ["n"]});
    assert_eq!(limit_of(deeper), "max_depth");
}

#[test]
fn limit_max_chars() {
    let long = "x".repeat(60_001);
    let schema = object(json!({"a": {"const": long.clone()}, "b": {"const": long}}));
    assert_eq!(
        fails(schema),
        ("/properties/b/const".to_owned(), "max_chars".to_owned())
    );
}

#[test]
fn limit_max_enum_values() {
    let values: Vec<Value> = (0..1001).map(Value::from).collect();
    assert_eq!(
        limit_of(object(json!({"e": {"enum": values}}))),
        "max_enum_values"
    );
}

#[test]
fn limit_max_enum_chars_only_above_threshold() {
    let big: Vec<Value> = (0..251).map(|i| Value::from(format!("{i:0>60}"))).collect();
    assert_eq!(
        limit_of(object(json!({"e": {"enum": big}}))),
        "max_enum_chars"
    );
    let small: Vec<Value> = (0..250).map(|i| Value::from(format!("{i:0>70}"))).collect();
    assert!(convert(&object(json!({"e": {"enum": small}})), &common::rules()).is_ok());
}

#[test]
fn input_is_not_mutated() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}});
    let before = schema.clone();
    let _ = convert(&schema, &common::rules());
    assert_eq!(schema, before);
}

#[test]
fn error_display_and_kind() {
    let err = convert(&json!({"type": "string"}), &common::rules()).unwrap_err();
    assert_eq!(err.kind(), &StrictReason::RootNotObject);
    assert_eq!(err.to_string(), "root_not_object at #");
}

const OTHER_RULES: &str = "
keywords:
  keep: [type, properties, required, additionalProperties, items, anyOf, allOf, $ref, $defs, definitions, enum, const, format, minItems, description]
  unsupported: [oneOf, not]
  unknown: drop
values:
  minItems: {allowed: [0, 1], otherwise: drop}
formats: {allowed: [uri], otherwise: drop}
optional_properties: keep
";

#[test]
fn another_rules_file_changes_behaviour_without_code() {
    let rules = StrictRules::from_yaml_str(OTHER_RULES).expect("loads");
    let schema = json!({"type": "object", "properties": {
        "a": {"allOf": [{"type": "string", "format": "uri"}]},
        "l": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "m": {"type": "array", "items": {"type": "string"}, "minItems": 1}
    }, "required": ["l"]});
    let strict = convert(&schema, &rules).expect("converts");
    assert_eq!(
        strict.schema["properties"]["a"],
        json!({"allOf": [{"type": "string", "format": "uri"}]})
    );
    assert_eq!(
        strict.schema["properties"]["l"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(strict.schema["properties"]["m"]["minItems"], 1);
    assert_eq!(strict.schema["required"], json!(["l"]));
    assert!(strict.null_paths.is_empty());
}

#[test]
fn rules_check_rejects_bad_rules() {
    let cases = [
        (
            "keywords:\n  keep: [type, properties, required, additionalProperties]\n  drop: [type]\n",
            "both",
        ),
        (
            "keywords:\n  keep: [properties, required, additionalProperties]\n",
            "must be kept",
        ),
        (
            "keywords:\n  keep: [type, properties, required, additionalProperties, if]\n",
            "cannot be kept",
        ),
        (
            "keywords:\n  keep: [type, properties, required, additionalProperties]\nvalues:\n  minItems: {allowed: [1]}\n",
            "not kept",
        ),
        (
            "keywords:\n  keep: [type, properties, required, additionalProperties]\nlimits: {max_depth: 0}\n",
            "limits",
        ),
        ("keywords:\n  keep: [type]\nbogus: 1\n", "bogus"),
        ("keywords: [", "strict rules"),
    ];
    for (yaml, needle) in cases {
        let err = StrictRules::from_yaml_str(yaml).expect_err(yaml);
        assert!(err.to_string().contains(needle), "{err}");
    }
}
