//! The `programmatic:` section: calls that come from code. How a listing
//! declares the provider's code-execution tool (and any header it needs),
//! which `allowed_callers` values mean "the model" and "code" and where they
//! go on a tool, where a tool's output schema goes; how a call's caller is
//! read; which of a response's items are programs, their outputs and the
//! container they run in; what the next request carries on; how an answer
//! to a program's call is shaped. A spec without the section (or with
//! `programmatic: null`) has no programmatic calling.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::Provider;
use super::calls::{self, Field, FieldDoc};
use super::path::JsonPath;
use super::template::{Template, TemplateDoc, template_vars};
use crate::error::{Error, Problem, Result};

template_vars! {
    /// The answer to a program's call. Variables: call_id, name (the exposed
    /// name), content (as `answer.content` says), caller (the caller object
    /// as the call carried it), program_id.
    pub(super) ProgramAnswer("program_answer_template") = ["call_id", "name", "content", "caller", "program_id"];
}

template_vars! {
    /// Top-level fields of the next request that carry the programs' state
    /// on. Variable: container (the container's id).
    pub(super) ProgramRequest("program_request_template") = ["container"];
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ProgrammaticDoc {
    /// The tool that lets the model write programs, listed once.
    pub tool: Value,
    /// HTTP headers a request that lists it carries (a beta flag).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub allowed_callers: AllowedCallersDoc,
    /// The key of a tool definition a tool's output schema goes under,
    /// for tools open to code (absent: the provider takes none).
    #[serde(default)]
    pub output_schema: Option<String>,
    pub calls: CallerDoc,
    pub programs: ItemsDoc,
    #[serde(default)]
    pub outputs: Option<OutputsDoc>,
    #[serde(default)]
    pub container: Option<ContainerDoc>,
    /// Top-level fields of the next request that carry the programs' state
    /// on (absent: none).
    #[serde(default)]
    pub request: Option<TemplateDoc<ProgramRequest>>,
    pub answer: AnswerDoc,
}

/// Where `allowed_callers` goes on a tool, and its values.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct AllowedCallersDoc {
    pub key: String,
    pub model: String,
    pub code: String,
}

/// A condition on an item: `path` holds `equals`, one of `one_of`, or
/// (with neither) is present and not `null`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ConditionDoc {
    pub path: String,
    #[serde(default)]
    pub equals: Option<String>,
    #[serde(default)]
    pub one_of: Option<Vec<String>>,
}

/// One condition, or several that must all hold.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub(super) enum ConditionsDoc {
    One(ConditionDoc),
    All(Vec<ConditionDoc>),
}

/// How a call's caller is read.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct CallerDoc {
    /// Where a call item holds its caller (absent or `null`: the model).
    pub caller: String,
    /// A caller that means the model.
    pub model: ConditionsDoc,
    /// A caller that means a program.
    pub program: ConditionsDoc,
    /// The program's id within a program caller.
    pub program_id: String,
}

/// Which items are programs, and how one is read.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ItemsDoc {
    pub select: ConditionsDoc,
    pub id: FieldDoc,
    #[serde(default)]
    pub code: Option<FieldDoc>,
}

/// Which items are programs' outputs, and how one is read.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct OutputsDoc {
    pub select: ConditionsDoc,
    pub program_id: FieldDoc,
    pub output: FieldDoc,
    #[serde(default)]
    pub status: Option<FieldDoc>,
}

/// Where a response holds the container its programs run in.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ContainerDoc {
    pub id: String,
    #[serde(default)]
    pub expires_at: Option<String>,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct AnswerDoc {
    pub envelope: TemplateDoc<ProgramAnswer>,
    #[serde(default)]
    pub error: ProgramErrorDoc,
    pub content: ProgramContent,
    /// Whether answers to programs' calls must be a message of tool
    /// results only: no follow-up items, no text of the application's.
    #[serde(default)]
    pub results_only: bool,
}

/// How a failed program call is answered.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct ProgramErrorDoc {
    /// Put before the text of an error answer.
    #[serde(default)]
    pub prefix: Option<String>,
    /// The answer to a failed call or an `isError` result, instead of `envelope`.
    #[serde(default)]
    pub envelope: Option<TemplateDoc<ProgramAnswer>>,
}

/// What `${content}` of an answer to a program's call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProgramContent {
    /// The structured result as JSON text, else the result's text.
    Text,
    /// JSON text: the structured result, else the text as a JSON string.
    Json,
    /// As `json` for a tool listed with its output schema (the provider
    /// parses such an answer as JSON), as `text` for the others.
    JsonIfSchema,
}

/// A compiled condition.
#[derive(Debug, Clone)]
pub(crate) struct Condition {
    path: JsonPath,
    want: Want,
}

#[derive(Debug, Clone)]
enum Want {
    Present,
    Equals(String),
    OneOf(Vec<String>),
}

/// Conditions that must all hold.
#[derive(Debug, Clone)]
pub(crate) struct Conditions(Vec<Condition>);

impl Conditions {
    /// Whether `item` meets every condition.
    pub(crate) fn matches(&self, item: &Value) -> bool {
        self.0.iter().all(|c| {
            let found = c.path.get(item);
            match &c.want {
                Want::Present => found.is_some_and(|v| !v.is_null()),
                Want::Equals(want) => found.and_then(Value::as_str) == Some(want),
                Want::OneOf(wants) => found
                    .and_then(Value::as_str)
                    .is_some_and(|s| wants.iter().any(|w| w == s)),
            }
        })
    }
}

/// The compiled `programmatic:` section.
#[derive(Debug, Clone)]
pub(crate) struct ProgrammaticPlan {
    pub tool: Value,
    pub headers: BTreeMap<String, String>,
    pub callers_key: String,
    pub model_value: String,
    pub code_value: String,
    pub output_schema: Option<String>,
    pub caller: JsonPath,
    pub caller_model: Conditions,
    pub caller_program: Conditions,
    pub program_id: JsonPath,
    pub programs: ProgramsPlan,
    pub outputs: Option<OutputsPlan>,
    pub container: Option<(JsonPath, Option<JsonPath>)>,
    pub request: Option<Template>,
    pub envelope: Template,
    pub error_envelope: Option<Template>,
    pub error_prefix: Option<String>,
    pub content: ProgramContent,
    pub results_only: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct ProgramsPlan {
    pub select: Conditions,
    pub id: Field,
    pub code: Option<Field>,
}

#[derive(Debug, Clone)]
pub(crate) struct OutputsPlan {
    pub select: Conditions,
    pub program_id: Field,
    pub output: Field,
    pub status: Option<Field>,
}

fn conditions(doc: ConditionsDoc, at: &str) -> Result<Conditions, Problem> {
    let docs = match doc {
        ConditionsDoc::One(one) => vec![one],
        ConditionsDoc::All(all) if all.is_empty() => {
            return Err(Problem::at(at, "a list of conditions needs at least one"));
        }
        ConditionsDoc::All(all) => all,
    };
    docs.into_iter()
        .map(|c| {
            let want = match (c.equals, c.one_of) {
                (Some(_), Some(_)) => {
                    return Err(Problem::at(at, "give `equals` or `one_of`, not both"));
                }
                (Some(value), None) => Want::Equals(value),
                (None, Some(values)) => Want::OneOf(values),
                (None, None) => Want::Present,
            };
            Ok(Condition {
                path: JsonPath::parse(&c.path),
                want,
            })
        })
        .collect::<Result<_, _>>()
        .map(Conditions)
}

impl Provider {
    /// The spec's `programmatic:` section, or an error saying the provider
    /// has none.
    pub(crate) fn programmatic_plan(&self) -> Result<&ProgrammaticPlan> {
        self.programmatic.as_ref().ok_or_else(|| {
            Error::input(format!(
                "provider `{}` has no programmatic tool calling: no tool can be opened to code \
                 (its spec's `programmatic:` section is absent or null)",
                self.id()
            ))
        })
    }
}

/// Compiles the `programmatic:` section.
pub(super) fn compile(doc: ProgrammaticDoc) -> Result<ProgrammaticPlan, Problem> {
    let at = |p: &str| format!("/programmatic/{p}");
    let envelope = doc.answer.envelope.compile_at(&at("answer/envelope"))?;
    let error_envelope = doc
        .answer
        .error
        .envelope
        .as_ref()
        .map(|e| e.compile_at(&at("answer/error/envelope")))
        .transpose()?;
    let request = doc
        .request
        .as_ref()
        .map(|r| r.compile_at(&at("request")))
        .transpose()?;
    if request.as_ref().is_some_and(|r| r.uses("container")) && doc.container.is_none() {
        return Err(Problem::at(
            at("request"),
            "the request uses `${container}`, which needs a `container` section",
        ));
    }
    let programs = doc.programs;
    let outputs = doc
        .outputs
        .map(|o| -> Result<OutputsPlan, Problem> {
            Ok(OutputsPlan {
                select: conditions(o.select, &at("outputs/select"))?,
                program_id: calls::field(o.program_id),
                output: calls::field(o.output),
                status: o.status.map(calls::field),
            })
        })
        .transpose()?;
    Ok(ProgrammaticPlan {
        tool: doc.tool,
        headers: doc.headers,
        callers_key: doc.allowed_callers.key,
        model_value: doc.allowed_callers.model,
        code_value: doc.allowed_callers.code,
        output_schema: doc.output_schema,
        caller: JsonPath::parse(&doc.calls.caller),
        caller_model: conditions(doc.calls.model, &at("calls/model"))?,
        caller_program: conditions(doc.calls.program, &at("calls/program"))?,
        program_id: JsonPath::parse(&doc.calls.program_id),
        programs: ProgramsPlan {
            select: conditions(programs.select, &at("programs/select"))?,
            id: calls::field(programs.id),
            code: programs.code.map(calls::field),
        },
        outputs,
        container: doc.container.map(|c| {
            (
                JsonPath::parse(&c.id),
                c.expires_at.as_deref().map(JsonPath::parse),
            )
        }),
        request,
        envelope,
        error_envelope,
        error_prefix: doc.answer.error.prefix,
        content: doc.answer.content,
        results_only: doc.answer.results_only,
    })
}
