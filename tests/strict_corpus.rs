//! Snapshots of the strict conversion over the public corpus and targeted fixtures.

mod common;

use serde_json::Value;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings
}

#[test]
fn corpus_conversions() {
    let rules = common::rules();
    for path in common::corpus_files() {
        let stem = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".tools.json"))
            .expect("tools file name")
            .to_owned();
        let outcomes = Value::Object(common::file_outcomes(&path, &rules));
        let mut settings = settings();
        settings.set_input_file(&path);
        settings.bind(|| insta::assert_json_snapshot!(format!("strict_corpus__{stem}"), outcomes));
    }
}

#[test]
fn targeted_fixtures() {
    let rules = common::rules();
    settings().bind(|| {
        insta::glob!("fixtures/strict/*.json", |path| {
            let text = std::fs::read_to_string(path).expect("read fixture");
            let schema: Value = serde_json::from_str(&text).expect("fixture is JSON");
            let out =
                serde_json::json!({"input": schema, "output": common::outcome(&schema, &rules)});
            insta::assert_json_snapshot!("strict_fixture", out);
        });
    });
}
