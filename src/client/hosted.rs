//! One configuration, two places: the servers a configuration asks to be
//! hosted are declared to the provider where it can call them as their
//! policy requires, and the others run here.

use std::collections::BTreeMap;

use super::{ClientOptions, McpClient};
use crate::config::{HubConfig, ServerConfig};
use crate::error::Result;
use crate::exec::{Policy, Source};
use crate::hosted::{HostedListing, HostedServer, LocalServer};
use crate::spec::Provider;

/// How [`split_hosted`] decides.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct HostedOptions {
    /// Globs over `server/tool` of the tools to defer
    /// ([`ListOptions::defer`](crate::ListOptions::defer)): a hosted server
    /// whose every tool they name is deferred behind the provider's search.
    pub defer: Vec<String>,
    /// Lets a hosted server's `Authorization` header go to the provider.
    /// Off by default: the provider would then act with that credential.
    pub pass_credentials: bool,
    /// How a server is reached when its tool names must be listed here.
    pub client: ClientOptions,
    /// Servers' tool names known already (from the provider's own listing
    /// in an earlier response): used instead of listing the server here.
    pub listed: BTreeMap<String, Vec<String>>,
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

    /// Lets `Authorization` headers go to the provider.
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
/// provider with what `policy` lets it run, when the provider can host it so:
/// a server over HTTPS (not stdio), a provider with hosted MCP, a policy the
/// provider can apply (an `ask` needs its approval step), and, unless
/// [`HostedOptions::pass_credentials`], no `Authorization` header. When the
/// policy singles out some of a server's tools, their names come from
/// [`HostedOptions::listed`] (the provider's own listing), or the server is
/// listed here once for them. Every server that cannot be hosted runs here, with
/// the reason in [`HostedListing::local`].
///
/// # Errors
///
/// As [`Provider::list_hosted`].
pub async fn split_hosted(
    hub: &HubConfig,
    provider: &Provider,
    policy: &Policy,
    options: &HostedOptions,
) -> Result<HostedSplit> {
    let mut local = HubConfig::new();
    let mut to_host = Vec::new();
    let mut refused = Vec::new();
    for (name, config) in hub.servers() {
        if !hub.is_hosted(name) {
            local = local.server(name.clone(), config.clone());
            continue;
        }
        match host(name, config, policy, options).await {
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

/// The declaration of `name`, or why it cannot be hosted.
async fn host(
    name: &str,
    config: &ServerConfig,
    policy: &Policy,
    options: &HostedOptions,
) -> std::result::Result<HostedServer, String> {
    let ServerConfig::Http { url, headers } = config else {
        return Err("a stdio server runs where the library runs".to_owned());
    };
    if !options.pass_credentials
        && headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(
            "its Authorization header is a credential, and passing credentials to the provider is off"
                .to_owned(),
        );
    }
    let mut names = None;
    let tools = match policy.hosted_tools(name, None) {
        Ok(tools) => tools,
        Err(_) => {
            let listed = match options.listed.get(name) {
                Some(known) => known.clone(),
                None => tool_names(name, config, &options.client)
                    .await
                    .map_err(|e| {
                        format!("the policy needs its tool names, and listing it failed: {e}")
                    })?,
            };
            let tools = policy.hosted_tools(name, Some(&listed))?;
            names = Some(listed);
            tools
        }
    };
    let deferred = deferred(name, names.as_deref(), &options.defer);
    let mut server = HostedServer::new(name, url.clone())
        .tools(tools)
        .deferred(deferred);
    let headers: BTreeMap<String, String> = headers.clone();
    for (k, v) in headers {
        server = server.header(k, v);
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
fn deferred(name: &str, names: Option<&[String]>, defer: &[String]) -> bool {
    let globs: Vec<globset::GlobMatcher> = defer
        .iter()
        .filter_map(|g| crate::toolset::compile_tool_glob(g).ok())
        .collect();
    if globs.is_empty() {
        return false;
    }
    let named = |tool: &str| {
        let path = format!("{name}/{tool}");
        globs.iter().any(|g| g.is_match(&path))
    };
    match names {
        Some(names) => !names.is_empty() && names.iter().all(|t| named(t)),
        None => named("\u{0}"),
    }
}
