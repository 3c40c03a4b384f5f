//! `sampling.response`: how the provider's response is read back into a
//! `CreateMessageResult`: the model, an error body's message, the content
//! and what each kind of item becomes, the stop reason, and the `_meta`
//! the next request must send back.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::at;
use crate::error::Problem;
use crate::json::pointer_child;
use crate::mcp::StopReason;
use crate::spec::path::{ConditionDoc, JsonPath, PathDoc};

/// How the provider's (non-streamed) response is read. Items the calls
/// section selects are tool calls, read with its id, name and arguments.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ResponseDoc {
    /// Where the model's name is; absent: the request's model.
    #[serde(default)]
    pub model: Option<PathDoc>,
    /// Paths of an error body's message: the first present, not null and
    /// not an object makes the response an error.
    #[serde(default)]
    pub error: Vec<PathDoc>,
    /// Where the answer is, read in order: a string is one text block, a
    /// list is items.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub content: Vec<PathDoc>,
    /// What items that are not calls become: the first rule that matches
    /// applies; an item no rule matches is left out.
    #[serde(default)]
    pub items: Vec<ItemRuleDoc>,
    pub stop_reason: StopReasonDoc,
    /// `_meta` keys of a tool use and the paths in the call item they are
    /// read from (provider state the next request must send back).
    #[serde(default)]
    pub tool_use_meta: BTreeMap<String, PathDoc>,
    /// `_meta` keys of the result and the paths in the response they are
    /// read from (fields of the assistant message the next request must
    /// send back, such as reasoning; a role's `meta` puts them back).
    #[serde(default)]
    pub message_meta: BTreeMap<String, PathDoc>,
}

/// What one kind of response item becomes: give one of `text`, `media`,
/// `each` and `skip`.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("oneOf" = [{"required": ["text"]}, {"required": ["media"]}, {"required": ["each"]}, {"required": ["skip"]}]))
)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ItemRuleDoc {
    #[serde(default)]
    pub when: Option<ConditionDoc>,
    /// A text block from the string here.
    #[serde(default)]
    pub text: Option<PathDoc>,
    #[serde(default)]
    pub media: Option<MediaReadDoc>,
    /// The items of the list here are read with the same rules.
    #[serde(default)]
    pub each: Option<PathDoc>,
    /// The item is left out (reasoning, hosted tools' items).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("const" = true)))]
    pub skip: Option<bool>,
}

/// An image or audio block (by the MIME type's major type).
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct MediaReadDoc {
    pub mime: PathDoc,
    pub data: PathDoc,
}

/// How the stop reason is read.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct StopReasonDoc {
    /// Paths of the provider's reason: the first present and not null wins.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub from: Vec<PathDoc>,
    /// Provider values and the MCP stop reasons they are; others are kept as sent.
    #[serde(default)]
    pub map: BTreeMap<String, McpStopReason>,
    /// A reason that maps to `endTurn` is `toolUse` when the answer holds
    /// tool calls (APIs that report the same reason for both).
    #[serde(default)]
    pub calls_mean_tool_use: bool,
    /// An empty reason (`""`) is `toolUse` when the answer holds tool calls,
    /// and no reason otherwise (APIs that leave it empty on tool-call turns).
    #[serde(default)]
    pub empty_means_tool_use: bool,
}

/// An MCP `stopReason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::spec) enum McpStopReason {
    #[serde(rename = "endTurn")]
    EndTurn,
    #[serde(rename = "stopSequence")]
    StopSequence,
    #[serde(rename = "maxTokens")]
    MaxTokens,
    #[serde(rename = "toolUse")]
    ToolUse,
}

/// How a response is read.
#[derive(Debug, Clone)]
pub(crate) struct ResponsePlan {
    pub model: Option<JsonPath>,
    pub error: Vec<JsonPath>,
    /// The sources, with the path as written (for messages).
    pub content: Vec<(String, JsonPath)>,
    pub items: Vec<ItemRule>,
    pub stop: StopPlan,
    pub tool_use_meta: Vec<(String, JsonPath)>,
    /// `_meta` keys of the result and the response paths they are read from.
    pub message_meta: Vec<(String, JsonPath)>,
}

/// One rule for response items.
#[derive(Debug, Clone)]
pub(crate) struct ItemRule {
    pub when: Option<(JsonPath, Option<Value>)>,
    pub action: ItemAction,
}

#[derive(Debug, Clone)]
pub(crate) enum ItemAction {
    Text(JsonPath),
    Media { mime: JsonPath, data: JsonPath },
    Each(JsonPath),
    Skip,
}

/// How the stop reason is read.
#[derive(Debug, Clone)]
pub(crate) struct StopPlan {
    pub from: Vec<(String, JsonPath)>,
    pub map: BTreeMap<String, StopReason>,
    pub calls_mean_tool_use: bool,
    pub empty_means_tool_use: bool,
}

pub(super) fn compile_response(doc: ResponseDoc) -> Result<ResponsePlan, Problem> {
    let items = doc
        .items
        .into_iter()
        .enumerate()
        .map(|(i, rule)| {
            let at = at(&["response", "items", &i.to_string()]);
            let action = match (rule.text, rule.media, rule.each, rule.skip) {
                (Some(text), None, None, None) => ItemAction::Text(text.compile()),
                (None, Some(media), None, None) => ItemAction::Media {
                    mime: media.mime.compile(),
                    data: media.data.compile(),
                },
                (None, None, Some(each), None) => ItemAction::Each(each.compile()),
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
                when: rule.when.map(|c| (c.path.compile(), c.equals)),
                action,
            })
        })
        .collect::<Result<_, _>>()?;
    let stop = doc.stop_reason;
    Ok(ResponsePlan {
        model: doc.model.as_ref().map(PathDoc::compile),
        error: doc.error.iter().map(PathDoc::compile).collect(),
        content: doc
            .content
            .iter()
            .map(|p| (p.as_str().to_owned(), p.compile()))
            .collect(),
        items,
        stop: StopPlan {
            from: stop
                .from
                .iter()
                .map(|p| (p.as_str().to_owned(), p.compile()))
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
            .map(|(key, path)| (key, path.compile()))
            .collect(),
        message_meta: doc
            .message_meta
            .into_iter()
            .map(|(key, path)| (key, path.compile()))
            .collect(),
    })
}
