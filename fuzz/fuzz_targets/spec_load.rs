//! Spec loading from arbitrary bytes: as a provider spec (alone, and beside
//! the bundled rules so that `strict.rules` can resolve, and extending a
//! bundled spec) and as a strict-mode rules file. Every input must end in a
//! registry or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_adapters::Registry;
use mcp_adapters::spec::SpecFile;

const OPENAI_RULES: &str = include_str!("../../providers/rules/openai-strict.yaml");
const ANTHROPIC_RULES: &str = include_str!("../../providers/rules/anthropic-strict.yaml");
const OPENAI_CHAT: &str = include_str!("../../providers/openai-chat.yaml");

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest).into_owned();
    let sources = match mode % 4 {
        0 => vec![SpecFile::provider("fuzz", "fuzz.yaml", text)],
        1 => vec![SpecFile::rules("fuzz", "rules/fuzz.yaml", text)],
        2 => vec![
            SpecFile::rules("openai-strict", "rules/openai-strict.yaml", OPENAI_RULES),
            SpecFile::rules(
                "anthropic-strict",
                "rules/anthropic-strict.yaml",
                ANTHROPIC_RULES,
            ),
            SpecFile::provider("openai-chat", "openai-chat.yaml", OPENAI_CHAT),
            SpecFile::provider("fuzz", "fuzz.yaml", text),
        ],
        _ => vec![
            SpecFile::rules("openai-strict", "rules/openai-strict.yaml", text),
            SpecFile::provider("openai-chat", "openai-chat.yaml", OPENAI_CHAT),
        ],
    };
    let _ = Registry::from_files(sources);
});
