//! Live servers for the CLI: `--server NAME='COMMAND ARGS'`, `--config FILE`,
//! the policy file and the bundled in-process demo server.

use std::path::Path;

use mcp_adapters::config::{HubConfig, ServerConfig};
use mcp_adapters::exec::{Approval, InProcessServer, Policy, Source, SourceBuilder};
use mcp_adapters::mcp::{CallToolResult, Content, Tool, parse_tools_list};
use mcp_adapters::{Error, ErrorKind, Result};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// `NAME=COMMAND ARGS`, split with shell-words rules.
pub fn parse_server(arg: &str) -> Result<(String, ServerConfig)> {
    let bad = |why: &str| {
        Error::new(
            ErrorKind::Input,
            format!("--server `{arg}`: {why} (expected NAME='COMMAND ARGS')"),
        )
    };
    let (name, command_line) = arg.split_once('=').ok_or_else(|| bad("no `=`"))?;
    if name.trim().is_empty() {
        return Err(bad("the name is empty"));
    }
    let words = shlex::split(command_line).ok_or_else(|| bad("unbalanced quotes"))?;
    let (command, args) = words
        .split_first()
        .ok_or_else(|| bad("the command is empty"))?;
    Ok((
        name.trim().to_owned(),
        ServerConfig::stdio(command, args.iter().cloned()),
    ))
}

/// The configuration from `--server`s and `--config`, or `None` when neither is given.
pub fn hub_config(servers: &[String], config: Option<&Path>) -> Result<Option<HubConfig>> {
    let mut hub = match config {
        Some(path) => HubConfig::from_file(path)?,
        None if servers.is_empty() => return Ok(None),
        None => HubConfig::new(),
    };
    for arg in servers {
        let (name, server) = parse_server(arg)?;
        hub = hub.server(name, server);
    }
    if hub.is_empty() {
        return Err(Error::new(
            ErrorKind::Input,
            "no MCP server to start: the configuration is empty",
        ));
    }
    Ok(Some(hub))
}

/// A policy file: `{"allow": [globs], "ask": [...], "deny": [...], "default": "allow"|"deny"}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    default: Option<String>,
}

/// Reads a policy file (JSON or YAML). Rules are globs over `server/tool`;
/// `deny` wins, then `allow`, then `ask` (answered deny: the CLI has no one to
/// ask), so `allow: [github/get_*], ask: [github/*]` allows reads and asks
/// about the rest; a call no rule matches gets `default` (`deny` when absent).
pub fn read_policy(path: &Path) -> Result<Policy> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(ErrorKind::Io, e.to_string()).with_file(path))?;
    let file: PolicyFile = serde_saphyr::from_str(&text).map_err(|e| {
        Error::new(ErrorKind::Input, format!("not a policy file: {e}")).with_file(path)
    })?;
    let mut policy = match file.default.as_deref() {
        None | Some("deny") => Policy::new(),
        Some("allow") => Policy::allow_all(),
        Some(other) => {
            return Err(Error::new(
                ErrorKind::Input,
                format!("`default: {other}`: expected allow or deny"),
            )
            .with_file(path)
            .with_path("default"));
        }
    };
    let at = |field: &'static str| move |e: Error| e.with_file(path).with_path(field);
    for glob in &file.deny {
        policy = policy.deny(glob).map_err(at("deny"))?;
    }
    for glob in &file.allow {
        policy = policy.allow(glob).map_err(at("allow"))?;
    }
    for glob in &file.ask {
        policy = policy.ask(glob).map_err(at("ask"))?;
    }
    Ok(policy)
}

/// The CLI's approver: there is no one to ask, so `ask` rules deny.
pub fn no_approver(builder: SourceBuilder) -> SourceBuilder {
    builder.approver(|request| {
        let reason = format!(
            "`{}/{}` needs approval and the command line has no approver; allow it in the policy file to run it",
            request.server_id, request.tool
        );
        Box::pin(async move { Approval::Deny(reason) })
    })
}

/// The bundled demo server's tools.
pub fn demo_tools() -> Result<Vec<Tool>> {
    let demo: Value = serde_json::from_str(super::commands::DEMO_TOOLS)
        .map_err(|e| Error::new(ErrorKind::Input, format!("the bundled demo tools: {e}")))?;
    parse_tools_list(demo)
}

/// A 1x1 PNG: what `notes.render` returns.
const DEMO_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// The bundled "notes" server, in-process, with deterministic results.
pub fn demo_server(policy: Policy, validate: bool) -> Result<Source> {
    let mut server = InProcessServer::new();
    for tool in demo_tools()? {
        let name = tool.name.clone();
        server = server.tool(tool, move |args, _ctx| {
            let result = demo_call(&name, &args);
            async move { Ok(result) }
        });
    }
    no_approver(
        Source::client("notes", server)
            .policy(policy)
            .validate(validate),
    )
    .build()
}

fn demo_call(tool: &str, args: &Map<String, Value>) -> CallToolResult {
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
            CallToolResult {
                content: vec![Content::text(format!(
                    "{} notes match `{}`: {}",
                    notes.len(),
                    text("query"),
                    notes
                        .iter()
                        .map(|n| n["title"].as_str().unwrap_or(""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))],
                structured_content: Some(json!({"notes": notes})),
                ..Default::default()
            }
        }
        "notes.create" => CallToolResult::text(format!(
            "Created note `{}` (id 9d1e7c3a-0000-4000-8000-000000000003).",
            text("title")
        )),
        "notes.render" => {
            let mut result = CallToolResult::default();
            result.content.push(Content::text(format!(
                "Note {} rendered as PNG:",
                text("id")
            )));
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

/// The bundled recorded model responses, by provider id.
const DEMO_RESPONSES: &str = include_str!("demo.responses.json");

/// The bundled recorded model response for `provider`.
pub fn demo_response(provider: &str) -> Result<Value> {
    let all: Value = serde_json::from_str(DEMO_RESPONSES)
        .map_err(|e| Error::new(ErrorKind::Input, format!("the bundled responses: {e}")))?;
    all.get(provider).cloned().ok_or_else(|| {
        Error::new(
            ErrorKind::Input,
            format!("no bundled model response for provider `{provider}`: give a RESPONSE file"),
        )
    })
}
