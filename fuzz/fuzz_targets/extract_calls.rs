//! Call extraction from arbitrary responses, for every built-in provider,
//! against a fixed hub toolset (the `everything` and `time` corpus servers)
//! with each provider's strict-mode null paths. Every input must end in
//! calls and rejections or an input error.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_adapters::ErrorKind;
use mcp_adapters::listing::{ListOptions, NullPaths};
use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::spec::Registry;
use mcp_adapters::toolset::ToolSet;

const EVERYTHING: &str = include_str!("../../tests/fixtures/corpus/everything.tools.json");
const TIME: &str = include_str!("../../tests/fixtures/corpus/time.tools.json");

struct Fixture {
    toolset: ToolSet,
    null_paths: Vec<NullPaths>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tools = |text: &str| parse_tools_list(serde_json::from_str(text).unwrap()).unwrap();
        let toolset = ToolSet::hub()
            .server("everything", tools(EVERYTHING))
            .server("time", tools(TIME))
            .build()
            .unwrap();
        let null_paths = Registry::builtin()
            .unwrap()
            .providers()
            .map(|p| {
                p.list_tools(&toolset, &ListOptions::new())
                    .unwrap()
                    .null_paths
            })
            .collect();
        Fixture {
            toolset,
            null_paths,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(response) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let fixture = fixture();
    let providers = Registry::builtin().unwrap().providers();
    for (provider, null_paths) in providers.zip(&fixture.null_paths) {
        match provider.extract_calls(&response, &fixture.toolset, null_paths) {
            Ok(extracted) => {
                for call in &extracted.calls {
                    assert!(fixture.toolset.resolve(&call.exposed_name).is_some());
                }
            }
            Err(err) => assert_eq!(err.kind(), ErrorKind::Input, "{err}"),
        }
    }
});
