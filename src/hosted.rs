//! Provider-hosted MCP: servers the provider calls itself, inside one API
//! request, governed by the same policy as the servers the library runs.
//!
//! A spec with a `hosted_mcp:` section says how a hosted server is declared
//! (a tool; for some providers also an entry of a top-level request list and
//! a request header), how the tools it may run and those it must ask about
//! are written, and how the provider's hosted calls, their results, its
//! approval requests and its listings of a server's tools appear in a
//! response. [`Provider::list_hosted`] writes the declarations;
//! [`Provider::extract_calls`](crate::Provider::extract_calls) reports the
//! hosted items of a response ([`Extracted::hosted`](crate::Extracted::hosted))
//! and never runs them; [`Provider::answer_hosted_approval`] answers an
//! approval request in the provider's shape, for the next request.
//!
//! A server the provider cannot host as its policy requires runs locally
//! instead, and [`HostedListing::local`] says why: the provider has no hosted
//! MCP, or does not reach the URL's scheme, or has no approval step where the
//! policy asks. [`Policy::hosted_tools`](crate::Policy::hosted_tools) compiles
//! a policy into what a hosted server may run.
//!
//! Sending a sign-in token to the provider ([`HostedServer::authorization`])
//! lets the provider act as the user on that server: it is never set by the
//! library, only by an application that decides to.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::spec::Provider;
use crate::spec::hosted::{HostedPlan, ToolsForm};
use crate::spec::template::Var;

/// What a hosted server may run, as its policy decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HostedTools {
    /// Every tool, none asked about.
    All,
    /// These tools only (the others are denied): `run` without asking, `ask`
    /// after the application approves each call.
    Only {
        /// Run without asking.
        run: Vec<String>,
        /// Run once the application approves.
        ask: Vec<String>,
    },
}

/// Why a policy does not say, alone, what a hosted server may run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostedRefusal {
    /// The policy decides on some of the server's tools, and their names
    /// are not known: list the server, or take the provider's listing.
    ToolNamesNeeded,
    /// The server cannot be hosted under the policy: why.
    Refused(String),
}

impl std::fmt::Display for HostedRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostedRefusal::ToolNamesNeeded => f.write_str(
                "the policy decides on some of its tools, and their names are not known",
            ),
            HostedRefusal::Refused(reason) => f.write_str(reason),
        }
    }
}

/// A server to declare to the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostedServer {
    /// The server's id: its label in the request and in the provider's items.
    pub id: String,
    /// Its MCP endpoint.
    pub url: String,
    /// HTTP headers the provider sends it.
    pub headers: BTreeMap<String, String>,
    /// What it is for, for the model.
    pub description: Option<String>,
    /// A bearer token the provider presents to it. Passing a sign-in token
    /// to the provider is a trust decision: set it only on purpose.
    pub authorization: Option<String>,
    /// What it may run.
    pub tools: HostedTools,
    /// Whether its tools are deferred behind the provider's tool search.
    pub deferred: bool,
}

impl HostedServer {
    /// A server at `url` that may run every tool.
    pub fn new(id: impl Into<String>, url: impl Into<String>) -> Self {
        HostedServer {
            id: id.into(),
            url: url.into(),
            headers: BTreeMap::new(),
            description: None,
            authorization: None,
            tools: HostedTools::All,
            deferred: false,
        }
    }

    /// Sets what it may run.
    pub fn tools(mut self, tools: HostedTools) -> Self {
        self.tools = tools;
        self
    }

    /// Adds an HTTP header the provider sends it.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Sets what it is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Gives the provider a bearer token for it (a trust decision; see
    /// [`authorization`](Self::authorization)).
    pub fn authorization(mut self, token: impl Into<String>) -> Self {
        self.authorization = Some(token.into());
        self
    }

    /// Defers its tools behind the provider's tool search.
    pub fn deferred(mut self, deferred: bool) -> Self {
        self.deferred = deferred;
        self
    }
}

/// A server that runs locally rather than hosted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LocalServer {
    /// The server.
    pub server_id: String,
    /// Why the provider does not host it.
    pub reason: String,
}

impl LocalServer {
    /// `server_id` runs locally because of `reason`.
    pub fn new(server_id: impl Into<String>, reason: impl Into<String>) -> Self {
        LocalServer {
            server_id: server_id.into(),
            reason: reason.into(),
        }
    }
}

/// The declarations of the hosted servers, for a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct HostedListing {
    /// Tool definitions, to send beside the local ones.
    pub tools: Vec<Value>,
    /// Top-level request fields to add (a list of servers, for providers
    /// that declare them there).
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub request: Map<String, Value>,
    /// HTTP headers the request must carry.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The servers that run locally instead, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub local: Vec<LocalServer>,
}

/// A call the provider made to a hosted server, as its response reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostedCall {
    /// The item's id, if it has one.
    pub id: Option<String>,
    /// The hosted server (its label).
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The arguments, as the model gave them (a JSON text that does not
    /// parse is kept as a string).
    pub arguments: Value,
    /// What the server answered, when the response carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A call the provider holds until the application approves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostedApproval {
    /// The request's id, which the answer names.
    pub id: String,
    /// The hosted server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The arguments.
    pub arguments: Value,
}

/// The answer to one of the provider's approval requests, decided by the
/// policy and the approver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalAnswer {
    /// The request's id.
    pub id: String,
    /// The hosted server.
    pub server_id: String,
    /// The tool's MCP name.
    pub tool: String,
    /// Whether the call may run.
    pub approved: bool,
    /// Why not, when it may not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The input item that answers it, in the provider's shape: send it in
    /// the next request.
    pub item: Value,
}

/// The tools the provider listed for a hosted server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostedToolList {
    /// The hosted server.
    pub server_id: String,
    /// The tools' names.
    pub tools: Vec<String>,
    /// Why the listing failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A response's hosted items: nothing in them runs locally.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostedItems {
    /// Calls the provider made, in the response's order.
    pub calls: Vec<HostedCall>,
    /// Calls it holds for approval.
    pub approvals: Vec<HostedApproval>,
    /// Its listings of the servers' tools.
    pub tool_lists: Vec<HostedToolList>,
}

impl HostedItems {
    /// Whether the response had none.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.approvals.is_empty() && self.tool_lists.is_empty()
    }

    /// The servers whose output the provider put in the model's context.
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.calls.iter().map(|c| c.server_id.as_str())
    }
}

impl Provider {
    /// Whether the provider can call MCP servers itself (its spec has a
    /// `hosted_mcp:` section).
    pub fn hosts_mcp(&self) -> bool {
        self.hosted.is_some()
    }

    fn hosted_plan(&self) -> Result<&HostedPlan> {
        self.hosted
            .as_ref()
            .ok_or_else(|| Error::input(format!("{} cannot host MCP servers", self.title())))
    }

    /// Declares `servers` to the provider: a tool each (and, for providers
    /// that need them, a top-level request list and headers). A server the
    /// provider cannot host as its [`HostedTools`] require is left out and
    /// named in [`HostedListing::local`] with the reason, to run locally.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Spec`] when a template of the spec needs a value the
    /// server does not have.
    pub fn list_hosted(&self, servers: &[HostedServer]) -> Result<HostedListing> {
        let mut listing = HostedListing::default();
        let Some(plan) = &self.hosted else {
            for server in servers {
                listing.local.push(LocalServer::new(
                    &server.id,
                    format!("{} has no hosted MCP", self.title()),
                ));
            }
            return Ok(listing);
        };
        let mut entries = Vec::new();
        for server in servers {
            if let Some(reason) = self.why_local(plan, server) {
                listing.local.push(LocalServer::new(&server.id, reason));
                continue;
            }
            let (tool, entry) = self.declare(plan, server)?;
            listing.tools.push(tool);
            entries.extend(entry);
        }
        if let Some((key, _)) = &plan.request
            && !entries.is_empty()
        {
            listing.request.insert(key.clone(), Value::Array(entries));
        }
        if !listing.tools.is_empty() {
            listing.headers = plan.headers.clone();
        }
        Ok(listing)
    }

    /// Why `server` cannot be hosted, if it cannot.
    fn why_local(&self, plan: &HostedPlan, server: &HostedServer) -> Option<String> {
        let scheme = server.url.split_once("://").map(|(s, _)| s);
        if !scheme.is_some_and(|s| plan.schemes.iter().any(|ok| ok.eq_ignore_ascii_case(s))) {
            return Some(format!(
                "{} reaches only {} URLs, not `{}`",
                self.title(),
                plan.schemes.join(", "),
                shown_url(&server.url)
            ));
        }
        let sends = |var: &str| {
            plan.tool.uses(var) || plan.request.as_ref().is_some_and(|(_, t)| t.uses(var))
        };
        if !server.headers.is_empty() && !sends("headers") {
            return Some(format!(
                "it needs HTTP headers ({}), which {} cannot send to a hosted server",
                server
                    .headers
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                self.title()
            ));
        }
        if server.authorization.is_some() && !sends("authorization") {
            return Some(format!(
                "it needs a bearer token, which {} cannot send to a hosted server",
                self.title()
            ));
        }
        match &server.tools {
            HostedTools::Only { ask, .. } if !ask.is_empty() && plan.approval.is_none() => {
                Some(format!(
                    "the policy asks before {}, and {} has no approval step for hosted calls",
                    ask.iter()
                        .map(|t| format!("`{}/{t}`", server.id))
                        .collect::<Vec<_>>()
                        .join(", "),
                    self.title()
                ))
            }
            HostedTools::Only { run, ask } if run.is_empty() && ask.is_empty() => {
                Some("the policy allows none of its tools".to_owned())
            }
            _ => None,
        }
    }

    /// The tool (and request-list entry) that declare `server`.
    fn declare(&self, plan: &HostedPlan, server: &HostedServer) -> Result<(Value, Option<Value>)> {
        let (runnable, ask, unasked): (Option<Vec<&String>>, Vec<&String>, Vec<&String>) =
            match &server.tools {
                HostedTools::All => (None, Vec::new(), Vec::new()),
                HostedTools::Only { run, ask } => {
                    let mut all: Vec<&String> = run.iter().chain(ask).collect();
                    all.sort();
                    all.dedup();
                    (Some(all), ask.iter().collect(), run.iter().collect())
                }
            };
        let tools = match (&runnable, plan.tools_form) {
            (None, _) => None,
            (Some(names), ToolsForm::List) => {
                let list =
                    Value::Array(names.iter().map(|n| Value::String((*n).clone())).collect());
                match &plan.tools_wrap {
                    Some(wrap) => Some(
                        wrap.render(
                            [("names", Var::Json(std::borrow::Cow::Owned(list)))].as_slice(),
                        )
                        .map_err(|m| self.hosted_error("/hosted_mcp/tools/wrap", &m.0))?,
                    ),
                    None => Some(list),
                }
            }
            (Some(names), ToolsForm::Map) => {
                let entry = plan.tools_entry.as_ref();
                let mut map = Map::new();
                for name in names {
                    let value = match entry {
                        Some(t) => t
                            .render([("name", Var::Str(name))].as_slice())
                            .map_err(|m| self.hosted_error("/hosted_mcp/tools/entry", &m.0))?,
                        None => Value::Bool(true),
                    };
                    map.insert((*name).clone(), value);
                }
                Some(Value::Object(map))
            }
        };
        let strings = |names: &[&String]| {
            Value::Array(names.iter().map(|n| Value::String((*n).clone())).collect())
        };
        let approval = match &plan.approval {
            None => None,
            Some([none, all, some]) => {
                let (ask_v, unasked_v) = (strings(&ask), strings(&unasked));
                let vars = [
                    ("ask", Var::Json(std::borrow::Cow::Borrowed(&ask_v))),
                    ("unasked", Var::Json(std::borrow::Cow::Borrowed(&unasked_v))),
                ];
                let (template, at) =
                    match (ask.is_empty(), unasked.is_empty() && runnable.is_some()) {
                        (true, _) => (none, "/hosted_mcp/approval/none"),
                        (false, true) => (all, "/hosted_mcp/approval/all"),
                        (false, false) => (some, "/hosted_mcp/approval/some"),
                    };
                Some(
                    template
                        .render(vars.as_slice())
                        .map_err(|m| self.hosted_error(at, &m.0))?,
                )
            }
        };
        let headers = (!server.headers.is_empty()).then(|| {
            Value::Object(
                server
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            )
        });
        let mut vars: Vec<(&str, Var<'_>)> = vec![
            ("server", Var::Str(&server.id)),
            ("url", Var::Str(&server.url)),
            (
                "all_tools",
                Var::Json(std::borrow::Cow::Owned(Value::Bool(runnable.is_none()))),
            ),
        ];
        let optional: [(&str, Option<Value>); 6] = [
            ("description", server.description.clone().map(Value::String)),
            (
                "authorization",
                server.authorization.clone().map(Value::String),
            ),
            ("headers", headers),
            ("tools", tools),
            ("deferred", server.deferred.then_some(Value::Bool(true))),
            ("approval", approval),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                vars.push((name, Var::Json(std::borrow::Cow::Owned(value))));
            }
        }
        let tool = plan
            .tool
            .render(vars.as_slice())
            .map_err(|m| self.hosted_error("/hosted_mcp/tool", &m.0))?;
        let entry = match &plan.request {
            Some((key, template)) => Some(template.render(vars.as_slice()).map_err(|m| {
                self.hosted_error(&format!("/hosted_mcp/request/entry ({key})"), &m.0)
            })?),
            None => None,
        };
        Ok((tool, entry))
    }

    fn hosted_error(&self, at: &str, missing: &str) -> Error {
        Error::new(
            ErrorKind::Spec,
            format!("the template needs `${{{missing}}}`, which this hosted server has not"),
        )
        .with_file(self.source())
        .with_path(at)
    }

    /// The answer to an approval request, for the next request's input:
    /// `approve` or not, with a `reason` where the provider takes one.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] when the provider has no approval step.
    pub fn answer_hosted_approval(
        &self,
        request: &HostedApproval,
        approve: bool,
        reason: Option<&str>,
    ) -> Result<Value> {
        let plan = self.hosted_plan()?;
        let approvals = plan.approvals.as_ref().ok_or_else(|| {
            Error::input(format!(
                "{} has no approval step for hosted calls",
                self.title()
            ))
        })?;
        let mut vars: Vec<(&str, Var<'_>)> = vec![
            ("id", Var::Str(&request.id)),
            (
                "approve",
                Var::Json(std::borrow::Cow::Owned(Value::Bool(approve))),
            ),
        ];
        if let Some(reason) = reason {
            vars.push(("reason", Var::Str(reason)));
        }
        approvals
            .answer
            .render(vars.as_slice())
            .map_err(|m| self.hosted_error("/hosted_mcp/approvals/answer", &m.0))
    }

    /// The hosted items among a response's `items` (its located list).
    pub(crate) fn read_hosted(&self, items: &[Value]) -> HostedItems {
        let mut found = HostedItems::default();
        let Some(plan) = &self.hosted else {
            return found;
        };
        let text = |field: &crate::spec::calls::Field, item: &Value| field.read_string(item);
        for item in items {
            let c = &plan.calls;
            if c.select.matches(item) {
                found.calls.push(HostedCall {
                    id: text(&c.id, item),
                    server_id: text(&c.server, item).unwrap_or_default(),
                    tool: text(&c.name, item).unwrap_or_default(),
                    arguments: arguments(c.arguments.path.get(item)),
                    output: c
                        .output
                        .as_ref()
                        .and_then(|f| crate::spec::hosted::read_value(f, item))
                        .cloned(),
                    error: c
                        .error
                        .as_ref()
                        .and_then(|f| crate::spec::hosted::read_value(f, item))
                        .map(error_text),
                });
                continue;
            }
            if let Some(r) = &plan.results
                && r.select.matches(item)
            {
                let id = text(&r.call_id, item);
                let output = crate::spec::hosted::read_value(&r.output, item).cloned();
                let failed = r
                    .is_error
                    .as_ref()
                    .and_then(|f| f.path.get(item))
                    .and_then(Value::as_bool)
                    == Some(true);
                if let Some(call) = found
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.id.is_some() && c.id == id)
                {
                    if failed {
                        call.error = Some(output.as_ref().map_or_else(String::new, error_text));
                    }
                    call.output = output;
                } else {
                    tracing::warn!(
                        call_id = id.as_deref().unwrap_or(""),
                        "a hosted call's result names no call of the response; it is not reported"
                    );
                }
                continue;
            }
            if let Some(a) = &plan.approvals
                && a.select.matches(item)
            {
                found.approvals.push(HostedApproval {
                    id: text(&a.id, item).unwrap_or_default(),
                    server_id: text(&a.server, item).unwrap_or_default(),
                    tool: text(&a.name, item).unwrap_or_default(),
                    arguments: arguments(a.arguments.path.get(item)),
                });
                continue;
            }
            if let Some(l) = &plan.listings
                && l.select.matches(item)
            {
                let tools = l
                    .tools
                    .get(item)
                    .and_then(Value::as_array)
                    .map(|tools| {
                        tools
                            .iter()
                            .filter_map(|t| l.name.get(t).and_then(Value::as_str))
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                found.tool_lists.push(HostedToolList {
                    server_id: text(&l.server, item).unwrap_or_default(),
                    tools,
                    error: l
                        .error
                        .as_ref()
                        .and_then(|f| crate::spec::hosted::read_value(f, item))
                        .map(error_text),
                });
            }
        }
        found
    }
}

/// A URL as it may be shown: its scheme, host and path, without a user,
/// password or query that may carry a credential.
fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "(not a URL)".to_owned(),
    }
}

/// Arguments as given: an object, or a JSON text of one (kept as the text
/// when it does not parse).
fn arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Object(Map::new()),
    }
}

/// An error as text: a string as it is, an object's `message` (with its
/// `type` or `code` when it has one), content blocks' texts, other JSON written out.
fn error_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            let message = map.get("message").and_then(Value::as_str);
            let kind = ["type", "code"]
                .iter()
                .find_map(|k| map.get(*k))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
            match (kind, message) {
                (Some(kind), Some(message)) => format!("{kind}: {message}"),
                (None, Some(message)) => message.to_owned(),
                _ => value.to_string(),
            }
        }
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if texts.is_empty() {
                value.to_string()
            } else {
                texts.join("\n")
            }
        }
        other => other.to_string(),
    }
}
