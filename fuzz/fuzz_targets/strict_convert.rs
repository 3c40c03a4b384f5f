//! Strict conversion of arbitrary JSON schemas with every bundled rules file.
//! Every input must end in a strict schema or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_adapters::Registry;
use mcp_adapters::strict::convert;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let registry = Registry::builtin().expect("built-in specs load");
    for id in registry.rules_ids() {
        let rules = registry.rules(id).expect("listed rules exist");
        if let Ok(strict) = convert(&schema, rules) {
            // A converted schema is itself a valid input: converting it again must not fail
            // in a way that panics either.
            let _ = convert(&strict.schema, rules);
        }
    }
});
