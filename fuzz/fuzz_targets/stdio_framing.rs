//! A stdio server's output, read as the client reads it: the first byte
//! picks the size of each read, the rest is the output. Every byte must be
//! passed on in order, an error answer put in only after a line the SDK
//! cannot take (too large, not UTF-8, too deep) and only for its `id`; a
//! line serde_json reads is never refused, and one too deep for it always
//! is (`mcp_adapters::client::check_stdio_framing`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, output)) = data.split_first() else {
        return;
    };
    mcp_adapters::client::check_stdio_framing(output, usize::from(first) + 1);
});
