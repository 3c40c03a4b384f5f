//! The commands, each a few library calls.

use std::time::Duration;

use mcp_adapters::{
    CallToolResult, Error, ErrorKind, ExecOptions, ListOptions, Listing, Outcome, Policy, Provider,
    Registry, Result, ResultOptions,
};
use serde_json::{Value, json};

use super::input::{option_pairs, read_json, read_servers, registry, toolset};
use super::{
    CallsArgs, ResultArgs, RunArgs, SpecsArg, ToolsArgs, ToolsetArgs, answers, demo, live,
};

/// Listing options from the toolset flags.
pub fn list_options(args: &ToolsetArgs) -> ListOptions {
    let mut options = ListOptions::new();
    if let Some(mode) = args.strict {
        options = options.strict(mode.into());
    }
    options
}

pub fn providers(specs: &SpecsArg) -> Result<Value> {
    Ok(Value::Array(
        registry(specs.specs.as_deref())?
            .providers()
            .map(Provider::info)
            .collect(),
    ))
}

fn to_json(value: impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorKind::Input, "cannot serialize the output").with_source(e))
}

pub fn tools(args: &ToolsArgs) -> Result<Value> {
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let mut options = list_options(&args.toolset);
    if let Some(value) = &args.cache_control {
        options = options.option("cache_control", value);
    }
    for (name, value) in option_pairs(&args.options)? {
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
            let source = live::source(&args.live, &args.toolset, None, false, None)
                .await?
                .ok_or_else(|| Error::new(ErrorKind::Input, "no server given"))?;
            to_json(source.tools(provider, &options).await?)
        })?;
    }
    let servers = match args.files.as_slice() {
        [] => vec![(demo::SERVER.to_owned(), demo::tools()?)],
        files => read_servers(files)?,
    };
    let toolset = toolset(&args.toolset, servers)?;
    to_json(provider.list_tools(&toolset, &options)?)
}

/// Runs `future` on a fresh runtime.
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, "cannot start the async runtime").with_source(e))?;
    Ok(runtime.block_on(future))
}

pub fn run(args: &RunArgs) -> Result<Value> {
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let mut list = ListOptions::new();
    if let Some(mode) = args.strict {
        list = list.strict(mode.into());
    }
    let policy = match &args.policy {
        Some(path) => live::read_policy(path)?,
        None => {
            eprintln!("note: no --policy given: every call to an offered tool is allowed");
            Policy::allow_all()
        }
    };
    let answers = match &args.answers {
        Some(path) => Some(std::sync::Arc::new(answers::read_answers(path)?)),
        None => None,
    };
    let live_given = !args.live.servers.is_empty() || args.live.config.is_some();
    block_on(async {
        let no_filters = ToolsetArgs {
            hub: false,
            prefix: None,
            allow: Vec::new(),
            deny: Vec::new(),
            strict: None,
        };
        let source = match live::source(
            &args.live,
            &no_filters,
            Some(policy.clone()),
            args.validate,
            answers.clone(),
        )
        .await?
        {
            Some(source) => source,
            None => {
                if args.response.is_some() {
                    eprintln!(
                        "note: no --server or --config: running against the bundled demo server"
                    );
                }
                demo::server(policy, args.validate, answers)?
            }
        };
        let response = match &args.response {
            Some(path) => read_json(path)?,
            None if !live_given => demo::response(provider.id())?,
            None => {
                return Err(Error::new(
                    ErrorKind::Input,
                    "give the model RESPONSE to run against the servers",
                ));
            }
        };
        let listing = source.tools(provider, &list).await?;
        let mut options = ExecOptions::new().max_concurrency(args.max_concurrency.unwrap_or(0));
        if let Some(ms) = args.call_timeout {
            options = options.call_timeout(Duration::from_millis(ms));
        }
        let run = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await?;
        let mut out = to_json(&run)?;
        if let Value::Object(map) = &mut out {
            map.insert("report".into(), to_json(&listing.report)?);
            if args.response.is_none() {
                map.insert("tools".into(), json!(listing.tools));
                map.insert("response".into(), response);
            }
        }
        Ok(out)
    })?
}

pub fn calls(args: &CallsArgs) -> Result<Value> {
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let toolset = toolset(&args.toolset, read_servers(&args.tools)?)?;
    let listing: Listing = provider.list_tools(&toolset, &list_options(&args.toolset))?;
    let response = read_json(&args.response)?;
    let extracted = provider
        .extract_calls(&response, &listing)
        .map_err(|e| e.with_file(&args.response))?;
    Ok(json!({"calls": extracted.calls, "rejected": extracted.rejected}))
}

pub fn result(args: &ResultArgs) -> Result<Value> {
    let registry: Registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let mut options = ResultOptions::new().shape(args.shape.into());
    if let Some(mode) = args.structured {
        options = options.structured(mode.into());
    }
    if let Some(prefix) = &args.error_prefix {
        options = options.error_prefix(prefix);
    }
    let call_id = args.call_id.as_deref();
    if let Some(message) = &args.error {
        let error = Error::new(ErrorKind::Server, message.clone());
        return provider.answer(call_id, &args.name, Outcome::Failed(&error), &options);
    }
    let file = args.file.as_deref().unwrap_or("-");
    let result: CallToolResult = serde_json::from_value(read_json(file)?).map_err(|e| {
        Error::new(ErrorKind::Input, "not a CallToolResult")
            .with_file(file)
            .with_source(e)
    })?;
    provider.answer(call_id, &args.name, Outcome::Completed(&result), &options)
}
