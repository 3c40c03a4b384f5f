//! Live servers for the CLI: `--server NAME='COMMAND ARGS'`, `--config FILE`
//! (HTTP servers that require it are signed in to, see `signin`) and the
//! policy file.

use std::path::Path;
use std::time::Duration;

use mcp_adapters::exec::{Approval, Handlers, SourceBuilder};
use mcp_adapters::toolset::Binding;
use mcp_adapters::{
    ClientOptions, Error, ErrorKind, HubConfig, Policy, Result, ServerConfig, Source,
};
use serde::Deserialize;

use super::shown::escaped;
use super::{LiveArgs, NamingArgs};

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
    Ok((name.trim().to_owned(), ServerConfig::stdio(command, args)))
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
    /// Tools open to code the model writes, as well as to the model.
    #[serde(default)]
    programmatic: Vec<String>,
    /// Tools open to code only.
    #[serde(default)]
    programmatic_only: Vec<String>,
    /// Every tool annotated `readOnlyHint: true` open to code.
    #[serde(default)]
    programmatic_read_only: bool,
    /// Arguments bound to the application's values: `SERVER/TOOL:/POINTER=VALUE`.
    #[serde(default)]
    bind: Vec<String>,
}

/// What a policy file says: the policy, and the arguments it binds.
#[derive(Debug, Default)]
pub struct Rules {
    /// The policy (`None`: no policy file).
    pub policy: Option<Policy>,
    /// The `bind:` rules.
    pub bindings: Vec<Binding>,
}

/// The `--bind` rules, read.
pub fn parse_binds(rules: &[String]) -> Result<Vec<Binding>> {
    rules
        .iter()
        .map(|rule| {
            let binding = Binding::parse(rule)?;
            unset_variable(&binding)?;
            Ok(binding)
        })
        .collect()
}

/// An error naming `binding` when it is bound to an environment variable
/// that is not set: found before any listing, not at the first call.
fn unset_variable(binding: &Binding) -> Result<()> {
    match binding.value() {
        mcp_adapters::toolset::BoundValue::Env(name) if std::env::var_os(name).is_none() => {
            Err(Error::new(
                ErrorKind::Input,
                format!("bind `{binding}`: the environment variable `{name}` is not set"),
            ))
        }
        _ => Ok(()),
    }
}

/// Reads a policy file (JSON or YAML). Rules are globs over `server/tool`;
/// `deny` wins, then `ask` (answered deny: the CLI has no one to ask), then
/// `allow`, whatever the order of the lists, so `ask: [github/create_*]`
/// with `allow: [github/*]` asks about creating and runs the rest; a call no
/// rule matches gets `default` (`deny` when absent). An `allow` glob inside
/// an `ask` glob (an exception the former order honoured) is warned about
/// on stderr.
/// `programmatic`, `programmatic_only` (globs) and `programmatic_read_only`
/// (a boolean) are the callers rule: which tools code the model writes may
/// call. `bind` (rules, as `--bind` writes them) binds arguments.
pub fn read_policy(path: &Path) -> Result<Rules> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(ErrorKind::Io, format!("cannot read {}", path.display()))
            .with_file(path)
            .with_source(e)
    })?;
    let file: PolicyFile = serde_saphyr::from_str(&text).map_err(|e| {
        Error::new(ErrorKind::Input, "not a policy file")
            .with_file(path)
            .with_source(e)
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
    for glob in &file.programmatic {
        policy = policy.programmatic(glob).map_err(at("programmatic"))?;
    }
    for glob in &file.programmatic_only {
        policy = policy
            .programmatic_only(glob)
            .map_err(at("programmatic_only"))?;
    }
    if file.programmatic_read_only {
        policy = policy.programmatic_read_only();
    }
    for change in policy.order_changes() {
        eprintln!("warning: {}: {change}", path.display());
    }
    let bindings = file
        .bind
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            Binding::parse(rule)
                .and_then(|b| unset_variable(&b).map(|()| b))
                .map_err(|e| e.with_file(path).with_path(format!("bind/{i}")))
        })
        .collect::<Result<_>>()?;
    Ok(Rules {
        policy: Some(policy),
        bindings,
    })
}

/// The CLI's approver: there is no one to ask, so `ask` rules deny, or
/// with `suspend` (`run --suspend`) the call waits. What servers ask is
/// answered by `handlers` (see `asks`), and nothing else.
pub fn unattended(builder: SourceBuilder, handlers: &Handlers, suspend: bool) -> SourceBuilder {
    builder.handlers(handlers.clone()).approver(move |request| {
        if suspend {
            return Box::pin(async { Approval::Later });
        }
        let reason = format!(
            "`{}/{}` needs approval and the command line has no approver; allow it in the policy file, or give --approve-call, to run it",
            request.call.server_id, request.call.tool
        );
        Box::pin(async move { Approval::Deny(reason) })
    })
}

/// The source for `--server`s / `--config` (a client for one, a hub for
/// more), or `None` when neither is given. The clients declare what
/// `asks` answer, and nothing more; the calls its rules name run alone on
/// their server.
pub async fn source(
    live: &LiveArgs,
    filters: &NamingArgs,
    rules: Rules,
    validate: bool,
    asks: &super::asks::Asks,
) -> Result<Option<Source>> {
    let Some(config) = hub_config(&live.servers, live.config.as_deref())? else {
        return Ok(None);
    };
    source_from(config, live, filters, rules, validate, asks)
        .await
        .map(Some)
}

/// The source for the servers of `config` (see [`source`]).
pub async fn source_from(
    config: HubConfig,
    live: &LiveArgs,
    filters: &NamingArgs,
    rules: Rules,
    validate: bool,
    asks: &super::asks::Asks,
) -> Result<Source> {
    let handlers = &asks.handlers;
    let bindings = parse_binds(&filters.bind)?;
    if filters.hub {
        return Err(Error::new(
            ErrorKind::Input,
            "--hub goes with tools/list files: live servers are named `server__tool` from two servers on, and one keeps its tools' names",
        ));
    }
    let mut options = ClientOptions::new()
        .handlers(handlers.clone())
        .init_timeout(Duration::from_secs(live.startup_timeout))
        .list_timeout(Duration::from_secs(live.startup_timeout));
    if super::signin::needed(&config) {
        let timeout = live
            .sign_in_timeout
            .map(Duration::from_secs)
            .unwrap_or(super::signin::DEFAULT_TIMEOUT);
        let sign_in = super::signin::SignIn {
            store: live.token_store.as_deref(),
            timeout,
            workload_token: live.workload_token.as_deref(),
            dpop: live.dpop,
        };
        options = options.oauth(sign_in.oauth().await?);
    }
    // A server that did not start is checked on the listing's report
    // (`check_started`), which says it the same way, --keep-going or not.
    let mut builder = config.keep_going(true).connect_with(&options).await?;
    if let Some(prefix) = &filters.prefix {
        builder = builder.prefix(prefix);
    }
    builder = builder.refuse_hidden_characters(filters.refuse_hidden);
    for glob in &filters.allow {
        builder = builder.allow_tools(glob);
    }
    for glob in &filters.deny {
        builder = builder.deny_tools(glob);
    }
    if let Some(policy) = rules.policy {
        builder = builder.policy(policy);
    }
    for binding in bindings.into_iter().chain(rules.bindings) {
        builder = builder.bind(binding);
    }
    if validate {
        builder = builder.validate_arguments();
    }
    for glob in &asks.alone {
        builder = builder.run_alone(glob);
    }
    if live.code_mode {
        builder = builder.code_mode(mcp_adapters::code::CodeMode::new());
    }
    if live.resources {
        builder = builder.resources("*");
    }
    if live.prompts {
        builder = builder.prompts("*");
    }
    if live.skills {
        builder = builder.skills("*");
    }
    unattended(builder, handlers, asks.suspend).build()
}

/// Checks that the servers started and listed their tools, as `report`
/// (the first toolset's, or its listing's) says: an error naming each one
/// that did not, and why; with `--keep-going`, a warning each on stderr
/// instead, unless none started. The servers are not listed again for it
/// (a server whose list expires at once would be).
pub async fn check_started(
    source: &Source,
    report: &mcp_adapters::toolset::ToolSetReport,
    live: &LiveArgs,
) -> Result<()> {
    if live.skills {
        let skills = source.list_skills().await;
        for failed in &skills.failed_servers {
            eprintln!(
                "warning: server `{}`: {}",
                escaped(&failed.server_id),
                escaped(&failed.error)
            );
        }
        for refused in &skills.refused {
            eprintln!(
                "warning: server `{}`: skill `{}` left out: {}",
                escaped(&refused.server_id),
                escaped(&refused.uri),
                escaped(&refused.reason)
            );
        }
        if skills.skills.is_empty() {
            eprintln!("warning: --skills: no server lists a skill, so `load_skill` is not offered");
        }
    }
    // Once per server and field, for the person: the report has them too.
    for field in source.defaulted() {
        eprintln!("note: {}", escaped(&field.to_string()));
    }
    let failed = &report.failed_servers;
    if failed.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = failed.iter().map(|f| f.error.clone()).collect();
    let all = failed.len() == source.server_states().len();
    if live.keep_going && !all {
        for line in &lines {
            eprintln!(
                "warning: {}; going on without it (--keep-going)",
                escaped(line)
            );
        }
        return Ok(());
    }
    let hint = if all {
        ""
    } else {
        "\n(--keep-going goes on with the servers that started)"
    };
    Err(Error::new(
        ErrorKind::Unavailable,
        format!("{}{hint}", lines.join("\n")),
    ))
}
