//! Listings that keep deferred tools out of the prompt: who answers their
//! searches, the search tool's definition, and namespaces.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{ListOptions, Listing, ToolSearch};
use crate::budget::LIBRARY_SERVER;
use crate::error::{Error, Result};
use crate::mcp::Tool;
use crate::search::{MAX_SEARCH_LIMIT, SEARCH_TOOL_NAME};
use crate::spec::template::Var;
use crate::spec::{Provider, StrictMode, merge_object};
use crate::toolset::{ExposedTool, compile_tool_glob};

pub(crate) const SEARCH_DESCRIPTION: &str = "Searches the tools that are not loaded yet by what they do, \
and loads the best matches: they can be called from the next turn. Describe the task in a few \
words (for example \"create a GitHub issue\" or \"current time in a time zone\").";

/// The search tool's input schema.
pub(crate) fn search_schema() -> Value {
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
    pub(crate) fn namespaced(&self, entries: Vec<(Value, bool, &str)>) -> Result<Vec<Value>> {
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
}
