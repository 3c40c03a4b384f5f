//! The tools offered and the tool choice.

use serde_json::Value;

use super::{render, template_error};
use crate::error::{Error, Result};
use crate::listing::{ListOptions, Listing};
use crate::mcp::{CreateMessageParams, SamplingContent, SamplingMessage, ToolChoiceMode};
use crate::sampling::SamplingOptions;
use crate::spec::Provider;
use crate::spec::choice::{Choice, ChoiceMode};
use crate::spec::sampling::SamplingPlan;
use crate::toolset::{DropReason, ToolSet};

/// The request's tools as the provider's definitions, under names it accepts.
pub(super) fn offered_tools(
    provider: &Provider,
    plan: &SamplingPlan,
    params: &CreateMessageParams,
    options: &SamplingOptions,
    warnings: &mut Vec<String>,
) -> Result<Option<Listing>> {
    let Some(tools) = params.tools.as_deref().filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let toolset = ToolSet::client()
        .server("sampling", tools.to_vec())
        .build()?;
    if let Some(dropped) = toolset.report().dropped.first() {
        let index = tools
            .iter()
            .rposition(|t| t.name == dropped.tool)
            .unwrap_or(0);
        let reason = match dropped.reason {
            DropReason::DuplicateName => "an earlier tool of the request has the same name",
            DropReason::EmptyName => "its name is empty",
            DropReason::TooDeep => "its schemas nest deeper than 256 levels",
            _ => "the toolset leaves it out",
        };
        return Err(Error::input(format!(
            "tool `{}` cannot be offered: {reason}",
            dropped.tool
        ))
        .with_path(format!("/tools/{index}"))
        .with_tool(&dropped.tool));
    }
    let mut list = ListOptions::new().strict(options.strict.unwrap_or(plan.tools_strict));
    for (name, value) in &options.options {
        list = list.option(name, value);
    }
    let listing = provider.list_tools(&toolset, &list)?;
    for excluded in &listing.report.excluded {
        warnings.push(format!(
            "tool `{}` is not offered: its schema has no strict form ({} at {})",
            excluded.tool, excluded.reason, excluded.path
        ));
    }
    for unsupported in &listing.report.unsupported {
        warnings.push(format!(
            "tool `{}` is not offered: provider `{}` cannot take its schema ({} at {})",
            unsupported.tool,
            provider.id(),
            unsupported.reason,
            unsupported.path
        ));
    }
    Ok(Some(listing))
}

/// `${tools}` (wrapped when the spec says so) and `${tool_choice}`.
pub(super) fn tools_and_choice(
    provider: &Provider,
    plan: &SamplingPlan,
    params: &CreateMessageParams,
    listing: Option<&Listing>,
    warnings: &mut Vec<String>,
) -> Result<(Option<Value>, Option<Value>)> {
    let mode = params.tool_choice.as_ref().map(|c| c.mode());
    let Some(listing) = listing else {
        if let Some(mode) = mode.filter(|m| *m != ToolChoiceMode::Auto) {
            warnings.push(format!(
                "`toolChoice: {mode}` is not sent: the request offers no tools"
            ));
        }
        return Ok((None, None));
    };
    let (keep_tools, choice) = match mode {
        None => (true, None),
        Some(mode) => {
            let key = match &mode {
                ToolChoiceMode::Auto => ChoiceMode::Auto,
                ToolChoiceMode::Required => ChoiceMode::Required,
                ToolChoiceMode::None => ChoiceMode::None,
                other => {
                    return Err(Error::input(format!(
                        "`toolChoice.mode` `{other}` is not one of auto, required and none"
                    ))
                    .with_path("/toolChoice/mode"));
                }
            };
            match plan.tool_choice.get(&key) {
                None => {
                    return Err(Error::input(format!(
                            "provider `{}` cannot express `toolChoice: {mode}`: its API has no such tool choice",
                            provider.id()
                        ))
                    .with_path("/toolChoice/mode"));
                }
                Some(Choice::Value(template)) => {
                    (true, Some(render(template, &[], "the tool choice")?))
                }
                Some(Choice::Unsent) => {
                    if key != ChoiceMode::Auto {
                        warnings.push(format!(
                            "`toolChoice: {mode}` is not sent: provider `{}` has no way to say it; the model decides",
                            provider.id()
                        ));
                    }
                    (true, None)
                }
                Some(Choice::NoTools)
                    if plan.tools_required_by_history && has_tool_blocks(&params.messages) =>
                {
                    warnings.push(format!(
                        "`toolChoice: {mode}` cannot be enforced: provider `{}` needs the tool definitions when the history holds tool uses or results, so they are sent without a tool choice",
                        provider.id()
                    ));
                    (true, None)
                }
                Some(Choice::NoTools) => (false, None),
            }
        }
    };
    if !keep_tools {
        return Ok((None, None));
    }
    let definitions = Value::Array(listing.tools.clone());
    let Some(wrap) = &plan.tools_wrap else {
        return Ok((Some(definitions), choice));
    };
    let wrap_places_choice = plan.tools_wrap_places_choice;
    let mut owned = [("tools", Some(definitions)), ("tool_choice", choice)];
    let wrapped = wrap
        .render_moving([].as_slice(), &mut owned)
        .map_err(|m| template_error(provider, "the tools' wrapper", &m))?;
    let choice = if wrap_places_choice {
        None
    } else {
        owned[1].1.take()
    };
    Ok((Some(wrapped), choice))
}

fn has_tool_blocks(messages: &[SamplingMessage]) -> bool {
    messages.iter().flat_map(|m| &m.content).any(|b| {
        matches!(
            b,
            SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_)
        )
    })
}
