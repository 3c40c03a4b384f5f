//! Tool search: the searches a model makes for deferred tools
//! ([`SearchCall`], answered with a [`SearchAnswer`]), and ranking a toolset's
//! tools for a natural-language query ([`ToolIndex`], [`SearchHit`]).
//!
//! A [`ToolIndex`] ranks tools with BM25 (the `bm25` crate: English stemming
//! and stop words) over each tool's name and server, split into words
//! (`get_issue`, `getIssue` and `get-issue` are all `get issue`), its title,
//! its description and the names of its parameters. Ranking is
//! deterministic: equal scores are ordered by exposed name.
//!
//! Listings with deferred tools ([`ListOptions::defer`](crate::ListOptions::defer))
//! use it to answer the model's searches ([`Provider::answer_search`](crate::Provider::answer_search));
//! it is usable on its own, as the `search-tools` command does.

use bm25::{Language, SearchEngine, SearchEngineBuilder};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::toolset::{ExposedTool, ToolSet};

/// How many tools a search returns when the call does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;
/// The most tools one search returns.
pub const MAX_SEARCH_LIMIT: usize = 20;

/// The name of the library's search tool (and of a client search tool the
/// model calls like a function).
pub const SEARCH_TOOL_NAME: &str = "search_tools";

/// A search the model asked for, to be answered with
/// [`Provider::answer_search`](crate::Provider::answer_search) (or by [`Source::execute_tool_calls`](crate::Source::execute_tool_calls)).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchCall {
    /// The call's position among the response's calls.
    pub index: usize,
    /// The id the model gave the call.
    pub call_id: Option<String>,
    /// What to search for: the `query` argument, or the call's other text
    /// arguments joined by spaces.
    pub query: String,
    /// How many tools to find at most (the `limit` argument, 1 to
    /// [`MAX_SEARCH_LIMIT`]; [`DEFAULT_SEARCH_LIMIT`] without one).
    pub limit: usize,
}

impl SearchCall {
    /// A search for `query` (at most [`DEFAULT_SEARCH_LIMIT`] tools), to
    /// answer a call made outside a response the library read.
    pub fn new(call_id: Option<String>, query: impl Into<String>) -> Self {
        SearchCall {
            index: 0,
            call_id,
            query: query.into(),
            limit: DEFAULT_SEARCH_LIMIT,
        }
    }

    /// Finds at most `limit` tools (1 to [`MAX_SEARCH_LIMIT`]).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit.clamp(1, MAX_SEARCH_LIMIT);
        self
    }

    pub(crate) fn from_arguments(
        index: usize,
        call_id: Option<String>,
        args: &Map<String, Value>,
    ) -> Self {
        let query = match args.get("query").and_then(Value::as_str) {
            Some(q) => q.to_owned(),
            None => {
                let mut parts = Vec::new();
                collect_text(&Value::Object(args.clone()), &mut parts);
                parts.join(" ")
            }
        };
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_SEARCH_LIMIT, |l| {
                usize::try_from(l)
                    .unwrap_or(MAX_SEARCH_LIMIT)
                    .clamp(1, MAX_SEARCH_LIMIT)
            });
        SearchCall {
            index,
            call_id,
            query,
            limit,
        }
    }
}

/// The strings in `value`, depth first (a search call's arguments given
/// under other names than `query`: `goal`, `paths`).
fn collect_text(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_text(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_text(v, out)),
        _ => {}
    }
}

/// The answer to a [`SearchCall`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchAnswer {
    /// The provider's answer item, in the model's order among the turn's answers.
    pub answer: Value,
    /// The exposed names of the tools found, best first: pass them to the
    /// next listing ([`ListOptions::found`](crate::ListOptions::found)).
    pub found: Vec<String>,
}

/// One tool found by a search, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchHit {
    /// The tool's exposed name.
    pub exposed_name: String,
    /// The tool's server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The BM25 score (higher is better; only the order is meaningful).
    pub score: f32,
}

/// A BM25 index over a toolset's tools.
pub struct ToolIndex {
    engine: SearchEngine<usize>,
    toolset: ToolSet,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.toolset.len())
            .finish_non_exhaustive()
    }
}

impl ToolIndex {
    /// Indexes every tool of `toolset`.
    pub fn new(toolset: &ToolSet) -> Self {
        let documents: Vec<bm25::Document<usize>> = toolset
            .tools()
            .iter()
            .enumerate()
            .map(|(i, tool)| bm25::Document::new(i, document(tool)))
            .collect();
        let engine =
            SearchEngineBuilder::<usize>::with_documents(Language::English, documents).build();
        ToolIndex {
            engine,
            toolset: toolset.clone(),
        }
    }

    /// The tools that best match `query`, best first, at most `limit`, among
    /// those `visible` accepts. A query with no word any tool has finds nothing.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        visible: impl Fn(&ExposedTool) -> bool,
    ) -> Vec<SearchHit> {
        let tools = self.toolset.tools();
        let query = words(query);
        let mut hits: Vec<SearchHit> = self
            .engine
            .search(&query, None)
            .into_iter()
            .filter_map(|r| {
                let tool = tools.get(r.document.id)?;
                visible(tool).then(|| SearchHit {
                    exposed_name: tool.exposed_name.clone(),
                    server_id: tool.server_id.clone(),
                    tool: tool.tool.name.clone(),
                    score: r.score,
                })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.exposed_name.cmp(&b.exposed_name))
        });
        hits.truncate(limit);
        hits
    }
}

/// The text a tool is found by: its name words (twice: a name says most),
/// server, title, description and parameter names.
fn document(tool: &ExposedTool) -> String {
    let mut text = String::new();
    let name = words(&tool.tool.name);
    for part in [&name, &name, &words(&tool.server_id)] {
        text.push_str(part);
        text.push(' ');
    }
    if let Some(title) = &tool.tool.title {
        text.push_str(title);
        text.push(' ');
    }
    if let Some(description) = &tool.tool.description {
        text.push_str(description);
        text.push(' ');
    }
    for param in parameter_names(&tool.tool.input_schema) {
        text.push_str(&words(param));
        text.push(' ');
    }
    text
}

/// The names of a schema's top-level properties.
pub(crate) fn parameter_names(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys().map(String::as_str))
}

/// `text` with identifiers split into words: `_`, `-`, `.`, `/` and
/// lower-to-upper case changes separate words.
pub(crate) fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    for c in text.chars() {
        match c {
            '_' | '-' | '.' | '/' | ':' => out.push(' '),
            c if c.is_uppercase() && prev.is_some_and(char::is_lowercase) => {
                out.push(' ');
                out.push(c);
            }
            c => out.push(c),
        }
        prev = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Tool;
    use serde_json::json;

    fn toolset() -> ToolSet {
        let schema = |p: &str| json!({"type": "object", "properties": {p: {"type": "string"}}});
        ToolSet::hub()
            .server(
                "github",
                vec![
                    Tool::new("create_issue", "Opens an issue", schema("title")),
                    Tool::new("get_issue", "Reads an issue", schema("number")),
                ],
            )
            .server(
                "time",
                vec![Tool::new(
                    "convertTime",
                    "Converts between time zones",
                    schema("timezone"),
                )],
            )
            .build()
            .unwrap()
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(words("convertTime"), "convert Time");
        assert_eq!(words("get_issue-now.x"), "get issue now x");
        assert_eq!(words("HTTPServer"), "HTTPServer");
    }

    #[test]
    fn ranks_by_relevance_then_name() {
        let index = ToolIndex::new(&toolset());
        let hits = index.search("convert time zone", 5, |_| true);
        assert_eq!(hits[0].exposed_name, "time__convertTime");
        // "issue" scores both github tools alike in every field but the verb: ties go by name.
        let hits = index.search("issue", 5, |_| true);
        let names: Vec<_> = hits.iter().map(|h| h.exposed_name.as_str()).collect();
        assert_eq!(names, ["github__create_issue", "github__get_issue"]);
    }

    #[test]
    fn hidden_tools_and_limits() {
        let index = ToolIndex::new(&toolset());
        let hits = index.search("issue", 5, |t| t.tool.name != "get_issue");
        assert_eq!(hits.len(), 1);
        assert_eq!(index.search("issue", 1, |_| true).len(), 1);
        assert!(index.search("zebra", 5, |_| true).is_empty());
        assert!(index.search("", 5, |_| true).is_empty());
    }
}
