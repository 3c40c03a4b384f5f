//! The toolset: the tools a model is offered, under names every provider accepts.

use std::collections::HashSet;
use std::sync::Arc;

use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::Serialize;

pub use crate::describe::{MAX_DESCRIPTION_BYTES, escape_visible, sanitize_description};
use crate::error::{Error, Result};
use crate::json::{MAX_NESTING, deeper_than, dismantle};
use crate::mcp::Tool;

mod bind;
mod hygiene;
mod memo;
mod rules;
pub use bind::{Binding, BoundUndeclared, BoundValue};
pub(crate) use bind::{Bindings, Bound, write_bound};
pub use hygiene::{HiddenCharacters, HiddenIn};
pub(crate) use memo::{Kept, Memo};
pub use rules::UnmatchedRule;

/// The longest exposed name.
pub(crate) const MAX_NAME_LEN: usize = 64;
const HASH_LEN: usize = 8;

/// Whether `name` satisfies the exposed-name rule `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
#[cfg(test)]
pub(crate) fn is_valid_exposed_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= MAX_NAME_LEN
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// How tools are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One server; tools keep their own names.
    Client,
    /// Several servers; tools are named `server__tool`.
    Hub,
}

/// One tool of a [`ToolSet`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExposedTool {
    /// The name the model sees and calls.
    pub exposed_name: String,
    /// The server the tool belongs to.
    pub server_id: String,
    /// The tool as its server listed it (its `name` is the MCP name), with
    /// the descriptions, titles and comments inside its input schema
    /// cleaned of invisible characters (its own description and title are
    /// cleaned where a listing sends them) and the arguments the application
    /// binds removed from it ([`ToolSetBuilder::bind`]); shared with the
    /// lists it came from rather than copied, unless one of these changed it.
    pub tool: Arc<Tool>,
}

/// Why an exposed name differs from the tool's natural name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum RenameReason {
    /// Characters outside `A-Z a-z 0-9 _ -` were replaced with `_`.
    InvalidCharacters,
    /// The name did not start with a letter or `_`, so `_` was put before it.
    LeadingCharacter,
    /// The name was over 64 characters and was cut, with a hash suffix.
    Truncated,
    /// The name was already taken by an earlier tool, so a hash suffix was added.
    Collision {
        /// The earlier tool's server.
        with_server: String,
        /// The earlier tool's MCP name.
        with_tool: String,
    },
}

/// A tool whose exposed name is not its natural name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rename {
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The name it is exposed under.
    pub exposed_name: String,
    /// Why, in the order applied.
    pub reasons: Vec<RenameReason>,
}

/// Why a tool was left out of the toolset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DropReason {
    /// The tool matched no `allow` pattern.
    NotAllowed,
    /// The tool matched a `deny` pattern.
    Denied {
        /// The pattern.
        pattern: String,
    },
    /// The server listed an earlier tool with the same MCP name.
    DuplicateName,
    /// The tool's MCP name is empty.
    EmptyName,
    /// The tool's schemas or other fields nest arrays and objects deeper than
    /// 256 levels (text parsed by
    /// `serde_json` never does; a tool built in memory can).
    TooDeep,
    /// The tool runs only as a task (`execution.taskSupport: "required"`,
    /// MCP 2025-11-25) and its server cannot run tasks
    /// ([`Server::supports_tasks`](crate::Server::supports_tasks)).
    NeedsTasks,
    /// The source's [`Policy`](crate::Policy) denies every call of it,
    /// whatever the conversation has seen: no `allow` or `ask` rule can
    /// match it ([`Policy::may_run`](crate::Policy::may_run)), so the model
    /// is not offered it. It stays callable by the application, and the
    /// policy judges such a call as any other.
    DeniedByPolicy {
        /// The `deny` rule that denies it; `None` when it is the policy's
        /// default (no rule matches it).
        rule: Option<String>,
    },
    /// The tool is for the app's own interface, not the model (MCP Apps:
    /// its `_meta.ui.visibility` leaves out `"model"`; see
    /// [`Tool::visible_to_model`](crate::Tool::visible_to_model)). It stays
    /// callable by the application ([`ToolSet::app_tool`],
    /// [`Source::call_app_tool`](crate::Source::call_app_tool)).
    AppOnly,
    /// A string of its input schema that the model must send back exactly
    /// (or any other that is not prose) holds an invisible or control
    /// character, and the application refuses such tools
    /// ([`ToolSetBuilder::refuse_hidden_characters`]).
    HiddenCharacters {
        /// The first such string, as a JSON pointer into the input schema.
        path: String,
        /// What the string is.
        kind: HiddenIn,
    },
    /// The server's `tools/list` answer held the tool in a form that could
    /// not be read (nested too deep, not UTF-8); the rest of the answer was
    /// read.
    Unreadable {
        /// Why.
        why: String,
    },
}

/// A tool left out of the toolset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// Why.
    #[serde(flatten)]
    pub reason: DropReason,
}

/// A server whose tools could not be listed; none of its tools are in the toolset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedServer {
    /// The server.
    pub server_id: String,
    /// What went wrong.
    pub error: String,
}

/// Everything the toolset changed or left out, with reasons.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolSetReport {
    /// Tools exposed under a name other than their natural one.
    pub renamed: Vec<Rename>,
    /// Tools left out.
    pub dropped: Vec<Dropped>,
    /// Servers whose listing failed.
    pub failed_servers: Vec<FailedServer>,
    /// Strings of the tools' input schemas that hold invisible or control
    /// characters the library cannot remove (names and values the model
    /// sends back); the prose (descriptions, titles) is cleaned instead.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<HiddenCharacters>,
    /// Filter and policy rules that match none of the tools the servers
    /// listed, with the tools they may have meant.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmatched_rules: Vec<UnmatchedRule>,
    /// Bindings whose pointer names a property the input schema of a tool
    /// they bind does not declare ([`ToolSetBuilder::bind`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bound_undeclared: Vec<BoundUndeclared>,
}

/// The tools offered to a model, with their exposed names.
///
/// Built from `(server id, tools)` pairs by [`ToolSet::hub`] or
/// [`ToolSet::client`]; every tool gets an *exposed name* that satisfies
/// every built-in provider at once, `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, and
/// resolves back to its server and MCP name. Immutable once built, and cheap
/// to clone (the tools are shared), so a [`Listing`](crate::Listing) keeps
/// the toolset it was made from.
///
/// Listings keep with the toolset what they made of its tools that no
/// option changes, shared by its clones: each tool's schema converted by a
/// spec's schema and strict rules (one entry per set of rules the toolset
/// was listed with, at most 16, an entry dropped with its rules), its cleaned
/// description and title, and the toolset with the library's read tool
/// added ([`ListOptions::read_on`](crate::ListOptions::read_on)). Build the
/// toolset once and list it every turn: from the third listing with the
/// same rules on, schemas are copied, not converted (see
/// [`Provider::list_tools`](crate::Provider::list_tools)).
///
/// A [`ToolSet`] is built from `(server id, tools)` pairs. Each tool gets an
/// *exposed name* that satisfies every built-in provider at once,
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, and resolves back to its server and MCP
/// name. The toolset is the single source of truth for what a model may see and
/// call: listing emits only its tools (PO-7) and calls resolve against it only
/// (HB-2).
///
/// * **Client mode** (one server): tools keep their own names, with an optional prefix.
/// * **Hub mode** (any number of servers): `server__tool`, with an optional prefix.
///
/// Names are derived deterministically: invalid characters become `_`, a name
/// that does not start with a letter or `_` gets a leading `_`, a name over 64
/// characters is cut to 55 and given `_` and an 8-digit hash of its server and
/// MCP name, and a name already taken gets the same hash suffix. Servers keep
/// the order given and tools the order listed, so the tool list is a stable
/// prompt prefix between turns. Every rename, drop and failed server is in the
/// [`ToolSetReport`].
///
/// # Limits
///
/// A tool whose schemas or other JSON fields nest arrays and objects deeper
/// than 256 levels is dropped ([`DropReason::TooDeep`]) and
/// taken apart without recursion: listing it would copy it recursively.
/// Text parsed by serde_json is at most 128 levels deep, so only tools built
/// in memory can reach this.
///
/// ```
/// use mcp_adapters::{Tool, ToolSet};
/// use serde_json::json;
///
/// let tools = vec![Tool::new("files.read", "Reads a file", json!({"type": "object"}))];
/// let toolset = ToolSet::hub().server("fs", tools).build()?;
/// let tool = toolset.resolve("fs__files_read").unwrap();
/// assert_eq!((tool.server_id.as_str(), tool.tool.name.as_str()), ("fs", "files.read"));
/// assert_eq!(toolset.exposed_name("fs", "files.read"), Some("fs__files_read"));
/// # Ok::<(), mcp_adapters::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone, Default)]
struct Inner {
    tools: Vec<ExposedTool>,
    /// Looked up for every call, with foldhash (seeded per process, so a
    /// server's tool names cannot be chosen to collide).
    by_exposed: foldhash::HashMap<String, usize>,
    by_mcp: foldhash::HashMap<(String, String), usize>,
    report: ToolSetReport,
    /// The start of each failed server's exposed names (every name, for a
    /// client's one server), to tell a call to its tools from an unknown one.
    failed_prefixes: Vec<(String, usize)>,
    /// The tools held back from the model (for the app's interface only,
    /// or by the policy), by server and MCP name: callable by the application.
    app_only: Vec<ExposedTool>,
    /// What the listing layer keeps of these tools (converted schemas,
    /// cleaned descriptions); a clone starts empty.
    memo: Memo,
    /// The tools whose bound arguments were removed from their schema, by
    /// position, as they were before: their arguments are checked against it.
    unbound: foldhash::HashMap<usize, Arc<Tool>>,
    /// The arguments the application binds: a call that writes one is
    /// rejected as it is read.
    bindings: Arc<Bindings>,
}

impl ToolSet {
    /// A builder for a hub toolset (`server__tool` names).
    pub fn hub() -> ToolSetBuilder {
        ToolSetBuilder::new(Mode::Hub)
    }

    /// A builder for a client toolset (one server, its own names).
    pub fn client() -> ToolSetBuilder {
        ToolSetBuilder::new(Mode::Client)
    }

    /// The tools, in order: servers as given, tools as listed.
    pub fn tools(&self) -> &[ExposedTool] {
        &self.inner.tools
    }

    /// This toolset with `tool` added after the others: a tool the library
    /// serves itself, whose name the library's own texts use (a notice
    /// naming `read_result`). A server's tool already exposed under that
    /// name gives it up: it is exposed with a hash suffix, as the later of
    /// two colliding tools is, and the rename is reported
    /// ([`RenameReason::Collision`] with the library's tool).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the library's tool is already there.
    pub(crate) fn with_tool(&self, tool: ExposedTool) -> Result<ToolSet> {
        let mut inner = Inner::clone(&self.inner);
        if let Some(&taken) = inner.by_exposed.get(&tool.exposed_name) {
            let holder = &inner.tools[taken];
            if holder.server_id == tool.server_id {
                return Err(Error::input(format!(
                    "the library's tool `{}` is in the toolset already",
                    tool.exposed_name
                )));
            }
            inner.give_up_name(taken, &tool);
        }
        let i = inner.tools.len();
        inner.by_exposed.insert(tool.exposed_name.clone(), i);
        inner
            .by_mcp
            .insert((tool.server_id.clone(), tool.tool.name.clone()), i);
        inner.tools.push(tool);
        Ok(ToolSet {
            inner: Arc::new(inner),
        })
    }

    /// The tool exposed as `exposed_name`.
    pub fn resolve(&self, exposed_name: &str) -> Option<&ExposedTool> {
        let inner = &self.inner;
        inner.by_exposed.get(exposed_name).map(|&i| &inner.tools[i])
    }

    /// The server that did not start (or list its tools) whose tool the
    /// model called as `exposed_name`, when the name says so: a client's one
    /// server, or the hub server whose `server__` the name starts with.
    pub fn failed_server_of(&self, exposed_name: &str) -> Option<&FailedServer> {
        let inner = &self.inner;
        inner
            .failed_prefixes
            .iter()
            .find(|(prefix, _)| exposed_name.starts_with(prefix.as_str()))
            .map(|&(_, i)| &inner.report.failed_servers[i])
    }

    /// A tool the application may call (not the model: see
    /// [`resolve`](Self::resolve) for that): one offered to the model, or one
    /// held back from it, for the app's interface only ([`DropReason::AppOnly`])
    /// or by the source's policy ([`DropReason::DeniedByPolicy`]), whose
    /// `exposed_name` is `server/tool`. A tool the filters left out is
    /// neither.
    pub fn app_tool(&self, server_id: &str, mcp_name: &str) -> Option<&ExposedTool> {
        let inner = &self.inner;
        inner
            .by_mcp
            .get(&(server_id.to_owned(), mcp_name.to_owned()))
            .map(|&i| &inner.tools[i])
            .or_else(|| {
                inner
                    .app_only
                    .iter()
                    .find(|t| t.server_id == server_id && t.tool.name == mcp_name)
            })
    }

    /// The exposed name of `server_id`'s tool `mcp_name`.
    pub fn exposed_name(&self, server_id: &str, mcp_name: &str) -> Option<&str> {
        let inner = &self.inner;
        inner
            .by_mcp
            .get(&(server_id.to_owned(), mcp_name.to_owned()))
            .map(|&i| inner.tools[i].exposed_name.as_str())
    }

    /// What was renamed or left out, and why.
    pub fn report(&self) -> &ToolSetReport {
        &self.inner.report
    }

    /// What is kept with this toolset for the listings made from it.
    pub(crate) fn memo(&self) -> &Memo {
        &self.inner.memo
    }

    /// The position in [`tools`](Self::tools) of the tool exposed as `exposed_name`.
    pub(crate) fn position(&self, exposed_name: &str) -> Option<usize> {
        self.inner.by_exposed.get(exposed_name).copied()
    }

    /// The position of `tool` in [`tools`](Self::tools), when it is one of
    /// them (the very value, not an equal one).
    pub(crate) fn index_of(&self, tool: &ExposedTool) -> Option<usize> {
        let tools = &self.inner.tools;
        let size = std::mem::size_of::<ExposedTool>();
        let offset = (tool as *const ExposedTool as usize).checked_sub(tools.as_ptr() as usize)?;
        let index = offset / size;
        (offset % size == 0 && index < tools.len()).then_some(index)
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.inner.tools.len()
    }

    /// Whether the toolset holds no tool.
    pub fn is_empty(&self) -> bool {
        self.inner.tools.is_empty()
    }
}

/// Builds a [`ToolSet`]; see [`ToolSet::hub`] and [`ToolSet::client`].
#[derive(Debug, Clone)]
pub struct ToolSetBuilder {
    mode: Mode,
    prefix: String,
    allow: Vec<String>,
    deny: Vec<String>,
    servers: Vec<(String, Vec<Arc<Tool>>)>,
    failed: Vec<FailedServer>,
    without_tasks: HashSet<String>,
    refuse_hidden: bool,
    /// Other rules over `server/tool` (a policy's), checked as the filters are.
    checked: Vec<(String, String)>,
    /// Tools the servers' listings held that could not be read.
    unreadable: Vec<Dropped>,
    /// Which tools are kept from the model, and why (a source's policy).
    offered: Option<Offered>,
    /// The arguments the application fills, removed from the schemas.
    bindings: Vec<Binding>,
}

/// Says why a tool (`server id`, MCP name) is not offered to the model,
/// or `None` to offer it: a source's policy.
type Judge = dyn Fn(&str, &str) -> Option<DropReason> + Send + Sync;

/// A [`Judge`], shared by the builder's clones.
#[derive(Clone)]
pub(crate) struct Offered(Arc<Judge>);

impl std::fmt::Debug for Offered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Offered(..)")
    }
}

impl ToolSetBuilder {
    fn new(mode: Mode) -> Self {
        ToolSetBuilder {
            mode,
            prefix: String::new(),
            allow: Vec::new(),
            deny: Vec::new(),
            servers: Vec::new(),
            failed: Vec::new(),
            without_tasks: HashSet::new(),
            refuse_hidden: false,
            checked: Vec::new(),
            unreadable: Vec::new(),
            offered: None,
            bindings: Vec::new(),
        }
    }

    /// Leaves out of the model's tools those for which `offered` says why
    /// (they stay callable by the application, as the app's own tools are).
    pub(crate) fn offered_only(
        mut self,
        offered: impl Fn(&str, &str) -> Option<DropReason> + Send + Sync + 'static,
    ) -> Self {
        self.offered = Some(Offered(Arc::new(offered)));
        self
    }

    /// Leaves out every tool whose input schema holds a name or a value
    /// with an invisible or control character
    /// ([`DropReason::HiddenCharacters`]), where without it such a tool is
    /// offered and reported in [`ToolSetReport::hidden`]. Off by default.
    /// Descriptions and titles at any depth of the schema are cleaned
    /// either way.
    pub fn refuse_hidden_characters(mut self, on: bool) -> Self {
        self.refuse_hidden = on;
        self
    }

    /// Checks `pattern`, a rule over `server/tool` named `rule` (`policy
    /// deny`), against the listed tools as the filters are: one that
    /// matches none is reported in [`ToolSetReport::unmatched_rules`].
    pub(crate) fn checked_rule(
        mut self,
        rule: impl Into<String>,
        pattern: impl Into<String>,
    ) -> Self {
        self.checked.push((rule.into(), pattern.into()));
        self
    }

    /// How names are made.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The allow and deny globs, compiled.
    pub(crate) fn filter(&self) -> Result<Filter> {
        Filter::new(&self.allow, &self.deny)
    }

    /// Puts `prefix` before every exposed name (sanitized like the rest of the name).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Keeps only tools whose `server/tool` matches one of the `allow` globs
    /// (when any is given). `*` matches any run of characters, `/` included;
    /// a glob without `/` names a tool on any server (`read_*` is `*/read_*`).
    pub fn allow(mut self, pattern: impl Into<String>) -> Self {
        self.allow.push(pattern.into());
        self
    }

    /// Leaves out tools whose `server/tool` matches the glob; deny wins over allow.
    pub fn deny(mut self, pattern: impl Into<String>) -> Self {
        self.deny.push(pattern.into());
        self
    }

    /// Adds a server's listed tools.
    pub fn server(mut self, server_id: impl Into<String>, tools: Vec<Tool>) -> Self {
        self.servers
            .push((server_id.into(), tools.into_iter().map(Arc::new).collect()));
        self
    }

    /// Adds a server's listed tools, shared with the list that holds them
    /// (a source's cache): the toolset copies none.
    pub(crate) fn shared_server(
        mut self,
        server_id: impl Into<String>,
        tools: impl IntoIterator<Item = Arc<Tool>>,
    ) -> Self {
        self.servers
            .push((server_id.into(), tools.into_iter().collect()));
        self
    }

    /// Says that a server cannot run tasks: its tools that run only as tasks
    /// are left out ([`DropReason::NeedsTasks`]).
    pub fn without_tasks(mut self, server_id: impl Into<String>) -> Self {
        self.without_tasks.insert(server_id.into());
        self
    }

    /// Records a tool of `server_id` that its listing held but that could
    /// not be read ([`DropReason::Unreadable`]).
    pub fn unreadable(mut self, server_id: &str, tool: &str, why: &str) -> Self {
        self.unreadable.push(Dropped {
            server_id: server_id.to_owned(),
            tool: tool.to_owned(),
            reason: DropReason::Unreadable {
                why: why.to_owned(),
            },
        });
        self
    }

    /// Records a server whose listing failed: it contributes no tool.
    pub fn failed_server(mut self, server_id: impl Into<String>, error: impl Into<String>) -> Self {
        self.failed.push(FailedServer {
            server_id: server_id.into(),
            error: error.into(),
        });
        self
    }

    /// Builds the toolset.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when a glob is invalid, a server id is empty or given
    /// twice, or client mode is given more than one server.
    pub fn build(self) -> Result<ToolSet> {
        let filter = Filter::new(&self.allow, &self.deny)?;
        let bindings = Bindings::compile(&self.bindings, false)?;
        self.check_servers()?;
        let failed_prefixes = self
            .failed
            .iter()
            .enumerate()
            .map(|(i, failed)| {
                let natural = natural_name(self.mode, &self.prefix, &failed.server_id, "");
                match natural.is_empty() {
                    // A client's one server, without a prefix: every name.
                    true => (natural, i),
                    false => (sanitize(&natural, &mut Vec::new()), i),
                }
            })
            .collect();
        let mut set = Inner {
            report: ToolSetReport {
                failed_servers: self.failed,
                dropped: self.unreadable,
                ..Default::default()
            },
            failed_prefixes,
            bindings: Arc::clone(&bindings),
            ..Default::default()
        };
        let mut listed = rules::Listed::new(&self.allow, &self.deny, &self.checked);
        for (server_id, tools) in self.servers {
            let mut seen = HashSet::new();
            for tool in tools {
                listed.push(&server_id, &tool.name);
                let drop = |reason| Dropped {
                    server_id: server_id.clone(),
                    tool: tool.name.clone(),
                    reason,
                };
                if tool.name.is_empty() {
                    set.report.dropped.push(drop(DropReason::EmptyName));
                } else if too_deep(&tool) {
                    set.report.dropped.push(drop(DropReason::TooDeep));
                    // Held elsewhere too, it is dropped there.
                    if let Ok(tool) = Arc::try_unwrap(tool) {
                        dismantle_tool(tool);
                    }
                } else if !seen.insert(tool.name.clone()) {
                    set.report.dropped.push(drop(DropReason::DuplicateName));
                } else if tool.task_support() == Some("required")
                    && self.without_tasks.contains(&server_id)
                {
                    set.report.dropped.push(drop(DropReason::NeedsTasks));
                } else if let Some(reason) = filter.rejects(&server_id, &tool.name) {
                    set.report.dropped.push(drop(reason));
                } else if let Some(reason) = (!tool.visible_to_model())
                    .then_some(DropReason::AppOnly)
                    .or_else(|| {
                        let offered = self.offered.as_ref()?;
                        (offered.0)(&server_id, &tool.name)
                    })
                {
                    set.report.dropped.push(drop(reason));
                    set.app_only.push(ExposedTool {
                        exposed_name: format!("{server_id}/{}", tool.name),
                        server_id: server_id.clone(),
                        tool,
                    });
                } else {
                    let natural = natural_name(self.mode, &self.prefix, &server_id, &tool.name);
                    let at = set.tools.len();
                    set.offer(natural, server_id.clone(), tool, self.refuse_hidden);
                    set.unbind(at, &bindings);
                }
            }
        }
        set.check_rules(&listed)?;
        Ok(ToolSet {
            inner: Arc::new(set),
        })
    }

    fn check_servers(&self) -> Result<()> {
        if self.mode == Mode::Client && self.servers.len() + self.failed.len() > 1 {
            return Err(Error::input(
                "a client toolset holds one server; use a hub for several",
            ));
        }
        let mut ids = HashSet::new();
        let all = self
            .servers
            .iter()
            .map(|(id, _)| id)
            .chain(self.failed.iter().map(|f| &f.server_id));
        for id in all {
            if id.is_empty() {
                return Err(Error::input("a server id is empty"));
            }
            if !ids.insert(id) {
                return Err(Error::input(format!("server id `{id}` is given twice")));
            }
        }
        Ok(())
    }
}

impl Inner {
    /// Offers `tool` under `natural` once the prose of its schema is
    /// cleaned; a name or value with hidden characters is reported, or
    /// leaves the tool out when `refuse_hidden`.
    fn offer(
        &mut self,
        natural: String,
        server_id: String,
        mut tool: Arc<Tool>,
        refuse_hidden: bool,
    ) {
        // A schema with nothing to clean or report stays shared.
        let found = if hygiene::untouched(&tool.input_schema) {
            Vec::new()
        } else {
            hygiene::clean(&mut Arc::make_mut(&mut tool).input_schema)
        };
        if let Some(first) = found.first().filter(|_| refuse_hidden) {
            let (path, kind) = (first.path.clone(), first.kind);
            self.report.dropped.push(Dropped {
                server_id,
                tool: tool.name.clone(),
                reason: DropReason::HiddenCharacters { path, kind },
            });
            return;
        }
        for found in found {
            let hidden = found.named(&server_id, &tool.name);
            tracing::warn!(server = %hidden.server_id, tool = %hidden.tool,
                path = %hidden.path, kind = ?hidden.kind,
                "a tool's schema holds a name or value with hidden characters");
            self.report.hidden.push(hidden);
        }
        self.insert(natural, server_id, tool);
    }

    /// Reports the rules of `listed` that match no listed tool.
    fn check_rules(&mut self, listed: &rules::Listed<'_>) -> Result<()> {
        if !listed.has_rules() {
            return Ok(());
        }
        let failed: Vec<&str> = self
            .report
            .failed_servers
            .iter()
            .map(|f| f.server_id.as_str())
            .collect();
        let exposed: Vec<(&str, String)> = self
            .tools
            .iter()
            .map(|t| {
                let tool = format!("{}/{}", t.server_id, t.tool.name);
                (t.exposed_name.as_str(), tool)
            })
            .collect();
        let unmatched = listed.unmatched(&failed, &exposed)?;
        for rule in &unmatched {
            tracing::warn!(rule = %rule.rule, pattern = %rule.pattern,
                could_mean = ?rule.could_mean, "a rule matches no listed tool");
        }
        self.report.unmatched_rules = unmatched;
        Ok(())
    }

    fn insert(&mut self, natural: String, server_id: String, tool: Arc<Tool>) {
        let mut reasons = Vec::new();
        let mut name = sanitize(&natural, &mut reasons);
        let seed = format!("{server_id}\0{}", tool.name);
        if name.len() > MAX_NAME_LEN {
            reasons.push(RenameReason::Truncated);
            name = with_suffix(&name, &seed);
        }
        if let Some(&taken) = self.by_exposed.get(&name) {
            let earlier = &self.tools[taken];
            reasons.push(RenameReason::Collision {
                with_server: earlier.server_id.clone(),
                with_tool: earlier.tool.name.clone(),
            });
            let base = name.clone();
            name = with_suffix(&base, &seed);
            let mut round = 0u32;
            while self.by_exposed.contains_key(&name) {
                round += 1;
                name = with_suffix(&base, &format!("{seed}\0{round}"));
            }
        }
        if !reasons.is_empty() {
            self.report.renamed.push(Rename {
                server_id: server_id.clone(),
                tool: tool.name.clone(),
                exposed_name: name.clone(),
                reasons,
            });
        }
        let index = self.tools.len();
        self.by_exposed.insert(name.clone(), index);
        self.by_mcp
            .insert((server_id.clone(), tool.name.clone()), index);
        self.tools.push(ExposedTool {
            exposed_name: name,
            server_id,
            tool,
        });
    }
}

impl Inner {
    /// The tool number `taken` is exposed anew with a hash suffix, its name
    /// going to the library's tool `to`.
    fn give_up_name(&mut self, taken: usize, to: &ExposedTool) {
        let holder = &self.tools[taken];
        let seed = format!("{}\0{}", holder.server_id, holder.tool.name);
        let base = holder.exposed_name.clone();
        let mut name = with_suffix(&base, &seed);
        let mut round = 0u32;
        while self.by_exposed.contains_key(&name) || name == to.exposed_name {
            round += 1;
            name = with_suffix(&base, &format!("{seed}\0{round}"));
        }
        let reason = RenameReason::Collision {
            with_server: to.server_id.clone(),
            with_tool: to.tool.name.clone(),
        };
        let holder = &mut self.tools[taken];
        tracing::warn!(server = %holder.server_id, tool = %holder.tool.name, exposed = %name,
            library_tool = %to.exposed_name, "a server's tool has the name of a library tool: renamed");
        self.by_exposed.remove(&holder.exposed_name);
        holder.exposed_name.clone_from(&name);
        self.by_exposed.insert(name.clone(), taken);
        let (server_id, tool) = (holder.server_id.clone(), holder.tool.name.clone());
        match self
            .report
            .renamed
            .iter_mut()
            .find(|r| r.server_id == server_id && r.tool == tool)
        {
            Some(rename) => {
                rename.exposed_name = name;
                rename.reasons.push(reason);
            }
            None => self.report.renamed.push(Rename {
                server_id,
                tool,
                exposed_name: name,
                reasons: vec![reason],
            }),
        }
    }
}

/// Whether any of a tool's JSON fields nests deeper than 256
/// (cloning, listing or dropping it would recurse that deep).
fn too_deep(tool: &Tool) -> bool {
    let cap = MAX_NESTING;
    let map_too_deep = |map: &crate::mcp::Object| map.values().any(|v| deeper_than(v, cap - 1));
    deeper_than(&tool.input_schema, cap)
        || tool
            .output_schema
            .as_ref()
            .is_some_and(|v| deeper_than(v, cap))
        || tool.annotations.as_ref().is_some_and(map_too_deep)
        || tool.meta.as_ref().is_some_and(map_too_deep)
        || tool
            .icons
            .as_ref()
            .is_some_and(|icons| icons.iter().any(|v| deeper_than(v, cap - 1)))
        || map_too_deep(&tool.extra)
}

/// Drops a tool whose fields may be arbitrarily deep without recursion.
fn dismantle_tool(tool: Tool) {
    let Tool {
        input_schema,
        output_schema,
        annotations,
        icons,
        meta,
        extra,
        ..
    } = tool;
    let maps = [annotations, meta, Some(extra)].into_iter().flatten();
    let values = maps.flat_map(|m| m.into_iter().map(|(_, v)| v));
    std::iter::once(input_schema)
        .chain(output_schema)
        .chain(icons.into_iter().flatten())
        .chain(values)
        .for_each(dismantle);
}

fn natural_name(mode: Mode, prefix: &str, server_id: &str, tool: &str) -> String {
    match mode {
        Mode::Client => format!("{prefix}{tool}"),
        Mode::Hub => format!("{prefix}{server_id}__{tool}"),
    }
}

fn sanitize(natural: &str, reasons: &mut Vec<RenameReason>) -> String {
    let mut name: String = natural
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name != natural {
        reasons.push(RenameReason::InvalidCharacters);
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        reasons.push(RenameReason::LeadingCharacter);
        name.insert(0, '_');
    }
    name
}

/// `base` cut so that `_` and an 8-digit hash of `seed` fit in 64 characters.
fn with_suffix(base: &str, seed: &str) -> String {
    let keep = MAX_NAME_LEN - HASH_LEN - 1;
    let cut = &base[..base.len().min(keep)]; // `base` is ASCII after sanitizing
    format!("{cut}_{:08x}", fnv1a32(seed.as_bytes()))
}

/// FNV-1a, 32 bits: stable across platforms and releases, unlike `std`'s hasher.
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h: u32, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A toolset's allow and deny globs, compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    allow: Vec<GlobMatcher>,
    deny: Vec<(String, GlobMatcher)>,
}

impl Filter {
    fn new(allow: &[String], deny: &[String]) -> Result<Self> {
        Ok(Filter {
            allow: allow
                .iter()
                .map(|p| compile_tool_glob(p))
                .collect::<Result<_>>()?,
            deny: deny
                .iter()
                .map(|p| Ok((p.clone(), compile_tool_glob(p)?)))
                .collect::<Result<_>>()?,
        })
    }

    /// Whether `server_id/name` passes the globs.
    pub(crate) fn admits(&self, server_id: &str, name: &str) -> bool {
        self.rejects(server_id, name).is_none()
    }

    fn rejects(&self, server_id: &str, tool: &str) -> Option<DropReason> {
        let path = format!("{server_id}/{tool}");
        if let Some((pattern, _)) = self.deny.iter().find(|(_, m)| m.is_match(&path)) {
            return Some(DropReason::Denied {
                pattern: pattern.clone(),
            });
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|m| m.is_match(&path)) {
            return Some(DropReason::NotAllowed);
        }
        None
    }
}

/// Compiles a `server/tool` glob: `*` and `?` match any character, `/`
/// included. A glob without `/` names a tool on any server: `delete_*` is
/// `*/delete_*`.
pub(crate) fn compile_tool_glob(pattern: &str) -> Result<GlobMatcher> {
    match pattern.contains('/') {
        true => matcher(pattern, pattern),
        false => matcher(&format!("*/{pattern}"), pattern),
    }
}

/// Whether every name the `server/tool` glob `inner` matches, `outer`
/// matches too (both read as [`compile_tool_glob`] reads them). Decided on
/// the globs' `*`, `?` and literals (an `inner` wildcard is covered only by
/// an `outer` one at least as wide); a glob with a class, an alternative or
/// an escape is covered when `outer` matches it as written.
pub(crate) fn tool_glob_covers(outer: &str, inner: &str) -> bool {
    let full = |p: &str| match p.contains('/') {
        true => p.to_owned(),
        false => format!("*/{p}"),
    };
    let (outer, inner) = (full(outer), full(inner));
    if [&outer, &inner]
        .iter()
        .any(|p| p.contains(['[', '{', '\\']))
    {
        return compile_glob(&outer).is_ok_and(|m| m.is_match(&inner));
    }
    let o: Vec<char> = outer.chars().collect();
    let n: Vec<char> = inner.chars().collect();
    // reach[i][j]: `outer` up to i accounts for all that `inner` up to j matches.
    let mut reach = vec![vec![false; n.len() + 1]; o.len() + 1];
    reach[0][0] = true;
    for i in 0..=o.len() {
        for j in 0..=n.len() {
            if !reach[i][j] {
                continue;
            }
            match (o.get(i).copied(), n.get(j).copied()) {
                (Some('*'), next) => {
                    reach[i + 1][j] = true;
                    if next.is_some() {
                        reach[i][j + 1] = true;
                    }
                }
                (Some('?'), Some(c)) if c != '*' => reach[i + 1][j + 1] = true,
                (Some(c), Some(d)) if c == d && c != '?' => reach[i + 1][j + 1] = true,
                _ => {}
            }
        }
    }
    reach[o.len()][n.len()]
}

/// Compiles a glob as written: `*` and `?` match any character, `/` included.
pub(crate) fn compile_glob(pattern: &str) -> Result<GlobMatcher> {
    matcher(pattern, pattern)
}

/// The matcher of `glob`, an error naming the glob as the user `wrote` it.
fn matcher(glob: &str, wrote: &str) -> Result<GlobMatcher> {
    let glob: Glob = GlobBuilder::new(glob)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map_err(|e| Error::input(format!("invalid glob `{wrote}`")).with_source(e))?;
    Ok(glob.compile_matcher())
}

#[cfg(test)]
mod tests;
