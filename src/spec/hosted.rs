//! The `hosted_mcp:` section: MCP servers the provider calls itself, inside
//! one request. How a hosted server is declared (a tool, and for some
//! providers an entry of a top-level list and request headers), how the
//! tools it may run and those it must ask about are written, and how the
//! provider's hosted calls, their results, its approval requests and its
//! tool listings appear among a response's items.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::calls::{self, ArgumentsDoc, Field, FieldDoc, Select, SelectDoc};
use super::template::{Template, TemplateDoc, template_vars};
use crate::error::Problem;

template_vars! {
    /// A hosted MCP server's declaration (its tool, or its entry of the
    /// request's list). Variables: server (its id, the label the provider's
    /// items give back), url, description (absent without one), headers (an
    /// object; absent without any), authorization (a bearer token, only when
    /// the application gives one), tools (the tools the provider may run,
    /// written as tools.as says; absent when every tool may run), all_tools
    /// (true when every tool may run), deferred (true when its tools are
    /// deferred; absent otherwise), approval (the approval setting; absent
    /// without an approval section).
    pub(crate) Server("hosted_server_template") = [
        "server",
        "url",
        "description",
        "headers",
        "authorization",
        "tools",
        "all_tools",
        "deferred",
        "approval",
    ];
}

template_vars! {
    /// An approval setting. Variables: ask (the names of the tools asked
    /// about), unasked (the names of the others the provider may run).
    pub(super) Approval("hosted_approval_template") = ["ask", "unasked"];
}

template_vars! {
    /// The answer to an approval request, an input item of the next request.
    /// Variables: id (the request's id), approve (true or false), reason
    /// (absent without one).
    pub(super) ApprovalAnswer("hosted_answer_template") = ["id", "approve", "reason"];
}

template_vars! {
    /// The value under a tool's name when tools are written as a map.
    /// Variable: name.
    pub(super) ToolsEntry("hosted_entry_template") = ["name"];
}

template_vars! {
    /// What holds the list of tool names (tools.as: list). Variable: names.
    pub(super) ToolsWrap("hosted_wrap_template") = ["names"];
}

/// MCP servers the provider calls itself, inside one request
/// (`hosted::HostedServer`, `Provider::list_hosted`): how one is declared,
/// how its policy is written, and how the provider's hosted calls, results,
/// approval requests and tool listings appear among a response's items
/// (`Extracted::hosted`). Without this section, every server runs locally.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct HostedDoc {
    /// HTTP headers a request that declares hosted servers carries (a beta flag).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// URL schemes the provider reaches (default `[https]`); a server at
    /// another runs locally.
    #[serde(default = "https_only")]
    pub schemes: Vec<String>,
    #[serde(default)]
    pub request: Option<RequestListDoc>,
    /// The tool that declares one hosted server.
    pub tool: TemplateDoc<Server>,
    #[serde(default)]
    pub tools: HostedToolsDoc,
    #[serde(default)]
    pub approval: Option<ApprovalDoc>,
    pub calls: HostedCallsDoc,
    #[serde(default)]
    pub results: Option<HostedResultsDoc>,
    #[serde(default)]
    pub approvals: Option<ApprovalsDoc>,
    #[serde(default)]
    pub listings: Option<ListingsDoc>,
}

fn https_only() -> Vec<String> {
    vec!["https".to_owned()]
}

/// A top-level request field that lists the hosted servers.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RequestListDoc {
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub key: String,
    pub entry: TemplateDoc<Server>,
}

/// How `${tools}` is written: a list of names (`as: list`, the default;
/// `wrap` puts it in what holds it) or an object keyed by name (`as: map`,
/// with `entry`).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct HostedToolsDoc {
    #[serde(default, rename = "as")]
    pub form: ToolsForm,
    /// The value under each name (`as: map`).
    #[serde(default)]
    pub entry: Option<TemplateDoc<ToolsEntry>>,
    /// What holds the list of names (`as: list`), with `${names}` where it goes.
    #[serde(default)]
    pub wrap: Option<TemplateDoc<ToolsWrap>>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolsForm {
    #[default]
    List,
    Map,
}

/// The approval setting, `${approval}`, when no tool, every tool, or some
/// tools are asked about. Absent: the provider has no approval step, and a
/// server whose policy asks runs locally.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ApprovalDoc {
    pub none: TemplateDoc<Approval>,
    pub all: TemplateDoc<Approval>,
    pub some: TemplateDoc<Approval>,
}

/// The provider's hosted calls among a response's items (the calls
/// section's `locate`).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct HostedCallsDoc {
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub server: FieldDoc,
    pub name: FieldDoc,
    pub arguments: ArgumentsDoc,
    #[serde(default)]
    pub output: Option<FieldDoc>,
    #[serde(default)]
    pub error: Option<FieldDoc>,
}

/// Their results, when they are items of their own, joined to the call by id.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct HostedResultsDoc {
    pub select: SelectDoc,
    /// The id of the call the result answers.
    pub call_id: FieldDoc,
    pub output: FieldDoc,
    /// `true` when the result is an error (absent: the provider does not say).
    #[serde(default)]
    pub is_error: Option<FieldDoc>,
}

/// The provider's approval requests, and the input item that answers one.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ApprovalsDoc {
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub server: FieldDoc,
    pub name: FieldDoc,
    pub arguments: ArgumentsDoc,
    pub answer: TemplateDoc<ApprovalAnswer>,
}

/// The provider's listings of a hosted server's tools.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ListingsDoc {
    pub select: SelectDoc,
    pub server: FieldDoc,
    /// The path of the list of tools.
    pub tools: String,
    /// A tool's name within an entry.
    pub name: String,
    #[serde(default)]
    pub error: Option<FieldDoc>,
}

/// The compiled `hosted_mcp:` section.
#[derive(Debug, Clone)]
pub(crate) struct HostedPlan {
    pub headers: BTreeMap<String, String>,
    pub schemes: Vec<String>,
    pub request: Option<(String, Template)>,
    pub tool: Template,
    pub tools_form: ToolsForm,
    pub tools_entry: Option<Template>,
    pub tools_wrap: Option<Template>,
    pub approval: Option<[Template; 3]>,
    pub calls: HostedCallsPlan,
    pub results: Option<HostedResultsPlan>,
    pub approvals: Option<ApprovalsPlan>,
    pub listings: Option<ListingsPlan>,
}

#[derive(Debug, Clone)]
pub(crate) struct HostedCallsPlan {
    pub select: Select,
    pub id: Field,
    pub server: Field,
    pub name: Field,
    /// An object, or a JSON text of one.
    pub arguments: Field,
    pub output: Option<Field>,
    pub error: Option<Field>,
}

#[derive(Debug, Clone)]
pub(crate) struct HostedResultsPlan {
    pub select: Select,
    pub call_id: Field,
    pub output: Field,
    pub is_error: Option<Field>,
}

#[derive(Debug, Clone)]
pub(crate) struct ApprovalsPlan {
    pub select: Select,
    pub id: Field,
    pub server: Field,
    pub name: Field,
    pub arguments: Field,
    pub answer: Template,
}

#[derive(Debug, Clone)]
pub(crate) struct ListingsPlan {
    pub select: Select,
    pub server: Field,
    pub tools: super::path::JsonPath,
    pub name: super::path::JsonPath,
    pub error: Option<Field>,
}

/// Compiles the `hosted_mcp:` section.
pub(super) fn compile(doc: HostedDoc) -> Result<HostedPlan, Problem> {
    let at = |p: &str| format!("/hosted_mcp/{p}");
    let tool = doc.tool.compile_at(&at("tool"))?;
    let request = doc
        .request
        .map(|r| r.entry.compile_at(&at("request/entry")).map(|t| (r.key, t)))
        .transpose()?;
    let tools_entry = match (doc.tools.form, &doc.tools.entry) {
        (ToolsForm::Map, Some(entry)) => Some(entry.compile_at(&at("tools/entry"))?),
        (ToolsForm::Map, None) => {
            return Err(Problem::at(
                at("tools"),
                "`as: map` needs an `entry`: the value under each tool's name",
            ));
        }
        (ToolsForm::List, Some(_)) => {
            return Err(Problem::at(at("tools/entry"), "`entry` is for `as: map`"));
        }
        (ToolsForm::List, None) => None,
    };
    let tools_wrap = match (doc.tools.form, &doc.tools.wrap) {
        (ToolsForm::List, Some(wrap)) => Some(wrap.compile_at(&at("tools/wrap"))?),
        (ToolsForm::Map, Some(_)) => {
            return Err(Problem::at(at("tools/wrap"), "`wrap` is for `as: list`"));
        }
        (_, None) => None,
    };
    let approval = doc
        .approval
        .map(|a| -> Result<[Template; 3], Problem> {
            Ok([
                a.none.compile_at(&at("approval/none"))?,
                a.all.compile_at(&at("approval/all"))?,
                a.some.compile_at(&at("approval/some"))?,
            ])
        })
        .transpose()?;
    if approval.is_none() && (tool.uses("approval") || request_uses(&request, "approval")) {
        return Err(Problem::at(
            at("tool"),
            "the tool uses `${approval}`, which needs an `approval` section",
        ));
    }
    let c = doc.calls;
    Ok(HostedPlan {
        headers: doc.headers,
        schemes: doc.schemes,
        request,
        tool,
        tools_form: doc.tools.form,
        tools_entry,
        tools_wrap,
        approval,
        calls: HostedCallsPlan {
            select: calls::select(c.select),
            id: calls::field(c.id),
            server: calls::field(c.server),
            name: calls::field(c.name),
            arguments: calls::arguments(&c.arguments),
            output: c.output.map(calls::field),
            error: c.error.map(calls::field),
        },
        results: doc.results.map(|r| HostedResultsPlan {
            select: calls::select(r.select),
            call_id: calls::field(r.call_id),
            output: calls::field(r.output),
            is_error: r.is_error.map(calls::field),
        }),
        approvals: doc
            .approvals
            .map(|a| -> Result<ApprovalsPlan, Problem> {
                Ok(ApprovalsPlan {
                    select: calls::select(a.select),
                    id: calls::field(a.id),
                    server: calls::field(a.server),
                    name: calls::field(a.name),
                    arguments: calls::arguments(&a.arguments),
                    answer: a.answer.compile_at(&at("approvals/answer"))?,
                })
            })
            .transpose()?,
        listings: doc.listings.map(|l| ListingsPlan {
            select: calls::select(l.select),
            server: calls::field(l.server),
            tools: super::path::JsonPath::parse(&l.tools),
            name: super::path::JsonPath::parse(&l.name),
            error: l.error.map(calls::field),
        }),
    })
}

fn request_uses(request: &Option<(String, Template)>, name: &str) -> bool {
    request.as_ref().is_some_and(|(_, t)| t.uses(name))
}

/// A value read at `field` of `item`, as it is.
pub(crate) fn read_value<'v>(field: &Field, item: &'v Value) -> Option<&'v Value> {
    field.path.get(item).filter(|v| !v.is_null())
}
