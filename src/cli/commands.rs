//! The commands, each a few library calls.

use mcp_adapters::client::{HostedOptions, split_hosted};
use mcp_adapters::stream::Framing;
use mcp_adapters::{
    CallToolResult, Error, ErrorKind, HubConfig, ListOptions, Listing, Outcome, Policy, Provider,
    Registry, Result, ResultOptions, ServerConfig, ToolSet,
};
use serde_json::{Value, json};

use super::input::{
    detect_framing, option_pairs, read_bytes, read_json, read_servers, registry, toolset,
};
use super::shown::escaped;
use super::{
    CallsArgs, DeferArgs, LiveArgs, ProgrammaticArgs, ResultArgs, SearchToolsArgs, SpecsArg,
    StreamArgs, ToolsArgs, ToolsetArgs, asks, demo, live,
};

/// Listing options from the toolset flags.
pub fn list_options(args: &ToolsetArgs) -> ListOptions {
    let mut options = ListOptions::new();
    if let Some(mode) = args.strict {
        options = options.strict(mode.into());
    }
    if let Some(argument) = &args.select.select {
        options = options.select(argument);
    }
    options
}

/// The callers rule of `--programmatic`, `--programmatic-only` and
/// `--programmatic-read-only`, with a policy file's (`programmatic:`, ...).
pub(super) fn callers_rule(
    args: &ProgrammaticArgs,
    policy: Option<&Policy>,
) -> Result<mcp_adapters::callers::CallersRule> {
    let mut rule = policy.map(|p| p.callers_rule().clone()).unwrap_or_default();
    for glob in &args.open {
        rule = rule.open(glob)?;
    }
    for glob in &args.only {
        rule = rule.only(glob)?;
    }
    if args.read_only {
        rule = rule.read_only(true);
    }
    Ok(rule)
}

/// `policy` with the tools `--programmatic` and its kin open to code added
/// to its callers rule.
pub(super) fn open_to_code(mut policy: Policy, args: &ProgrammaticArgs) -> Result<Policy> {
    for glob in &args.open {
        policy = policy.programmatic(glob)?;
    }
    for glob in &args.only {
        policy = policy.programmatic_only(glob)?;
    }
    if args.read_only {
        policy = policy.programmatic_read_only();
    }
    Ok(policy)
}

/// Listing options with the callers rule, when it opens any tool to code.
fn with_callers(options: ListOptions, rule: mcp_adapters::callers::CallersRule) -> ListOptions {
    match rule.is_empty() {
        true => options,
        false => options.callers(rule),
    }
}

/// Deferral options from `--defer`, `--load`, `--search` and `--found`.
fn defer_options(mut options: ListOptions, args: &DeferArgs) -> Result<ListOptions> {
    for glob in &args.defer {
        options = options.defer(glob);
    }
    for glob in &args.load {
        options = options.load(glob);
    }
    if let Some(mode) = &args.search {
        options = options.search(mode.parse()?);
    }
    Ok(options.found(args.found.iter().cloned()))
}

/// A listing as printed: with the deferred tools and who searches, when any is deferred.
#[derive(serde::Serialize)]
struct PrintedListing<'a> {
    #[serde(flatten)]
    listing: &'a Listing,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_search: Option<&'a mcp_adapters::listing::ToolSearch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deferred: Option<Vec<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    found: Option<&'a [String]>,
}

impl<'a> PrintedListing<'a> {
    fn of(listing: &'a Listing) -> Self {
        super::shown::warn_of(&listing.report.toolset);
        let search = listing.tool_search();
        PrintedListing {
            listing,
            tool_search: search,
            deferred: search.map(|_| listing.deferred().collect()),
            found: search.map(|_| listing.found()),
        }
    }
}

/// A listing as printed, as JSON to add to.
fn listing_json(listing: &Listing) -> Result<Value> {
    to_json(PrintedListing::of(listing))
}

/// What `tools` prints: a listing, written out as it is serialized (never
/// copied into a JSON tree first: a server's 20,000 tools are a large
/// listing), or other JSON.
pub enum Printed {
    Listing(Box<Listing>),
    Json(Value),
}

impl Printed {
    /// Writes it to stdout, pretty; a closed stdout (`| head`) ends quietly.
    pub fn print(&self) {
        use std::io::Write;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let written = match self {
            Printed::Listing(listing) => {
                serde_json::to_writer_pretty(&mut out, &PrintedListing::of(listing))
            }
            Printed::Json(value) => serde_json::to_writer_pretty(&mut out, value),
        };
        if written.is_ok() {
            let _ = writeln!(out);
            let _ = out.flush();
        }
    }
}

/// The tools of `args.tools` ranked for `args.query`.
pub fn search_tools(args: &SearchToolsArgs) -> Result<Value> {
    if args.query.trim().is_empty() {
        return Err(Error::new(
            ErrorKind::Input,
            "--query is empty: give a few words for what the tool should do",
        ));
    }
    let toolset = toolset(&args.toolset, read_servers(&args.tools)?)?;
    let index = mcp_adapters::search::ToolIndex::new(&toolset);
    let hits = index.search(&args.query, args.limit.max(1), |_| true);
    let ranked: Vec<Value> = hits
        .iter()
        .enumerate()
        .map(|(i, hit)| {
            let description = toolset
                .resolve(&hit.exposed_name)
                .and_then(|t| t.tool.description.as_deref())
                .map(|d| d.lines().next().unwrap_or_default().trim().to_owned());
            json!({"rank": i + 1, "exposed_name": hit.exposed_name, "server": hit.server_id,
                   "tool": hit.tool, "score": hit.score, "description": description})
        })
        .collect();
    Ok(Value::Array(ranked))
}

pub fn providers(specs: &SpecsArg) -> Result<Value> {
    Ok(Value::Array(
        registry(specs.specs.as_deref())?
            .providers()
            .map(Provider::info)
            .collect(),
    ))
}

pub(super) fn to_json(value: impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorKind::Input, "cannot serialize the output").with_source(e))
}

/// The OTLP export `--otlp-endpoint` (or the standard variables) ask for:
/// kept until the command ends, when what is buffered is sent.
pub(super) fn telemetry(live: &LiveArgs) -> Result<Option<mcp_adapters::telemetry::Telemetry>> {
    let from_env = [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if live.otlp_endpoint.is_none() && !from_env {
        return Ok(None);
    }
    let mut filter = mcp_adapters::telemetry::TraceFilter::new();
    if let Some(targets) = &live.otlp_include {
        filter = filter.widen(targets)?;
    }
    mcp_adapters::telemetry::export_otlp(live.otlp_endpoint.as_deref(), filter).map(Some)
}

pub fn tools(args: &ToolsArgs) -> Result<Printed> {
    let _telemetry = telemetry(&args.live)?;
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let mut options = list_options(&args.toolset);
    if let Some(value) = &args.cache_control {
        options = options.option("cache_control", value);
    }
    for (name, value) in option_pairs(&args.options)? {
        options = options.option(name, value);
    }
    let options = defer_options(options, &args.deferral)?;
    let (options, rules) = rules_and_callers(args, options)?;
    if let Some(hub) = hosted_hub(args)? {
        if !args.files.is_empty() {
            return Err(Error::new(
                ErrorKind::Input,
                "give tools/list files or live servers (--server, --config, --hosted), not both",
            ));
        }
        let asks = asks::read(&args.asks, false)?;
        let listed = hosted_tools(args, hub, provider, &options, rules, &asks);
        return block_on(listed)?.map(Printed::Json);
    }
    if !args.live.servers.is_empty() || args.live.config.is_some() {
        if !args.files.is_empty() {
            return Err(Error::new(
                ErrorKind::Input,
                "give tools/list files or live servers (--server, --config), not both",
            ));
        }
        // What a server offers may depend on what the client declares.
        let asks = asks::read(&args.asks, false)?;
        return block_on(async {
            let source = live::source(&args.live, &args.toolset.naming, rules, false, &asks)
                .await?
                .ok_or_else(|| Error::new(ErrorKind::Input, "no server given"))?;
            let listed = listed(&source, args, provider, &options).await;
            source.close().await;
            listed
        })?;
    }
    if args.asks.given() {
        return Err(Error::new(
            ErrorKind::Input,
            "--answers and --root go with live servers (--server, --config): they change what a live server offers, not what a tools/list file holds",
        ));
    }
    if args.policy.is_some() {
        return Err(Error::new(
            ErrorKind::Input,
            "--policy goes with live servers (--server, --config, --hosted): it judges their calls; --allow and --deny filter the tools of tools/list files",
        ));
    }
    let servers = match args.files.as_slice() {
        [] => vec![(demo::SERVER.to_owned(), demo::tools()?)],
        files => read_servers(files)?,
    };
    let toolset = toolset(&args.toolset.naming, servers)?;
    if args.raw {
        return raw_tools(&toolset).map(Printed::Json);
    }
    let listing = provider.list_tools(&toolset, &options)?;
    drop(toolset);
    Ok(Printed::Listing(Box::new(listing)))
}

/// `tools`' policy file and bind rules, with the callers rule set where it
/// belongs: on the listing, or (in code mode) on the policy that feeds the
/// code tool.
fn rules_and_callers(args: &ToolsArgs, options: ListOptions) -> Result<(ListOptions, live::Rules)> {
    // A hosted servers' policy file may open tools to code too.
    let mut rules = match &args.policy {
        Some(path) => live::read_policy(path)?,
        None => live::Rules::default(),
    };
    // In code mode the callers rule feeds the code tool, through the
    // source's policy, and the provider is told nothing of it.
    let options = match args.live.code_mode {
        true => {
            let policy = rules.policy.take().unwrap_or_else(Policy::allow_all);
            rules.policy = Some(open_to_code(policy, &args.programmatic)?);
            options
        }
        false => with_callers(
            options,
            callers_rule(&args.programmatic, rules.policy.as_ref())?,
        ),
    };
    if args.live.code_mode && args.live.servers.is_empty() && args.live.config.is_none() {
        return Err(Error::new(
            ErrorKind::Input,
            "--code-mode goes with live servers (--server, --config): the program calls them",
        ));
    }
    Ok((options, rules))
}

/// `tools` on live servers, once they started: the listing, or one
/// server's tools as MCP lists them.
async fn listed(
    source: &mcp_adapters::Source,
    args: &ToolsArgs,
    provider: &Provider,
    options: &ListOptions,
) -> Result<Printed> {
    if args.raw {
        let toolset = source.toolset().await?;
        live::check_started(source, toolset.report(), &args.live).await?;
        return raw_tools(&toolset).map(Printed::Json);
    }
    let listing = source.tools(provider, options).await?;
    live::check_started(source, &listing.report.toolset, &args.live).await?;
    Ok(Printed::Listing(Box::new(listing)))
}

/// The servers of `--server`, `--config` and `--hosted`, when any asks to be
/// hosted (`--hosted`, or a `--config` entry's `"hosted": true`).
fn hosted_hub(args: &ToolsArgs) -> Result<Option<HubConfig>> {
    let mut hub =
        live::hub_config(&args.live.servers, args.live.config.as_deref())?.unwrap_or_default();
    for arg in &args.hosted.hosted {
        let (name, url) = arg
            .split_once('=')
            .filter(|(n, u)| !n.trim().is_empty() && !u.trim().is_empty())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Input,
                    format!("--hosted `{arg}`: expected NAME=URL"),
                )
            })?;
        hub = hub
            .server(name.trim(), ServerConfig::http(url.trim()))
            .host(name.trim());
    }
    let any = hub.servers().iter().any(|(name, _)| hub.is_hosted(name));
    if !any && args.hosted.pass_credentials {
        return Err(Error::new(
            ErrorKind::Input,
            "--pass-credentials goes with hosted servers (--hosted NAME=URL, or `\"hosted\": true` in --config)",
        ));
    }
    Ok(any.then_some(hub))
}

/// `tools` with hosted servers: the declarations the provider needs, beside
/// the local servers' tools; `given` is what the `--policy` file says, read
/// once by the caller.
async fn hosted_tools(
    args: &ToolsArgs,
    hub: HubConfig,
    provider: &Provider,
    options: &ListOptions,
    given: live::Rules,
    asks: &asks::Asks,
) -> Result<Value> {
    let policy = given.policy.clone().unwrap_or_else(Policy::allow_all);
    let mut hosting = HostedOptions::new().pass_credentials(args.hosted.pass_credentials);
    for binding in live::parse_binds(&args.toolset.naming.bind)?
        .into_iter()
        .chain(given.bindings.iter().cloned())
    {
        hosting = hosting.bind(binding);
    }
    for glob in &args.toolset.naming.allow {
        hosting = hosting.allow_tools(glob);
    }
    for glob in &args.toolset.naming.deny {
        hosting = hosting.deny_tools(glob);
    }
    for glob in &args.deferral.defer {
        hosting = hosting.defer(glob);
    }
    let split = split_hosted(&hub, provider, &policy, &hosting).await?;
    for left in &split.hosted.local {
        eprintln!(
            "note: server `{}` runs here, not hosted: {}",
            escaped(&left.server_id),
            escaped(&left.reason)
        );
    }
    let listing = if split.local.is_empty() {
        provider.list_tools(&ToolSet::hub().build()?, options)?
    } else {
        let source = live::source_from(
            split.local,
            &args.live,
            &args.toolset.naming,
            given,
            false,
            asks,
        )
        .await?;
        let listing = match source.tools(provider, options).await {
            Ok(listing) => live::check_started(&source, &listing.report.toolset, &args.live)
                .await
                .map(|()| listing),
            Err(e) => Err(e),
        };
        source.close().await;
        listing?
    };
    let mut value = listing_json(&listing)?;
    if let Value::Object(map) = &mut value {
        if let Some(Value::Array(tools)) = map.get_mut("tools") {
            tools.extend(split.hosted.tools.iter().cloned());
        }
        if !split.hosted.request.is_empty() {
            map.insert(
                "request".into(),
                Value::Object(split.hosted.request.clone()),
            );
        }
        if !split.hosted.headers.is_empty() {
            map.insert("headers".into(), to_json(&split.hosted.headers)?);
        }
        if let Some(Value::Object(report)) = map.get_mut("report") {
            report.insert("hosted_local".into(), to_json(&split.hosted.local)?);
        }
    }
    Ok(value)
}

/// `tools --raw`: the one server's tools as a tools/list result.
fn raw_tools(toolset: &ToolSet) -> Result<Value> {
    let mut servers: Vec<&str> = toolset
        .tools()
        .iter()
        .map(|t| t.server_id.as_str())
        .collect();
    servers.dedup();
    if servers.len() > 1 {
        return Err(Error::new(
            ErrorKind::Input,
            format!(
                "--raw prints one server's tools/list result, and these tools come from {}: give one server (or one FILE) at a time",
                servers.join(", ")
            ),
        ));
    }
    let tools: Vec<&mcp_adapters::Tool> = toolset.tools().iter().map(|t| &*t.tool).collect();
    Ok(json!({"tools": tools}))
}

/// Runs `future` on a fresh runtime.
pub(super) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, "cannot start the async runtime").with_source(e))?;
    Ok(runtime.block_on(future))
}

pub fn calls(args: &CallsArgs) -> Result<Value> {
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let toolset = toolset(&args.toolset.naming, read_servers(&args.tools)?)?;
    let options = with_callers(
        list_options(&args.toolset),
        callers_rule(&args.programmatic, None)?,
    );
    let listing: Listing = provider.list_tools(&toolset, &options)?;
    if args.stream.stream.len() > 1 {
        return Err(Error::new(
            ErrorKind::Input,
            "`calls` reads one --stream at a time (`run` plays several, as successive turns)",
        ));
    }
    if let Some(file) = args.stream.stream.first() {
        let bytes = read_bytes(file)?;
        let stream = provider.stream(&listing)?;
        let framing = stream_framing(&args.stream, &bytes, stream.framing_used());
        let mut stream = stream.framing(framing);
        // The calls come out as they complete; the result holds them all.
        let streamed = stream
            .push(&bytes)
            .and_then(|_| stream.finish())
            .map_err(|e| e.with_file(file))?;
        let mut out = json!({
            "calls": streamed.extracted.calls,
            "rejected": streamed.extracted.rejected,
            "message": streamed.message,
        });
        with_hosted(&mut out, &streamed.extracted.hosted)?;
        with_programs(&mut out, provider, &streamed.extracted.programs)?;
        return Ok(out);
    }
    let file = args.response.as_deref().unwrap_or("-");
    let response = read_json(file)?;
    let extracted = provider
        .extract_calls(&response, &listing)
        .map_err(|e| e.with_file(file))?;
    let mut out = json!({"calls": extracted.calls, "rejected": extracted.rejected});
    with_hosted(&mut out, &extracted.hosted)?;
    with_programs(&mut out, provider, &extracted.programs)?;
    Ok(out)
}

/// Adds the programs the model wrote, their outputs and their container,
/// and what the next request carries on for them, when there are any.
fn with_programs(
    out: &mut Value,
    provider: &Provider,
    programs: &mcp_adapters::programs::ProgramItems,
) -> Result<()> {
    if let (false, Value::Object(map)) = (programs.is_empty(), out) {
        map.insert("programs".into(), to_json(programs)?);
        let request = provider.program_request(programs)?;
        if !request.is_empty() {
            map.insert("request".into(), Value::Object(request));
        }
    }
    Ok(())
}

/// Adds what the provider did with the servers it hosts (never run here),
/// when it did anything.
fn with_hosted(out: &mut Value, hosted: &mcp_adapters::hosted::HostedItems) -> Result<()> {
    if let (false, Value::Object(map)) = (hosted.is_empty(), out) {
        map.insert("hosted".into(), to_json(hosted)?);
    }
    Ok(())
}

/// `--framing`, or the framing the bytes show.
pub(super) fn stream_framing(args: &StreamArgs, bytes: &[u8], spec: Framing) -> Framing {
    match args.framing {
        Some(framing) => framing.into(),
        None => detect_framing(bytes, spec),
    }
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
    if let Some(tokens) = args.max_result_tokens {
        options = options.max_result_tokens(tokens);
    }
    for (name, value) in option_pairs(&args.options)? {
        options = options.option(name, value);
    }
    let call_id = args.call_id.as_deref();
    let error;
    let result: CallToolResult;
    let outcome = match &args.error {
        Some(message) => {
            error = Error::new(ErrorKind::Server, message.clone());
            Outcome::Failed(&error)
        }
        None => {
            let file = args.file.as_deref().unwrap_or("-");
            result = serde_json::from_value(read_json(file)?).map_err(|e| {
                Error::new(ErrorKind::Input, "not a CallToolResult")
                    .with_file(file)
                    .with_source(e)
            })?;
            Outcome::Completed(&result)
        }
    };
    let turn = provider.answer_all([(call_id, args.name.as_str(), outcome)], &options)?;
    // The answer alone, or (with follow-ups) everything to append, in order.
    let mut items = turn.results;
    if turn.follow_ups.is_empty() {
        return Ok(items.pop().unwrap_or_default());
    }
    items.extend(turn.follow_ups);
    Ok(Value::Array(items))
}
