//! Tool listing: a [`ToolSet`] in a provider's tool-definition format.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;

use crate::budget::{Budget, read_exposed_tool};
use crate::callers::CallersRule;
use crate::describe::sanitize_description;
use crate::error::{Error, ErrorKind, Result};
use crate::search::ToolIndex;
use crate::spec::options::OptionEffect;
pub use crate::spec::strict::StrictMode;
use crate::spec::template::Var;
use crate::spec::tools::MissingDescription;
use crate::spec::{Provider, merge_object};
use crate::strict::{self, NullPath, StrictRules};
use crate::toolset::{ExposedTool, ToolSet, ToolSetReport};

mod code;
mod deferred;
mod kept;
mod selection;

use code::CodeAccess;
pub(crate) use selection::Selection;

use kept::{Converted, Descriptions, Schemas, Which, WithTool};

/// A tool's schemas as one listing has them: kept with the toolset, or
/// converted for this listing alone (and then moved into its definition).
enum Conversion<'k> {
    Kept(&'k Converted),
    Fresh(Converted),
}

impl Conversion<'_> {
    fn converted(&self) -> &Converted {
        match self {
            Conversion::Kept(converted) => converted,
            Conversion::Fresh(converted) => converted,
        }
    }
}

/// Null paths per exposed tool name, from a [`Listing`]; each tool's are
/// shared with the toolset's kept conversion (see [`Provider::list_tools`]).
pub type NullPaths = BTreeMap<String, Arc<[NullPath]>>;

/// Options for [`Provider::list_tools`] and [`Source::tools`](crate::Source::tools).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ListOptions {
    strict: Option<StrictMode>,
    options: BTreeMap<String, String>,
    pub(crate) defer: Vec<String>,
    pub(crate) load: Vec<String>,
    pub(crate) search: Option<ToolSearch>,
    pub(crate) found: Vec<String>,
    pub(crate) namespaces: Option<bool>,
    pub(crate) read_on: bool,
    pub(crate) callers: Option<CallersRule>,
    /// In code mode, the rule whose tools open to code only are reached
    /// through the code tool alone: left out of the listing.
    pub(crate) code_mode: Option<CallersRule>,
    pub(crate) select: Option<String>,
}

/// Who answers the model's searches for deferred tools (see [`ListOptions::defer`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolSearch {
    /// The library, in the provider's own shape for a search the client
    /// answers (the spec's `search.client`: a `tool_search` the client runs,
    /// `tool_reference` blocks): deferred tools are listed with the spec's
    /// deferral mark. The default for specs that have it.
    Client,
    /// The library's own search tool, `search_tools`, a function tool like
    /// any other: deferred tools are left out of the listing until a search
    /// finds them, then listed after the others ([`ListOptions::found`]).
    /// Works with every provider; the default for specs without `search.client`.
    Library,
    /// One of the provider's own search tools, by its name in the spec's
    /// `search.server_tools` (such as `bm25` or `regex`): the provider
    /// searches the deferred tools, which are listed with the deferral mark.
    Server(String),
}

impl FromStr for ToolSearch {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "client" => ToolSearch::Client,
            "library" => ToolSearch::Library,
            _ => match s.strip_prefix("server:") {
                Some(name) if !name.is_empty() => ToolSearch::Server(name.to_owned()),
                _ => {
                    return Err(Error::input(format!(
                        "tool search `{s}`: expected client, library or server:NAME"
                    )));
                }
            },
        })
    }
}

impl ListOptions {
    /// Default options: the spec's strict mode and no named options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the strict mode (the spec's default otherwise; ignored by specs without strict rules).
    pub fn strict(mut self, mode: StrictMode) -> Self {
        self.strict = Some(mode);
        self
    }

    /// Sets a named option the spec offers, such as `cache_control` = `last`.
    pub fn option(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.insert(name.into(), value.into());
        self
    }

    /// Offers the library's own tool `read_result`, which reads on in a
    /// result a budget cut, while `budget` is set: pass
    /// [`ResultOptions::budget`](crate::ResultOptions::budget) of the options
    /// the calls are answered with. A [`Source`](crate::Source)
    /// answers its calls from the texts it cut, never from a server, through
    /// the same governed pipeline as any tool (its policy name is
    /// `mcp-adapters/read_result`); the notices of cut results then say how
    /// to read on. Answer the calls with the same budget: a read answered
    /// without one comes back whole.
    pub fn read_on(mut self, budget: &Budget) -> Self {
        self.read_on = budget.is_set();
        self
    }

    /// Offers result selection: every listed tool gains an optional argument
    /// named `argument` ([`SELECT_ARGUMENT`](crate::select::SELECT_ARGUMENT),
    /// `jq_filter`, unless the application names another) that takes a jq
    /// filter. A tool whose schema has a property of that name keeps its own
    /// and gets none. The filter is taken out of a call's arguments before
    /// they are checked or sent ([`ToolCall::select`](crate::ToolCall::select)),
    /// so no server sees it; the model reads what the filter outputs from
    /// the result (see [`select`](crate::select)). With
    /// [`read_on`](Self::read_on), `read_result` gains it too, and the whole
    /// result a filter ran on is kept for it, so that a second filter costs
    /// no second call.
    pub fn select(mut self, argument: impl Into<String>) -> Self {
        self.select = Some(argument.into());
        self
    }

    /// Defers the tools whose `server/tool` (MCP names) matches `glob` (`*`
    /// and `?` match any character, `/` included; a glob without `/` names a
    /// tool on any server): they are not loaded into
    /// the prompt, and the model finds them with a search (see
    /// [`ToolSearch`]). A tool that a [`load`](Self::load) glob matches too
    /// stays loaded. Without any `defer` glob every tool is loaded and
    /// nothing else changes.
    pub fn defer(mut self, glob: impl Into<String>) -> Self {
        self.defer.push(glob.into());
        self
    }

    /// Keeps the tools whose `server/tool` matches `glob` loaded, even when a
    /// [`defer`](Self::defer) glob matches them.
    pub fn load(mut self, glob: impl Into<String>) -> Self {
        self.load.push(glob.into());
        self
    }

    /// Who answers the searches for deferred tools (the spec's client
    /// search where it has one, the library's search tool otherwise).
    pub fn search(mut self, search: ToolSearch) -> Self {
        self.search = Some(search);
        self
    }

    /// The exposed names of the tools searches found earlier in the
    /// conversation ([`Execution::found`](crate::Execution::found),
    /// [`SearchAnswer::found`](crate::search::SearchAnswer::found)), in the order
    /// they were found. With [`ToolSearch::Library`] they are listed after
    /// the loaded tools, in this order, so that each turn's list starts with
    /// the previous one (prompt caching). Names the toolset no longer has
    /// are skipped, and a name given twice is listed once.
    pub fn found<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for name in names {
            let name = name.into();
            if !self.found.contains(&name) {
                self.found.push(name);
            }
        }
        self
    }

    /// The callers rule the listing declares: which tools code the model
    /// writes may call (see [`callers`](crate::callers); none by default).
    /// When it opens any, each such tool says who may call it (the spec's
    /// `allowed_callers`) and carries its output schema where the provider
    /// takes one, the provider's code-execution tool is listed after the
    /// tools, and [`Listing::headers`] holds any header it needs; calls are
    /// then held to what the listing declared
    /// ([`Listing::callers`]). A [`Source`](crate::Source) lists with its
    /// [policy](crate::Policy::programmatic)'s rule unless this sets one.
    ///
    /// An error when the listing is made, for a provider without
    /// programmatic calling, if the rule opens any tool to code.
    pub fn callers(mut self, rule: CallersRule) -> Self {
        self.callers = Some(rule);
        self
    }

    /// In code mode: the tools `rule` opens to code only are left out of
    /// the listing (the code tool reaches them), and the model's direct
    /// call to one is refused.
    pub(crate) fn code_mode(mut self, rule: CallersRule) -> Self {
        self.code_mode = Some(rule);
        self
    }

    /// The callers rule set with [`callers`](Self::callers), if any.
    pub fn callers_rule(&self) -> Option<&CallersRule> {
        self.callers.as_ref()
    }

    /// Whether each server's tools are grouped in a namespace of their own,
    /// where the spec has namespaces (`search.namespace`): on by default
    /// when tools are deferred.
    pub fn namespaces(mut self, on: bool) -> Self {
        self.namespaces = Some(on);
        self
    }
}

/// A tool whose schema could not be made strict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StrictIssue {
    /// The tool's exposed name.
    pub exposed_name: String,
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// A JSON pointer into the tool's input schema.
    pub path: String,
    /// The keyword or limit that failed.
    pub reason: String,
}

/// A field a server left out of its answers (or sent malformed), read with
/// the default the official MCP SDKs give it (MCP 2026-07-28): `ttlMs` as
/// 0, `cacheScope` as `"private"`, `resultType` as `"complete"`. Listed
/// once per server and field in [`ListingReport::defaulted`], and
/// printed once on the command line's stderr.
///
/// ```
/// # use mcp_adapters::listing::Defaulted;
/// let field = Defaulted::new("toolbox", "ttlMs", 0.into()).with_method("server/discover");
/// assert_eq!(
///     field.to_string(),
///     "server `toolbox` left `ttlMs` out of its `server/discover` result: read as 0, \
///      as the official MCP SDKs do"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Defaulted {
    /// The server.
    pub server_id: String,
    /// The field (`ttlMs`, `cacheScope`, `resultType`).
    pub field: String,
    /// The requests whose results lacked it, in the order first seen.
    pub methods: Vec<String>,
    /// What the server sent for it, when it sent something unreadable;
    /// `None` when it left the field out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<Value>,
    /// What it was read as.
    pub read_as: Value,
}

impl Defaulted {
    /// `server_id`'s `field`, read as `read_as`, with no method yet.
    pub fn new(server_id: impl Into<String>, field: impl Into<String>, read_as: Value) -> Self {
        Defaulted {
            server_id: server_id.into(),
            field: field.into(),
            methods: Vec::new(),
            sent: None,
            read_as,
        }
    }

    /// Adds a request whose result lacked the field.
    pub fn with_method(mut self, method: impl Into<String>) -> Self {
        self.methods.push(method.into());
        self
    }
}

/// `server `s` left `ttlMs` out of its `server/discover` result: read as 0, ...`.
impl std::fmt::Display for Defaulted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let methods: Vec<String> = self.methods.iter().map(|m| format!("`{m}`")).collect();
        let results = if methods.len() == 1 {
            "result"
        } else {
            "results"
        };
        let (server, field) = (&self.server_id, &self.field);
        match &self.sent {
            None => write!(f, "server `{server}` left `{field}` out of its ")?,
            Some(sent) => write!(f, "server `{server}` sent `{field}: {sent}` in its ")?,
        }
        write!(
            f,
            "{} {results}: read as {}, as the official MCP SDKs do",
            methods.join(" and "),
            self.read_as
        )
    }
}

/// What a listing changed or left out, and why.
///
/// Only the toolset's tools are emitted, in its order (PO-7), under their
/// exposed names, with descriptions cleaned of invisible characters and capped
/// at 4 KiB (PI-1). Where the spec has a strict section, schemas are converted
/// to the provider's strict subset according to the [`StrictMode`]; the
/// resulting null paths come back per exposed name, to be handed to call
/// extraction so that the `null`s strict mode makes the model send are removed
/// before a call reaches its server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ListingReport {
    /// The toolset's renames, drops and failed servers.
    #[serde(flatten)]
    pub toolset: ToolSetReport,
    /// Tools sent non-strict because their schema could not be converted (`strict: auto`).
    pub fallbacks: Vec<StrictIssue>,
    /// Tools left out because their schema could not be converted (`strict: true`).
    pub excluded: Vec<StrictIssue>,
    /// Tools left out because the provider's subset of JSON Schema (the
    /// spec's `schema:` rules) cannot express their schema.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<StrictIssue>,
    /// Fields the servers left out of their answers, read with the
    /// official MCP SDKs' defaults: one entry per server and field
    /// (filled in by [`Source::tools`](crate::Source::tools)).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defaulted: Vec<Defaulted>,
}

/// What a model is offered: a provider's tool definitions for a toolset.
///
/// Send [`tools`](Self::tools) in the request; hand the listing back when
/// the model answers ([`Provider::extract_calls`],
/// [`Source::execute_tool_calls`](crate::Source::execute_tool_calls)): calls
/// resolve against its toolset only, and the `null`s its strict schemas made
/// the model send are stripped by its null paths.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Listing {
    /// The tool definitions, in the toolset's order.
    pub tools: Vec<Value>,
    /// Strict-mode null paths per exposed name (only tools that have some).
    pub null_paths: NullPaths,
    /// What was changed or left out.
    pub report: ListingReport,
    /// HTTP headers the request that sends [`tools`](Self::tools) must
    /// carry (a beta flag the provider's code-execution tool needs).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(skip)]
    toolset: ToolSet,
    #[serde(skip)]
    provider: String,
    #[serde(skip)]
    strict: Marks,
    #[serde(skip)]
    rewritten: Marks,
    #[serde(skip)]
    pub(crate) deferral: Deferral,
    #[serde(skip)]
    kept: KeptRefs,
    #[serde(skip)]
    code: CodeAccess,
    /// The selection argument, when the listing offers it.
    #[serde(skip)]
    pub(crate) selection: Option<Selection>,
}

/// The tools a listing marks (strict, rewritten): the toolset's by their
/// position, any other (the search tool) by name.
#[derive(Debug, Clone, Default)]
struct Marks {
    tools: Vec<bool>,
    others: BTreeSet<String>,
}

impl Marks {
    /// Marks the tool exposed as `name`, the toolset's tool number `index` if any.
    fn mark(&mut self, index: Option<usize>, name: &str, toolset: &ToolSet) {
        match index {
            Some(i) => {
                if self.tools.len() <= i {
                    self.tools.resize(toolset.len().max(i + 1), false);
                }
                self.tools[i] = true;
            }
            None => {
                self.others.insert(name.to_owned());
            }
        }
    }

    /// Whether the tool exposed as `name` is marked.
    fn contains(&self, name: &str, toolset: &ToolSet) -> bool {
        let by_position = toolset
            .position(name)
            .is_some_and(|i| self.tools.get(i).copied().unwrap_or(false));
        by_position || self.others.contains(name)
    }
}

/// What this listing found kept with its toolset, so that each tool's
/// definition does not look it up again.
#[derive(Clone, Default)]
struct KeptRefs {
    /// The schemas and whether this listing takes from them (a listing
    /// that made the entry does not: it converts and keeps nothing).
    schemas: Option<(Arc<Schemas>, bool)>,
    descriptions: Option<Arc<Descriptions>>,
}

impl std::fmt::Debug for KeptRefs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptRefs")
    }
}

impl KeptRefs {
    /// The schemas kept with `toolset` for these rules; `None` when this
    /// listing is the first with them, which keeps nothing.
    fn schemas(
        &mut self,
        toolset: &ToolSet,
        subset: Option<&Arc<StrictRules>>,
        strict: Option<&Arc<StrictRules>>,
    ) -> Option<Arc<Schemas>> {
        match &self.schemas {
            Some((kept, keep)) if kept.is_for(subset, strict) => keep.then(|| kept.clone()),
            _ => {
                let (kept, made_now) = Schemas::of(toolset, subset, strict);
                self.schemas = Some((kept.clone(), !made_now));
                (!made_now).then_some(kept)
            }
        }
    }

    /// The descriptions kept with `toolset`.
    fn descriptions(&mut self, toolset: &ToolSet) -> Arc<Descriptions> {
        self.descriptions
            .get_or_insert_with(|| Descriptions::of(toolset))
            .clone()
    }
}

/// `toolset` with the library's read tool after its tools, made once per
/// toolset and kept with it (so that what listings keep of it is kept too).
fn with_read_tool(toolset: &ToolSet) -> Result<ToolSet> {
    let kept = toolset.memo().get_or_try_insert(
        |_: &WithTool| true,
        || toolset.with_tool(read_exposed_tool()).map(WithTool),
    )?;
    Ok(kept.0.clone())
}

/// What a listing with deferred tools remembers for the searches.
#[derive(Debug, Clone, Default)]
pub(crate) struct Deferral {
    pub deferred: BTreeSet<String>,
    pub search: Option<ToolSearch>,
    pub found: Vec<String>,
    pub search_tool: Option<String>,
    pub namespaces: bool,
    pub mode: StrictMode,
    pub index: Arc<OnceLock<ToolIndex>>,
}

impl Listing {
    /// The toolset the definitions were made from: the tools the model may call.
    pub fn toolset(&self) -> &ToolSet {
        &self.toolset
    }

    /// The id of the provider the listing is in the format of.
    pub fn provider_id(&self) -> &str {
        &self.provider
    }

    /// Whether the tool exposed as `name` was listed with a strict schema.
    pub fn is_strict(&self, name: &str) -> bool {
        self.strict.contains(name, &self.toolset)
    }

    /// Whether the provider's schema rules (the spec's `schema:` section)
    /// changed the schema of the tool exposed as `name`.
    pub fn is_rewritten(&self, name: &str) -> bool {
        self.rewritten.contains(name, &self.toolset)
    }

    /// An empty listing of the same toolset and provider, for definitions
    /// rendered on the side.
    pub(crate) fn scratch(of: &Listing) -> Listing {
        Listing {
            tools: Vec::new(),
            null_paths: NullPaths::new(),
            report: ListingReport::default(),
            toolset: of.toolset.clone(),
            provider: of.provider.clone(),
            strict: Marks::default(),
            rewritten: Marks::default(),
            deferral: Default::default(),
            kept: KeptRefs::default(),
            headers: BTreeMap::new(),
            code: of.code.clone(),
            selection: of.selection.clone(),
        }
    }

    /// `arguments` of a call to `tool` without the selection argument, and
    /// the filter it held (see [`ListOptions::select`]).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the argument is neither a string nor `null`.
    pub(crate) fn take_selection(
        &self,
        tool: &ExposedTool,
        mut arguments: serde_json::Map<String, Value>,
    ) -> Result<(serde_json::Map<String, Value>, Option<String>)> {
        let select = match &self.selection {
            Some(selection) => selection.take(tool, &mut arguments)?,
            None => None,
        };
        Ok((arguments, select))
    }

    /// Whether the tool exposed as `name` is deferred ([`ListOptions::defer`]).
    pub fn is_deferred(&self, name: &str) -> bool {
        self.deferral.deferred.contains(name)
    }

    /// The exposed names of the deferred tools, in the toolset's order.
    pub fn deferred(&self) -> impl Iterator<Item = &str> {
        self.toolset
            .tools()
            .iter()
            .map(|t| t.exposed_name.as_str())
            .filter(|n| self.deferral.deferred.contains(*n))
    }

    /// Who answers searches, when tools are deferred.
    pub fn tool_search(&self) -> Option<&ToolSearch> {
        self.deferral.search.as_ref()
    }

    /// The found tools this listing lists after the loaded ones
    /// ([`ListOptions::found`] that the toolset has and that are deferred).
    pub fn found(&self) -> &[String] {
        &self.deferral.found
    }

    /// The name of the search tool the model calls like a function, when
    /// searches arrive as ordinary calls (the library's search tool).
    pub fn search_tool_name(&self) -> Option<&str> {
        self.deferral.search_tool.as_deref()
    }
}

fn issue(tool: &ExposedTool, err: &strict::StrictError) -> StrictIssue {
    StrictIssue {
        exposed_name: tool.exposed_name.clone(),
        server_id: tool.server_id.clone(),
        tool: tool.tool.name.clone(),
        path: err.pointer().to_owned(),
        reason: err.kind().to_string(),
    }
}

impl Provider {
    /// Lists `toolset`'s tools in this provider's format.
    ///
    /// What does not depend on the options is made once per toolset and
    /// kept with it ([`ToolSet`] never changes): each tool's schema as this
    /// spec's rules make it (per set of `schema:` and strict rules: the
    /// converted schema, its null paths, or why it cannot be converted),
    /// its cleaned description and title, and who may call it under each
    /// [callers rule](ListOptions::callers). The first listing of a toolset
    /// for a set of rules converts the schemas and moves them into its
    /// definitions, keeping nothing (a toolset listed once costs no more
    /// than before); the second converts them again and keeps them; every
    /// later one, of the same toolset or a clone of it, copies them, and
    /// reports, warns and marks exactly as the first did. A toolset built
    /// anew shares nothing with another; what is kept goes with the last
    /// clone of the toolset.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] for an option the spec does not offer or a value it
    /// does not accept; [`ErrorKind::Spec`] if the spec's definition template
    /// needs a value a tool lacks.
    pub fn list_tools(&self, toolset: &ToolSet, options: &ListOptions) -> Result<Listing> {
        let with_reader;
        let toolset = match options.read_on {
            true => {
                with_reader = with_read_tool(toolset)?;
                &with_reader
            }
            false => toolset,
        };
        let effects = self.option_effects(options)?;
        let mode = options
            .strict
            .or(self.strict.as_ref().map(|s| s.default))
            .unwrap_or(StrictMode::Off);
        let rule = self.code_rule(toolset, options.callers.as_ref())?;
        // Room for the code-execution tool a rule may add after the tools.
        let capacity = toolset.len() + usize::from(rule.is_some());
        let mut listing = Listing {
            tools: Vec::with_capacity(capacity),
            null_paths: NullPaths::new(),
            report: ListingReport {
                toolset: toolset.report().clone(),
                ..Default::default()
            },
            toolset: toolset.clone(),
            provider: self.id().to_owned(),
            strict: Marks::default(),
            rewritten: Marks::default(),
            deferral: Default::default(),
            kept: KeptRefs::default(),
            headers: BTreeMap::new(),
            code: CodeAccess {
                rule,
                code_mode: options.code_mode.clone(),
                ..Default::default()
            },
            selection: options.select.as_deref().map(Selection::new),
        };
        listing.deferral.mode = mode;
        let mut loaded = if options.defer.is_empty() {
            for tool in toolset.tools() {
                if let Some(def) = self.definition(tool, mode, &mut listing)? {
                    listing.tools.push(def);
                }
            }
            vec![true; listing.tools.len()]
        } else {
            self.list_deferred(options, mode, &mut listing)?
        };
        self.declare_code(&mut listing, &mut loaded);
        self.apply_effects(&effects, &mut listing.tools, &loaded);
        Ok(listing)
    }

    /// Applies option effects: `merge_each` to every entry, `merge_last` to
    /// the last loaded one (a deferred tool takes no prompt-caching mark: the
    /// cached prefix ends at the last tool that is loaded).
    fn apply_effects(&self, effects: &[&OptionEffect], tools: &mut [Value], loaded: &[bool]) {
        for effect in effects {
            if let Some(each) = &effect.merge_each {
                tools.iter_mut().for_each(|t| merge_object(t, each));
            }
            let last = loaded.iter().rposition(|l| *l);
            if let (Some(mark), Some(i)) = (&effect.merge_last, last) {
                merge_object(&mut tools[i], mark);
            }
        }
    }

    fn option_effects(&self, options: &ListOptions) -> Result<Vec<&OptionEffect>> {
        options
            .options
            .iter()
            .map(|(name, value)| self.option_effect(name, value))
            .collect()
    }

    /// The rules `mode` converts schemas by: the spec's `schema:` rules,
    /// then its strict rules (none when strict mode is off).
    fn rules_for(
        &self,
        mode: StrictMode,
    ) -> (Option<&Arc<StrictRules>>, Option<&Arc<StrictRules>>) {
        let strict = match (&self.strict, mode) {
            (Some(plan), StrictMode::Auto | StrictMode::On) => Some(&plan.rules),
            _ => None,
        };
        (self.schema.as_ref().map(|plan| &plan.rules), strict)
    }

    /// The tool's definition: the spec's template given its name, schema,
    /// description, title and strict flag.
    fn render(
        &self,
        tool: &ExposedTool,
        schema: Cow<'_, Value>,
        description: Option<&str>,
        title: Option<&str>,
        strict: bool,
    ) -> Result<Value> {
        let strict_flag = Value::Bool(strict);
        let mut vars: Vec<(&str, Var<'_>)> = vec![
            ("name", Var::Str(&tool.exposed_name)),
            ("strict", Var::Json(Cow::Borrowed(&strict_flag))),
        ];
        let mut owned = Vec::new();
        match schema {
            Cow::Owned(schema) => owned.push(("schema", Some(schema))),
            Cow::Borrowed(schema) => vars.push(("schema", Var::Json(Cow::Borrowed(schema)))),
        }
        if let Some(d) = description {
            vars.push(("description", Var::Str(d)));
        }
        if let Some(t) = title {
            vars.push(("title", Var::Str(t)));
        }
        self
            .tools
            .definition
            .render_moving(vars.as_slice(), &mut owned)
            .map_err(|missing| {
            Error::new(
                ErrorKind::Spec,
                format!(
                    "the tool definition needs `${{{}}}`, which this tool lacks (use `${{{}?}}` to make it optional)",
                    missing.0, missing.0
                ),
            )
            .with_file(self.source())
            .with_path("/tools/definition")
            .with_tool(&tool.exposed_name)
        })
    }

    /// Which schema a tool is listed with (as written, the spec's subset,
    /// or strict), each rewrite, null path and failed conversion noted in
    /// the listing; `None` leaves the tool out.
    fn judge(
        &self,
        tool: &ExposedTool,
        index: Option<usize>,
        converted: &Converted,
        mode: StrictMode,
        listing: &mut Listing,
    ) -> Option<Which> {
        let mut which = Which::Written;
        match &converted.subset {
            Ok(Some(_)) => {
                listing
                    .rewritten
                    .mark(index, &tool.exposed_name, &listing.toolset);
                which = Which::Subset;
            }
            Ok(None) => {}
            Err(err) => {
                let issue = issue(tool, err);
                let rules = self
                    .schema
                    .as_ref()
                    .map_or("", |plan| plan.rules_id.as_str());
                tracing::warn!(provider = self.id(), server = %issue.server_id, tool = %issue.tool,
                    path = %issue.path, reason = %issue.reason, rules = %rules,
                    "the provider's schema rules cannot express the tool's schema; tool left out");
                listing.report.unsupported.push(issue);
                return None;
            }
        };
        match &converted.strict {
            None => {}
            Some(Ok(converted)) => {
                if !converted.null_paths.is_empty() {
                    listing
                        .null_paths
                        .insert(tool.exposed_name.clone(), converted.null_paths.clone());
                }
                which = Which::Strict;
            }
            Some(Err(err)) => {
                let issue = issue(tool, err);
                if mode == StrictMode::On {
                    tracing::warn!(provider = self.id(), server = %issue.server_id, tool = %issue.tool,
                    path = %issue.path, reason = %issue.reason, "strict schema conversion failed; tool excluded");
                    listing.report.excluded.push(issue);
                    return None;
                }
                tracing::warn!(provider = self.id(), server = %issue.server_id, tool = %issue.tool,
                path = %issue.path, reason = %issue.reason, "strict schema conversion failed; tool sent non-strict");
                listing.report.fallbacks.push(issue);
            }
        };
        Some(which)
    }

    pub(crate) fn definition(
        &self,
        tool: &ExposedTool,
        mode: StrictMode,
        listing: &mut Listing,
    ) -> Result<Option<Value>> {
        let index = listing.toolset.index_of(tool);
        if listing.code.for_programs_only(tool, index) {
            return Ok(None);
        }
        let (subset_rules, strict_rules) = self.rules_for(mode);
        let rules = (subset_rules.map(|r| &**r), strict_rules.map(|r| &**r));
        // A tool of the toolset is converted once and kept with it, from
        // the second listing of the toolset with these rules on (a toolset
        // listed once keeps nothing); any other tool (the search tool) is
        // converted each time. A schema converted for this listing alone
        // is moved into the definition, not copied.
        // A tool offered the selection argument is converted for this listing.
        let selected = listing.selection.as_ref().and_then(|s| s.offer(tool));
        let tool = selected.as_ref().unwrap_or(tool);
        let kept = match index {
            Some(_) if selected.is_none() => {
                listing
                    .kept
                    .schemas(&listing.toolset, subset_rules, strict_rules)
            }
            _ => None,
        };
        let conversion = match (&kept, index) {
            (Some(kept), Some(i)) => Conversion::Kept(kept.get(i, tool, rules.0, rules.1)),
            _ => Conversion::Fresh(Converted::new(tool, rules.0, rules.1)),
        };
        let Some(which) = self.judge(tool, index, conversion.converted(), mode, listing) else {
            return Ok(None);
        };
        let strict = which == Which::Strict;
        let original = &tool.tool.input_schema;
        let schema: Cow<'_, Value> = match conversion {
            Conversion::Fresh(fresh) => fresh
                .into_schema(which)
                .map_or(Cow::Borrowed(original), Cow::Owned),
            Conversion::Kept(kept) => Cow::Borrowed(kept.schema(which, original)),
        };
        let missing = self.tools.missing_description;
        let cleaned;
        let (description, title) = match index {
            Some(i) => {
                cleaned = listing.kept.descriptions(&listing.toolset);
                let (description, title) = cleaned.get(i, tool);
                (description.map(Cow::Borrowed), title.map(Cow::Borrowed))
            }
            // A title comes from the server too: cleaned like a description.
            None => (
                tool.tool.description.as_deref().map(sanitize_description),
                tool.tool.title.as_deref().map(sanitize_description),
            ),
        };
        let description = match description {
            Some(d) => Some(d)
                .filter(|d| !(missing == MissingDescription::OmitBlank && d.trim().is_empty())),
            None if missing == MissingDescription::EmptyString => Some(Cow::Borrowed("")),
            None => None,
        };
        if strict {
            listing
                .strict
                .mark(index, &tool.exposed_name, &listing.toolset);
        }
        let def = self.render(
            tool,
            schema,
            description.as_deref(),
            title.as_deref(),
            strict,
        )?;
        Ok(Some(self.for_code(tool, index, def, listing)))
    }
}
