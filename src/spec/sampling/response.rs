//! A `sampling:` section's response rules.

use super::{ItemAction, ItemRule, ResponsePlan, StopPlan, at};
use crate::error::Problem;
use crate::json::pointer_child;
use crate::mcp::StopReason;
use crate::spec::doc::{McpStopReason, ResponseDoc};
use crate::spec::plan::JsonPath;

pub(super) fn compile_response(doc: ResponseDoc) -> Result<ResponsePlan, Problem> {
    let items = doc
        .items
        .into_iter()
        .enumerate()
        .map(|(i, rule)| {
            let at = at(&["response", "items", &i.to_string()]);
            let action = match (rule.text, rule.media, rule.each, rule.skip) {
                (Some(text), None, None, None) => ItemAction::Text(JsonPath::parse(&text)),
                (None, Some(media), None, None) => ItemAction::Media {
                    mime: JsonPath::parse(&media.mime),
                    data: JsonPath::parse(&media.data),
                },
                (None, None, Some(each), None) => ItemAction::Each(JsonPath::parse(&each)),
                (None, None, None, Some(true)) => ItemAction::Skip,
                (None, None, None, Some(false)) => {
                    return Err(Problem::at(
                        pointer_child(&at, "skip"),
                        "write `skip: true`, or leave the rule out",
                    ));
                }
                _ => {
                    return Err(Problem::at(
                        at,
                        "a rule does exactly one of `text`, `media`, `each` and `skip`",
                    ));
                }
            };
            Ok(ItemRule {
                when: rule.when.map(|c| (JsonPath::parse(&c.path), c.equals)),
                action,
            })
        })
        .collect::<Result<_, _>>()?;
    let stop = doc.stop_reason;
    Ok(ResponsePlan {
        model: doc.model.as_deref().map(JsonPath::parse),
        error: doc.error.iter().map(|p| JsonPath::parse(p)).collect(),
        content: doc
            .content
            .into_iter()
            .map(|p| (p.clone(), JsonPath::parse(&p)))
            .collect(),
        items,
        stop: StopPlan {
            from: stop
                .from
                .into_iter()
                .map(|p| (p.clone(), JsonPath::parse(&p)))
                .collect(),
            map: stop
                .map
                .into_iter()
                .map(|(value, reason)| {
                    let reason = match reason {
                        McpStopReason::EndTurn => StopReason::EndTurn,
                        McpStopReason::StopSequence => StopReason::StopSequence,
                        McpStopReason::MaxTokens => StopReason::MaxTokens,
                        McpStopReason::ToolUse => StopReason::ToolUse,
                    };
                    (value, reason)
                })
                .collect(),
            calls_mean_tool_use: stop.calls_mean_tool_use,
            empty_means_tool_use: stop.empty_means_tool_use,
        },
        tool_use_meta: doc
            .tool_use_meta
            .into_iter()
            .map(|(key, path)| (key, JsonPath::parse(&path)))
            .collect(),
        message_meta: doc
            .message_meta
            .into_iter()
            .map(|(key, path)| (key, JsonPath::parse(&path)))
            .collect(),
    })
}
