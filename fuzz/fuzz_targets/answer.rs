//! Result shaping of arbitrary `CallToolResult`s: every built-in provider,
//! every structured mode, both shapes, with and without a call id, and with
//! every value of the provider's `media` option (follow-ups included). Every
//! result that deserializes must be answered (a provider that needs an id
//! may refuse the call without one, with an input error).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_adapters::{CallToolResult, Outcome, Registry, ResultOptions};
use mcp_adapters::results::{Shape, StructuredMode};

const MODES: [StructuredMode; 4] = [
    StructuredMode::Auto,
    StructuredMode::Prefer,
    StructuredMode::Append,
    StructuredMode::Ignore,
];

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(result) = serde_json::from_value::<CallToolResult>(value) else {
        return;
    };
    for provider in Registry::builtin().unwrap().providers() {
        for mode in MODES {
            for shape in [Shape::Llm, Shape::None] {
                let options = ResultOptions::new().structured(mode).shape(shape);
                let answer = provider.answer(
                    Some("call_1"),
                    "srv__tool",
                    Outcome::Completed(&result),
                    &options,
                );
                assert!(answer.is_ok(), "{}: {answer:?}", provider.id());
                let _ = provider.answer(None, "srv__tool", Outcome::Completed(&result), &options);
                let media = provider.options().filter(|(name, _)| *name == "media");
                for value in media.flat_map(|(_, values)| values) {
                    let options = options.clone().option("media", value);
                    let calls = [(Some("call_1"), "srv__tool", Outcome::Completed(&result))];
                    let turn = provider.answer_all(calls, &options);
                    assert!(turn.is_ok(), "{} media={value}: {turn:?}", provider.id());
                }
            }
        }
    }
});
