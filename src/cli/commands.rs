//! The commands, each a few library calls.

use std::path::Path;

use mcp_adapters::calls::Extracted;
use mcp_adapters::listing::{ListOptions, StrictMode};
use mcp_adapters::mcp::{CallToolResult, Tool, parse_tools_list};
use mcp_adapters::results::{Outcome, ResultOptions, Shape};
use mcp_adapters::spec::{Provider, Registry};
use mcp_adapters::toolset::ToolSet;
use mcp_adapters::{Error, ErrorKind, Result};
use serde_json::{Value, json};

use std::time::Duration;

use mcp_adapters::exec::{ExecOptions, Policy, Source, ToolsListing};

use super::live;
use super::{CallsArgs, LiveArgs, ResultArgs, RunArgs, SpecsArg, ToolsArgs, ToolsetArgs};

pub(super) const DEMO_TOOLS: &str = include_str!("demo.tools.json");

pub(super) fn registry(specs: &SpecsArg) -> Result<Registry> {
    match &specs.specs {
        Some(dir) => Registry::with_dir(dir),
        None => Registry::builtin().cloned(),
    }
}

pub(super) fn read_json(path: &str) -> Result<Value> {
    let text = if path == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| Error::new(ErrorKind::Io, format!("reading stdin: {e}")))?
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| Error::new(ErrorKind::Io, e.to_string()).with_file(path))?
    };
    serde_json::from_str(&text).map_err(|e| {
        Error::new(ErrorKind::Input, format!("invalid JSON: {e}"))
            .with_file(path)
            .with_line(e.line())
    })
}

/// `NAME=FILE` or `FILE` (the server id is the stem, without a `.tools` suffix).
fn server_file(arg: &str) -> (String, &str) {
    if let Some((name, file)) = arg
        .split_once('=')
        .filter(|(n, _)| !n.is_empty() && !n.contains('/'))
    {
        return (name.to_owned(), file);
    }
    let stem = Path::new(arg)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(arg);
    (stem.strip_suffix(".tools").unwrap_or(stem).to_owned(), arg)
}

pub(super) fn read_servers(files: &[String]) -> Result<Vec<(String, Vec<Tool>)>> {
    if files.is_empty() {
        let demo: Value = serde_json::from_str(DEMO_TOOLS)
            .map_err(|e| Error::new(ErrorKind::Input, e.to_string()))?;
        return Ok(vec![("notes".to_owned(), parse_tools_list(demo)?)]);
    }
    files
        .iter()
        .map(|arg| {
            let (server, file) = server_file(arg);
            let tools = parse_tools_list(read_json(file)?).map_err(|e| e.with_file(file))?;
            Ok((server, tools))
        })
        .collect()
}

pub(super) fn toolset(args: &ToolsetArgs, servers: Vec<(String, Vec<Tool>)>) -> Result<ToolSet> {
    let mut builder = if args.hub || servers.len() > 1 {
        ToolSet::hub()
    } else {
        ToolSet::client()
    };
    if let Some(prefix) = &args.prefix {
        builder = builder.prefix(prefix);
    }
    for glob in &args.allow {
        builder = builder.allow(glob);
    }
    for glob in &args.deny {
        builder = builder.deny(glob);
    }
    for (id, tools) in servers {
        builder = builder.server(id, tools);
    }
    builder.build()
}

fn list_options(args: &ToolsetArgs) -> Result<ListOptions> {
    let mut options = ListOptions::new();
    if let Some(mode) = &args.strict {
        options = options.strict(mode.parse::<StrictMode>()?);
    }
    Ok(options)
}

pub fn providers(specs: &SpecsArg) -> Result<Value> {
    Ok(Value::Array(
        registry(specs)?.providers().map(Provider::info).collect(),
    ))
}

pub fn tools(args: &ToolsArgs) -> Result<Value> {
    let registry = registry(&args.specs)?;
    let provider = registry.get(&args.provider)?;
    let mut options = list_options(&args.toolset)?;
    if let Some(value) = &args.cache_control {
        options = options.option("cache_control", value);
    }
    for pair in &args.options {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            Error::new(
                ErrorKind::Input,
                format!("--option `{pair}`: expected NAME=VALUE"),
            )
        })?;
        options = options.option(name, value);
    }
    if !args.live.servers.is_empty() || args.live.config.is_some() {
        if !args.files.is_empty() {
            return Err(Error::new(
                ErrorKind::Input,
                "give tools/list files or live servers (--server, --config), not both",
            ));
        }
        return block_on(async {
            let source = live_source(&args.live, &args.toolset, None, false)
                .await?
                .ok_or_else(|| Error::new(ErrorKind::Input, "no server given"))??;
            let listing = source.tools(provider, &options, false).await?;
            Ok(listing_json(&listing))
        })?;
    }
    let toolset = toolset(&args.toolset, read_servers(&args.files)?)?;
    let listing = provider.list_tools(&toolset, &options)?;
    serde_json::to_value(listing).map_err(|e| Error::new(ErrorKind::Input, e.to_string()))
}

fn listing_json(listing: &ToolsListing) -> Value {
    json!({"tools": listing.tools, "null_paths": listing.null_paths, "report": listing.report})
}

/// Runs `future` on a fresh runtime.
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    Ok(runtime.block_on(future))
}

/// The source for `--server`s / `--config` (client for one, hub for more), or `None`.
async fn live_source(
    live_args: &LiveArgs,
    filters: &ToolsetArgs,
    policy: Option<Policy>,
    validate: bool,
) -> Result<Option<Result<Source>>> {
    let Some(config) = live::hub_config(&live_args.servers, live_args.config.as_deref())? else {
        return Ok(None);
    };
    let mut builder = config.connect().await?;
    if let Some(prefix) = &filters.prefix {
        builder = builder.prefix(prefix);
    }
    for glob in &filters.allow {
        builder = builder.allow_tools(glob);
    }
    for glob in &filters.deny {
        builder = builder.deny_tools(glob);
    }
    if let Some(policy) = policy {
        builder = builder.policy(policy);
    }
    Ok(Some(live::no_approver(builder).validate(validate).build()))
}

pub fn run(args: &RunArgs) -> Result<Value> {
    let registry = registry(&args.specs)?;
    let provider = registry.get(&args.provider)?;
    let mut list = ListOptions::new();
    if let Some(mode) = &args.strict {
        list = list.strict(mode.parse::<StrictMode>()?);
    }
    let policy = match &args.policy {
        Some(path) => live::read_policy(path)?,
        None => {
            eprintln!("note: no --policy given: every call to an offered tool is allowed");
            Policy::allow_all()
        }
    };
    let filters = ToolsetArgs {
        hub: false,
        prefix: None,
        allow: Vec::new(),
        deny: Vec::new(),
        strict: None,
    };
    block_on(async {
        let source =
            match live_source(&args.live, &filters, Some(policy.clone()), args.validate).await? {
                Some(source) => source?,
                None => {
                    if args.response.is_some() {
                        eprintln!(
                            "note: no --server or --config: running against the bundled demo server"
                        );
                    }
                    live::demo_server(policy, args.validate)?
                }
            };
        let response = match &args.response {
            Some(path) => read_json(path)?,
            None if args.live.servers.is_empty() && args.live.config.is_none() => {
                live::demo_response(provider.id())?
            }
            None => {
                return Err(Error::new(
                    ErrorKind::Input,
                    "give the model RESPONSE to run against the servers",
                ));
            }
        };
        let listing = source.tools(provider, &list, false).await?;
        let options = ExecOptions {
            max_concurrency: args.max_concurrency.unwrap_or(0),
            call_timeout: args.call_timeout.map(Duration::from_millis),
            ..ExecOptions::from_listing(&listing)
        };
        let run = source
            .execute_tool_calls(provider, &response, &options)
            .await?;
        let mut out =
            serde_json::to_value(&run).map_err(|e| Error::new(ErrorKind::Input, e.to_string()))?;
        if let Value::Object(map) = &mut out {
            map.insert("report".into(), json!(listing.report));
            if args.response.is_none() {
                map.insert("tools".into(), json!(listing.tools));
                map.insert("response".into(), response);
            }
        }
        Ok(out)
    })?
}

pub fn calls(args: &CallsArgs) -> Result<Value> {
    let registry = registry(&args.specs)?;
    let provider = registry.get(&args.provider)?;
    if args.tools.is_empty() {
        return Err(Error::new(
            ErrorKind::Input,
            "--tools: give the tools/list results the model was offered",
        ));
    }
    let toolset = toolset(&args.toolset, read_servers(&args.tools)?)?;
    let listing = provider.list_tools(&toolset, &list_options(&args.toolset)?)?;
    let response = read_json(&args.response)?;
    let extracted: Extracted = provider
        .extract_calls(&response, &toolset, &listing.null_paths)
        .map_err(|e| e.with_file(&args.response))?;
    Ok(json!({"calls": extracted.calls, "rejected": extracted.rejected}))
}

pub fn result(args: &ResultArgs) -> Result<Value> {
    let registry = registry(&args.specs)?;
    let provider = registry.get(&args.provider)?;
    let options = ResultOptions {
        structured: args.structured.as_deref().map(str::parse).transpose()?,
        shape: match args.shape.as_str() {
            "llm" => Shape::Llm,
            "none" => Shape::None,
            other => {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!("--shape `{other}`: expected llm or none"),
                ));
            }
        },
        error_prefix: args.error_prefix.clone(),
    };
    let call_id = args.call_id.as_deref();
    if let Some(message) = &args.error {
        let error = Error::new(ErrorKind::Server, message.clone());
        return provider.answer(call_id, &args.name, Outcome::Error(&error), &options);
    }
    let file = args.file.as_deref().unwrap_or("-");
    let result: CallToolResult = serde_json::from_value(read_json(file)?).map_err(|e| {
        Error::new(ErrorKind::Input, format!("not a CallToolResult: {e}")).with_file(file)
    })?;
    provider.answer(call_id, &args.name, Outcome::Result(&result), &options)
}
