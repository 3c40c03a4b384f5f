//! Call extraction from arbitrary responses, for every built-in provider,
//! against a fixed hub toolset (the `everything` and `time` corpus servers)
//! with each provider's strict-mode null paths. Every input must end in
//! calls and rejections or an input error.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_adapters::{ErrorKind, ListOptions, Listing, Registry, ToolSet};
use mcp_adapters::mcp::parse_tools_list;

const EVERYTHING: &str = include_str!("../../tests/fixtures/corpus/everything.tools.json");
const TIME: &str = include_str!("../../tests/fixtures/corpus/time.tools.json");

/// Every provider's listing of the hub.
fn fixture() -> &'static [Listing] {
    static FIXTURE: OnceLock<Vec<Listing>> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tools = |text: &str| parse_tools_list(serde_json::from_str(text).unwrap()).unwrap();
        let toolset = ToolSet::hub()
            .server("everything", tools(EVERYTHING))
            .server("time", tools(TIME))
            .build()
            .unwrap();
        Registry::builtin()
            .unwrap()
            .providers()
            .map(|p| p.list_tools(&toolset, &ListOptions::new()).unwrap())
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(response) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let providers = Registry::builtin().unwrap().providers();
    for (provider, listing) in providers.zip(fixture()) {
        match provider.extract_calls(&response, listing) {
            Ok(extracted) => {
                for call in &extracted.calls {
                    assert!(listing.toolset().resolve(&call.exposed_name).is_some());
                }
            }
            Err(err) => assert_eq!(err.kind(), ErrorKind::Input, "{err}"),
        }
    }
});
