//! Spec loading from arbitrary bytes: as a provider spec (alone, and beside
//! the bundled rules so that `strict.rules` can resolve, and extending a
//! bundled spec) and as a strict-mode rules file. Every input must end in a
//! registry or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_adapters::spec::{Registry, Source};

const OPENAI_RULES: &str = include_str!("../../providers/rules/openai-strict.yaml");
const ANTHROPIC_RULES: &str = include_str!("../../providers/rules/anthropic-strict.yaml");
const OPENAI_CHAT: &str = include_str!("../../providers/openai-chat.yaml");

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest).into_owned();
    let sources = match mode % 4 {
        0 => vec![Source::spec("fuzz", "fuzz.yaml", text)],
        1 => vec![Source::rules("fuzz", "rules/fuzz.yaml", text)],
        2 => vec![
            Source::rules("openai-strict", "rules/openai-strict.yaml", OPENAI_RULES),
            Source::rules(
                "anthropic-strict",
                "rules/anthropic-strict.yaml",
                ANTHROPIC_RULES,
            ),
            Source::spec("openai-chat", "openai-chat.yaml", OPENAI_CHAT),
            Source::spec("fuzz", "fuzz.yaml", text),
        ],
        _ => vec![
            Source::rules("openai-strict", "rules/openai-strict.yaml", text),
            Source::spec("openai-chat", "openai-chat.yaml", OPENAI_CHAT),
        ],
    };
    let _ = Registry::from_sources(sources);
});
