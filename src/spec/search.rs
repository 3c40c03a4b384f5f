//! The `search:` section: deferred tools (`defer`), the provider's own
//! search tools, a search the client answers in the provider's shape, and
//! namespaces (one group per server).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::calls::{self, ArgFormat, ArgumentsDoc, Field, FieldDoc, Select, SelectDoc};
use super::template::{Template, TemplateDoc, template_vars};
use crate::error::{Error, ErrorKind, Problem};

template_vars! {
    /// A client search tool's definition. Variables: name (search_tools),
    /// description (what the search tool does, written by the library),
    /// schema (its input schema: query, limit).
    pub(super) SearchTool("search_tool_template") = ["name", "description", "schema"];
}

template_vars! {
    /// The answer to a search call. Variables: call_id (absent for a call
    /// without an id), name (the search tool's name), tools (the definitions
    /// of the tools found, as listed when loaded; grouped in namespaces when
    /// the listing has them), references (one reference item per tool
    /// found), text (the tools found, named and described, as text).
    pub(super) SearchAnswer("search_answer_template") = ["call_id", "name", "tools", "references", "text"];
}

template_vars! {
    /// A reference to a tool found, an item of ${references}. Variable:
    /// name (the tool's exposed name).
    pub(super) Reference("reference_template") = ["name"];
}

template_vars! {
    /// A namespace: one server's tools. Variables: name (the server's id),
    /// description (the server and the names of its tools, written by the
    /// library), tools (the definitions, deferred ones marked).
    pub(super) Namespace("namespace_template") = ["name", "description", "tools"];
}

/// Deferred loading (`ListOptions::defer`): how the provider marks a
/// deferred tool, its own search tools, a search the client answers, and
/// namespaces. Without this section, deferred tools are left out of the
/// listing and the library's search tool (`search_tools`, a function tool)
/// finds them.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct SearchDoc {
    /// Merged into the definition of a deferred tool (literal JSON).
    pub defer: Map<String, Value>,
    /// The provider's own search tools, by name (`ToolSearch::Server`):
    /// each literal JSON, listed as is, never deferred.
    #[serde(default)]
    pub server_tools: BTreeMap<String, Map<String, Value>>,
    #[serde(default)]
    pub client: Option<ClientSearchDoc>,
    #[serde(default)]
    pub namespace: Option<NamespaceDoc>,
}

/// A search the client answers (`ToolSearch::Client`, the default with this
/// section): the library ranks the deferred tools and answers in this shape.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ClientSearchDoc {
    /// The search tool's definition; absent: the library's search tool,
    /// listed through `tools.definition`.
    #[serde(default)]
    pub tool: Option<TemplateDoc<SearchTool>>,
    #[serde(default)]
    pub calls: Option<SearchCallsDoc>,
    pub answer: TemplateDoc<SearchAnswer>,
    /// One item of `${references}` per tool found (required when the answer
    /// uses `${references}`).
    #[serde(default)]
    pub reference: Option<TemplateDoc<Reference>>,
}

/// Which response items are search calls, when they are items of their
/// own; absent: calls (the calls section) to the search tool's name.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct SearchCallsDoc {
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub arguments: ArgumentsDoc,
}

/// One namespace per server for listings with deferred tools and the
/// provider's search (`ListOptions::namespaces` turns it off).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct NamespaceDoc {
    pub definition: TemplateDoc<Namespace>,
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
                .map(|r| r.compile_at("/search/client/reference"))
                .transpose()?;
            let answer = client.answer.compile_at("/search/client/answer")?;
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
                    .map(|t| t.compile_at("/search/client/tool"))
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
        server_tools: doc
            .server_tools
            .into_iter()
            .map(|(name, tool)| (name, Value::Object(tool)))
            .collect(),
        client,
        namespace: doc
            .namespace
            .map(|n| n.definition.compile_at("/search/namespace/definition"))
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
