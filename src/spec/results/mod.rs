//! The `results:` section: how an MCP result is answered: the content form,
//! the text block, the answer envelope (and one for errors), structured
//! content (`structured.rs`), the media table (`media.rs`), follow-up items
//! and per-request media limits.

mod media;
mod structured;

use std::collections::BTreeMap;

use serde::Deserialize;

use super::template::{Template, TemplateDoc, template_vars};
use crate::error::Problem;
use crate::json::pointer_child;
#[cfg(test)]
pub(in crate::spec) use media::MIME_RANGE;
pub(crate) use media::{MediaAction, MediaKind, MediaRule};
use media::{MediaDoc, compile_media};
pub(in crate::spec) use media::{RuleParts, compile_rule};
pub use structured::StructuredMode;
pub(crate) use structured::StructuredRender;
use structured::{StructuredDoc, StructuredPlan, compile_structured};

template_vars! {
    /// An answer template. Variables: call_id (absent for a call without an
    /// id), name (the exposed tool name), content (see content), attachments
    /// (the items of attach rules, a list).
    pub(in crate::spec) Envelope("envelope_template") = ["call_id", "name", "content", "attachments"];
}

template_vars! {
    /// A text block template. Variable: text.
    pub(in crate::spec) TextBlock("text_block_template") = ["text"];
}

template_vars! {
    /// A follow-up text item: the text that introduces one follow-up medium
    /// and names its call. Variable: text.
    pub(in crate::spec) FollowUpText("follow_up_text_template") = ["text"];
}

template_vars! {
    /// Wraps all of a turn's follow-up items into one item (a user message).
    /// Variable: items (the list).
    pub(in crate::spec) FollowUpEnvelope("follow_up_envelope_template") = ["items"];
}

/// How an MCP result is answered: the content form, the text block, the
/// answer envelope (and one for errors), structured content, media,
/// follow-up items and per-request media limits.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ResultsDoc {
    pub content: ContentForm,
    /// A text block, for `content: blocks` and `string_or_blocks`.
    #[serde(default)]
    pub text_block: Option<TemplateDoc<TextBlock>>,
    /// The answer to one call.
    pub envelope: TemplateDoc<Envelope>,
    #[serde(default)]
    pub error: ErrorDoc,
    #[serde(default)]
    pub structured_content: StructuredDoc,
    #[serde(default)]
    pub media: MediaDoc,
    #[serde(default)]
    pub follow_up: Option<FollowUpDoc>,
    /// Limits on the media of one request, counted over one turn's answers
    /// and follow-ups (earlier turns are not known here); a medium that
    /// would pass one gets its placeholder, which says why.
    #[serde(default)]
    pub request_limits: Vec<RequestLimitDoc>,
}

/// What `${content}` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ContentForm {
    /// One string: the parts' texts joined with newlines.
    String,
    /// A list of blocks (texts through `text_block`).
    Blocks,
    /// A string, unless a media rule (in sampling, also a tool use or
    /// result) produced a block: then blocks.
    StringOrBlocks,
}

/// How a failed call, or a result with `isError`, is answered.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct ErrorDoc {
    /// Put before the text of an error answer.
    #[serde(default)]
    pub prefix: Option<String>,
    /// The answer to a failed call or an `isError` result, instead of `envelope`.
    #[serde(default)]
    pub envelope: Option<TemplateDoc<Envelope>>,
}

/// How media that `follow_up` rules take are delivered: after all the
/// turn's answers, each after a text item naming its call.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct FollowUpDoc {
    /// A text item.
    pub text: TemplateDoc<FollowUpText>,
    /// Wraps the turn's follow-up items into one item; without it they are
    /// appended as they are.
    #[serde(default)]
    pub envelope: Option<TemplateDoc<FollowUpEnvelope>>,
}

/// A limit on the media one request carries: give `max_bytes`, `max_items`
/// or both.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("anyOf" = [{"required": ["max_bytes"]}, {"required": ["max_items"]}]))
)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct RequestLimitDoc {
    /// The MIME types the limit counts (`type/*` allowed); absent: every medium.
    #[serde(default)]
    #[cfg_attr(test, schemars(length(min = 1), inner(regex(pattern = MIME_RANGE))))]
    pub accept: Option<Vec<String>>,
    /// Decoded bytes.
    #[serde(default)]
    pub max_bytes: Option<u64>,
    #[serde(default)]
    pub max_items: Option<u64>,
}

/// How results are answered.
#[derive(Debug, Clone)]
pub(crate) struct ResultsPlan {
    pub structured: StructuredPlan,
    pub content: ContentForm,
    pub text_block: Option<Template>,
    pub envelope: Template,
    pub error_envelope: Option<Template>,
    pub error_prefix: Option<String>,
    pub media: BTreeMap<MediaKind, Vec<MediaRule>>,
    pub follow_up: Option<FollowUpPlan>,
    pub request_limits: Vec<RequestLimit>,
}

/// How follow-up items are wrapped.
#[derive(Debug, Clone)]
pub(crate) struct FollowUpPlan {
    /// A text item (variable `text`).
    pub text: Template,
    /// Wraps the turn's items (variable `items`) into one item.
    pub envelope: Option<Template>,
}

/// A limit on the media of one request, counted over one turn.
#[derive(Debug, Clone)]
pub(crate) struct RequestLimit {
    pub accept: Option<Vec<String>>,
    pub max_bytes: Option<u64>,
    pub max_items: Option<u64>,
}

/// Compiles a results section found at `at` (`/results`, or an option value's override).
pub(super) fn compile(doc: ResultsDoc, at: &str) -> Result<ResultsPlan, Problem> {
    let content = doc.content;
    let child = |key: &str| pointer_child(at, key);
    let text_block = match &doc.text_block {
        Some(value) => Some(value.compile_at(&child("text_block"))?),
        None if content != ContentForm::String => {
            return Err(Problem::at(
                at,
                "`content: blocks` and `string_or_blocks` need a `text_block` template",
            ));
        }
        None => None,
    };
    let envelope = doc.envelope.compile_at(&child("envelope"))?;
    let error_envelope = match &doc.error.envelope {
        Some(value) => Some(value.compile_at(&pointer_child(&child("error"), "envelope"))?),
        None => None,
    };
    let follow_up = match &doc.follow_up {
        Some(f) => Some(compile_follow_up(f, &child("follow_up"))?),
        None => None,
    };
    let request_limits = doc
        .request_limits
        .into_iter()
        .enumerate()
        .map(|(i, limit)| {
            if limit.max_bytes.is_none() && limit.max_items.is_none() {
                return Err(Problem::at(
                    pointer_child(&child("request_limits"), &i.to_string()),
                    "a request limit needs max_bytes or max_items",
                ));
            }
            Ok(RequestLimit {
                accept: lower_case(limit.accept),
                max_bytes: limit.max_bytes,
                max_items: limit.max_items,
            })
        })
        .collect::<Result<_, _>>()?;
    let plan = ResultsPlan {
        structured: compile_structured(doc.structured_content, content, at)?,
        content,
        text_block,
        envelope,
        error_envelope,
        error_prefix: doc.error.prefix,
        media: compile_media(doc.media, content, at)?,
        follow_up,
        request_limits,
    };
    check_envelopes(&plan, at)?;
    Ok(plan)
}

fn compile_follow_up(doc: &FollowUpDoc, at: &str) -> Result<FollowUpPlan, Problem> {
    let envelope = match &doc.envelope {
        Some(value) => {
            let at = pointer_child(at, "envelope");
            let envelope = value.compile_at(&at)?;
            if !envelope.uses("items") {
                return Err(Problem::at(
                    at,
                    "the follow-up envelope must place ${items}, or follow-ups would be lost",
                ));
            }
            Some(envelope)
        }
        None => None,
    };
    Ok(FollowUpPlan {
        text: doc.text.compile_at(&pointer_child(at, "text"))?,
        envelope,
    })
}

pub(super) fn lower_case(accept: Option<Vec<String>>) -> Option<Vec<String>> {
    accept.map(|list| list.iter().map(|m| m.to_ascii_lowercase()).collect())
}

fn check_envelopes(plan: &ResultsPlan, at: &str) -> Result<(), Problem> {
    let structured_rules = match &plan.structured.render {
        StructuredRender::Rules(rules) => rules.as_slice(),
        _ => &[],
    };
    let rules = || plan.media.values().flatten().chain(structured_rules);
    let attaches = rules().any(|r| matches!(r.action, MediaAction::Attach(_)));
    if plan.follow_up.is_none() && rules().any(|r| matches!(r.action, MediaAction::FollowUp(_))) {
        return Err(Problem::at(
            pointer_child(at, "follow_up"),
            "media rules send `follow_up` items, so the results need a `follow_up` section (its `text` item introduces them)",
        ));
    }
    let error_at = pointer_child(&pointer_child(at, "error"), "envelope");
    for (at, template) in [
        (pointer_child(at, "envelope"), Some(&plan.envelope)),
        (error_at, plan.error_envelope.as_ref()),
    ] {
        let Some(template) = template else { continue };
        if !template.uses("content") {
            return Err(Problem::at(
                at,
                "the envelope must place ${content}, or results would be lost",
            ));
        }
        if attaches && !template.uses("attachments") {
            return Err(Problem::at(
                at,
                "media rules `attach` items, so the envelope must place ${attachments}",
            ));
        }
    }
    Ok(())
}
