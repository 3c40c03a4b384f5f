//! `results.structured_content`: when a result's `structuredContent` is
//! used (`use`, a [`StructuredMode`]) and how it reaches the model (`render`).

use serde::{Deserialize, Serialize};

use super::ContentForm;
use super::media::{MediaRule, RuleDoc, compile_rule};
use crate::error::{Error, Problem};
use crate::json::pointer_child;

/// Variables of a structured-content rule.
const STRUCTURED_VARS: &[&str] = &["value"];

/// How `structuredContent` is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructuredMode {
    /// Only when `content` is empty (servers usually repeat it as text).
    #[default]
    Auto,
    /// Instead of `content`.
    Prefer,
    /// After `content`.
    Append,
    /// Never.
    Ignore,
}

impl std::str::FromStr for StructuredMode {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "auto" => Ok(StructuredMode::Auto),
            "prefer" => Ok(StructuredMode::Prefer),
            "append" => Ok(StructuredMode::Append),
            "ignore" => Ok(StructuredMode::Ignore),
            _ => Err(Error::input(format!(
                "structured mode `{s}`: expected auto, prefer, append or ignore"
            ))),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct StructuredDoc {
    #[serde(default, rename = "use")]
    pub use_: StructuredMode,
    #[serde(default)]
    pub render: RenderDoc,
}

/// How a `structuredContent` value reaches the model.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(in crate::spec) enum RenderDoc {
    Keyword(RenderKeyword),
    Rules(Vec<RuleDoc>),
}

impl Default for RenderDoc {
    fn default() -> Self {
        RenderDoc::Keyword(RenderKeyword::JsonText)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(in crate::spec) enum RenderKeyword {
    /// The value as JSON text.
    JsonText,
    /// The value itself is `${content}` (`content: string` only).
    Value,
}

/// How a `structuredContent` value is rendered.
#[derive(Debug, Clone)]
pub(crate) enum StructuredRender {
    JsonText,
    /// The value itself becomes `${content}` when it is the only part.
    Value,
    Rules(Vec<MediaRule>),
}

/// When and how `structuredContent` is used.
#[derive(Debug, Clone)]
pub(crate) struct StructuredPlan {
    pub mode: StructuredMode,
    pub render: StructuredRender,
}

pub(super) fn compile_structured(
    doc: StructuredDoc,
    content: ContentForm,
    results_at: &str,
) -> Result<StructuredPlan, Problem> {
    let at = pointer_child(&pointer_child(results_at, "structured_content"), "render");
    let render = match doc.render {
        RenderDoc::Keyword(RenderKeyword::JsonText) => StructuredRender::JsonText,
        RenderDoc::Keyword(RenderKeyword::Value) if content != ContentForm::String => {
            return Err(Problem::at(
                at,
                "`render: value` needs `content: string` (the value replaces the content)",
            ));
        }
        RenderDoc::Keyword(RenderKeyword::Value) => StructuredRender::Value,
        RenderDoc::Rules(rules) => StructuredRender::Rules(
            rules
                .into_iter()
                .enumerate()
                .map(|(i, rule)| {
                    let at = pointer_child(&at, &i.to_string());
                    if rule.accept.is_some() || rule.max_bytes.is_some() {
                        return Err(Problem::at(
                            at,
                            "a structured value has no MIME type or payload; `accept` and `max_bytes` apply to media rows only",
                        ));
                    }
                    if rule.follow_up.is_some() {
                        return Err(Problem::at(
                            pointer_child(&at, "follow_up"),
                            "a structured value is part of the answer; `follow_up` applies to media rows only",
                        ));
                    }
                    compile_rule(rule, &at, content, STRUCTURED_VARS)
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(StructuredPlan {
        mode: doc.use_,
        render,
    })
}
