//! Stream assembly from arbitrary bytes, for every built-in provider with a
//! `stream:` section, in every framing: the first byte picks the provider,
//! the second the framing, the third the chunk size; the rest is the body,
//! pushed in chunks. Every input must end in calls and a message, or a
//! stream error; every call handed out resolves in the toolset.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_adapters::{ErrorKind, ListOptions, Listing, Registry, Tool, ToolSet};
use mcp_adapters::stream::{Framing, StreamedCall};
use serde_json::json;

/// Every provider's listing of a toolset whose tools the seeds call.
fn listings() -> &'static [Listing] {
    static LISTINGS: OnceLock<Vec<Listing>> = OnceLock::new();
    LISTINGS.get_or_init(|| {
        let tools = ["get_weather", "get_time", "a", "b", "weather", "calculator"]
            .iter()
            .map(|n| Tool::new(*n, "", json!({"type": "object", "properties": {"city": {"type": "string"}}})))
            .collect();
        let toolset = ToolSet::client().server("s", tools).build().unwrap();
        Registry::builtin()
            .unwrap()
            .providers()
            .map(|p| p.list_tools(&toolset, &ListOptions::new()).unwrap())
            .collect()
    })
}

const FRAMINGS: [Framing; 4] = [Framing::Sse, Framing::Ndjson, Framing::Json, Framing::EventStream];

fuzz_target!(|data: &[u8]| {
    let [p, f, c, body @ ..] = data else { return };
    let registry = Registry::builtin().unwrap();
    let providers: Vec<_> = registry.providers().collect();
    let index = *p as usize % providers.len();
    let (provider, listing) = (providers[index], &listings()[index]);
    let Ok(stream) = provider.stream(listing) else { return };
    let mut stream = match f % 5 {
        4 => stream,
        n => stream.framing(FRAMINGS[n as usize]),
    };
    let chunk = (*c as usize % 17) + 1;
    for piece in body.chunks(chunk) {
        match stream.push(piece) {
            Ok(calls) => {
                for call in calls {
                    if let StreamedCall::Ready(call) = call {
                        assert!(listing.toolset().resolve(&call.exposed_name).is_some());
                    }
                }
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Stream);
                break;
            }
        }
    }
    match stream.finish() {
        Ok(streamed) => {
            let again = provider.extract_calls(&streamed.message, listing);
            assert!(again.is_ok(), "{again:?}");
        }
        Err(e) => assert_eq!(e.kind(), ErrorKind::Stream, "{e:#}"),
    }
});
