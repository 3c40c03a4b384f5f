//! Rules files in `mode: subset`: a provider's subset of JSON Schema applied to
//! every tool (the spec's `schema:` section), with its rewrites; and the
//! checks that keep a rules file from asking for what cannot be done.

use mcp_adapters::ErrorKind;
use mcp_adapters::strict::{StrictRules, convert};
use serde_json::{Value, json};

/// A subset that keeps every keyword, plus `extra` (YAML lines).
fn subset(extra: &str) -> StrictRules {
    let yaml = format!("mode: subset\nkeywords:\n  keep: []\n  unknown: keep\n{extra}");
    StrictRules::from_yaml_str(&yaml).unwrap_or_else(|e| panic!("{e:#}\n{yaml}"))
}

fn converted(rules: &StrictRules, schema: Value) -> Value {
    match convert(&schema, rules) {
        Ok(strict) => {
            assert!(
                strict.null_paths.is_empty(),
                "a subset makes nothing nullable"
            );
            strict.schema
        }
        Err(e) => json!({"error": [e.pointer(), e.kind().to_string()]}),
    }
}

/// One row: the rules' extra lines, the input, the output (or `{"error": [pointer, reason]}`).
#[test]
fn each_rewrite_does_what_it_says() {
    let rows: &[(&str, Value, Value)] = &[
        // Nothing asked: the schema as written, open maps and untyped nodes included.
        (
            "",
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}},
                   "any": {}, "a": {"type": "array"}}, "required": ["m"]}),
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}},
                   "any": {}, "a": {"type": "array"}}, "required": ["m"]}),
        ),
        // const_to_enum, with the const's type when the node has none.
        (
            "rewrites: [const_to_enum]\n",
            json!({"type": "object", "properties": {"k": {"const": "x"}, "n": {"const": 3}, "t": {"type": "string", "const": "y"},
                   "o": {"const": {"a": 1}}}}),
            json!({"type": "object", "properties": {"k": {"type": "string", "enum": ["x"]}, "n": {"type": "integer", "enum": [3]},
                   "t": {"type": "string", "enum": ["y"]}, "o": {"enum": [{"a": 1}]}}}),
        ),
        // type_into_any_of: the type moves into the branches that have none.
        (
            "rewrites: [type_into_any_of]\n",
            json!({"type": "object", "properties": {"v": {"type": "string", "anyOf": [{"format": "date"}, {"type": "null"}]}}}),
            json!({"type": "object", "properties": {"v": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}}}),
        ),
        // tuple_items_to_prefix_items, after prefixItems already there.
        (
            "rewrites: [tuple_items_to_prefix_items]\n",
            json!({"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]},
                   "q": {"type": "array", "prefixItems": [{"type": "boolean"}], "items": [{"type": "null"}]},
                   "r": {"type": "array", "items": {"type": "string"}}}}),
            json!({"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]},
                   "q": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "null"}]},
                   "r": {"type": "array", "items": {"type": "string"}}}}),
        ),
        // inline_refs: definitions go where they are used, the referring node's keywords over them.
        (
            "rewrites: [inline_refs]\n",
            json!({"type": "object", "$defs": {"Pt": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "a point"},
                   "unused": {"type": "string"}},
                   "properties": {"a": {"$ref": "#/$defs/Pt"}, "b": {"$ref": "#/$defs/Pt", "description": "the end"}}}),
            json!({"type": "object", "properties": {
                   "a": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "a point"},
                   "b": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "the end"}}}),
        ),
        // type_lists_to_nullable: OpenAPI 3.0's one type with `nullable`, or an anyOf.
        (
            "rewrites: [type_lists_to_nullable]\n",
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": ["integer", "string"]},
                   "c": {"type": ["null"]}, "d": {"type": "boolean"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true},
                   "b": {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "c": {"nullable": true}, "d": {"type": "boolean"}}}),
        ),
        // A recursive $ref cannot be inlined.
        (
            "rewrites: [inline_refs]\n",
            json!({"type": "object", "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
                   "properties": {"n": {"$ref": "#/$defs/N"}}}),
            json!({"error": ["/$defs/N/properties/next/$ref", "recursive_ref"]}),
        ),
        // recursive_refs: false refuses recursion even where nothing is inlined.
        (
            "recursive_refs: false\n",
            json!({"type": "object", "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
                   "properties": {"n": {"$ref": "#/$defs/N"}}}),
            json!({"error": ["/$defs/N/properties/next/$ref", "recursive_ref"]}),
        ),
        // Definitions no $ref reaches stay too: a subset keeps the schema as written.
        (
            "",
            json!({"type": "object", "$defs": {"unused": {"type": "string", "const": "x"}}, "properties": {}}),
            json!({"type": "object", "properties": {}, "$defs": {"unused": {"type": "string", "const": "x"}}}),
        ),
        // Recursion is fine otherwise: the definitions stay.
        (
            "",
            json!({"type": "object", "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
                   "properties": {"n": {"$ref": "#/$defs/N"}}}),
            json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}},
                   "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}}),
        ),
        // formats: describe moves a format the provider does not take into the description.
        (
            "formats: {allowed: [date], otherwise: describe}\n",
            json!({"type": "object", "properties": {"u": {"type": "string", "format": "uuid", "description": "The id"},
                   "d": {"type": "string", "format": "date"}, "e": {"type": "string", "format": "email"}}}),
            json!({"type": "object", "properties": {"u": {"type": "string", "description": "The id (format: uuid)"},
                   "d": {"type": "string", "format": "date"}, "e": {"type": "string", "description": "Format: email"}}}),
        ),
        // Subschemas strict mode cannot rewrite are converted in a subset.
        (
            "rewrites: [const_to_enum]\n",
            json!({"type": "object", "patternProperties": {"^x": {"const": 1}}, "if": {"const": 2}, "then": true,
                   "dependencies": {"a": ["b"], "c": {"const": 3}}}),
            json!({"type": "object", "patternProperties": {"^x": {"type": "integer", "enum": [1]}}, "if": {"type": "integer", "enum": [2]},
                   "then": true, "dependencies": {"a": ["b"], "c": {"type": "integer", "enum": [3]}}}),
        ),
        // The root must be an object unless the rules say otherwise.
        (
            "",
            json!({"properties": {"a": {"type": "string"}}}),
            json!({"error": ["", "root_not_object"]}),
        ),
        (
            "root: {object: false}\n",
            json!({"properties": {"a": {"type": "string"}}}),
            json!({"properties": {"a": {"type": "string"}}}),
        ),
    ];
    for (i, (extra, input, output)) in rows.iter().enumerate() {
        let rules = subset(extra);
        assert_eq!(
            converted(&rules, input.clone()),
            *output,
            "row {i}: {extra}"
        );
    }
}

/// Keyword classes apply in a subset as in strict mode.
#[test]
fn keyword_classes_and_limits_apply_in_a_subset() {
    let rules = StrictRules::from_yaml_str(
        "mode: subset\nkeywords:\n  keep: [type, properties, required, items, description]\n  drop: [additionalProperties]\n  unsupported: [oneOf]\n  unknown: drop\nlimits: {max_depth: 2}\n",
    )
    .unwrap();
    let schema = json!({"type": "object", "additionalProperties": false, "title": "T",
        "properties": {"a": {"type": "string", "x-vendor": 1}}, "required": ["a"]});
    assert_eq!(
        convert(&schema, &rules).unwrap().schema,
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    );
    let err = convert(
        &json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}}),
        &rules,
    )
    .unwrap_err();
    assert_eq!(
        (err.pointer(), err.kind().to_string().as_str()),
        ("/properties/a/oneOf", "oneOf")
    );
    let deep = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object"}}}}});
    assert_eq!(
        convert(&deep, &rules).unwrap_err().kind().to_string(),
        "max_depth"
    );
}

/// Inlining many references to a large definition stops at the node budget.
#[test]
fn inlining_that_fans_out_stops_at_the_node_budget() {
    let rules = subset("rewrites: [inline_refs]\n");
    // Each level refers twice to the one below: 2^24 copies if inlined naively.
    let mut defs = serde_json::Map::new();
    for level in 0..24 {
        let next = format!("#/$defs/L{}", level + 1);
        defs.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    defs.insert("L24".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/L0"}}});
    let err = convert(&schema, &rules).unwrap_err();
    assert_eq!(err.kind().to_string(), "max_nodes", "{err}");
}

/// What a rules file may not ask for is an error naming its place.
#[test]
fn rules_that_cannot_be_followed_are_errors() {
    let keep = "keywords:\n  keep: [type, properties, required, additionalProperties, const, enum, items, prefixItems, $ref, $defs, definitions, anyOf]\n";
    let cases: &[(&str, &str)] = &[
        (
            "mode: subset\noptional_properties: nullable\n",
            "/optional_properties",
        ),
        ("root: {object: false}\n", "/root/object"),
        ("recursive_refs: false\n", "/recursive_refs"),
        (
            "rewrites: [const_to_enum, const_to_enum]\nmode: subset\n",
            "/rewrites",
        ),
        ("rewrites: [tuple_items_to_prefix_items]\n", "/rewrites/0"),
        ("mode: sometimes\n", "/mode"),
        ("rewrites: [unknown_rewrite]\n", "/rewrites/0"),
        ("formats: {otherwise: describe_it}\n", "/formats/otherwise"),
    ];
    for (extra, at) in cases {
        let text = format!("{keep}{extra}");
        let err = StrictRules::from_yaml_str(&text).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Spec, "{extra}");
        let path = err.location().path.clone().unwrap_or_default();
        assert!(path.starts_with(at), "{extra}: {path} ({err})");
    }
    // A rewrite needs the keyword it works on to be kept.
    let err = StrictRules::from_yaml_str(
        "mode: subset\nkeywords: {keep: [type], drop: [const]}\nrewrites: [const_to_enum]\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("works on const"), "{err}");
}
