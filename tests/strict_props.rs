//! Soundness and completeness of the strict conversion, judged by the
//! jsonschema crate over generated schemas and the public corpus.

mod common;

use common::RulesView;
use common::instances::{Rng, fill_missing, generate};
use jsonschema::Validator;
use mcp_adapters::strict::{StrictSchema, convert, strip_nulls};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn validator(schema: &Value) -> Validator {
    jsonschema::validator_for(schema).expect("schema compiles")
}

/// Checks both directions for instances drawn from `seeds`; returns how many
/// instances were actually judged (generated ones the source schema rejects
/// are skipped).
fn check_both_ways(original: &Value, strict: &StrictSchema, seeds: std::ops::Range<u64>) -> usize {
    // Soundness holds up to what dropped keywords narrow: judge it against
    // the original without them.
    let relaxed = relax(original, &RulesView::bundled());
    let orig_v = validator(&relaxed);
    let strict_v = validator(&strict.schema);
    let mut judged = 0;
    for seed in seeds {
        let mut rng = Rng::new(seed);
        let candidate = generate(&strict.schema, &strict.schema, &mut rng, 0);
        if strict_v.is_valid(&candidate) {
            let mut args = candidate.as_object().cloned().unwrap_or_default();
            strip_nulls(&mut args, &strict.null_paths);
            let stripped = Value::Object(args);
            assert!(
                orig_v.is_valid(&stripped),
                "soundness: {stripped} (from {candidate}) rejected by {original}"
            );
            judged += 1;
        }
        let mut instance = generate(original, original, &mut rng, 0);
        if orig_v.is_valid(&instance) {
            fill_missing(&mut instance, &strict.schema, &strict.schema, 0);
            assert!(
                strict_v.is_valid(&instance),
                "completeness: {instance} rejected by {}",
                strict.schema
            );
            judged += 1;
        }
    }
    judged
}

/// The original schema without the keywords the rules drop (and without
/// formats they do not keep), walking only schema positions.
fn relax(schema: &Value, rules: &RulesView) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let dropped = rules.drops(key)
            || (key == "format" && !value.as_str().is_some_and(|f| rules.keeps_format(f)));
        if dropped && key != "$schema" {
            continue;
        }
        let relaxed = match (key.as_str(), value) {
            ("properties" | "$defs" | "definitions", Value::Object(members)) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), relax(v, rules)))
                    .collect(),
            ),
            ("items", _) => relax(value, rules),
            ("anyOf", Value::Array(branches)) => branches.iter().map(|b| relax(b, rules)).collect(),
            _ => value.clone(),
        };
        out.insert(key.clone(), relaxed);
    }
    Value::Object(out)
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i64..3, 3i64..8)
            .prop_map(|(a, b)| json!({"type": "string", "minLength": a, "maxLength": b})),
        (-5i64..0, 0i64..5)
            .prop_map(|(a, b)| json!({"type": "integer", "minimum": a, "maximum": b})),
        Just(json!({"type": "boolean", "default": true})),
        Just(json!({"type": "number", "examples": [1.5]})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"enum": ["a", "b", 3]})),
        Just(json!({"const": "k"})),
        Just(json!({"type": "string", "format": "uri"})),
        Just(json!({"$ref": "#/$defs/D"})),
    ]
}

fn object_of(props: Vec<(Value, bool)>, closed: bool) -> Value {
    let mut properties = Map::new();
    let mut required = vec![];
    for (i, (schema, req)) in props.into_iter().enumerate() {
        properties.insert(format!("p{i}"), schema);
        if req {
            required.push(json!(format!("p{i}")));
        }
    }
    let mut out = json!({"type": "object", "properties": properties, "required": required});
    if closed {
        out["additionalProperties"] = json!(false);
    }
    out
}

fn schema_node() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (prop::collection::vec((inner.clone(), any::<bool>()), 0..4), any::<bool>())
                .prop_map(|(props, closed)| object_of(props, closed)),
            (inner.clone(), 0i64..2).prop_map(|(items, min)| json!({"type": "array", "items": items, "minItems": min, "maxItems": 3, "uniqueItems": false})),
            // One object-free branch next to any other: see the module notes on anyOf.
            inner.prop_map(|a| json!({"anyOf": [a, {"type": "integer"}]})),
        ]
    })
}

fn root_schema() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec((schema_node(), any::<bool>()), 0..5),
        prop::collection::vec((leaf(), any::<bool>()), 0..3),
    )
        .prop_map(|(props, def_props)| {
            let defs_leafs = def_props
                .into_iter()
                .filter(|(s, _)| s.get("$ref").is_none())
                .collect();
            let mut root = object_of(props, false);
            root["$defs"] = json!({"D": object_of(defs_leafs, true)});
            root
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_schemas_are_sound_and_complete(schema in root_schema(), seed in any::<u64>()) {
        let strict = convert(&schema, &common::rules());
        // Generated schemas contain only supported constructs.
        let strict = strict.map_err(|e| TestCaseError::fail(format!("{e}: {schema}")))?;
        check_both_ways(&schema, &strict, seed..seed + 8);
    }
}

#[test]
fn corpus_schemas_are_sound_and_complete() {
    let rules = common::rules();
    let (mut tools, mut judged) = (0, 0);
    for path in common::corpus_files() {
        for (_, schema) in common::tools(&path) {
            let Ok(strict) = convert(&schema, &rules) else {
                continue;
            };
            tools += 1;
            judged += check_both_ways(&schema, &strict, 0..16);
        }
    }
    assert!(tools > 400, "{tools} corpus tools converted");
    assert!(
        judged > tools * 8,
        "only {judged} instances judged over {tools} tools"
    );
}
