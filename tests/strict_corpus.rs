//! Snapshots of the strict conversion over the public corpus and targeted fixtures.

mod common;

use common::*;
use serde_json::{Value, json};

#[test]
fn corpus_conversions() {
    let rules = rules();
    insta::glob!("fixtures/corpus/*.tools.json", |path| {
        let outcomes = Value::Object(file_outcomes(path, &rules));
        snapshot(
            Stage::Strict,
            Some("openai-strict"),
            &case_name(path),
            outcomes,
        );
    });
}

#[test]
fn targeted_fixtures() {
    let rules = rules();
    insta::glob!("fixtures/strict/*.json", |path| {
        let schema = read_json(path);
        let out = json!({"input": schema, "output": outcome(&schema, &rules)});
        snapshot(Stage::Strict, None, &case_name(path), out);
    });
}
