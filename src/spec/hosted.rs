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
use super::template::Template;
use crate::error::Problem;

/// Variables of a hosted server's tool definition and request-list entry.
pub(crate) const SERVER_VARS: &[&str] = &[
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
/// Variables of an approval setting: the tools asked about, and the others.
const APPROVAL_VARS: &[&str] = &["ask", "unasked"];
/// Variables of an approval answer.
const ANSWER_VARS: &[&str] = &["id", "approve", "reason"];
/// Variables of one entry of `${tools}` written as a map.
const ENTRY_VARS: &[&str] = &["name"];
/// Variables of what holds the list of names.
const WRAP_VARS: &[&str] = &["names"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HostedDoc {
    /// HTTP headers a request with hosted servers carries (a beta flag).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// URL schemes the provider reaches; others run locally.
    #[serde(default = "https_only")]
    pub schemes: Vec<String>,
    /// A top-level request field listing the servers, one entry each.
    #[serde(default)]
    pub request: Option<RequestListDoc>,
    /// The tool that declares one server.
    pub tool: Value,
    /// How `${tools}` (the tools the provider may run) is written.
    #[serde(default)]
    pub tools: ToolsFormDoc,
    /// The approval setting (`${approval}`); absent: the provider has no
    /// approval step, and a server with a tool to ask about runs locally.
    #[serde(default)]
    pub approval: Option<ApprovalDoc>,
    /// The provider's hosted calls among a response's items.
    pub calls: HostedCallsDoc,
    /// Their results, when they are items of their own.
    #[serde(default)]
    pub results: Option<HostedResultsDoc>,
    /// The provider's approval requests, and their answer.
    #[serde(default)]
    pub approvals: Option<ApprovalsDoc>,
    /// The provider's listings of a hosted server's tools.
    #[serde(default)]
    pub listings: Option<ListingsDoc>,
}

fn https_only() -> Vec<String> {
    vec!["https".to_owned()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RequestListDoc {
    pub key: String,
    pub entry: Value,
}

/// `${tools}` as a list of names, or as an object keyed by name.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsFormDoc {
    #[serde(default, rename = "as")]
    pub form: ToolsForm,
    /// The value under each name (`as: map`).
    #[serde(default)]
    pub entry: Option<Value>,
    /// What holds the list of names (`as: list`), with `${names}` where it goes.
    #[serde(default)]
    pub wrap: Option<Value>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolsForm {
    #[default]
    List,
    Map,
}

/// The approval setting when no tool, every tool, or some tools are asked about.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApprovalDoc {
    pub none: Value,
    pub all: Value,
    pub some: Value,
}

#[derive(Debug, Deserialize)]
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

#[derive(Debug, Deserialize)]
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ApprovalsDoc {
    pub select: SelectDoc,
    pub id: FieldDoc,
    pub server: FieldDoc,
    pub name: FieldDoc,
    pub arguments: ArgumentsDoc,
    /// The input item that answers one.
    pub answer: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListingsDoc {
    pub select: SelectDoc,
    pub server: FieldDoc,
    /// The list of tools.
    pub tools: String,
    /// A tool's name within an entry of the list.
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
    let tool = Template::compile_at(&doc.tool, &at("tool"), SERVER_VARS)?;
    let request = doc
        .request
        .map(|r| {
            Template::compile_at(&r.entry, &at("request/entry"), SERVER_VARS).map(|t| (r.key, t))
        })
        .transpose()?;
    let tools_entry = match (doc.tools.form, &doc.tools.entry) {
        (ToolsForm::Map, Some(entry)) => {
            Some(Template::compile_at(entry, &at("tools/entry"), ENTRY_VARS)?)
        }
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
        (ToolsForm::List, Some(wrap)) => {
            Some(Template::compile_at(wrap, &at("tools/wrap"), WRAP_VARS)?)
        }
        (ToolsForm::Map, Some(_)) => {
            return Err(Problem::at(at("tools/wrap"), "`wrap` is for `as: list`"));
        }
        (_, None) => None,
    };
    let approval = doc
        .approval
        .map(|a| -> Result<[Template; 3], Problem> {
            Ok([
                Template::compile_at(&a.none, &at("approval/none"), APPROVAL_VARS)?,
                Template::compile_at(&a.all, &at("approval/all"), APPROVAL_VARS)?,
                Template::compile_at(&a.some, &at("approval/some"), APPROVAL_VARS)?,
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
                    answer: Template::compile_at(&a.answer, &at("approvals/answer"), ANSWER_VARS)?,
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
