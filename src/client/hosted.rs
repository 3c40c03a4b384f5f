//! One configuration, two places: the servers a configuration asks to be
//! hosted are declared to the provider where it can call them as their
//! policy requires, and the others run here.

use std::collections::BTreeMap;

use super::{ClientOptions, McpClient};
use crate::config::{HubConfig, ServerConfig};
use crate::error::Result;
use crate::exec::{Policy, Source};
use crate::hosted::{HostedListing, HostedRefusal, HostedServer, LocalServer};
use crate::spec::Provider;
use crate::toolset::Binding;

/// How [`split_hosted`] decides.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct HostedOptions {
    /// Globs over `server/tool` of the tools to defer
    /// ([`ListOptions::defer`](crate::ListOptions::defer)): a hosted server
    /// whose every tool they name is deferred behind the provider's search.
    pub defer: Vec<String>,
    /// Lets a hosted server's headers (an `Authorization` header among them,
    /// sent as the provider's bearer token where it takes one) and a URL's
    /// user or query go to the provider. Off by default: the provider would
    /// then act with those credentials, and such a server runs here.
    pub pass_credentials: bool,
    /// The toolset's allow globs (`server/tool`): a hosted server runs only
    /// the tools they name, as a listing here would offer only those.
    pub allow: Vec<String>,
    /// The toolset's deny globs.
    pub deny: Vec<String>,
    /// How a server is reached when its tool names must be listed here.
    pub client: ClientOptions,
    /// Servers' tool names known already (from the provider's own listing
    /// in an earlier response): used instead of listing the server here.
    pub listed: BTreeMap<String, Vec<String>>,
    /// The arguments the application binds
    /// ([`SourceBuilder::bind`](crate::exec::SourceBuilder::bind)), beside
    /// those of the configuration's entries ([`HubConfig::bind`]): a
    /// provider cannot fill them, so a server whose tools they may name runs
    /// here.
    pub bindings: Vec<Binding>,
}

impl HostedOptions {
    /// Defaults: nothing deferred, no credential passed on.
    pub fn new() -> Self {
        Self::default()
    }

    /// Defers the tools `glob` names (repeatable).
    pub fn defer(mut self, glob: impl Into<String>) -> Self {
        self.defer.push(glob.into());
        self
    }

    /// Offers only the tools `glob` names (as [`ToolSetBuilder::allow`](crate::toolset::ToolSetBuilder::allow)).
    pub fn allow_tools(mut self, glob: impl Into<String>) -> Self {
        self.allow.push(glob.into());
        self
    }

    /// Never offers the tools `glob` names.
    pub fn deny_tools(mut self, glob: impl Into<String>) -> Self {
        self.deny.push(glob.into());
        self
    }

    /// Lets credentials go to the provider (see the field).
    pub fn pass_credentials(mut self, pass: bool) -> Self {
        self.pass_credentials = pass;
        self
    }

    /// The tool names of `server`, known already.
    pub fn listed(mut self, server: impl Into<String>, tools: Vec<String>) -> Self {
        self.listed.insert(server.into(), tools);
        self
    }

    /// The tool names the provider listed in an earlier response
    /// ([`HostedItems::tool_lists`](crate::hosted::HostedItems::tool_lists)).
    pub fn listed_by_provider(mut self, items: &crate::hosted::HostedItems) -> Self {
        for list in items.tool_lists.iter().filter(|l| l.error.is_none()) {
            self.listed
                .insert(list.server_id.clone(), list.tools.clone());
        }
        self
    }

    /// Binds an argument (see the field `bindings`).
    pub fn bind(mut self, binding: Binding) -> Self {
        self.bindings.push(binding);
        self
    }

    /// How servers are reached when their tools must be listed here.
    pub fn client(mut self, options: ClientOptions) -> Self {
        self.client = options;
        self
    }
}

/// A configuration split between the provider and the library.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HostedSplit {
    /// What to add to the request for the hosted servers; its
    /// [`local`](HostedListing::local) says why each other server that asked
    /// to be hosted runs here.
    pub hosted: HostedListing,
    /// The servers to run here: those that did not ask to be hosted, and
    /// those the provider cannot host. Connect them as usual.
    pub local: HubConfig,
}

/// Splits `hub` between `provider` and the library: each server that asks
/// to be hosted ([`HubConfig::host`], `"hosted": true`) is declared to the
/// provider with what `policy` (and the toolset's filters,
/// [`HostedOptions::allow_tools`], [`HostedOptions::deny_tools`]) lets it
/// run, when the provider can host it so: a server over HTTPS (not stdio), a
/// provider with hosted MCP, a policy the provider can apply (an `ask` needs
/// its approval step), no bound argument (the provider cannot fill one: a
/// server whose tools a [`HostedOptions::bindings`] glob or its entry's
/// `bind` may name runs here), and, unless
/// [`HostedOptions::pass_credentials`], no credential: no header but ordinary ones, no user or query in the URL.
/// When the policy or the filters single out some of a server's tools, their
/// names come from [`HostedOptions::listed`] (the provider's own listing), or
/// the server is listed here once for them. Every server that cannot be
/// hosted runs here, with the reason in [`HostedListing::local`].
///
/// # Errors
///
/// [`ErrorKind::Input`](crate::ErrorKind::Input) for an invalid defer or
/// filter glob; as [`Provider::list_hosted`].
pub async fn split_hosted(
    hub: &HubConfig,
    provider: &Provider,
    policy: &Policy,
    options: &HostedOptions,
) -> Result<HostedSplit> {
    let defer = options
        .defer
        .iter()
        .map(|g| {
            crate::toolset::compile_tool_glob(g).map_err(|e| {
                let message = format!("HostedOptions::defer: {}", e.message());
                e.with_message(message)
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut filters = crate::toolset::ToolSet::hub();
    for glob in &options.allow {
        filters = filters.allow(glob);
    }
    for glob in &options.deny {
        filters = filters.deny(glob);
    }
    let filter = filters.filter()?;
    let filtered = !options.allow.is_empty() || !options.deny.is_empty();
    let mut local = HubConfig::new();
    let mut to_host = Vec::new();
    let mut refused = Vec::new();
    for (name, config) in hub.servers() {
        if !hub.is_hosted(name) {
            local = local.server(name.clone(), config.clone());
            continue;
        }
        if let Some(reason) = bound(hub, name, options) {
            refused.push(LocalServer::new(name.clone(), reason));
            local = local.server(name.clone(), config.clone());
            continue;
        }
        let rules = Rules {
            policy,
            filter: filtered.then_some(&filter),
            defer: &defer,
        };
        match host(name, config, &rules, options).await {
            Ok(server) => to_host.push((server, config.clone())),
            Err(reason) => {
                refused.push(LocalServer::new(name.clone(), reason));
                local = local.server(name.clone(), config.clone());
            }
        }
    }
    let servers: Vec<HostedServer> = to_host.iter().map(|(s, _)| s.clone()).collect();
    let mut hosted = provider.list_hosted(&servers)?;
    for left in &hosted.local {
        if let Some((_, config)) = to_host.iter().find(|(s, _)| s.id == left.server_id) {
            local = local.server(left.server_id.clone(), config.clone());
        }
    }
    hosted.local.splice(0..0, refused);
    for left in &hosted.local {
        tracing::info!(server = %left.server_id, reason = %left.reason,
            "a server that asked to be hosted runs locally");
    }
    Ok(HostedSplit { hosted, local })
}

/// Why the server `name` runs here when the application binds arguments of
/// its tools: its entry's rules, or a binding whose glob may name one of
/// its tools (one of its known tool names, or, when they are not known,
/// any tool on a server of its name).
fn bound(hub: &HubConfig, name: &str, options: &HostedOptions) -> Option<String> {
    let because = |rule: &str| {
        format!(
            "the application binds arguments of its tools (bind `{rule}`), which the provider cannot fill: they are filled here"
        )
    };
    if let Some(rule) = hub.bindings_of(name).first() {
        let place = rule.split_once('=').map_or(rule.as_str(), |(p, _)| p);
        return Some(because(&format!("{name}/{place}")));
    }
    options
        .bindings
        .iter()
        .find(|binding| {
            let Ok(glob) = crate::toolset::compile_tool_glob(binding.tool()) else {
                return false;
            };
            match options.listed.get(name) {
                Some(tools) => tools.iter().any(|t| glob.is_match(format!("{name}/{t}"))),
                None => may_name_server(binding.tool(), name),
            }
        })
        .map(|binding| because(&binding.to_string()))
}

/// Whether the `server/tool` glob `tool` may name a tool of the server
/// `name`: a bare glob names any server's; otherwise its server part (all
/// of it before the first `/`) matches `name`, or, holding a wildcard
/// (which may reach past a `/`), starts as `name` does up to it.
fn may_name_server(tool: &str, name: &str) -> bool {
    let Some((server, _)) = tool.split_once('/') else {
        return true;
    };
    match server.find(['*', '?', '[', '{', '\\']) {
        Some(wild) => name.starts_with(&server[..wild]),
        None => server == name,
    }
}

/// What decides a hosted server's tools.
struct Rules<'a> {
    policy: &'a Policy,
    filter: Option<&'a crate::toolset::Filter>,
    defer: &'a [globset::GlobMatcher],
}

/// Header names that carry no credential.
const ORDINARY_HEADERS: &[&str] = &[
    "accept",
    "accept-language",
    "content-type",
    "user-agent",
    "mcp-protocol-version",
];

/// The declaration of `name`, or why it cannot be hosted.
async fn host(
    name: &str,
    config: &ServerConfig,
    rules: &Rules<'_>,
    options: &HostedOptions,
) -> std::result::Result<HostedServer, String> {
    let ServerConfig::Http { url, headers } = config else {
        return Err("a stdio server runs where the library runs".to_owned());
    };
    if !options.pass_credentials {
        let secret: Vec<&str> = headers
            .keys()
            .filter(|k| !ORDINARY_HEADERS.iter().any(|o| k.eq_ignore_ascii_case(o)))
            .map(String::as_str)
            .collect();
        if !secret.is_empty() {
            return Err(format!(
                "its headers ({}) may carry credentials, and passing credentials to the provider is off",
                secret.join(", ")
            ));
        }
        if url::Url::parse(url).is_ok_and(|u| {
            !u.username().is_empty() || u.password().is_some() || u.query().is_some()
        }) {
            return Err(
                "its URL has a user or a query, which may carry credentials, and passing credentials to the provider is off"
                    .to_owned(),
            );
        }
    }
    let mut names: Option<Vec<String>> = None;
    let needs_names = rules.filter.is_some();
    let tools = match (needs_names, rules.policy.hosted_tools(name, None)) {
        (false, Ok(tools)) => tools,
        (_, Err(HostedRefusal::Refused(reason))) => return Err(reason),
        (true, Ok(_)) | (_, Err(HostedRefusal::ToolNamesNeeded)) => {
            let listed = match options.listed.get(name) {
                Some(listed) => listed.clone(),
                None => tool_names(name, config, &options.client)
                    .await
                    .map_err(|e| {
                        format!("its tool names are needed, and listing it failed: {e}")
                    })?,
            };
            let admitted: Vec<String> = listed
                .into_iter()
                .filter(|t| rules.filter.is_none_or(|f| f.admits(name, t)))
                .collect();
            let tools = rules
                .policy
                .hosted_tools(name, Some(&admitted))
                .map_err(|e| e.to_string())?;
            names = Some(admitted);
            tools
        }
    };
    let deferred = deferred(name, names.as_deref(), rules.defer);
    let mut server = HostedServer::new(name, url.clone())
        .tools(tools)
        .deferred(deferred);
    for (k, v) in headers {
        // A bearer token goes where the provider takes one.
        match v.strip_prefix("Bearer ") {
            Some(token) if k.eq_ignore_ascii_case("authorization") => {
                server = server.authorization(token);
            }
            _ => server = server.header(k.clone(), v.clone()),
        }
    }
    Ok(server)
}

/// The names of `name`'s tools, listed here.
async fn tool_names(
    name: &str,
    config: &ServerConfig,
    options: &ClientOptions,
) -> Result<Vec<String>> {
    let client = McpClient::connect(name, config, options).await?;
    let source = Source::client(name, client).build()?;
    let toolset = source.toolset().await?;
    if let Some(failed) = toolset.report().failed_servers.first() {
        return Err(crate::Error::new(
            crate::ErrorKind::Unavailable,
            failed.error.clone(),
        ));
    }
    Ok(toolset
        .tools()
        .iter()
        .map(|t| t.tool.name.clone())
        .collect())
}

/// Whether the `defer` globs name every tool of `name` (every one there may
/// be, when the names are not known).
fn deferred(name: &str, names: Option<&[String]>, defer: &[globset::GlobMatcher]) -> bool {
    if defer.is_empty() {
        return false;
    }
    let named = |tool: &str| {
        let path = format!("{name}/{tool}");
        defer.iter().any(|g| g.is_match(&path))
    };
    match names {
        Some(names) => !names.is_empty() && names.iter().all(|t| named(t)),
        None => named("\u{0}"),
    }
}
