//! A `sampling:` section's messages: each role's templates and media
//! rules, tool uses, and where tool results and their follow-ups go.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::at;
use super::call_ids::CallIdsDoc;
use crate::error::Problem;
use crate::json::pointer_child;
#[cfg(test)]
use crate::spec::results::MIME_RANGE;
use crate::spec::results::{
    ContentForm, MediaAction, MediaRule, ResultsPlan, RuleParts, compile_rule,
};
use crate::spec::template::{Template, TemplateDoc, TemplateVars, TextTemplateDoc, template_vars};

template_vars! {
    /// A message. Variables: content (the role's content form; absent when
    /// the message has nothing for it, write ${content?} where the API
    /// allows that), attachments (the items of attach rules, a list),
    /// tool_calls (the tool uses, with tool_use.into: tool_calls; a list),
    /// and each variable the role's `meta` names (a value of the message's
    /// _meta, or its default).
    pub(in crate::spec) Message("sampling_message_template", open) = ["content", "attachments", "tool_calls"];
}

template_vars! {
    /// A text block of a message. Variable: text.
    pub(in crate::spec) MessageText("sampling_text_block_template") = ["text"];
}

template_vars! {
    /// A message's media rule. Variables: type (image or audio), mime
    /// (normalized, image/jpg is image/jpeg), mime_subtype (the part after
    /// /), data (the base64 payload), size (decoded bytes).
    pub(in crate::spec) MessageMedia("sampling_media_template") = ["type", "mime", "mime_subtype", "data", "size"];
}

template_vars! {
    /// A tool use of an assistant message. Variables: id, name (the name the
    /// provider knows the tool by), input (the arguments, an object),
    /// arguments (the same as JSON text), and each variable `meta` names (a
    /// value of the tool use's _meta).
    pub(in crate::spec) ToolUse("sampling_tool_use_template", open) = ["id", "name", "input", "arguments"];
}

/// A variable a spec names (`meta`): lower-case letters, digits and `_`.
#[cfg(test)]
pub(in crate::spec) const VAR_NAME: &str = "^[a-z_][a-z0-9_]*$";

/// Whether `var` may name a variable: lower-case letters, digits and `_`,
/// not starting with a digit, and none of the kind's own.
fn names_a_variable(var: &str, own: &[&str]) -> bool {
    var.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && var
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !own.contains(&var)
}

/// How each role's messages are shaped, tool uses written, and tool results
/// and their follow-ups placed.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct MessagesDoc {
    /// How user messages are shaped: text blocks and media by their rules.
    pub user: RoleDoc,
    /// How assistant messages are shaped: text blocks, media by their
    /// rules, and tool uses.
    pub assistant: RoleDoc,
    pub tool_use: ToolUseDoc,
    /// A user message's tool results, answered by the results section.
    pub tool_results: ResultsPlacement,
    /// The media the answers cannot carry (the results' `follow_up` rules).
    #[serde(default)]
    pub follow_ups: FollowUpPlacement,
    /// Consecutive messages of one role become one message, their blocks in
    /// order (APIs whose roles must alternate).
    #[serde(default)]
    pub merge_consecutive: bool,
    #[serde(default)]
    pub call_ids: Option<CallIdsDoc>,
}

/// How the messages of one role are shaped.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct RoleDoc {
    pub content: ContentForm,
    /// A text block, for `content: blocks` and `string_or_blocks`.
    #[serde(default)]
    pub text_block: Option<TemplateDoc<MessageText>>,
    /// The message.
    pub envelope: TemplateDoc<Message>,
    #[serde(default)]
    pub media: SamplingMediaDoc,
    /// Envelope variables read from the message's `_meta` (what
    /// `response.message_meta` kept): variable name to the `_meta` key, or
    /// `{key, default}` for a field the API requires on every such message
    /// (the default when the key is absent).
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("propertyNames" = {"pattern": VAR_NAME})))]
    pub meta: BTreeMap<String, MetaVarDoc>,
}

/// A message variable from the message's `_meta`: its key, or `{key, default}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = crate::spec::schema::string_or_object)
)]
#[serde(untagged, deny_unknown_fields)]
pub(in crate::spec) enum MetaVarDoc {
    Key(#[cfg_attr(test, schemars(length(min = 1)))] String),
    Full {
        #[cfg_attr(test, schemars(length(min = 1)))]
        key: String,
        /// The value when the message's `_meta` lacks the key.
        default: Value,
    },
}

/// The media this role's messages may hold: a kind not listed, or a block
/// no rule takes, is refused (an error naming the message).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct SamplingMediaDoc {
    /// Rules for image blocks, tried in order: the first whose MIME types
    /// match, whose `max_bytes` the payload fits and whose variables are
    /// present applies.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub image: Option<Vec<SamplingMediaRuleDoc>>,
    /// Rules for audio blocks, tried in order, as for images.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub audio: Option<Vec<SamplingMediaRuleDoc>>,
}

/// One rule of a message's media: the MIME types it takes and the one
/// thing it produces.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("oneOf" = [{"required": ["block"]}, {"required": ["attach"]}, {"required": ["as_text"]}]))
)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct SamplingMediaRuleDoc {
    /// MIME types this rule applies to (`type/*` allowed); absent: any.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), inner(regex(pattern = MIME_RANGE))))]
    pub accept: Option<Vec<String>>,
    /// The largest payload the rule takes, in decoded bytes; a larger one is
    /// refused with the limit named.
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// An item of `${content}` (`content: blocks` or `string_or_blocks`).
    #[serde(default)]
    pub block: Option<TemplateDoc<MessageMedia>>,
    /// An item of `${attachments}` (images beside the text, for APIs that
    /// take them so).
    #[serde(default)]
    pub attach: Option<TemplateDoc<MessageMedia>>,
    /// A text part instead of the medium; variables interpolate.
    #[serde(default)]
    pub as_text: Option<TextTemplateDoc<MessageMedia>>,
}

/// An assistant message's tool uses.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ToolUseDoc {
    pub into: ToolUseInto,
    /// One tool use; it must place `${name}` and `${input}` or `${arguments}`.
    pub item: TemplateDoc<ToolUse>,
    /// Variables for the item read from the tool use's `_meta`: variable
    /// name to `_meta` key (what `response.tool_use_meta` kept).
    #[serde(default)]
    #[cfg_attr(
        test,
        schemars(extend(
            "propertyNames" = {"pattern": VAR_NAME},
            "additionalProperties" = {"type": "string", "minLength": 1}
        ))
    )]
    pub meta: BTreeMap<String, String>,
}

/// Where an assistant message's tool uses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ToolUseInto {
    /// Among the message's content blocks, in order.
    Content,
    /// Into `${tool_calls}`, beside the content.
    ToolCalls,
    /// Items of their own after the message.
    Messages,
}

/// Where a user message's tool results go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResultsPlacement {
    /// The answers are the content of one user message.
    Content,
    /// Each answer is a message (or item) of its own.
    Messages,
}

/// Where the media a tool result cannot carry go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, serde::Serialize))]
#[serde(rename_all = "snake_case")]
pub(crate) enum FollowUpPlacement {
    /// After the answers, as the message(s) the results' follow-up envelope makes.
    #[default]
    After,
    /// Into the content of the answers' user message, as blocks after them.
    Content,
}

/// How the messages of one role are shaped.
#[derive(Debug, Clone)]
pub(crate) struct RolePlan {
    pub content: ContentForm,
    pub text_block: Option<Template>,
    pub envelope: Template,
    /// Envelope variables read from the message's `_meta`: the variable,
    /// the `_meta` key and the value when the key is absent.
    pub meta: Vec<MetaVar>,
    /// `None`: the role's messages carry no images.
    pub image: Option<Vec<MediaRule>>,
    /// `None`: the role's messages carry no audio.
    pub audio: Option<Vec<MediaRule>>,
}

/// An envelope variable read from a message's `_meta`.
#[derive(Debug, Clone)]
pub(crate) struct MetaVar {
    pub var: String,
    pub key: String,
    pub default: Option<Value>,
}

/// How a tool use is written.
#[derive(Debug, Clone)]
pub(crate) struct ToolUsePlan {
    pub into: ToolUseInto,
    pub item: Template,
    /// Template variable and the `_meta` key it is read from.
    pub meta: Vec<(String, String)>,
}

pub(super) fn compile_tool_use(doc: ToolUseDoc) -> Result<ToolUsePlan, Problem> {
    for var in doc.meta.keys() {
        if !names_a_variable(var, ToolUse::NAMES) {
            return Err(Problem::at(
                at(&["messages", "tool_use", "meta", var]),
                format!(
                    "`{var}` cannot name a variable: use lower-case letters, digits and `_`, and none of {}",
                    ToolUse::NAMES.join(", ")
                ),
            ));
        }
    }
    let extra: Vec<&str> = doc.meta.keys().map(String::as_str).collect();
    let item = doc
        .item
        .compile_with(&at(&["messages", "tool_use", "item"]), &extra)?;
    if !item.uses("name") || !(item.uses("input") || item.uses("arguments")) {
        return Err(Problem::at(
            at(&["messages", "tool_use", "item"]),
            "a tool use must place ${name} and its arguments (${input} or ${arguments})",
        ));
    }
    Ok(ToolUsePlan {
        into: doc.into,
        item,
        meta: doc.meta.into_iter().collect(),
    })
}

pub(super) fn compile_role(doc: RoleDoc, role: &str) -> Result<RolePlan, Problem> {
    let path = |rest: &[&str]| -> Vec<String> {
        let mut out = vec!["messages".to_owned(), role.to_owned()];
        out.extend(rest.iter().map(|s| (*s).to_owned()));
        out
    };
    let p = |rest: &[&str]| {
        let owned = path(rest);
        at(&owned.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let text_block = match &doc.text_block {
        Some(value) => Some(value.compile_at(&p(&["text_block"]))?),
        None if doc.content != ContentForm::String => {
            return Err(Problem::at(
                p(&[]),
                "`content: blocks` and `string_or_blocks` need a `text_block` template",
            ));
        }
        None => None,
    };
    let mut meta = Vec::new();
    for (var, entry) in &doc.meta {
        if !names_a_variable(var, Message::NAMES) {
            return Err(Problem::at(
                p(&["meta", var]),
                format!(
                    "`{var}` cannot name a variable: use lower-case letters, digits and `_`, and none of {}",
                    Message::NAMES.join(", ")
                ),
            ));
        }
        let (key, default) = match entry {
            MetaVarDoc::Key(key) => (key.clone(), None),
            MetaVarDoc::Full { key, default } => (key.clone(), Some(default.clone())),
        };
        meta.push(MetaVar {
            var: var.clone(),
            key,
            default,
        });
    }
    let extra: Vec<&str> = doc.meta.keys().map(String::as_str).collect();
    let envelope = doc.envelope.compile_with(&p(&["envelope"]), &extra)?;
    if let Some(unused) = meta.iter().find(|m| !envelope.uses(&m.var)) {
        return Err(Problem::at(
            p(&["meta", &unused.var]),
            format!("the envelope never places ${{{}}}", unused.var),
        ));
    }
    if !envelope.uses("content") {
        return Err(Problem::at(
            p(&["envelope"]),
            "the envelope must place ${content}, or the message would be lost",
        ));
    }
    let mut rows = Vec::new();
    for (kind, rules) in [("image", doc.media.image), ("audio", doc.media.audio)] {
        let Some(rules) = rules else {
            rows.push(None);
            continue;
        };
        let compiled = rules
            .into_iter()
            .enumerate()
            .map(|(i, rule)| {
                compile_media_rule(rule, &p(&["media", kind, &i.to_string()]), doc.content)
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(Some(compiled));
    }
    let audio = rows.pop().flatten();
    let image = rows.pop().flatten();
    let attaches = image
        .iter()
        .chain(&audio)
        .flatten()
        .any(|r| matches!(r.action, MediaAction::Attach(_)));
    if attaches && !envelope.uses("attachments") {
        return Err(Problem::at(
            p(&["envelope"]),
            "media rules `attach` items, so the envelope must place ${attachments}",
        ));
    }
    Ok(RolePlan {
        content: doc.content,
        text_block,
        envelope,
        meta,
        image,
        audio,
    })
}

fn compile_media_rule(
    rule: SamplingMediaRuleDoc,
    at: &str,
    content: ContentForm,
) -> Result<MediaRule, Problem> {
    if rule.block.is_some() && content == ContentForm::String {
        return Err(Problem::at(
            pointer_child(at, "block"),
            "`content: string` holds one string, so a rule cannot produce a block; use `as_text` or `attach`",
        ));
    }
    let parts = RuleParts {
        accept: rule.accept,
        max_bytes: rule.max_bytes,
        block: rule.block,
        attach: rule.attach,
        as_text: rule.as_text,
        follow_up: None,
    };
    compile_rule(parts, at, content)
}

pub(super) fn check_messages(
    user: &RolePlan,
    assistant: &RolePlan,
    tool_use: &ToolUsePlan,
    results: ResultsPlacement,
) -> Result<(), Problem> {
    match tool_use.into {
        ToolUseInto::Content if assistant.content == ContentForm::String => {
            return Err(Problem::at(
                at(&["messages", "tool_use", "into"]),
                "tool uses go into the assistant's content, which is one string (`content: string`)",
            ));
        }
        ToolUseInto::ToolCalls if !assistant.envelope.uses("tool_calls") => {
            return Err(Problem::at(
                at(&["messages", "assistant", "envelope"]),
                "tool uses go into ${tool_calls}, which the assistant's envelope must place",
            ));
        }
        _ => {}
    }
    if results == ResultsPlacement::Content && user.content == ContentForm::String {
        return Err(Problem::at(
            at(&["messages", "tool_results"]),
            "tool results go into the user's content, which is one string (`content: string`)",
        ));
    }
    Ok(())
}

/// Each results section that sends follow-ups must agree with the placement:
/// `after` needs a follow-up envelope (the items become a message of their
/// own), `content` needs none (they join the answers' content).
pub(super) fn check_follow_ups(
    placement: FollowUpPlacement,
    results: ResultsPlacement,
    plans: &[&ResultsPlan],
) -> Result<(), Problem> {
    let at = at(&["messages", "follow_ups"]);
    for plan in plans {
        let sends = plan
            .media
            .values()
            .flatten()
            .any(|r| matches!(r.action, MediaAction::FollowUp(_)));
        let enveloped = plan
            .follow_up
            .as_ref()
            .is_some_and(|f| f.envelope.is_some());
        match placement {
            _ if !sends => {}
            FollowUpPlacement::After if !enveloped => {
                return Err(Problem::at(
                    at,
                    "a results section sends follow-ups without an envelope, so they cannot stand as messages after the answers: use `follow_ups: content`",
                ));
            }
            FollowUpPlacement::Content if enveloped || results == ResultsPlacement::Messages => {
                return Err(Problem::at(
                    at,
                    "follow-ups join the answers' content only when the answers are one message (`tool_results: content`) and the results' follow-ups have no envelope: use `follow_ups: after`",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
