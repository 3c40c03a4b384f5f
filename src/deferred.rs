//! Deferred loading: listings that keep most tools out of the prompt, the
//! searches that find them, and the answers to those searches.
//!
//! A listing with [`ListOptions::defer`](crate::ListOptions::defer) globs marks the matching tools
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

use std::collections::HashSet;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::listing::{Listing, ToolSearch};
use crate::mcp::CallToolResult;
use crate::results::{Outcome, ResultOptions};
use crate::search::{SEARCH_TOOL_NAME, SearchAnswer, SearchCall, ToolIndex, parameter_names};
use crate::spec::Provider;
use crate::spec::search::ClientSearchPlan;
use crate::spec::template::Var;
use crate::toolset::ExposedTool;

impl Provider {
    /// Answers a search the model made: the deferred tools of `listing` that
    /// best match its query (those `visible` accepts: the execution layer
    /// hides those its policy denies), in the provider's shape for the
    /// listing's [`ToolSearch`]: the spec's client answer (`tool_reference`
    /// blocks, a `tool_search_output` with the tools' definitions), or for
    /// the library's search tool an ordinary answer whose text names and
    /// describes the tools found, which the next listing adds
    /// ([`ListOptions::found`](crate::ListOptions::found)).
    ///
    /// A search that finds nothing is answered with a text saying so (a
    /// list of references cannot be empty); one with no query (arguments
    /// without text) with an error asking for one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) when `listing` is another provider's or has no
    /// deferred tools; [`ErrorKind::Spec`](crate::ErrorKind::Spec) when the spec's answer template
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
