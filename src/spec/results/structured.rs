//! `results.structured_content`: when a result's `structuredContent` is
//! used (`use`, a [`StructuredMode`]) and how it reaches the model (`render`).

use serde::{Deserialize, Serialize};

use super::ContentForm;
use super::media::{MediaRule, RuleParts, compile_rule};
use crate::error::{Error, Problem};
use crate::json::pointer_child;
use crate::spec::template::{TemplateDoc, TextTemplateDoc, template_vars};

template_vars! {
    /// A structured-content rule template. Variable: value (the
    /// structuredContent value).
    pub(in crate::spec) Structured("structured_template") = ["value"];
}

/// When `structuredContent` is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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

/// When a result's `structuredContent` is used, and how it reaches the model.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct StructuredDoc {
    #[serde(default, rename = "use")]
    pub use_: StructuredMode,
    /// How the value reaches the model.
    #[serde(default)]
    #[cfg_attr(test, schemars(extend("default" = RenderKeyword::JsonText)))]
    pub render: RenderDoc,
}

/// How a `structuredContent` value reaches the model: a keyword, or rules
/// tried in order.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(transform = crate::spec::schema::string_or_object)
)]
#[serde(untagged)]
pub(in crate::spec) enum RenderDoc {
    Keyword(RenderKeyword),
    Rules(#[cfg_attr(test, schemars(length(min = 1)))] Vec<StructuredRuleDoc>),
}

impl Default for RenderDoc {
    fn default() -> Self {
        RenderDoc::Keyword(RenderKeyword::JsonText)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema, Serialize))]
#[serde(rename_all = "snake_case")]
pub(in crate::spec) enum RenderKeyword {
    /// The value as JSON text.
    JsonText,
    /// The value itself is `${content}` (`content: string` only).
    Value,
}

/// One structured-content rule: the one thing it produces.
#[derive(Debug, Deserialize)]
#[cfg_attr(
    test,
    derive(schemars::JsonSchema),
    schemars(extend("oneOf" = [{"required": ["block"]}, {"required": ["attach"]}, {"required": ["as_text"]}]))
)]
#[serde(deny_unknown_fields)]
pub(in crate::spec) struct StructuredRuleDoc {
    /// An item of `${content}` (`content: blocks` or `string_or_blocks`).
    #[serde(default)]
    pub block: Option<TemplateDoc<Structured>>,
    /// An item of `${attachments}`, placed by the envelope outside the content.
    #[serde(default)]
    pub attach: Option<TemplateDoc<Structured>>,
    /// A text part; variables interpolate.
    #[serde(default)]
    pub as_text: Option<TextTemplateDoc<Structured>>,
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
                    let parts = RuleParts {
                        accept: None,
                        max_bytes: None,
                        block: rule.block,
                        attach: rule.attach,
                        as_text: rule.as_text,
                        follow_up: None,
                    };
                    compile_rule(parts, &pointer_child(&at, &i.to_string()), content)
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(StructuredPlan {
        mode: doc.use_,
        render,
    })
}
