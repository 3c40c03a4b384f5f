//! The commands, each a few library calls.

use std::time::Duration;

use mcp_adapters::client::{HostedOptions, split_hosted};
use mcp_adapters::exec::{CallRecord, Wait};
use mcp_adapters::stream::Framing;
use mcp_adapters::{
    CallToolResult, Error, ErrorKind, ExecOptions, HubConfig, ListOptions, Listing, Outcome,
    Policy, Provider, Registry, Result, ResultOptions, ServerConfig, ToolSet,
};
use serde_json::{Value, json};

use super::input::{
    detect_framing, option_pairs, read_bytes, read_json, read_servers, registry, toolset,
};
use super::shown::escaped;
use super::{
    CallsArgs, DeferArgs, LiveArgs, NamingArgs, ResultArgs, RunArgs, SearchToolsArgs, SpecsArg,
    StreamArgs, ToolsArgs, ToolsetArgs, asks, decisions, demo, live, state,
};

/// Listing options from the toolset flags.
pub fn list_options(args: &ToolsetArgs) -> ListOptions {
    let mut options = ListOptions::new();
    if let Some(mode) = args.strict {
        options = options.strict(mode.into());
    }
    options
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
fn listing_json(listing: &Listing) -> Result<Value> {
    super::shown::warn_of(&listing.report.toolset);
    let mut value = to_json(listing)?;
    if let (Some(search), Value::Object(map)) = (listing.tool_search(), &mut value) {
        map.insert("tool_search".into(), to_json(search)?);
        map.insert(
            "deferred".into(),
            json!(listing.deferred().collect::<Vec<_>>()),
        );
        map.insert("found".into(), json!(listing.found()));
    }
    Ok(value)
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

fn to_json(value: impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(value)
        .map_err(|e| Error::new(ErrorKind::Input, "cannot serialize the output").with_source(e))
}

/// The OTLP export `--otlp-endpoint` (or the standard variables) ask for:
/// kept until the command ends, when what is buffered is sent.
fn telemetry(live: &LiveArgs) -> Result<Option<mcp_adapters::telemetry::Telemetry>> {
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

pub fn tools(args: &ToolsArgs) -> Result<Value> {
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
    if let Some(hub) = hosted_hub(args)? {
        if !args.files.is_empty() {
            return Err(Error::new(
                ErrorKind::Input,
                "give tools/list files or live servers (--server, --config, --hosted), not both",
            ));
        }
        let asks = asks::read(&args.asks, false)?;
        return block_on(hosted_tools(args, hub, provider, &options, &asks))?;
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
            let source = live::source(&args.live, &args.toolset.naming, None, false, &asks)
                .await?
                .ok_or_else(|| Error::new(ErrorKind::Input, "no server given"))?;
            live::check_started(&source, &args.live).await?;
            if args.raw {
                return raw_tools(&source.toolset().await?);
            }
            listing_json(&source.tools(provider, &options).await?)
        })?;
    }
    if args.asks.given() {
        return Err(Error::new(
            ErrorKind::Input,
            "--answers and --root go with live servers (--server, --config): they change what a live server offers, not what a tools/list file holds",
        ));
    }
    let servers = match args.files.as_slice() {
        [] => vec![(demo::SERVER.to_owned(), demo::tools()?)],
        files => read_servers(files)?,
    };
    let toolset = toolset(&args.toolset.naming, servers)?;
    if args.raw {
        return raw_tools(&toolset);
    }
    listing_json(&provider.list_tools(&toolset, &options)?)
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
    if !any && (args.hosted.policy.is_some() || args.hosted.pass_credentials) {
        return Err(Error::new(
            ErrorKind::Input,
            "--policy and --pass-credentials go with hosted servers (--hosted NAME=URL, or `\"hosted\": true` in --config)",
        ));
    }
    Ok(any.then_some(hub))
}

/// `tools` with hosted servers: the declarations the provider needs, beside
/// the local servers' tools.
async fn hosted_tools(
    args: &ToolsArgs,
    hub: HubConfig,
    provider: &Provider,
    options: &ListOptions,
    asks: &asks::Asks,
) -> Result<Value> {
    let policy = match &args.hosted.policy {
        Some(path) => live::read_policy(path)?,
        None => Policy::allow_all(),
    };
    let mut hosting = HostedOptions::new().pass_credentials(args.hosted.pass_credentials);
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
            None,
            false,
            asks,
        )
        .await?;
        live::check_started(&source, &args.live).await?;
        source.tools(provider, options).await?
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
    let tools: Vec<&mcp_adapters::Tool> = toolset.tools().iter().map(|t| &t.tool).collect();
    Ok(json!({"tools": tools}))
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
    let _telemetry = telemetry(&args.live)?;
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let mut list = ListOptions::new();
    if let Some(mode) = args.strict {
        list = list.strict(mode.into());
    }
    let mut results = ResultOptions::new();
    for (name, value) in option_pairs(&args.options)? {
        list = list.option(name, value);
        results = results.option(name, value);
    }
    if let Some(tokens) = args.max_result_tokens {
        results = results.max_result_tokens(tokens);
    }
    if let Some(tokens) = args.max_turn_tokens {
        results = results.max_turn_tokens(tokens);
    }
    list = list.read_on(results.budget());
    let suspend = args.suspend.is_some();
    if suspend && args.response.len() > 1 {
        return Err(Error::new(
            ErrorKind::Input,
            "--suspend goes with one RESPONSE (or --stream, or --resume): a turn that waits ends the run",
        ));
    }
    let asks = asks::read(&args.asks, suspend)?;
    let policy = match &args.policy {
        Some(path) => live::read_policy(path)?,
        None => {
            eprintln!("note: no --policy given: every call to an offered tool is allowed");
            Policy::allow_all()
        }
    };
    let live_given = !args.live.servers.is_empty() || args.live.config.is_some();
    block_on(async {
        let no_filters = NamingArgs {
            hub: false,
            prefix: args.prefix.clone(),
            allow: Vec::new(),
            deny: Vec::new(),
            refuse_hidden: args.refuse_hidden,
        };
        let source = match live::source(
            &args.live,
            &no_filters,
            Some(policy.clone()),
            args.validate,
            &asks,
        )
        .await?
        {
            Some(source) => {
                live::check_started(&source, &args.live).await?;
                source
            }
            None => {
                if !args.response.is_empty() {
                    eprintln!(
                        "note: no --server or --config: running against the bundled demo server"
                    );
                }
                demo::server(policy, args.validate, &asks.handlers, suspend)?
            }
        };
        let listing = source.tools(provider, &list).await?;
        let mut options = ExecOptions::new()
            .max_concurrency(args.max_concurrency.unwrap_or(0))
            .results(results);
        if let Some(check) = args.output_schema {
            options = options.output_schema(check.into());
        }
        if let Some(calls) = args.max_server_concurrency {
            options = options.max_concurrency_per_server(calls);
        }
        if let Some(ms) = args.call_timeout {
            options = options.call_timeout(Duration::from_millis(ms));
        }
        options = options.suspend(suspend);
        if let Some(path) = &args.resume {
            let state = state::read(path, state::key(args)?.as_ref())?;
            let turn = [decisions::TurnCalls::waiting(&state)];
            let options = decisions::options(args, &options, &turn)?.remove(0);
            decisions::announce(args, &state);
            let run = source
                .resume_turn(provider, state, &listing, &options)
                .await?;
            return reported(&run, &listing, args, &asks);
        }
        if let Some(file) = &args.stream.stream {
            let bytes = read_bytes(file)?;
            let spec = provider.stream(&listing)?.framing_used();
            let framing = stream_framing(&args.stream, &bytes, spec);
            let turn = decisions::TurnCalls::streamed(provider, &listing, framing, &bytes)?;
            let options = decisions::options(args, &options, &[turn])?.remove(0);
            let options = options.framing(framing);
            let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes)]);
            let run = source
                .execute_stream(provider, chunks, &listing, &options)
                .await?;
            let mut out = reported(&run.execution, &listing, args, &asks)?;
            if let Value::Object(map) = &mut out {
                map.insert("message".into(), run.message);
                if let Some(error) = &run.error {
                    map.insert("stream_error".into(), json!(format!("{error:#}")));
                }
            }
            return Ok(out);
        }
        let responses: Vec<Value> = match args.response.as_slice() {
            [] if !live_given => vec![demo::response(provider.id())?],
            [] => {
                return Err(Error::new(
                    ErrorKind::Input,
                    "give the model RESPONSE (or --stream FILE) to run against the servers",
                ));
            }
            paths => paths.iter().map(|p| read_json(p)).collect::<Result<_>>()?,
        };
        let calls: Vec<_> = responses
            .iter()
            .map(|response| decisions::TurnCalls::extracted(provider, &listing, response))
            .collect();
        let mut per_turn = decisions::options(args, &options, &calls)?;
        if responses.len() > 1 {
            let played = Turns {
                paths: &args.response,
                responses,
                options: per_turn,
            };
            return turns(&source, provider, &list, played, &asks).await;
        }
        let (response, options) = (&responses[0], per_turn.remove(0));
        let run = source
            .execute_tool_calls(provider, response, &listing, &options)
            .await?;
        let mut out = reported(&run, &listing, args, &asks)?;
        if let Value::Object(map) = &mut out
            && args.response.is_empty()
        {
            map.insert("tools".into(), json!(listing.tools));
            map.insert("response".into(), response.clone());
        }
        Ok(out)
    })?
}

/// The turns of a run over several responses: each response (read before
/// the first turn) with its path and its options, which hold the
/// decisions that name its calls.
struct Turns<'a> {
    paths: &'a [String],
    responses: Vec<Value>,
    options: Vec<ExecOptions>,
}

/// Several responses: one turn each, over the same servers, listed again
/// before each turn (a server that died is started again, a tool that
/// changed is offered anew), each turn's servers tainting the next. Prints a
/// JSON array, one object per turn as for a single response; a turn that
/// halts ends the replay.
async fn turns(
    source: &mcp_adapters::Source,
    provider: &Provider,
    list: &ListOptions,
    played: Turns<'_>,
    asks: &asks::Asks,
) -> Result<Value> {
    let paths = played.paths;
    let mut out = Vec::with_capacity(paths.len());
    let mut taint = std::collections::BTreeSet::new();
    let each = played.responses.into_iter().zip(played.options);
    for (turn, (path, (response, options))) in paths.iter().zip(each).enumerate() {
        let listing = source.tools(provider, list).await?;
        if turn == 0 {
            super::shown::warn_of(&listing.report.toolset);
        }
        let options = options.taint(taint.iter().cloned());
        let run = source
            .execute_tool_calls(provider, &response, &listing, &options)
            .await?;
        asks.report(&run.calls);
        summarize(&run.calls, Some(turn + 1));
        summarize_hosted(&run);
        taint.extend(run.ran_servers.iter().cloned());
        let halted = run.status == mcp_adapters::Status::Halt;
        let mut answer = to_json(&run)?;
        if let Value::Object(map) = &mut answer {
            map.insert("response".into(), json!(path));
            map.insert("report".into(), to_json(&listing.report)?);
            map.insert("servers".into(), server_states(source));
        }
        out.push(answer);
        if halted && turn + 1 < paths.len() {
            eprintln!(
                "note: turn {} halted; the {} later turn(s) were not played",
                turn + 1,
                paths.len() - turn - 1
            );
            break;
        }
    }
    Ok(Value::Array(out))
}

/// One turn's output: what was asked and answered, the summary, the
/// provider's hosted calls and the decisions that named nothing on stderr;
/// a suspended turn's state in its `--suspend` file; the execution as JSON
/// with the listing's report.
fn reported(
    run: &mcp_adapters::Execution,
    listing: &Listing,
    args: &RunArgs,
    asks: &asks::Asks,
) -> Result<Value> {
    asks.report(&run.calls);
    super::shown::warn_of(&listing.report.toolset);
    summarize(&run.calls, None);
    summarize_hosted(run);
    let key = state::key(args)?;
    kept_if_suspended(run, args.suspend.as_deref(), key.as_ref())?;
    let mut out = to_json(run)?;
    if let Value::Object(map) = &mut out {
        map.insert("report".into(), to_json(&listing.report)?);
    }
    Ok(out)
}

/// A suspended turn's state written to `file` (`--suspend`), and what it
/// waits for on stderr: the command then exits with status 3.
fn kept_if_suspended(
    run: &mcp_adapters::Execution,
    file: Option<&std::path::Path>,
    key: Option<&mcp_adapters::exec::StateKey>,
) -> Result<()> {
    let (Some(state), Some(file)) = (&run.suspended, file) else {
        return Ok(());
    };
    state::write(state, file, key)?;
    for waiting in &run.waiting {
        let id = match (&waiting.call_id, waiting.index) {
            (Some(id), _) => escaped(id).into_owned(),
            (None, index) => format!("#{index}"),
        };
        let what = match &waiting.what {
            Wait::Approval => "approval (--approve-call or --deny-call)".to_owned(),
            Wait::HostedApproval => {
                "approval of the provider's hosted call (--approve-call or --deny-call)".to_owned()
            }
            Wait::Input { requests } => format!(
                "answers (--answers) to {}",
                requests
                    .iter()
                    .map(|(key, request)| format!("`{key}`: {}", request_text(request)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Wait::Task {
                task_id, status, ..
            } => format!(
                "the end of its task `{}` ({}) on the server: resume it later",
                escaped(task_id),
                escaped(status)
            ),
            _ => "an answer".to_owned(),
        };
        eprintln!(
            "waiting: call {id} (`{}/{}`) waits for {what}",
            escaped(&waiting.server_id),
            escaped(&waiting.tool)
        );
    }
    eprintln!(
        "note: the turn is suspended; its state is in {}: resume it with --resume {}",
        file.display(),
        file.display()
    );
    Ok(())
}

/// A question as one line: an elicitation's message, or its kind.
fn request_text(request: &mcp_adapters::mcp::InputRequest) -> String {
    use mcp_adapters::mcp::{Elicitation, InputRequest};
    let text = match request {
        InputRequest::Elicitation(Elicitation::Form(form)) => format!("{:?}", form.message),
        InputRequest::Elicitation(Elicitation::Url(url)) => {
            format!("{:?} at {}", url.message, url.url)
        }
        InputRequest::Sampling(_) => "a completion (sampling)".to_owned(),
        InputRequest::ListRoots(_) => "the roots".to_owned(),
        _ => "a question".to_owned(),
    };
    mcp_adapters::toolset::sanitize_description(&text).into_owned()
}

/// What the provider did with the servers it hosts, on stderr: its calls
/// (run by the provider, not here) and the approval answers printed in
/// `approvals`, for the next request.
fn summarize_hosted(run: &mcp_adapters::Execution) {
    for call in &run.hosted.calls {
        let outcome = match &call.error {
            Some(error) => format!("failed: {error}"),
            None => "answered".to_owned(),
        };
        eprintln!(
            "hosted: the provider called `{}/{}` itself ({})",
            escaped(&call.server_id),
            escaped(&call.tool),
            escaped(&outcome)
        );
    }
    for answer in &run.approvals {
        let decision = match &answer.reason {
            _ if answer.approved => "approved".to_owned(),
            Some(reason) => format!("denied: {reason}"),
            None => "denied".to_owned(),
        };
        eprintln!(
            "hosted: `{}/{}` awaits approval: {} (the answer is `approvals[].item`, for the next request)",
            escaped(&answer.server_id),
            escaped(&answer.tool),
            escaped(&decision)
        );
    }
}

/// One line on stderr after a turn: how many calls ran, were rejected before
/// anything was sent (unknown tool, bad arguments), were denied, or failed.
fn summarize(calls: &[CallRecord], turn: Option<usize>) {
    let (mut ran, mut rejected, mut denied, mut failed) = (0, 0, 0, 0);
    for call in calls {
        let name = call.exposed_name.as_deref().unwrap_or("?");
        for warning in &call.warnings {
            eprintln!("warning: `{}`: {}", escaped(name), escaped(warning));
        }
        // The model is told only the kind and the server: the person at the
        // terminal reads why (its stderr tail, its command line).
        if let Some(error) = &call.error
            && matches!(
                error.kind(),
                ErrorKind::Unavailable | ErrorKind::Interrupted | ErrorKind::Unauthorized
            )
        {
            eprintln!(
                "error: `{}`: {}",
                escaped(name),
                escaped(&format!("{error:#}"))
            );
        }
        match call.error.as_ref().map(Error::kind) {
            // It ran, but the model was answered with what broke its schema.
            Some(ErrorKind::InvalidResult) => failed += 1,
            _ if call.ran => ran += 1,
            Some(ErrorKind::UnknownTool | ErrorKind::InvalidArguments) => rejected += 1,
            Some(ErrorKind::Denied) => denied += 1,
            _ => failed += 1,
        }
    }
    let turn = turn.map(|t| format!(" (turn {t})")).unwrap_or_default();
    eprintln!(
        "summary{turn}: {} call(s): {ran} ran, {rejected} rejected before sending, {denied} denied, {failed} failed",
        calls.len()
    );
}

/// Each server's state, for the output: `{"name": "up" | "reconnecting" | "down: ..."}`.
fn server_states(source: &mcp_adapters::Source) -> Value {
    source
        .server_states()
        .into_iter()
        .map(|(id, state)| (id, json!(state.to_string())))
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

pub fn calls(args: &CallsArgs) -> Result<Value> {
    let registry = registry(args.specs.specs.as_deref())?;
    let provider = registry.get(&args.provider)?;
    let toolset = toolset(&args.toolset.naming, read_servers(&args.tools)?)?;
    let listing: Listing = provider.list_tools(&toolset, &list_options(&args.toolset))?;
    if let Some(file) = &args.stream.stream {
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
        return Ok(out);
    }
    let file = args.response.as_deref().unwrap_or("-");
    let response = read_json(file)?;
    let extracted = provider
        .extract_calls(&response, &listing)
        .map_err(|e| e.with_file(file))?;
    let mut out = json!({"calls": extracted.calls, "rejected": extracted.rejected});
    with_hosted(&mut out, &extracted.hosted)?;
    Ok(out)
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
fn stream_framing(args: &StreamArgs, bytes: &[u8], spec: Framing) -> Framing {
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
