//! Deferred loading: listings that keep most tools out of the prompt, the
//! searches that find them, and the answers to those searches.
//!
//! A listing with [`ListOptions::defer`] globs marks the matching tools
//! deferred. What that means on the wire is the spec's `search:` section:
//! the field merged into a deferred tool (`defer`), the provider's own search
//! tools (`server_tools`), a search the client answers (`client`: its tool,
//! how its calls are found, how they are answered) and namespaces. A provider
//! without a `search:` section gets the library's search tool, a function
//! tool named [`SEARCH_TOOL_NAME`]: deferred tools are left out until a search
//! finds them, and then listed after the loaded ones.
//!
//! Every listing with deferred tools has a search tool, which is never
//! deferred: a request whose tools are all deferred, or that defers tools
//! without a search tool, is refused by the providers that support deferral.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Value, json};

use crate::budget::LIBRARY_SERVER;
use crate::calls::read_arguments;
use crate::error::{Error, ErrorKind, Result};
use crate::listing::{ListOptions, Listing, ToolSearch};
use crate::mcp::{CallToolResult, Tool};
use crate::results::{Outcome, ResultOptions};
use crate::search::{
    MAX_SEARCH_LIMIT, SEARCH_TOOL_NAME, SearchAnswer, SearchCall, ToolIndex, parameter_names,
};
use crate::spec::search::{ClientSearchPlan, SearchPlan};
use crate::spec::template::Var;
use crate::spec::{Provider, StrictMode, merge_object};
use crate::toolset::{ExposedTool, compile_tool_glob};

const SEARCH_DESCRIPTION: &str = "Searches the tools that are not loaded yet by what they do, \
and loads the best matches: they can be called from the next turn. Describe the task in a few \
words (for example \"create a GitHub issue\" or \"current time in a time zone\").";

/// The search tool's input schema.
fn search_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What the tool should do, in a few words."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                      "description": "How many tools to load at most (default 5)."}
        },
        "required": ["query"]
    })
}

fn globs(patterns: &[String]) -> Result<Vec<globset::GlobMatcher>> {
    patterns.iter().map(|p| compile_tool_glob(p)).collect()
}

impl Provider {
    fn search_plan(&self) -> Option<&SearchPlan> {
        self.search.as_ref()
    }

    fn client_search(&self) -> Option<&ClientSearchPlan> {
        self.search_plan().and_then(|s| s.client.as_ref())
    }

    /// Who answers searches when the options do not say, and whether that is
    /// possible with this spec.
    fn tool_search(&self, options: &ListOptions) -> Result<ToolSearch> {
        let chosen = options.search.clone().unwrap_or_else(|| {
            if self.client_search().is_some() {
                ToolSearch::Client
            } else {
                ToolSearch::Library
            }
        });
        match &chosen {
            ToolSearch::Client if self.client_search().is_none() => Err(Error::input(format!(
                "provider `{}` has no search the client answers (its spec has no `search.client`); use the library's search tool",
                self.id()
            ))),
            ToolSearch::Server(name) => {
                let known: Vec<&str> = self
                    .search_plan()
                    .map(|s| s.server_tools.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                if known.contains(&name.as_str()) {
                    Ok(chosen)
                } else {
                    Err(Error::input(format!(
                        "provider `{}` has no search tool `{name}` of its own; it has: {}",
                        self.id(),
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    )))
                }
            }
            _ => Ok(chosen),
        }
    }

    /// Lists `listing`'s toolset with the deferred tools of `options`; the
    /// flags say which entries are loaded (not deferred).
    pub(crate) fn list_deferred(
        &self,
        options: &ListOptions,
        mode: StrictMode,
        listing: &mut Listing,
    ) -> Result<Vec<bool>> {
        let (defer, load) = (globs(&options.defer)?, globs(&options.load)?);
        let toolset = listing.toolset().clone();
        let deferred: BTreeSet<String> = toolset
            .tools()
            .iter()
            .filter(|t| {
                // The library's own tools (the read tool) stay loaded: the
                // notices of cut results name them.
                let path = format!("{}/{}", t.server_id, t.tool.name);
                t.server_id != LIBRARY_SERVER
                    && defer.iter().any(|g| g.is_match(&path))
                    && !load.iter().any(|g| g.is_match(&path))
            })
            .map(|t| t.exposed_name.clone())
            .collect();
        let search = self.tool_search(options)?;
        let plan = self.search_plan();
        // Listed with the spec's mark (the provider loads them); else left out until found.
        let marked = search != ToolSearch::Library;
        let found: Vec<String> = options
            .found
            .iter()
            .filter(|n| deferred.contains(*n))
            .cloned()
            .collect();
        let called_by_name = match &search {
            ToolSearch::Library => true,
            ToolSearch::Client => self.client_search().is_some_and(|c| c.calls.is_none()),
            ToolSearch::Server(_) => false,
        };
        if !deferred.is_empty() && called_by_name && toolset.resolve(SEARCH_TOOL_NAME).is_some() {
            return Err(Error::input(format!(
                "a tool is exposed as `{SEARCH_TOOL_NAME}`, the search tool's name: rename it (a prefix) or do not defer tools"
            )));
        }
        let namespaces = marked
            && plan.is_some_and(|p| p.namespace.is_some())
            && options.namespaces != Some(false);
        listing.deferral.deferred = deferred;
        listing.deferral.namespaces = namespaces;
        if listing.deferral.deferred.is_empty() {
            for tool in toolset.tools() {
                if let Some(def) = self.definition(tool, mode, listing)? {
                    listing.tools.push(def);
                }
            }
            return Ok(vec![true; listing.tools.len()]);
        }
        listing.deferral.search = Some(search.clone());
        listing.deferral.found = found;
        listing.deferral.search_tool = called_by_name.then(|| SEARCH_TOOL_NAME.to_owned());
        let mut entries: Vec<(Value, bool, &str)> = Vec::new();
        for tool in toolset.tools() {
            let is_deferred = listing.deferral.deferred.contains(&tool.exposed_name);
            if is_deferred && !marked {
                continue;
            }
            let Some(mut def) = self.definition(tool, mode, listing)? else {
                continue;
            };
            if is_deferred && let Some(plan) = plan {
                merge_object(&mut def, &plan.defer);
            }
            entries.push((def, !is_deferred, &tool.server_id));
        }
        let (mut tools, mut loaded) = if namespaces {
            let groups = self.namespaced(entries)?;
            let n = groups.len();
            (groups, vec![true; n])
        } else {
            entries.into_iter().map(|(d, l, _)| (d, l)).unzip()
        };
        tools.push(self.search_tool(&search, listing)?);
        loaded.push(true);
        if !marked {
            for name in listing.deferral.found.clone() {
                let Some(tool) = toolset.resolve(&name) else {
                    continue;
                };
                if let Some(def) = self.definition(tool, mode, listing)? {
                    tools.push(def);
                    loaded.push(true);
                }
            }
        }
        listing.tools = tools;
        Ok(loaded)
    }

    /// Groups definitions by server, servers in order of first appearance.
    fn namespaced(&self, entries: Vec<(Value, bool, &str)>) -> Result<Vec<Value>> {
        let mut groups: Vec<(&str, Vec<Value>)> = Vec::new();
        for (def, _, server) in entries {
            match groups.iter_mut().find(|(s, _)| *s == server) {
                Some((_, defs)) => defs.push(def),
                None => groups.push((server, vec![def])),
            }
        }
        groups
            .into_iter()
            .map(|(server, defs)| self.namespace(server, defs))
            .collect()
    }

    fn namespace(&self, server: &str, defs: Vec<Value>) -> Result<Value> {
        let Some(template) = self.search_plan().and_then(|p| p.namespace.as_ref()) else {
            return Err(Error::spec("the spec has no namespace definition"));
        };
        let names: Vec<&str> = defs
            .iter()
            .filter_map(|d| d.get("name").and_then(Value::as_str))
            .collect();
        let mut description = format!(
            "The tools of the MCP server `{server}`: {}",
            names.join(", ")
        );
        if description.len() > 1024 {
            let mut cut = 1020;
            while !description.is_char_boundary(cut) {
                cut -= 1;
            }
            description.truncate(cut);
            description.push_str(", …");
        }
        let tools = Value::Array(defs);
        let vars: Vec<(&str, Var<'_>)> = vec![
            ("name", Var::Str(server)),
            ("description", Var::Str(&description)),
            ("tools", Var::Json(std::borrow::Cow::Borrowed(&tools))),
        ];
        template
            .render(vars.as_slice())
            .map_err(|m| self.search_error("/search/namespace/definition", &m.0))
    }

    fn search_error(&self, at: &str, missing: &str) -> Error {
        Error::new(
            ErrorKind::Spec,
            format!("the template needs `${{{missing}}}`, which is absent here"),
        )
        .with_file(self.source())
        .with_path(at)
    }

    /// The search tool's definition for `search`.
    fn search_tool(&self, search: &ToolSearch, listing: &mut Listing) -> Result<Value> {
        let client_tool = self.client_search().and_then(|c| c.tool.as_ref());
        match (search, client_tool) {
            (ToolSearch::Server(name), _) => self
                .search_plan()
                .and_then(|p| p.server_tools.get(name))
                .cloned()
                .ok_or_else(|| Error::input(format!("no search tool `{name}`"))),
            (ToolSearch::Client, Some(template)) => {
                let schema = search_schema();
                let vars: Vec<(&str, Var<'_>)> = vec![
                    ("name", Var::Str(SEARCH_TOOL_NAME)),
                    ("description", Var::Str(SEARCH_DESCRIPTION)),
                    ("schema", Var::Json(std::borrow::Cow::Owned(schema))),
                ];
                template
                    .render(vars.as_slice())
                    .map_err(|m| self.search_error("/search/client/tool", &m.0))
            }
            _ => {
                let tool = ExposedTool {
                    exposed_name: SEARCH_TOOL_NAME.to_owned(),
                    server_id: String::new(),
                    tool: std::sync::Arc::new(Tool::new(
                        SEARCH_TOOL_NAME,
                        SEARCH_DESCRIPTION,
                        search_schema(),
                    )),
                };
                let mode = listing.deferral.mode;
                self.definition(&tool, mode, listing)?.ok_or_else(|| {
                    Error::spec(
                        "the provider's schema rules cannot express the search tool's schema",
                    )
                })
            }
        }
    }

    /// The search call in `item`, when `listing` takes searches and the item is one.
    pub(crate) fn search_item(
        &self,
        item: &Value,
        index: usize,
        listing: &Listing,
    ) -> Option<SearchCall> {
        let search = listing.deferral.search.as_ref()?;
        if *search == ToolSearch::Client
            && let Some(calls) = self.client_search().and_then(|c| c.calls.as_ref())
        {
            if !calls.select.matches(item) {
                return None;
            }
            let call_id = calls.id.read_string(item);
            let args = read_arguments(
                calls.arguments.path.get(item),
                calls.arg_format,
                Default::default(),
            )
            .unwrap_or_default();
            return Some(SearchCall::from_arguments(index, call_id, &args));
        }
        let name = listing.deferral.search_tool.as_deref()?;
        if !self.is_call(item) || self.calls.name.read_string(item).as_deref() != Some(name) {
            return None;
        }
        let call_id = self.calls.id.read_string(item);
        let args = read_arguments(
            self.calls.arguments.path.get(item),
            self.calls.arg_format,
            Default::default(),
        )
        .unwrap_or_default();
        Some(SearchCall::from_arguments(index, call_id, &args))
    }

    /// Whether `item` is a search call item of its own kind (not a call).
    pub(crate) fn is_search_item(&self, item: &Value, listing: &Listing) -> bool {
        listing.deferral.search == Some(ToolSearch::Client)
            && self
                .client_search()
                .and_then(|c| c.calls.as_ref())
                .is_some_and(|calls| calls.select.matches(item))
    }

    /// Answers a search the model made: the deferred tools of `listing` that
    /// best match its query (those `visible` accepts: the execution layer
    /// hides those its policy denies), in the provider's shape for the
    /// listing's [`ToolSearch`]: the spec's client answer (`tool_reference`
    /// blocks, a `tool_search_output` with the tools' definitions), or for
    /// the library's search tool an ordinary answer whose text names and
    /// describes the tools found, which the next listing adds
    /// ([`ListOptions::found`]).
    ///
    /// A search that finds nothing is answered with a text saying so (a
    /// list of references cannot be empty); one with no query (arguments
    /// without text) with an error asking for one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when `listing` is another provider's or has no
    /// deferred tools; [`ErrorKind::Spec`] when the spec's answer template
    /// needs a value the search lacks (a call id).
    pub fn answer_search(
        &self,
        search: &SearchCall,
        listing: &Listing,
        visible: impl Fn(&ExposedTool) -> bool,
    ) -> Result<SearchAnswer> {
        if listing.provider_id() != self.id() {
            return Err(Error::input(format!(
                "the listing is in the format of provider `{}`, not `{}`",
                listing.provider_id(),
                self.id()
            )));
        }
        let Some(mode) = listing.deferral.search.as_ref() else {
            return Err(Error::input(
                "the listing defers no tool: there is nothing to search",
            ));
        };
        let name = listing
            .deferral
            .search_tool
            .as_deref()
            .unwrap_or(SEARCH_TOOL_NAME);
        // Arguments with no text to search for get an error the model can
        // act on, not an empty result it could take for "no such tool".
        let blank = search.query.trim().is_empty();
        let (found, text) = if blank {
            let text = format!(
                "The search `{name}` was given no query: call it again with `query`, a few words \
                 for what the tool should do."
            );
            (Vec::new(), text)
        } else {
            let index = listing
                .deferral
                .index
                .get_or_init(|| ToolIndex::new(listing.toolset()));
            let hits = index.search(&search.query, search.limit, |t| {
                listing.is_deferred(&t.exposed_name) && visible(t)
            });
            let found: Vec<String> = hits.iter().map(|h| h.exposed_name.clone()).collect();
            let text = answer_text(&search.query, &found, listing);
            (found, text)
        };
        let client = self.client_search().filter(|_| *mode == ToolSearch::Client);
        let answer = match client {
            Some(client) if !(found.is_empty() && client.answer.uses("references")) => {
                self.client_answer(client, search, name, &found, &text, listing)?
            }
            _ => self.answer(
                search.call_id.as_deref(),
                name,
                Outcome::Completed(&if blank {
                    CallToolResult::error(text)
                } else {
                    CallToolResult::text(text)
                }),
                &ResultOptions::default(),
            )?,
        };
        Ok(SearchAnswer { answer, found })
    }

    fn client_answer(
        &self,
        client: &ClientSearchPlan,
        search: &SearchCall,
        name: &str,
        found: &[String],
        text: &str,
        listing: &Listing,
    ) -> Result<Value> {
        let mut references = Vec::new();
        if let Some(reference) = &client.reference {
            for tool in found {
                let vars: Vec<(&str, Var<'_>)> = vec![("name", Var::Str(tool))];
                references.push(
                    reference
                        .render(vars.as_slice())
                        .map_err(|m| self.search_error("/search/client/reference", &m.0))?,
                );
            }
        }
        let tools = if client.answer.uses("tools") {
            self.found_definitions(found, listing)?
        } else {
            Vec::new()
        };
        let (tools, references) = (Value::Array(tools), Value::Array(references));
        let mut vars: Vec<(&str, Var<'_>)> = vec![
            ("name", Var::Str(name)),
            ("text", Var::Str(text)),
            ("tools", Var::Json(std::borrow::Cow::Borrowed(&tools))),
            (
                "references",
                Var::Json(std::borrow::Cow::Borrowed(&references)),
            ),
        ];
        if let Some(id) = &search.call_id {
            vars.push(("call_id", Var::Str(id)));
        }
        client.answer.render(vars.as_slice()).map_err(|m| {
            self.search_error("/search/client/answer", &m.0)
                .with_tool(name)
        })
    }

    /// The loaded definitions of the tools `found`, grouped in namespaces
    /// when the listing has them.
    fn found_definitions(&self, found: &[String], listing: &Listing) -> Result<Vec<Value>> {
        let mut scratch = Listing::scratch(listing);
        let mode = listing.deferral.mode;
        let mut entries = Vec::new();
        for name in found {
            let Some(tool) = listing.toolset().resolve(name) else {
                continue;
            };
            if let Some(def) = self.definition(tool, mode, &mut scratch)? {
                entries.push((def, true, tool.server_id.as_str()));
            }
        }
        if listing.deferral.namespaces {
            self.namespaced(entries)
        } else {
            Ok(entries.into_iter().map(|(d, _, _)| d).collect())
        }
    }
}

/// The text of a search's answer: each tool found with its description and parameters.
fn answer_text(query: &str, found: &[String], listing: &Listing) -> String {
    if found.is_empty() {
        return format!(
            "No tool matches \"{query}\". Try other words for what the tool should do."
        );
    }
    let mut text = format!(
        "Found {} tool{} for \"{query}\"; {} can be called from the next turn:",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        if found.len() == 1 { "it" } else { "they" },
    );
    let mut seen = HashSet::new();
    for name in found.iter().filter(|n| seen.insert(n.as_str())) {
        let Some(tool) = listing.toolset().resolve(name) else {
            continue;
        };
        text.push_str("\n- ");
        text.push_str(name);
        if let Some(d) = tool.tool.description.as_deref() {
            let d = crate::describe::sanitize_description(d);
            let first = d.lines().next().unwrap_or_default();
            text.push_str(": ");
            text.push_str(first.trim());
        }
        let params: Vec<&str> = parameter_names(&tool.tool.input_schema).collect();
        if !params.is_empty() {
            text.push_str(" (parameters: ");
            text.push_str(&params.join(", "));
            text.push(')');
        }
    }
    text
}
