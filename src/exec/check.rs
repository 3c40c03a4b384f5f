//! A call's arguments and result held to the tool's schemas.

use serde_json::Value;

use super::cache::SchemaOf;
use super::options::OutputSchemaCheck;
use super::source::Source;
use super::turn::Checked;
use crate::budget::LIBRARY_SERVER;
use crate::calls::ToolCall;
use crate::error::{Error, ErrorKind, Result};
use crate::mcp::{CallToolResult, Tool};
use crate::toolset::{Bound, ToolSet, write_bound};

impl Source {
    /// A call's outcome with its result checked against the tool's
    /// `outputSchema`, as `check` says: a result that breaks it becomes an
    /// error (and is kept beside it, for the call's record), or is passed on
    /// with a warning; and the tool's UI resource, for the record.
    pub(super) fn check_output(
        &self,
        call: &ToolCall,
        toolset: &ToolSet,
        outcome: Result<CallToolResult>,
        check: OutputSchemaCheck,
    ) -> Checked {
        self.check_against(call, output_tool(toolset, call), outcome, check)
    }

    /// [`check_output`](Self::check_output) against `tool`, the call's
    /// tool as already resolved (`None`: the toolset has none).
    pub(super) fn check_against(
        &self,
        call: &ToolCall,
        tool: Option<&Tool>,
        outcome: Result<CallToolResult>,
        check: OutputSchemaCheck,
    ) -> Checked {
        let mut checked = Checked::as_it_is(outcome);
        self.check_in_place(call, tool, &mut checked, check);
        checked
    }

    /// [`check_against`](Self::check_against) where the outcome lies:
    /// `checked` holds it as it came, and the result is moved only when
    /// its check replaces it with an error.
    pub(super) fn check_in_place(
        &self,
        call: &ToolCall,
        tool: Option<&Tool>,
        checked: &mut Checked,
        check: OutputSchemaCheck,
    ) {
        self.check_schema(call, tool, checked, check);
        checked.ui_resource = tool.and_then(Tool::ui_resource_uri).map(str::to_owned);
    }

    fn check_schema(
        &self,
        call: &ToolCall,
        tool: Option<&Tool>,
        checked: &mut Checked,
        check: OutputSchemaCheck,
    ) {
        let result = match &checked.outcome {
            Ok(result) if check != OutputSchemaCheck::Off && !result.is_error => result,
            _ => return,
        };
        let Some(schema) = tool.and_then(|t| t.output_schema.as_ref()) else {
            return;
        };
        let problems: Vec<String> = match &result.structured_content {
            None => vec![
                "it has no `structuredContent`, though the tool declares an `outputSchema`"
                    .to_owned(),
            ],
            Some(value) => {
                let validator =
                    self.cache
                        .validator(&call.server_id, &call.tool, SchemaOf::Output, schema);
                let Some(validator) = validator.as_ref() else {
                    return;
                };
                broken_rules(validator, schema, value)
            }
        };
        if problems.is_empty() {
            return;
        }
        let why = crate::describe::sanitize_description(&problems.join("; ")).into_owned();
        if check == OutputSchemaCheck::Warn {
            tracing::warn!(server = %call.server_id, tool = %call.tool, call_id = call.call_id.as_deref().unwrap_or(""),
                problems = %why, "the structured result breaks the tool's outputSchema; answered as it is");
            checked.warning = Some(format!(
                "the result breaks the tool's outputSchema and was passed on as it is: {why}"
            ));
            return;
        }
        let error = Error::new(
            ErrorKind::InvalidResult,
            format!("the tool's result breaks its outputSchema, so it is not passed on: {why}"),
        );
        if let Ok(result) = std::mem::replace(&mut checked.outcome, Err(error)) {
            checked.kept = Some(Box::new(result));
        }
    }

    /// A call in which an argument the application binds is written (by
    /// the model, or by a resumed turn's document), refused: nothing of it
    /// is sent. The library's own tools bind nothing.
    pub(super) fn refuse_bound(&self, call: &ToolCall) -> Result<()> {
        if call.server_id == LIBRARY_SERVER {
            return Ok(());
        }
        match self
            .bindings
            .written(&call.server_id, &call.tool, &call.arguments)
        {
            None => Ok(()),
            Some(binding) => Err(binding.written_by_the_call()),
        }
    }

    /// The values the application binds for `call`, the supplied ones
    /// taken from `supplied` (the turn's).
    pub(super) fn bound_values<'s>(
        &'s self,
        call: &ToolCall,
        supplied: &'s std::collections::BTreeMap<String, Value>,
    ) -> Result<Bound<'s>> {
        if call.server_id == LIBRARY_SERVER || self.bindings.is_empty() {
            return Ok(Vec::new());
        }
        self.bindings.values(&call.server_id, &call.tool, supplied)
    }

    /// `call`'s arguments, with the `bound` values written, against
    /// `schema` (the tool's whole input schema, bound properties in it).
    /// Where a problem lies on the way to a bound argument, or in it, the
    /// rule it breaks is named and no value quoted: the error goes to the
    /// model.
    pub(super) fn check_arguments(
        &self,
        call: &ToolCall,
        schema: &Value,
        bound: &Bound<'_>,
    ) -> Result<()> {
        let validator = self
            .cache
            .validator(&call.server_id, &call.tool, SchemaOf::Input, schema);
        let Some(validator) = validator.as_ref() else {
            return Ok(());
        };
        let mut arguments = call.arguments.clone();
        write_bound(&mut arguments, bound)?;
        let instance = Value::Object(arguments);
        let problems = if bound.is_empty() {
            schema_problems(validator, &instance)
        } else {
            let pointers: Vec<&str> = bound.iter().map(|(b, _)| b.pointer()).collect();
            bound_problems(validator, schema, &instance, &pointers)
        };
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::InvalidArguments,
            format!("invalid arguments: {}", problems.join("; ")),
        ))
    }
}

/// Where `instance` breaks the schema and why, as `/path: reason`: the first five.
fn schema_problems(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().as_str().to_owned();
            format!("{}: {e}", if at.is_empty() { "/" } else { &at })
        })
        .collect()
}

/// [`schema_problems`], but a problem on the way to one of `pointers`, or
/// within one, is said as [`broken_rules`] says it, with no value quoted.
fn bound_problems(
    validator: &jsonschema::Validator,
    schema: &Value,
    instance: &Value,
    pointers: &[&str],
) -> Vec<String> {
    let on_the_way = |at: &str| {
        pointers.iter().any(|p| {
            let (short, long) = if at.len() <= p.len() {
                (at, *p)
            } else {
                (*p, at)
            };
            long.starts_with(short) && matches!(long.as_bytes().get(short.len()), None | Some(b'/'))
        })
    };
    validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().as_str().to_owned();
            if !on_the_way(&at) {
                return format!("{}: {e}", if at.is_empty() { "/" } else { &at });
            }
            let keyword = e.kind().keyword();
            let rule = schema
                .pointer(e.schema_path().as_str())
                .map(Value::to_string)
                .filter(|rule| rule.len() <= 200);
            let at = if at.is_empty() { "/" } else { &at };
            match rule {
                Some(rule) => {
                    format!("{at} (bound by the application): breaks `{keyword}: {rule}`")
                }
                None => format!("{at} (bound by the application): breaks `{keyword}`"),
            }
        })
        .collect()
}

/// The tool `call` was made to, as `toolset` holds it (offered to the
/// model, or the application's own), whose `outputSchema` its result is
/// checked against.
pub(super) fn output_tool<'t>(toolset: &'t ToolSet, call: &ToolCall) -> Option<&'t Tool> {
    toolset
        .resolve(&call.exposed_name)
        .filter(|t| t.server_id == call.server_id && t.tool.name == call.tool)
        .or_else(|| toolset.app_tool(&call.server_id, &call.tool))
        .map(|t| &*t.tool)
}

/// Where `instance` breaks `schema` and which rule, as ``/path: breaks
/// `keyword: rule` ``: the first five. The instance's values are never
/// quoted: a result that breaks its schema is not passed on, and what it
/// holds must not reach the model through the error either.
fn broken_rules(
    validator: &jsonschema::Validator,
    schema: &Value,
    instance: &Value,
) -> Vec<String> {
    validator
        .iter_errors(instance)
        .take(5)
        .map(|e| {
            let at = e.instance_path().as_str();
            let at = if at.is_empty() { "/" } else { at };
            let keyword = e.kind().keyword();
            let rule = schema
                .pointer(e.schema_path().as_str())
                .map(Value::to_string)
                .filter(|rule| rule.len() <= 200);
            match rule {
                Some(rule) => format!("{at}: breaks `{keyword}: {rule}`"),
                None => format!("{at}: breaks `{keyword}`"),
            }
        })
        .collect()
}
