//! The bundled demo: a "notes" server in-process and recorded model responses.

use mcp_adapters::exec::Handlers;
use mcp_adapters::mcp::parse_tools_list;
use mcp_adapters::{
    CallToolResult, Content, Error, ErrorKind, InProcessServer, Policy, Result, Source, Tool,
};
use serde_json::{Map, Value, json};

use super::live::unattended;

const DEMO_TOOLS: &str = include_str!("demo.tools.json");

/// The bundled recorded model responses, by provider id.
const DEMO_RESPONSES: &str = include_str!("demo.responses.json");

/// A 1x1 PNG: what `notes.render` returns.
const DEMO_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// The demo server's id.
pub const SERVER: &str = "notes";

/// The demo server's tools.
pub fn tools() -> Result<Vec<Tool>> {
    let demo: Value = serde_json::from_str(DEMO_TOOLS).map_err(|e| {
        Error::new(ErrorKind::Input, "the bundled demo tools are not JSON").with_source(e)
    })?;
    parse_tools_list(demo)
}

/// How the demo source governs its calls.
pub struct Demo {
    pub policy: Policy,
    pub validate: bool,
    pub bindings: Vec<mcp_adapters::toolset::Binding>,
}

impl Demo {
    /// The "notes" server, in-process, with deterministic results.
    pub fn server(self, handlers: &Handlers, suspend: bool) -> Result<Source> {
        let mut server = InProcessServer::new();
        for tool in tools()? {
            let name = tool.name.clone();
            server = server.tool(tool, move |args, _ctx| {
                let result = call(&name, &args);
                async move { Ok(result) }
            });
        }
        let mut builder = Source::client(SERVER, server).policy(self.policy);
        if self.validate {
            builder = builder.validate_arguments();
        }
        for binding in self.bindings {
            builder = builder.bind(binding);
        }
        unattended(builder, handlers, suspend).build()
    }
}

fn call(tool: &str, args: &Map<String, Value>) -> CallToolResult {
    let text = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match tool {
        "notes.search" => {
            let notes = json!([
                {"id": "5f0c8a52-8d7e-4b8e-9a8e-2f9c1d3b4a61", "title": "Groceries", "updated": "2026-03-14"},
                {"id": "0b6f2c1e-3a4d-4e5f-8a9b-1c2d3e4f5a6b", "title": "Groceries for the party", "updated": "2026-02-01"}
            ]);
            let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(10) as usize;
            let notes: Vec<Value> = notes
                .as_array()
                .into_iter()
                .flatten()
                .take(limit)
                .cloned()
                .collect();
            let titles: Vec<&str> = notes
                .iter()
                .map(|n| n["title"].as_str().unwrap_or(""))
                .collect();
            let mut result = CallToolResult::text(format!(
                "{} notes match `{}`: {}",
                notes.len(),
                text("query"),
                titles.join(", ")
            ));
            result.structured_content = Some(json!({"notes": notes}));
            result
        }
        "notes.create" => CallToolResult::text(format!(
            "Created note `{}` (id 9d1e7c3a-0000-4000-8000-000000000003).",
            text("title")
        )),
        "notes.render" => {
            let mut result = CallToolResult::text(format!("Note {} rendered as PNG:", text("id")));
            result.content.push(Content::from_value(json!({
                "type": "image", "data": DEMO_PNG, "mimeType": "image/png"
            })));
            result
        }
        "notes.export" => {
            let ids = args.get("ids").cloned().unwrap_or(json!([]));
            let mut result = CallToolResult::default();
            result.content.push(Content::from_value(json!({
                "type": "resource",
                "resource": {"uri": "notes://export.json", "mimeType": "application/json", "text": json!({"ids": ids}).to_string()}
            })));
            result
        }
        other => CallToolResult::error(format!("the demo server has no tool `{other}`")),
    }
}

/// The bundled recorded model response for `provider`.
pub fn response(provider: &str) -> Result<Value> {
    let all: Value = serde_json::from_str(DEMO_RESPONSES).map_err(|e| {
        Error::new(ErrorKind::Input, "the bundled responses are not JSON").with_source(e)
    })?;
    all.get(provider).cloned().ok_or_else(|| {
        Error::new(
            ErrorKind::Input,
            format!("no bundled model response for provider `{provider}`: give a RESPONSE file"),
        )
    })
}
