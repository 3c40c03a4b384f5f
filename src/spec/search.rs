//! The `search:` section: deferred tools (`defer`), the provider's own
//! search tools, a search the client answers in the provider's shape, and
//! namespaces (one group per server).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::calls::{self, ArgFormat, ArgumentsDoc, Field, FieldDoc, Select, SelectDoc};
use super::template::Template;
use crate::error::{Error, ErrorKind, Problem};

/// Variables of a client search tool's definition.
const SEARCH_TOOL_VARS: &[&str] = &["name", "description", "schema"];
/// Variables of a search answer.
const SEARCH_ANSWER_VARS: &[&str] = &["call_id", "name", "tools", "references", "text"];
/// Variables of a tool reference.
const REFERENCE_VARS: &[&str] = &["name"];
/// Variables of a namespace definition.
const NAMESPACE_VARS: &[&str] = &["name", "description", "tools"];

/// The `search:` section: deferred loading, the provider's own search tools,
/// a search the client answers, and namespaces.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchDoc {
    /// Merged into the definition of a deferred tool.
    pub defer: Map<String, Value>,
    /// Search tools the provider runs itself, by name (literal JSON).
    #[serde(default)]
    pub server_tools: BTreeMap<String, Value>,
    /// A search the client answers, in the provider's own shape.
    #[serde(default)]
    pub client: Option<ClientSearchDoc>,
    /// One group per server.
    #[serde(default)]
    pub namespace: Option<NamespaceDoc>,
}

/// A client-side search: the tool that offers it, how its calls are found
/// and how they are answered.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClientSearchDoc {
    /// The search tool's definition; absent: the library's search tool,
    /// listed through `tools.definition` like any tool.
    #[serde(default)]
    pub tool: Option<Value>,
    /// Which response items are search calls; absent: calls (`calls:`) to
    /// the search tool's name.
    #[serde(default)]
    pub calls: Option<SearchCallsDoc>,
    /// The answer to a search call.
    pub answer: Value,
    /// One item of `${references}` per tool found.
    #[serde(default)]
    pub reference: Option<Value>,
}

/// Search call items: which items, their id and their arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchCallsDoc {
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub arguments: ArgumentsDoc,
}

/// A namespace definition: one server's tools in a group of their own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NamespaceDoc {
    pub definition: Value,
}

/// The compiled `search:` section.
#[derive(Debug, Clone)]
pub(crate) struct SearchPlan {
    /// Merged into a deferred tool's definition.
    pub defer: Map<String, Value>,
    /// The provider's own search tools, by name.
    pub server_tools: BTreeMap<String, Value>,
    pub client: Option<ClientSearchPlan>,
    /// Variables: name, description, tools.
    pub namespace: Option<Template>,
}

/// A search the client answers in the provider's shape.
#[derive(Debug, Clone)]
pub(crate) struct ClientSearchPlan {
    /// Variables: name, description, schema.
    pub tool: Option<Template>,
    pub calls: Option<SearchCallsPlan>,
    /// Variables: call_id, name, tools, references, text.
    pub answer: Template,
    /// Variables: name.
    pub reference: Option<Template>,
}

/// Which items are search calls, and how their id and arguments are read.
#[derive(Debug, Clone)]
pub(crate) struct SearchCallsPlan {
    pub select: Select,
    pub id: Field,
    pub arguments: Field,
    pub arg_format: ArgFormat,
}

/// Compiles the `search:` section.
pub(super) fn compile(doc: SearchDoc) -> Result<SearchPlan, Problem> {
    let client = match doc.client {
        Some(client) => {
            let reference = client
                .reference
                .as_ref()
                .map(|r| Template::compile_at(r, "/search/client/reference", REFERENCE_VARS))
                .transpose()?;
            let answer =
                Template::compile_at(&client.answer, "/search/client/answer", SEARCH_ANSWER_VARS)?;
            if reference.is_none() && answer.uses("references") {
                return Err(Problem::at(
                    "/search/client/answer",
                    "the answer uses `${references}`, which needs a `reference` template",
                ));
            }
            Some(ClientSearchPlan {
                tool: client
                    .tool
                    .as_ref()
                    .map(|t| Template::compile_at(t, "/search/client/tool", SEARCH_TOOL_VARS))
                    .transpose()?,
                calls: client.calls.map(|doc| SearchCallsPlan {
                    select: calls::select(doc.select),
                    id: calls::field(doc.id),
                    arguments: calls::arguments(&doc.arguments),
                    arg_format: doc.arguments.format,
                }),
                answer,
                reference,
            })
        }
        None => None,
    };
    Ok(SearchPlan {
        defer: doc.defer,
        server_tools: doc.server_tools,
        client,
        namespace: doc
            .namespace
            .map(|n| {
                Template::compile_at(
                    &n.definition,
                    "/search/namespace/definition",
                    NAMESPACE_VARS,
                )
            })
            .transpose()?,
    })
}

impl super::Provider {
    pub(crate) fn search_plan(&self) -> Option<&SearchPlan> {
        self.search.as_ref()
    }

    pub(crate) fn client_search(&self) -> Option<&ClientSearchPlan> {
        self.search_plan().and_then(|s| s.client.as_ref())
    }

    pub(crate) fn search_error(&self, at: &str, missing: &str) -> Error {
        Error::new(
            ErrorKind::Spec,
            format!("the template needs `${{{missing}}}`, which is absent here"),
        )
        .with_file(self.source())
        .with_path(at)
    }
}
