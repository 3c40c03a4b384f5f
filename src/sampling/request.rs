//! Building a request body: the request's fields checked against what the
//! spec places, MCP's message rules checked, then each message rendered by
//! its role's templates and the whole by the request template.

use serde_json::Value;

use super::SamplingOptions;
use crate::error::{Error, Result};
use crate::json::{MAX_NESTING, deeper_than};
use crate::listing::Listing;
use crate::mcp::CreateMessageParams;
use crate::spec::sampling::{SamplingParam, SamplingPlan, SystemPlacement};
use crate::spec::template::{Missing, Template, Var};
use crate::spec::{Provider, merge_object};
use messages::{Writer, turns};
use tools::{offered_tools, tools_and_choice};

mod media;
mod messages;
mod rules;
mod tools;

/// The body, its warnings and the tools offered.
pub(super) fn build(
    provider: &Provider,
    plan: &SamplingPlan,
    params: &CreateMessageParams,
    options: &SamplingOptions,
) -> Result<(Value, Vec<String>, Option<Listing>)> {
    let mut warnings = Vec::new();
    check_fields(provider, plan, params, &mut warnings)?;
    rules::check(&params.messages)?;
    let listing = offered_tools(provider, plan, params, options, &mut warnings)?;
    let mut results = options.results.clone();
    for (name, value) in &options.options {
        results = results.option(name, value);
    }
    let mut writer = Writer::new(provider, plan, &results, listing.as_ref());
    let mut vars: Vec<(&str, Var<'_>)> = vec![("model", Var::Str(&options.model))];
    let mut owned: Vec<(&str, Option<Value>)> = Vec::new();
    if let Some(text) = params.system_prompt.as_deref() {
        match &plan.system {
            SystemPlacement::Message(template) => {
                let message = render(template, &[("text", Var::Str(text))], "the system message")?;
                writer.push(message);
            }
            SystemPlacement::Value(Some(template)) => {
                let value = render(template, &[("text", Var::Str(text))], "the system prompt")?;
                owned.push(("system", Some(value)));
            }
            SystemPlacement::Value(None) => vars.push(("system", Var::Str(text))),
        }
    }
    for turn in turns(&params.messages, plan.merge_consecutive) {
        writer.turn(&turn)?;
    }
    let messages = writer.into_messages();
    owned.push(("messages", Some(Value::Array(messages))));
    owned.push(("max_tokens", Some(Value::from(params.max_tokens))));
    if let Some(t) = params.temperature {
        let number = serde_json::Number::from_f64(t).ok_or_else(|| {
            Error::input(format!("temperature {t} is not a JSON number")).with_path("/temperature")
        })?;
        owned.push(("temperature", Some(Value::Number(number))));
    }
    if let Some(stops) = params.stop_sequences.as_ref().filter(|s| !s.is_empty()) {
        owned.push(("stop_sequences", Some(Value::from(stops.clone()))));
    }
    let metadata = params.metadata.as_ref();
    if let Some(metadata) = metadata.filter(|_| plan.placed.contains(&SamplingParam::Metadata)) {
        if deeper_than(metadata, MAX_NESTING) {
            return Err(
                Error::input(format!("`metadata` nests deeper than {MAX_NESTING} levels"))
                    .with_path("/metadata"),
            );
        }
        owned.push(("metadata", Some(metadata.clone())));
    }
    let (tools, choice) =
        tools_and_choice(provider, plan, params, listing.as_ref(), &mut warnings)?;
    owned.extend([("tools", tools), ("tool_choice", choice)]);
    let mut body = plan
        .request
        .render_moving(vars.as_slice(), &mut owned)
        .map_err(|m| template_error(provider, "the request", &m))?;
    if !options.merge.is_empty() {
        merge_object(&mut body, &options.merge);
    }
    Ok((body, warnings, listing))
}

pub(super) fn render(template: &Template, vars: &[(&str, Var<'_>)], what: &str) -> Result<Value> {
    template.render(vars).map_err(|m| {
        Error::spec(format!(
            "{what} needs `${{{}}}`, which has no value here",
            m.0
        ))
    })
}

pub(super) fn template_error(provider: &Provider, what: &str, missing: &Missing) -> Error {
    Error::spec(format!(
        "{what} of provider `{}` needs `${{{}}}`, which this sampling request lacks",
        provider.id(),
        missing.0
    ))
    .with_file(provider.source())
    .with_path("/sampling/request")
}

/// The request's optional fields: each is placed, ignored (with a
/// warning) or refused.
fn check_fields(
    provider: &Provider,
    plan: &SamplingPlan,
    params: &CreateMessageParams,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let given = [
        (
            SamplingParam::System,
            "systemPrompt",
            params.system_prompt.is_some(),
        ),
        (
            SamplingParam::Temperature,
            "temperature",
            params.temperature.is_some(),
        ),
        (
            SamplingParam::StopSequences,
            "stopSequences",
            params
                .stop_sequences
                .as_ref()
                .is_some_and(|s| !s.is_empty()),
        ),
        (
            SamplingParam::Metadata,
            "metadata",
            params.metadata.is_some(),
        ),
    ];
    for (param, field, present) in given {
        if !present || plan.placed.contains(&param) {
            continue;
        }
        if plan.ignore.contains(&param) {
            warnings.push(format!(
                "`{field}` is not sent: provider `{}` has no place for it",
                provider.id()
            ));
        } else {
            return Err(Error::input(format!(
                    "provider `{}` has no place for `{field}`: leave it out of the request (its spec neither places nor ignores it)",
                    provider.id()
                ))
            .with_path(format!("/{field}")));
        }
    }
    let context = params.include_context();
    if context != crate::mcp::IncludeContext::None {
        warnings.push(format!(
            "`includeContext: {context}` asks for context from the client's sessions: none is added to the body"
        ));
    }
    Ok(())
}
