//! A `sampling:` section's messages: each role's templates and media
//! rules, tool uses, and where tool results and their follow-ups go.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::call_ids::CallIdsDoc;
use super::{at, template};
use crate::error::Problem;
use crate::json::pointer_child;
use crate::spec::results::{
    ContentForm, MediaAction, MediaRule, ResultsPlan, RuleDoc, compile_rule,
};
use crate::spec::template::Template;

/// Variables of a message envelope.
const MESSAGE_VARS: &[&str] = &["content", "attachments", "tool_calls"];
/// Variables of a message's text block.
const TEXT_VARS: &[&str] = &["text"];
/// Variables of a message's media rules.
const MEDIA_VARS: &[&str] = &["type", "mime", "mime_subtype", "data", "size"];
/// Variables of a tool use, besides those its `meta` names.
const TOOL_USE_VARS: &[&str] = &["id", "name", "input", "arguments"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct MessagesDoc {
    pub user: RoleDoc,
    pub assistant: RoleDoc,
    pub tool_use: ToolUseDoc,
    pub tool_results: ResultsPlacement,
    #[serde(default)]
    pub follow_ups: FollowUpPlacement,
    /// Consecutive messages of one role become one (APIs whose roles must alternate).
    #[serde(default)]
    pub merge_consecutive: bool,
    /// The form call ids must have; ids of the history that do not are
    /// replaced, the same way in tool uses and in the results that answer them.
    #[serde(default)]
    pub call_ids: Option<CallIdsDoc>,
}

/// How the messages of one role are shaped.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct RoleDoc {
    pub content: ContentForm,
    #[serde(default)]
    pub text_block: Option<Value>,
    pub envelope: Value,
    #[serde(default)]
    pub media: SamplingMediaDoc,
    /// Envelope variables read from the message's `_meta`: variable name to
    /// the `_meta` key, or `{key, default}` for a field the API requires.
    #[serde(default)]
    pub meta: BTreeMap<String, MetaVarDoc>,
}

/// A message variable from the message's `_meta`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(in crate::spec) enum MetaVarDoc {
    Key(String),
    Full {
        key: String,
        /// The value when the message's `_meta` lacks the key.
        default: Value,
    },
}

/// The media a message of one role may hold; a kind not listed is refused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct SamplingMediaDoc {
    #[serde(default)]
    pub image: Option<Vec<RuleDoc>>,
    #[serde(default)]
    pub audio: Option<Vec<RuleDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ToolUseDoc {
    pub into: ToolUseInto,
    pub item: Value,
    /// Template variables read from the tool use's `_meta`: variable name to `_meta` key.
    #[serde(default)]
    pub meta: BTreeMap<String, String>,
}

/// Where an assistant message's tool uses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
#[serde(rename_all = "snake_case")]
pub(crate) enum ResultsPlacement {
    /// The answers are the content of one user message.
    Content,
    /// Each answer is a message (or item) of its own.
    Messages,
}

/// Where the media a tool result cannot carry go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FollowUpPlacement {
    /// After the answers, as the message(s) the results' follow-up envelope makes.
    #[default]
    After,
    /// Into the content of the answers' user message, after them.
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
    let mut vars: Vec<&str> = TOOL_USE_VARS.to_vec();
    for var in doc.meta.keys() {
        let identifier = var.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && var
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !identifier || TOOL_USE_VARS.contains(&var.as_str()) {
            return Err(Problem::at(
                at(&["messages", "tool_use", "meta", var]),
                format!(
                    "`{var}` cannot name a variable: use lower-case letters, digits and `_`, and none of {}",
                    TOOL_USE_VARS.join(", ")
                ),
            ));
        }
        vars.push(var);
    }
    let item = template(&doc.item, &["messages", "tool_use", "item"], &vars)?;
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
        Some(value) => Some(
            Template::compile(value, TEXT_VARS)
                .map_err(|e| Problem::at(format!("{}{}", p(&["text_block"]), e.path), e.message))?,
        ),
        None if doc.content != ContentForm::String => {
            return Err(Problem::at(
                p(&[]),
                "`content: blocks` and `string_or_blocks` need a `text_block` template",
            ));
        }
        None => None,
    };
    let mut vars: Vec<&str> = MESSAGE_VARS.to_vec();
    let mut meta = Vec::new();
    for (var, entry) in &doc.meta {
        let identifier = var.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && var
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !identifier || MESSAGE_VARS.contains(&var.as_str()) {
            return Err(Problem::at(
                p(&["meta", var]),
                format!(
                    "`{var}` cannot name a variable: use lower-case letters, digits and `_`, and none of {}",
                    MESSAGE_VARS.join(", ")
                ),
            ));
        }
        vars.push(var);
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
    let envelope = Template::compile(&doc.envelope, &vars)
        .map_err(|e| Problem::at(format!("{}{}", p(&["envelope"]), e.path), e.message))?;
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

fn compile_media_rule(rule: RuleDoc, at: &str, content: ContentForm) -> Result<MediaRule, Problem> {
    if rule.follow_up.is_some() {
        return Err(Problem::at(
            pointer_child(at, "follow_up"),
            "a message's media are part of it: `follow_up` applies to tool results only",
        ));
    }
    if rule.block.is_some() && content == ContentForm::String {
        return Err(Problem::at(
            pointer_child(at, "block"),
            "`content: string` holds one string, so a rule cannot produce a block; use `as_text` or `attach`",
        ));
    }
    compile_rule(rule, at, content, MEDIA_VARS)
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
