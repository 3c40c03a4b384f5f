//! Sources: a hub of named servers or one client, with their governance.

use std::sync::Arc;

use super::answerer::{Answerer, Governor};
use super::asks::{ClientFeatures, Handlers, InputAnswer, InputQuestions};
use super::cache::ToolCache;
use super::catalogs::Catalogs;
use super::future::BoxFuture;
use super::gate::Gates;
use super::hooks::Hooks;
use super::inprocess::InProcessServer;
use super::input::Rounds;
use super::kept::KeptResults;
use super::policy::{Approval, ApprovalRequest, Approver, Policy};
use super::server::{Server, ServerState, list_whole_catalog};
use super::skills::{LOAD_SKILL, LoadedSkill, SkillList, Skills};
use crate::budget::{LIBRARY_SERVER, read_tool};
use crate::code::{CODE_TOOL_NAME, CodeMode};
use crate::error::{Error, Result};
use crate::listing::{ListOptions, Listing};
use crate::mcp::{CacheScope, Catalog, GetPromptResult, Object, ReadResourceResult};
use crate::spec::Provider;
use crate::toolset::{Binding, Bindings, Mode, ToolSet, ToolSetBuilder, compile_tool_glob};

/// A hub (several named servers, tools named `server__tool`) or a client (one
/// server, its own names), with its policy, approver, hooks and validation.
///
/// A hub always has a policy: [`Policy::allow_all`] unless one is given. A
/// client has one only when configured: **without a policy, a client sends
/// every call the model makes to a tool in its toolset as asked.** Configure a
/// policy on any client you hand to a model.
///
/// Two calls do the work: [`Source::tools`] lists a hub's (or a client's)
/// tools in a provider's format, and [`Source::execute_tool_calls`] runs the
/// calls a model made through the governed pipeline (policy, approval,
/// validation, hooks, per-call timeout, concurrency limit) and answers every
/// one in the model's order, in the provider's shape.
///
/// # Limits
///
/// There is no cap on the calls in one response: each is answered, at most
/// [`ExecOptions::max_concurrency`](crate::ExecOptions::max_concurrency) run at once, each bounded by its timeout
/// (10,000 calls against an in-process server take under a second). The
/// limits of call extraction, answering and the toolset apply.
/// [`InProcessServer`](crate::InProcessServer) clones its tool list on every listing; a tool built in
/// memory deeper than serde_json can clone is its author's concern.
pub struct Source {
    pub(super) servers: Vec<(String, Arc<dyn Server>)>,
    /// The servers' ids, in the same order, shared by what names them on
    /// every call (the answerers of their questions).
    names: Vec<Arc<str>>,
    /// The library's own server's id, shared the same way.
    library_name: Arc<str>,
    /// The naming and filters of every toolset listed (no servers).
    naming: ToolSetBuilder,
    pub(super) policy: Option<Policy>,
    /// The handlers and the approver that answer what servers ask.
    pub(super) governor: Arc<Governor>,
    /// The requests a call sends, with the hooks around them, round after round.
    pub(super) rounds: Rounds,
    pub(super) validate: bool,
    /// The servers' tool lists and the compiled input schemas.
    pub(super) cache: ToolCache,
    /// The `server/tool` globs of the calls that run alone on their server.
    pub(super) alone: Vec<globset::GlobMatcher>,
    /// Who may be in flight on each server.
    pub(super) gates: Gates,
    /// The texts result budgets cut, for the library's read tool.
    pub(super) kept: Arc<KeptResults>,
    /// The library's own tools (the read tool), served in process.
    library: Arc<dyn Server>,
    /// The servers whose resources and prompts the model may reach.
    catalogs: Arc<Catalogs>,
    /// The arguments the application fills.
    pub(super) bindings: Arc<Bindings>,
    /// Code mode's settings, when it is on.
    pub(super) code_mode: Option<CodeMode>,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<_> = self.servers.iter().map(|(id, _)| id).collect();
        f.debug_struct("Source")
            .field("mode", &self.naming.mode())
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

    /// Lists the source's tools in `provider`'s format, from the cached
    /// toolset (see [`toolset`](Self::toolset); [`refresh`](Self::refresh)
    /// lists every server again). The tools the policy's
    /// [callers rule](Policy::programmatic) opens to code are declared so,
    /// unless `options` set a rule of their own
    /// ([`ListOptions::callers`]).
    ///
    /// # Errors
    ///
    /// See [`Provider::list_tools`].
    pub async fn tools(&self, provider: &Provider, options: &ListOptions) -> Result<Listing> {
        let mut toolset = self.toolset().await?;
        // The library's tools for the servers' resources, prompts and skills, when open.
        let (skills, skills_about) = self.catalogs.skill_catalogue().await;
        for mut tool in self.catalogs.tools() {
            if tool.name == LOAD_SKILL {
                match &skills_about {
                    Some(about) => tool.description = Some(about.clone()),
                    None => continue,
                }
            }
            toolset = toolset.with_tool(crate::toolset::ExposedTool {
                exposed_name: tool.name.clone(),
                server_id: LIBRARY_SERVER.to_owned(),
                tool: Arc::new(tool),
            })?;
        }
        if let Some(mode) = &self.code_mode {
            toolset = toolset.with_tool(self.code_tool(mode, &toolset)?)?;
        }
        let with_callers;
        let options = match (&self.policy, options.callers_rule()) {
            // In code mode the tools open to code are reached through the
            // code tool, on every provider: the provider is told nothing,
            // and a tool open to programs only is not listed for the model.
            (Some(policy), _) if self.code_mode.is_some() => {
                with_callers = options.clone().code_mode(policy.callers_rule().clone());
                &with_callers
            }
            _ if self.code_mode.is_some() => options,
            (Some(policy), None) if !policy.callers_rule().is_empty() => {
                with_callers = options.clone().callers(policy.callers_rule().clone());
                &with_callers
            }
            _ => options,
        };
        let mut listing = provider.list_tools(&toolset, options)?;
        // A server whose skills could not be listed is reported as a server
        // whose listing failed.
        for failed in skills.failed_servers {
            tracing::warn!(server = %failed.server_id, error = %failed.error,
                "a server's skills could not be listed");
            listing.report.toolset.failed_servers.push(failed);
        }
        listing.report.defaulted = self.defaulted();
        Ok(listing)
    }

    /// The tools of `toolset` the policy's callers rule opens to code, each
    /// under its exposed name (the code tool's own tools are never among
    /// them).
    pub(super) fn open_to_code<'t>(
        &self,
        toolset: &'t ToolSet,
    ) -> impl Iterator<Item = &'t crate::toolset::ExposedTool> {
        let policy = self.policy.as_ref();
        toolset.tools().iter().filter(move |t| {
            t.server_id != LIBRARY_SERVER
                && !t.server_id.is_empty()
                && policy.is_some_and(|p| p.callers(&t.server_id, &t.tool).code())
        })
    }

    /// The code tool, declaring the tools of `toolset` open to code.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when no tool is open
    /// to code: the error says how to open some.
    fn code_tool(&self, mode: &CodeMode, toolset: &ToolSet) -> Result<crate::toolset::ExposedTool> {
        let open: Vec<_> = self.open_to_code(toolset).collect();
        if open.is_empty() {
            return Err(Error::input(
                "code mode is on, and no tool is open to code: open the tools a program may \
                 call with the policy's callers rule (`Policy::programmatic`, a policy file's \
                 `programmatic:`; on the command line `--programmatic GLOB`)",
            ));
        }
        let tool = crate::code::code_tool(
            mode.limits(),
            open.iter()
                .map(|t| (t.exposed_name.as_str(), t.tool.as_ref())),
        );
        Ok(crate::toolset::ExposedTool {
            exposed_name: CODE_TOOL_NAME.to_owned(),
            server_id: LIBRARY_SERVER.to_owned(),
            tool: Arc::new(tool),
        })
    }

    /// Whether `call` is the model's call to the code tool (code mode on).
    #[cfg(feature = "code-mode")]
    pub(super) fn is_program(&self, call: &crate::calls::ToolCall) -> bool {
        self.code_mode.is_some()
            && call.server_id == LIBRARY_SERVER
            && call.tool == CODE_TOOL_NAME
            && call.caller.is_model()
    }

    /// The fields the servers left out of their answers so far, read with
    /// the official MCP SDKs' defaults: one entry per server and field, in
    /// the source's order (see [`Server::defaulted`]).
    pub fn defaulted(&self) -> Vec<crate::listing::Defaulted> {
        let mut all = Vec::new();
        for (id, server) in &self.servers {
            for mut field in server.defaulted() {
                field.server_id.clone_from(id);
                all.push(field);
            }
        }
        all
    }

    /// The toolset for a model: the cached one, with every server whose
    /// tools changed (it sent `notifications/tools/list_changed`) or whose
    /// list's `ttlMs` ran out listed again; the first time, every server.
    ///
    /// A server that gave no `ttlMs` (an MCP revision before 2026-07-28) is
    /// listed again only when it announces a change, or on
    /// [`refresh`](Self::refresh); `ttlMs: 0` lists it again every time.
    ///
    /// # Errors
    ///
    /// As [`refresh`](Self::refresh).
    pub async fn toolset(&self) -> Result<ToolSet> {
        self.cache.toolset(&self.servers, &self.naming).await
    }

    /// Lists every server's tools again (concurrently) and caches the new
    /// toolset. A server that fails to list is reported in the toolset's
    /// report and contributes no tool.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) if the filters are invalid.
    pub async fn refresh(&self) -> Result<ToolSet> {
        self.cache.refresh(&self.servers, &self.naming).await
    }

    /// Who may reuse this source's listings, as the servers' last tool lists
    /// said (`cacheScope`): `Private` if any server's is private, `Public` if
    /// every server's is public, `None` when a server gave no scope or was
    /// not listed yet. A source keeps its lists for its own connections (one
    /// authorization context each); share a [`Listing`] across users only
    /// when this is `Public`.
    pub fn cache_scope(&self) -> Option<CacheScope> {
        self.cache.scope(&self.servers)
    }

    /// Reads a resource of the server `server_id` (`resources/read`), for
    /// the application: the `ui://` interface an MCP Apps tool names
    /// ([`CallRecord::ui_resource`](crate::exec::CallRecord::ui_resource)),
    /// for a host to render. The model does not call this.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) for a server the source does not hold; the
    /// server's error otherwise ([`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) for one that
    /// serves no resources).
    pub async fn read_resource(&self, server_id: &str, uri: &str) -> Result<ReadResourceResult> {
        self.held(server_id)?.read_resource(uri).await
    }

    /// The skills of every server (fresh from their `skills/list`), for the
    /// application; those the model is offered are the servers'
    /// [`SourceBuilder::skills`] opens. Servers that do not declare the
    /// Skills extension list none.
    pub async fn list_skills(&self) -> SkillList {
        let servers = self
            .servers
            .iter()
            .map(|(id, server)| (id.as_str(), server.as_ref() as &dyn Server));
        self.catalogs.held_skills.list(servers).await
    }

    /// Loads skill `name` of `server_id`: reads its `SKILL.md`, verified
    /// against its manifest and its listed frontmatter (see
    /// [`skills`](crate::exec::skills)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidResult`](crate::ErrorKind::InvalidResult) when it fails verification;
    /// [`ErrorKind::UnknownTool`](crate::ErrorKind::UnknownTool) when the server lists no such skill;
    /// [`ErrorKind::Denied`](crate::ErrorKind::Denied) when its entry was refused; the server's error.
    pub async fn load_skill(&self, server_id: &str, name: &str) -> Result<LoadedSkill> {
        let server = self.held(server_id)?;
        self.catalogs
            .held_skills
            .load(server_id, server.as_ref(), name)
            .await
    }

    /// Reads `file` (a path in the skill, or a URI) of skill `name` of
    /// `server_id`, verified against its manifest entry; the skill is
    /// loaded first when it is not.
    ///
    /// # Errors
    ///
    /// As [`load_skill`](Self::load_skill), and [`ErrorKind::Denied`](crate::ErrorKind::Denied) for a
    /// file outside the skill's manifest.
    pub async fn read_skill_file(
        &self,
        server_id: &str,
        name: &str,
        file: &str,
    ) -> Result<crate::mcp::ResourceContents> {
        let server = self.held(server_id)?;
        let (_, contents) = self
            .catalogs
            .held_skills
            .read_file(server_id, server.as_ref(), name, file)
            .await?;
        Ok(contents)
    }

    /// Every entry of a server's `catalog` (its resources, resource
    /// templates or prompts), following the server's cursors, each as the
    /// server sent it.
    ///
    /// # Errors
    ///
    /// As [`read_resource`](Self::read_resource); [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable)
    /// for a server that paginates without end or repeats a cursor.
    pub async fn list_catalog(&self, server_id: &str, catalog: Catalog) -> Result<Vec<Object>> {
        list_whole_catalog(self.held(server_id)?.as_ref(), catalog)
            .await
            .map_err(|e| {
                let message = format!("server `{server_id}`: {}", e.message());
                e.with_message(message)
            })
    }

    /// A server's prompt `name` with `arguments` (`prompts/get`).
    ///
    /// # Errors
    ///
    /// As [`read_resource`](Self::read_resource).
    pub async fn get_prompt(
        &self,
        server_id: &str,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<GetPromptResult> {
        self.held(server_id)?.get_prompt(name, arguments).await
    }

    /// The source's server `server_id`.
    fn held(&self, server_id: &str) -> Result<&Arc<dyn Server>> {
        self.servers
            .iter()
            .find(|(id, _)| id == server_id)
            .map(|(_, server)| server)
            .ok_or_else(|| Error::input(format!("no server `{server_id}` in this source")))
    }

    /// Whether a call to `server_id`'s `tool` runs alone on its server
    /// ([`SourceBuilder::run_alone`](crate::exec::SourceBuilder::run_alone)).
    pub(super) fn runs_alone(&self, server_id: &str, tool: &str) -> bool {
        if self.alone.is_empty() {
            return false;
        }
        let name = format!("{server_id}/{tool}");
        self.alone.iter().any(|glob| glob.is_match(&name))
    }

    /// The id `id` as the source shares it.
    pub(super) fn server_name(&self, id: &str) -> Arc<str> {
        if id == LIBRARY_SERVER {
            return self.library_name.clone();
        }
        self.names
            .iter()
            .find(|name| ***name == *id)
            .cloned()
            .unwrap_or_else(|| Arc::from(id))
    }

    pub(super) fn server(&self, id: &str) -> Option<&Arc<dyn Server>> {
        if id == LIBRARY_SERVER {
            return Some(&self.library);
        }
        self.servers
            .iter()
            .find(|(s, _)| s == id)
            .map(|(_, server)| server)
    }

    /// Where each server is (up, being started again, down with the last
    /// error and since when), in the source's order.
    pub fn server_states(&self) -> Vec<(String, ServerState)> {
        self.servers
            .iter()
            .map(|(id, server)| (id.clone(), server.state()))
            .collect()
    }

    /// Closes every server's connection, all at once ([`Server::close`]):
    /// what is owed to each (the cancel notices of calls cut off by a
    /// timeout or an [`Interrupt`](crate::exec::Interrupt)) goes out first,
    /// and a server the source spawned is asked to exit. Call it before the
    /// process ends: a notice still on its way when the process exits never
    /// reaches its server.
    pub async fn close(&self) {
        futures_util::future::join_all(self.servers.iter().map(|(_, server)| server.close())).await;
    }

    /// The handlers that answer what servers ask.
    pub fn handlers(&self) -> &Handlers {
        &self.governor.handlers
    }

    /// Whether an approver is configured.
    pub(super) fn has_approver(&self) -> bool {
        self.governor.approver.is_some()
    }

    pub(super) async fn approve(&self, request: ApprovalRequest) -> Approval {
        match &self.governor.approver {
            Some(approver) => approver(request).await,
            None => {
                Approval::Deny("this call needs approval, and no approver is configured".into())
            }
        }
    }
}

/// Builds a [`Source`]; see [`Source::hub`] and [`Source::client`].
pub struct SourceBuilder {
    servers: Vec<(String, Arc<dyn Server>)>,
    naming: ToolSetBuilder,
    policy: Option<Policy>,
    approver: Option<Approver>,
    handlers: Option<Handlers>,
    hooks: Option<Arc<dyn Hooks>>,
    validate: bool,
    alone: Vec<String>,
    resources: Vec<String>,
    prompts: Vec<String>,
    skills: Vec<String>,
    bindings: Vec<Binding>,
    code_mode: Option<CodeMode>,
}

impl SourceBuilder {
    fn new(mode: Mode) -> Self {
        SourceBuilder {
            servers: Vec::new(),
            naming: match mode {
                Mode::Hub => ToolSet::hub(),
                Mode::Client => ToolSet::client(),
            },
            policy: None,
            approver: None,
            handlers: None,
            hooks: None,
            validate: false,
            alone: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            skills: Vec::new(),
            bindings: Vec::new(),
            code_mode: None,
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
        self.naming = self.naming.prefix(prefix);
        self
    }

    /// Offers only tools whose `server/tool` matches (see [`ToolSetBuilder::allow`](crate::toolset::ToolSetBuilder::allow)).
    pub fn allow_tools(mut self, glob: impl Into<String>) -> Self {
        self.naming = self.naming.allow(glob);
        self
    }

    /// Never offers tools whose `server/tool` matches.
    pub fn deny_tools(mut self, glob: impl Into<String>) -> Self {
        self.naming = self.naming.deny(glob);
        self
    }

    /// Leaves out the tools whose input schema holds a name or a value
    /// with an invisible or control character (see
    /// [`ToolSetBuilder::refuse_hidden_characters`](crate::toolset::ToolSetBuilder::refuse_hidden_characters)).
    pub fn refuse_hidden_characters(mut self, on: bool) -> Self {
        self.naming = self.naming.refuse_hidden_characters(on);
        self
    }

    /// The policy every call goes through. A rule that matches none of the
    /// tools the servers list is reported when the toolset is built
    /// ([`ToolSetReport::unmatched_rules`](crate::toolset::ToolSetReport::unmatched_rules)).
    /// An `allow` rule added before an `ask` rule that matches some of the
    /// same tools ([`Policy::order_changes`]) is logged as a warning here.
    pub fn policy(mut self, policy: Policy) -> Self {
        for change in policy.order_changes() {
            tracing::warn!(allow = %change.allow, ask = %change.ask, "{change}");
        }
        self.policy = Some(policy);
        self
    }

    /// Binds an argument of the tools `binding` names to a value of the
    /// application's (a literal, an environment variable read now, or a
    /// value each turn supplies: [`ExecOptions::bound_value`](crate::ExecOptions::bound_value)).
    /// The model is not shown it: it is removed from the tools' schemas in
    /// every listing ([`ToolSetBuilder::bind`](crate::toolset::ToolSetBuilder::bind)).
    /// A call in which it is written (by the model, or by a resumed turn's
    /// state document) is refused with an error naming it, and not sent;
    /// otherwise the value is written before the arguments are checked
    /// against the tool's whole schema and sent, over whatever a `before`
    /// hook wrote there. The call as the turn records it (its record, its
    /// span, a suspended turn's document) holds what the model wrote, not
    /// the value. Bindings apply to the application's calls
    /// ([`Source::call_app_tool`]) too, and never to the library's own
    /// tools. For each tool and pointer, the first binding given that
    /// names it applies.
    pub fn bind(mut self, binding: Binding) -> Self {
        self.naming = self.naming.bind(binding.clone());
        self.bindings.push(binding);
        self
    }

    /// Turns code mode on ([`crate::code`]): the source's listings offer
    /// the code tool, through which the model writes a program that calls
    /// the tools the policy's callers rule opens to code
    /// ([`Policy::programmatic`]), on any provider. Each call a program
    /// makes goes through the same pipeline as the model's calls; `mode`
    /// holds the limits each program runs within. Listing fails while no
    /// tool is open to code.
    #[cfg(feature = "code-mode")]
    #[cfg_attr(docsrs, doc(cfg(feature = "code-mode")))]
    pub fn code_mode(mut self, mode: CodeMode) -> Self {
        self.code_mode = Some(mode);
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

    /// What the source answers when servers ask (elicitation, sampling,
    /// roots); see [`Handlers`]. Without them, the source answers with its
    /// servers' own ([`Server::handlers`]: an [`McpClient`](crate::McpClient)'s
    /// are those it declared when it started), the first server's that has any.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = Some(handlers);
        self
    }

    /// Sets the input handler of the source's [`handlers`](Self::handlers):
    /// it answers the questions of tools that ask for input before they
    /// complete (MCP 2026-07-28 `input_required`, and elicitations a server
    /// sends during a call): the runner calls the tool again with the answers,
    /// for as many rounds as the server asks up to
    /// [`ExecOptions::max_input_rounds`](crate::ExecOptions::max_input_rounds).
    /// The policy and the approver decided the call once; each round's server
    /// time is bounded by the call timeout and each answer by
    /// [`ExecOptions::input_timeout`](crate::ExecOptions::input_timeout).
    /// Without a handler, a call whose tool asks for input is answered with an
    /// error naming what it asked for.
    ///
    /// For an MCP client whose revision declares capabilities when it starts
    /// (up to 2025-11-25), give the handler to the client too: see
    /// [`Handlers`].
    pub fn input_handler<F>(mut self, handler: F) -> Self
    where
        F: Fn(InputQuestions) -> BoxFuture<'static, InputAnswer> + Send + Sync + 'static,
    {
        let handlers = self.handlers.take().unwrap_or_default();
        self.handlers = Some(handlers.input(handler));
        self
    }

    /// Code run around every call.
    pub fn hooks(mut self, hooks: impl Hooks + 'static) -> Self {
        self.hooks = Some(Arc::new(hooks));
        self
    }

    /// Validates arguments against the tool's `inputSchema` before sending
    /// (off by default); an invalid call is answered with an error and not sent.
    pub fn validate_arguments(mut self) -> Self {
        self.validate = true;
        self
    }

    /// Calls to tools whose `server/tool` matches `glob` (a glob without `/`
    /// names the tool on any server) run alone on their server: each waits
    /// for the calls in flight there to end, and the calls after it wait for
    /// it, in this turn and in any other of this source; calls to other
    /// servers go on meanwhile.
    ///
    /// Name here the tools whose questions the handlers answer by call
    /// (elicitation, sampling). A server on a revision up to 2025-11-25 asks
    /// its questions as requests of its own; over stdio nothing says which
    /// call a request belongs to, so with several calls in flight it is
    /// [`Attribution::Ambiguous`](crate::exec::Attribution::Ambiguous). A
    /// call that runs alone is the only one its question can belong to.
    /// (Over streamable HTTP a request on a call's own stream, and on any
    /// transport one tied to a call's task, is attributed by that.)
    pub fn run_alone(mut self, glob: impl Into<String>) -> Self {
        self.alone.push(glob.into());
        self
    }

    /// Opens the resources of the servers whose id matches `glob` (`*`: every
    /// server) to the model: listings then offer the library's
    /// `list_resources` and `read_resource` tools, answered by the library,
    /// which asks the servers, through the governed pipeline. The policy
    /// also decides on `{server}/resources/list` and
    /// `{server}/resources/read` (names no tool can have): a server it does
    /// not allow them for is never listed or read. So do the toolset's
    /// filters ([`allow_tools`](Self::allow_tools),
    /// [`deny_tools`](Self::deny_tools)): `deny_tools("notes/*")` closes
    /// `notes`' resources, prompts and skills as well as its tools. What a resource holds
    /// goes to the model as a tool result does, media included, under the
    /// same budgets. See [`catalogs`](crate::exec::catalogs).
    pub fn resources(mut self, glob: impl Into<String>) -> Self {
        self.resources.push(glob.into());
        self
    }

    /// Opens the prompts of the servers whose id matches `glob` to the
    /// model, as [`resources`](Self::resources) does resources: the
    /// `list_prompts` and `get_prompt` tools, and the policy names
    /// `{server}/prompts/list` and `{server}/prompts/get`.
    pub fn prompts(mut self, glob: impl Into<String>) -> Self {
        self.prompts.push(glob.into());
        self
    }

    /// Opens the skills (the MCP Skills extension) of the servers whose id
    /// matches `glob` to the model: listings then offer the library's
    /// `load_skill` tool, whose description lists each skill's name and
    /// description (the servers' `skills/list`, asked again at every
    /// listing); the model loads a skill by name, and then reads the files
    /// its instructions name. Nothing is read before the model asks for
    /// it, every file is verified against its skill's manifest, and a file
    /// outside the manifest is refused (see [`skills`](crate::exec::skills)).
    /// The policy names are `{server}/skills/list` and `{server}/skills/load`.
    /// When no open server lists a skill, the tool is not offered.
    pub fn skills(mut self, glob: impl Into<String>) -> Self {
        self.skills.push(glob.into());
        self
    }

    /// Builds the source.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when a client has other than one server, a server id
    /// is empty or repeated, or a filter or [`run_alone`](Self::run_alone)
    /// glob is invalid, or a [bound](Self::bind) environment variable is
    /// not set.
    pub fn build(mut self) -> Result<Source> {
        let mode = self.naming.mode();
        if mode == Mode::Client && self.servers.len() != 1 {
            return Err(Error::input(
                "a client has exactly one server; use a hub for several",
            ));
        }
        // The filters and server ids are checked now, not at the first listing.
        let mut probe = self.naming.clone();
        for (id, _) in &self.servers {
            probe = probe.server(id, Vec::new());
        }
        probe.build()?;
        if self.servers.iter().any(|(id, _)| id == LIBRARY_SERVER) {
            return Err(Error::input(format!(
                "the server id `{LIBRARY_SERVER}` is the library's own, for its read tool: name the server otherwise"
            )));
        }
        let alone = compile_alone(&self.alone)?;
        let bindings = Bindings::compile(&self.bindings, true)?;
        let handlers = self.answering_handlers();
        let filter = self.naming.filter()?;
        self.warn_closed_catalogues(&filter);
        let policy = match (mode, self.policy) {
            (Mode::Hub, None) => Some(Policy::allow_all()),
            (_, policy) => policy,
        };
        let governor = Arc::new(Governor {
            handlers,
            approver: self.approver,
        });
        let kept = Arc::new(KeptResults::default());
        let catalogs = Arc::new(Catalogs {
            servers: self.servers.clone(),
            policy: policy.clone(),
            resources: compile_server_globs(&self.resources)?,
            prompts: compile_server_globs(&self.prompts)?,
            skills: compile_server_globs(&self.skills)?,
            filter,
            held_skills: Skills::default(),
        });
        let names: Vec<Arc<str>> = self
            .servers
            .iter()
            .map(|(id, _)| Arc::from(&**id))
            .collect();
        for ((_, server), name) in self.servers.iter().zip(&names) {
            server.attach(Answerer::for_server(governor.clone(), name.clone()));
        }
        // What the policy can never run is not offered.
        let mut naming = match &policy {
            Some(policy) => {
                let policy = policy.clone();
                self.naming
                    .offered_only(move |server, tool| policy.never_offered(server, tool))
            }
            None => self.naming,
        };
        for (rule, pattern) in policy.iter().flat_map(Policy::rules) {
            naming = naming.checked_rule(rule, pattern);
        }
        Ok(Source {
            servers: self.servers,
            names,
            library_name: Arc::from(LIBRARY_SERVER),
            naming,
            policy,
            governor,
            rounds: Rounds::new(self.hooks),
            validate: self.validate,
            cache: ToolCache::default(),
            alone,
            gates: Gates::default(),
            library: Arc::new(library_server(&kept, &catalogs)),
            kept,
            catalogs,
            bindings,
            code_mode: self.code_mode,
        })
    }

    /// The handlers the source answers with: its own, or (given none) its
    /// first server's that declare something. A server whose session
    /// declared other capabilities is logged.
    fn answering_handlers(&mut self) -> Handlers {
        let declares = |h: &Handlers| h.features() != ClientFeatures::default();
        let handlers = self
            .handlers
            .take()
            .or_else(|| {
                self.servers
                    .iter()
                    .find_map(|(_, server)| server.handlers().filter(declares))
            })
            .unwrap_or_default();
        let features = handlers.features();
        for (id, server) in &self.servers {
            if let Some(declared) = server.handlers().map(|h| h.features())
                && declared != features
            {
                tracing::warn!(server = %id, declared = ?declared, answered = ?features,
                    "the server's session declared other capabilities than this source's handlers answer");
            }
        }
        handlers
    }

    /// Warns of catalogues opened by globs that the toolset's filter closes
    /// on every server.
    fn warn_closed_catalogues(&self, filter: &crate::toolset::Filter) {
        for (kind, globs, actions) in [
            (
                "resources",
                &self.resources,
                ["resources/list", "resources/read"],
            ),
            ("prompts", &self.prompts, ["prompts/list", "prompts/get"]),
            ("skills", &self.skills, ["skills/list", "skills/load"]),
        ] {
            let open = self
                .servers
                .iter()
                .any(|(id, _)| actions.iter().any(|a| filter.admits(id, a)));
            if !globs.is_empty() && !open {
                tracing::warn!(
                    catalogue = kind,
                    "the toolset's allow and deny globs close every server's {kind}: allow `SERVER/{kind}/*` to open them"
                );
            }
        }
    }
}

/// The library's own tools: the read tool, answered from `kept`.
fn library_server(kept: &Arc<KeptResults>, catalogs: &Arc<Catalogs>) -> InProcessServer {
    let kept = Arc::clone(kept);
    let mut server = InProcessServer::new().tool(read_tool(), move |arguments, context| {
        let answer = kept.read(&arguments, context.principal.as_deref());
        async move { answer }
    });
    for tool in catalogs.tools() {
        let catalogs = Arc::clone(catalogs);
        let name = tool.name.clone();
        server = server.tool(tool, move |arguments, context| {
            let catalogs = Arc::clone(&catalogs);
            let name = name.clone();
            async move { catalogs.answer(&name, &arguments, &context.taint).await }
        });
    }
    server
}

/// Globs over server ids, compiled.
fn compile_server_globs(globs: &[String]) -> Result<Vec<globset::GlobMatcher>> {
    globs
        .iter()
        .map(|g| crate::toolset::compile_glob(g))
        .collect()
}

/// The [`SourceBuilder::run_alone`] globs, compiled.
fn compile_alone(globs: &[String]) -> Result<Vec<globset::GlobMatcher>> {
    globs
        .iter()
        .map(|glob| {
            compile_tool_glob(glob).map_err(|e| {
                let message = format!("run_alone: {}", e.message());
                e.with_message(message)
            })
        })
        .collect()
}
