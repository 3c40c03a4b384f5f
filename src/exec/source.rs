//! Sources: a hub of named servers or one client, with their governance.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::policy::{Approval, ApprovalRequest, Approver, Policy};
use super::server::{BoxFuture, CallContext, Server, list_all_tools};
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::listing::{ListOptions, ListingReport, NullPaths};
use crate::mcp::CallToolResult;
use crate::spec::Provider;
use crate::toolset::{Mode, ToolSet};

/// Code run around every call: `before` may change the arguments or refuse the
/// call; `after` may change the result or turn it into an error.
pub trait Hooks: Send + Sync {
    /// Runs before the call is sent.
    ///
    /// # Errors
    ///
    /// An error stops the call; its message is the model's answer.
    fn before<'a>(
        &'a self,
        call: &'a mut ToolCall,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<()>> {
        let _ = (call, context);
        Box::pin(async { Ok(()) })
    }

    /// Runs after the server answered.
    ///
    /// # Errors
    ///
    /// An error replaces the result; its message is the model's answer.
    fn after<'a>(
        &'a self,
        call: &'a ToolCall,
        result: &'a mut CallToolResult,
        context: &'a CallContext,
    ) -> BoxFuture<'a, Result<()>> {
        let _ = (call, result, context);
        Box::pin(async { Ok(()) })
    }
}

/// What [`Source::tools`] returns: the provider's definitions, the toolset they
/// were built from and the null paths; pass the last two back on execution
/// (see [`ExecOptions::from_listing`](super::ExecOptions::from_listing)).
#[derive(Debug, Clone)]
pub struct ToolsListing {
    /// The provider's tool definitions.
    pub tools: Vec<Value>,
    /// The toolset the model is offered; calls resolve against it only.
    pub toolset: Arc<ToolSet>,
    /// Strict-mode null paths per exposed name.
    pub null_paths: NullPaths,
    /// Renames, drops, failed servers and strict fallbacks.
    pub report: ListingReport,
}

/// A hub (several named servers, tools named `server__tool`) or a client (one
/// server, its own names), with its policy, approver, hooks and validation.
///
/// A hub always has a policy: [`Policy::allow_all`] unless one is given. A
/// client has one only when configured: **without a policy, a client sends
/// every call the model makes to a tool in its toolset as asked.** Configure a
/// policy on any client you hand to a model.
pub struct Source {
    pub(crate) mode: Mode,
    pub(crate) servers: Vec<(String, Arc<dyn Server>)>,
    prefix: Option<String>,
    allow: Vec<String>,
    deny: Vec<String>,
    pub(crate) policy: Option<Policy>,
    pub(crate) approver: Option<Approver>,
    pub(crate) hooks: Option<Arc<dyn Hooks>>,
    pub(crate) validate: bool,
    cache: Mutex<Option<Arc<ToolSet>>>,
    validators: Mutex<HashMap<(String, String), CompiledSchema>>,
}

/// A tool's compiled input schema; `None` when the schema does not compile.
type CompiledSchema = Arc<Option<jsonschema::Validator>>;

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<_> = self.servers.iter().map(|(id, _)| id).collect();
        f.debug_struct("Source")
            .field("mode", &self.mode)
            .field("servers", &ids)
            .field("policy", &self.policy)
            .field("validate", &self.validate)
            .finish_non_exhaustive()
    }
}

impl Source {
    /// A hub: add servers with [`SourceBuilder::server`].
    pub fn hub() -> SourceBuilder {
        SourceBuilder::new(Mode::Hub)
    }

    /// A client of one server.
    pub fn client(server_id: impl Into<String>, server: impl Server + 'static) -> SourceBuilder {
        SourceBuilder::new(Mode::Client).server(server_id, server)
    }

    /// A client whose one server is added later with [`SourceBuilder::shared_server`].
    #[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
    pub(crate) fn client_builder() -> SourceBuilder {
        SourceBuilder::new(Mode::Client)
    }

    /// The policy, if any (a hub always has one).
    pub fn policy(&self) -> Option<&Policy> {
        self.policy.as_ref()
    }

    /// The toolset for a model: the cached one, or a fresh listing of every
    /// server (concurrently) when nothing is cached or `refresh` is set. A
    /// server that fails to list is reported in the toolset's report and
    /// contributes no tool.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] if the filters are invalid.
    pub async fn toolset(&self, refresh: bool) -> Result<Arc<ToolSet>> {
        let cached = self.cache.lock().map_err(poisoned)?.clone();
        if let Some(cached) = cached.filter(|_| !refresh) {
            return Ok(cached);
        }
        let listings =
            futures_util::future::join_all(self.servers.iter().map(|(id, server)| async move {
                (id.clone(), list_all_tools(server.as_ref()).await)
            }))
            .await;
        let mut builder = match self.mode {
            Mode::Hub => ToolSet::hub(),
            Mode::Client => ToolSet::client(),
        };
        if let Some(prefix) = &self.prefix {
            builder = builder.prefix(prefix);
        }
        for glob in &self.allow {
            builder = builder.allow(glob);
        }
        for glob in &self.deny {
            builder = builder.deny(glob);
        }
        for (id, listed) in listings {
            builder = match listed {
                Ok(tools) => builder.server(id, tools),
                Err(err) => {
                    tracing::warn!(server = %id, error = %err, "listing tools failed; the server's tools are left out");
                    builder.failed_server(id, err.to_string())
                }
            };
        }
        let toolset = Arc::new(builder.build()?);
        *self.cache.lock().map_err(poisoned)? = Some(toolset.clone());
        self.validators.lock().map_err(poisoned)?.clear();
        Ok(toolset)
    }

    /// Lists the source's tools in `provider`'s format (the cached toolset unless `refresh`).
    ///
    /// # Errors
    ///
    /// See [`Provider::list_tools`].
    pub async fn tools(
        &self,
        provider: &Provider,
        options: &ListOptions,
        refresh: bool,
    ) -> Result<ToolsListing> {
        let toolset = self.toolset(refresh).await?;
        let listing = provider.list_tools(&toolset, options)?;
        Ok(ToolsListing {
            tools: listing.tools,
            toolset,
            null_paths: listing.null_paths,
            report: listing.report,
        })
    }

    pub(crate) fn server(&self, id: &str) -> Option<&Arc<dyn Server>> {
        self.servers
            .iter()
            .find(|(s, _)| s == id)
            .map(|(_, server)| server)
    }

    pub(crate) async fn approve(&self, request: ApprovalRequest) -> Approval {
        match &self.approver {
            Some(approver) => approver(request).await,
            None => {
                Approval::Deny("this call needs approval, and no approver is configured".into())
            }
        }
    }

    /// The compiled validator for a tool's input schema, compiled once per tool and listing.
    pub(crate) fn validator(
        &self,
        server_id: &str,
        tool: &str,
        schema: &Value,
    ) -> Arc<Option<jsonschema::Validator>> {
        let key = (server_id.to_owned(), tool.to_owned());
        let Ok(mut cache) = self.validators.lock() else {
            return Arc::new(None);
        };
        cache
            .entry(key)
            .or_insert_with(|| {
                let compiled = jsonschema::validator_for(schema);
                if let Err(err) = &compiled {
                    tracing::warn!(server = %server_id, tool = %tool, error = %err, "input schema does not compile; arguments are not validated");
                }
                Arc::new(compiled.ok())
            })
            .clone()
    }
}

fn poisoned<T>(_: T) -> Error {
    Error::new(
        ErrorKind::Server,
        "a lock was poisoned by a panic elsewhere",
    )
}

/// Builds a [`Source`]; see [`Source::hub`] and [`Source::client`].
pub struct SourceBuilder {
    mode: Mode,
    servers: Vec<(String, Arc<dyn Server>)>,
    prefix: Option<String>,
    allow: Vec<String>,
    deny: Vec<String>,
    policy: Option<Policy>,
    approver: Option<Approver>,
    hooks: Option<Arc<dyn Hooks>>,
    validate: bool,
}

impl SourceBuilder {
    fn new(mode: Mode) -> Self {
        SourceBuilder {
            mode,
            servers: Vec::new(),
            prefix: None,
            allow: Vec::new(),
            deny: Vec::new(),
            policy: None,
            approver: None,
            hooks: None,
            validate: false,
        }
    }

    /// Adds a named server (a hub's; a client has exactly one).
    pub fn server(mut self, server_id: impl Into<String>, server: impl Server + 'static) -> Self {
        self.servers.push((server_id.into(), Arc::new(server)));
        self
    }

    /// Adds a named server already behind an `Arc`.
    pub fn shared_server(mut self, server_id: impl Into<String>, server: Arc<dyn Server>) -> Self {
        self.servers.push((server_id.into(), server));
        self
    }

    /// Puts `prefix` before every exposed name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Offers only tools whose `server/tool` matches (see [`ToolSetBuilder::allow`](crate::toolset::ToolSetBuilder::allow)).
    pub fn allow_tools(mut self, glob: impl Into<String>) -> Self {
        self.allow.push(glob.into());
        self
    }

    /// Never offers tools whose `server/tool` matches.
    pub fn deny_tools(mut self, glob: impl Into<String>) -> Self {
        self.deny.push(glob.into());
        self
    }

    /// The policy every call goes through.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Decides the calls the policy asks about.
    pub fn approver<F>(mut self, approver: F) -> Self
    where
        F: Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync + 'static,
    {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Code run around every call.
    pub fn hooks(mut self, hooks: impl Hooks + 'static) -> Self {
        self.hooks = Some(Arc::new(hooks));
        self
    }

    /// Validates arguments against the tool's `inputSchema` before sending; an
    /// invalid call is answered with an error and not sent.
    pub fn validate(mut self, validate: bool) -> Self {
        self.validate = validate;
        self
    }

    /// Builds the source.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when a client has other than one server, a server id
    /// is empty or repeated, or a filter glob is invalid.
    pub fn build(self) -> Result<Source> {
        if self.mode == Mode::Client && self.servers.len() != 1 {
            return Err(Error::new(
                ErrorKind::Input,
                "a client has exactly one server; use a hub for several",
            ));
        }
        let mut probe = ToolSet::hub();
        for glob in self.allow.iter() {
            probe = probe.allow(glob);
        }
        for glob in self.deny.iter() {
            probe = probe.deny(glob);
        }
        for (id, _) in &self.servers {
            probe = probe.server(id, Vec::new());
        }
        probe.build()?;
        let policy = match (self.mode, self.policy) {
            (Mode::Hub, None) => Some(Policy::allow_all()),
            (_, policy) => policy,
        };
        Ok(Source {
            mode: self.mode,
            servers: self.servers,
            prefix: self.prefix,
            allow: self.allow,
            deny: self.deny,
            policy,
            approver: self.approver,
            hooks: self.hooks,
            validate: self.validate,
            cache: Mutex::new(None),
            validators: Mutex::new(HashMap::new()),
        })
    }
}
